"""Check the stage notebooks against a target.

* Against the course's own code (``solution``, ``fault:NN``): real ``pytest --nbval`` in a Jupyter
  kernel, over the whole notebooks — this proves the committed notebooks and their reference outputs.
  The kernel inherits ``PYTHONPATH`` (the target's ``forge`` first), ``FORGELAB_TARGET`` and a
  temporary ``FORGELAB_WORKSPACE``, so evidence, labs and answers never land in the workbook.
* Against learner code (``learner``, a submitted workbook): the judge replays each notebook's
  worked demonstration (:mod:`forgelab.judge.notebook_replay`) — the learner's code runs in the
  sandbox, and the comparison with the reference output happens on the trusted side.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

from forgelab.judge.settings import DEFAULT, JudgeSettings
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course
from forgelab.core.targets import resolve_target
from forgelab.judge import core, waiting
from forgelab.verdicts import jobs
from forgelab.judge.core import CourseTests
from forgelab.judge.outcomes import Outcome
from forgelab.authoring.build import editions, opening_notebook


def nbval_command(notebooks: list[str], lax: bool, extra: list[str] | None = None) -> list[str]:
    sanitize = resources.files("forgelab") / "data" / "nbval-sanitize.cfg"
    mode = "--nbval-lax" if lax else "--nbval"
    # plugin autoload is off (see nbval_env): only nbval and pytest-timeout load, seconds faster per run
    # forgelab.authoring.kernels: nbval's kernels over Unix sockets, never a TCP port another process could take
    return [sys.executable, "-P", "-m", "pytest", "-p", "nbval.plugin", "-p", "pytest_timeout",
            "-p", "forgelab.authoring.kernels", mode,
            "--nbval-current-env", "--nbval-sanitize-with", str(sanitize), "-p", "no:cacheprovider", "-q",
            *notebooks, *(extra or [])]


def nbval_env(import_dir: Path, target_name: str, workspace: Path, root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(import_dir), FORGELAB_TARGET=target_name, FORGELAB_WORKSPACE=str(workspace),
               FORGELAB_ROOT=str(root), PYTHONDONTWRITEBYTECODE="1", FORGELAB_WIDTH="110",
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    env.pop("FORGE_LANG", None)  # each notebook names its own language
    return env


def replay(workbook: Workbook, course: Course, target_name: str, notebooks: list[str] | None = None,
           settings: JudgeSettings = DEFAULT) -> int:
    """The graded demonstration cells against learner code, through the judge; one line per cell."""
    target = resolve_target(target_name, workbook, course)
    stages = [stage for stage in course.stages if notebooks is None or stage.notebook in notebooks]
    specs = [jobs.spec(target, f"stage-{stage.number}", stage) for stage in stages]
    suites = [CourseTests(f"stage-{stage.number}", (stage.notebook,)) for stage in stages]
    report = core.run(jobs.job(course, workbook, specs, suites), settings)
    print(f"notebook replay: {len(stages)} notebook(s) against target {target.name} — {report.sandbox}")
    failed = 0
    for stage in stages:
        label = f"stage-{stage.number}"
        problem = report.import_problems.get(label)
        rows = report.in_file(label, stage.notebook)
        if problem is not None:
            print(f"  {stage.notebook}: not run — {problem.cause}")
            failed += 1
            continue
        bad = [row for row in rows if row.outcome is not Outcome.PASSED]
        failed += len(bad)
        print(f"  {stage.notebook}: {len(rows) - len(bad)}/{len(rows)} graded cells reproduce the reference output")
        for row in bad:
            print(f"    {row.nodeid.rsplit('::', 1)[-1]}: {row.cause}")
    if report.problem:
        print(f"problem: {report.problem}")
    return 1 if failed or report.problem else 0


def run_nbval(workbook: Workbook, course: Course, target_name: str, *, notebooks: list[str] | None = None,
              lax: bool = False, extra: list[str] | None = None, settings: JudgeSettings = DEFAULT) -> int:
    """nbval against a reference target (else :func:`replay`). The editions' notebooks run side by side, one
    pytest per edition with its own workspace (a notebook's output never depends on another edition's run), as many
    at once as the machine has CPUs; each edition's report is printed whole, in the course's order."""
    target = resolve_target(target_name, workbook, course)
    if not target.is_reference:
        return replay(workbook, course, target_name, notebooks, settings)

    chosen = notebooks or [path for language in editions(course) for path in
                           (opening_notebook(language), *(stage.notebook_in(language) for stage in course.stages))
                           if (workbook.root / path).is_file()]
    groups: dict[str, list[str]] = {}
    for path in chosen:
        groups.setdefault(Path(path).parent.as_posix(), []).append(path)
    at_once = max(1, min(len(groups), os.cpu_count() or 1))
    with target.importable() as import_dir, tempfile.TemporaryDirectory(prefix="forgelab-nbval-") as scratch:
        print(f"nbval: {len(chosen)} notebook(s) against target {target.name}, {len(groups)} edition(s), "
              f"{at_once} at a time (workspaces under {scratch})", flush=True)
        if at_once == 1:
            return max(_nbval(workbook, group, lax, extra, import_dir, target_name, Path(scratch) / str(index))
                       for index, group in enumerate(groups.values()))
        with ThreadPoolExecutor(max_workers=at_once) as pool:
            runs = [pool.submit(_nbval, workbook, group, lax, extra, import_dir, target_name,
                                Path(scratch) / str(index), capture=True) for index, group in enumerate(groups.values())]
            return max(waiting.results(runs))


def _nbval(workbook: Workbook, notebooks: list[str], lax: bool, extra: list[str] | None, import_dir: Path,
           target_name: str, workspace: Path, capture: bool = False) -> int:
    """One pytest --nbval over ``notebooks`` in ``workspace``; its output is printed as it comes, or whole at the end."""
    workspace.mkdir(parents=True)
    env = nbval_env(import_dir, target_name, workspace, workbook.root)
    if not capture:
        return subprocess.run(nbval_command(notebooks, lax, extra), cwd=workbook.root, env=env).returncode
    done = subprocess.run(nbval_command(notebooks, lax, extra), cwd=workbook.root, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace")
    with _PRINTING:
        print(f"== {Path(notebooks[0]).parent.as_posix()}: {len(notebooks)} notebook(s)", flush=True)
        print(done.stdout, end="", flush=True)
    return done.returncode


_PRINTING = threading.Lock()
