"""Run nbval over stage notebooks against a target, in a fresh workspace.

The kernel inherits ``PYTHONPATH`` (the target's ``forge`` first), ``FORGELAB_TARGET`` and a
temporary ``FORGELAB_WORKSPACE``, so evidence, labs and answers never land in the workbook.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

from forgelab.paths import Workbook
from forgelab.registry import Course
from forgelab.targets import resolve_target


def nbval_command(notebooks: list[str], lax: bool, extra: list[str] | None = None) -> list[str]:
    sanitize = resources.files("forgelab") / "data" / "nbval-sanitize.cfg"
    mode = "--nbval-lax" if lax else "--nbval"
    # plugin autoload is off (see nbval_env): only nbval and pytest-timeout load, seconds faster per run
    return [sys.executable, "-P", "-m", "pytest", "-p", "nbval.plugin", "-p", "pytest_timeout", mode,
            "--nbval-current-env", "--nbval-sanitize-with", str(sanitize), "-p", "no:cacheprovider", "-q",
            *notebooks, *(extra or [])]


def nbval_env(import_dir: Path, target_name: str, workspace: Path, root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(import_dir), FORGELAB_TARGET=target_name, FORGELAB_WORKSPACE=str(workspace),
               FORGELAB_ROOT=str(root), PYTHONDONTWRITEBYTECODE="1", FORGELAB_WIDTH="110",
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return env


def run_nbval(workbook: Workbook, course: Course, target_name: str, *, notebooks: list[str] | None = None,
              lax: bool = False, extra: list[str] | None = None) -> int:
    target = resolve_target(target_name, workbook, course)
    chosen = notebooks or [stage.notebook for stage in course.stages]
    with target.importable() as import_dir, tempfile.TemporaryDirectory(prefix="forgelab-nbval-") as workspace:
        print(f"nbval: {len(chosen)} notebook(s) against target {target.name} (workspace {workspace})", flush=True)
        done = subprocess.run(nbval_command(chosen, lax, extra), cwd=workbook.root,
                              env=nbval_env(import_dir, target_name, Path(workspace), workbook.root))
    return done.returncode
