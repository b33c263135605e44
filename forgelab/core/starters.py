"""Pristine starters: the stage modules and transfer tests exactly as the course ships them.

Where a pristine starter comes from, in order:

1. ``course/starters/<relative>`` — the learner bundle ships a copy of every starter there
   (``forgelab release`` writes it from the committed ``forge/`` and ``transfer/``);
2. in the course repository (no ``course/starters/``): ``git show HEAD:<relative>``;
3. otherwise there is none, and :class:`StarterError` says what to do.

:func:`starter_source` is the one function other code calls; :func:`unfinished_functions` says which
functions of a module are still the starter's stub. Bringing a starter back into the learner's folders
(``forgelab starter NN``) is :mod:`forgelab.learner.starter`.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path, PurePosixPath

from forgelab.core import pyast
from forgelab.core.i18n import _

STARTERS_DIR = PurePosixPath("course") / "starters"
LEARNER_FOLDERS = ("forge", "transfer")
GIT_TIMEOUT = 120  # seconds; generous, the machine may be busy


class StarterError(RuntimeError):
    """No pristine starter can be found or restored; the message says why and what to do."""


def pristine_starters_dir(workbook_root: Path) -> Path | None:
    """``course/starters/`` when this workbook ships its starters (the learner bundle), else None."""
    folder = workbook_root / STARTERS_DIR
    return folder if folder.is_dir() else None


def _checked_relative(relative: str) -> PurePosixPath:
    path = PurePosixPath(relative.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or not path.parts or path.parts[0] not in LEARNER_FOLDERS or len(path.parts) < 2:
        raise StarterError(_("{relative!r} is not a starter path: expected forge/<file> or transfer/<file>, "
                             "e.g. forge/instructions.py").format(relative=relative))
    return path


def _from_git(workbook_root: Path, relative: PurePosixPath) -> bytes:
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
    env["LC_ALL"] = "C"
    command = ["git", "show", f"HEAD:./{relative.as_posix()}"]
    nowhere = _("no pristine starter for {relative}: this workbook has neither {starters}/ (the learner bundle "
                "ships it) nor a git history (the course repository has one); unzip a fresh copy of the lab bundle "
                "and copy its {relative} here, or ask your instructor").format(relative=relative, starters=STARTERS_DIR)
    if shutil.which("git") is None:
        raise StarterError(nowhere)
    inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=workbook_root, capture_output=True,
                            env=env, timeout=GIT_TIMEOUT, check=False)
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        raise StarterError(nowhere)
    done = subprocess.run(command, cwd=workbook_root, capture_output=True, env=env, timeout=GIT_TIMEOUT, check=False)
    if done.returncode != 0:
        raise StarterError(_("{relative} is not committed at HEAD of the course repository ({root}), so there is "
                             "no pristine starter for it: commit the starter first (`git add {relative} && git "
                             "commit`)").format(relative=relative, root=workbook_root))
    return done.stdout


def starter_bytes(workbook_root: Path, relative: str) -> bytes:
    """The pristine starter file ``relative`` (e.g. ``forge/instructions.py``) as bytes; see the module docstring."""
    path = _checked_relative(relative)
    shipped = pristine_starters_dir(workbook_root)
    if shipped is not None:
        candidate = shipped.joinpath(*path.parts)
        if not candidate.is_file():
            raise StarterError(_("this bundle ships no pristine starter for {path} ({starters}/{path} is missing): "
                                 "unzip a fresh copy of the lab bundle, or ask your instructor").format(
                path=path, starters=STARTERS_DIR))
        return candidate.read_bytes()
    return _from_git(workbook_root, path)


def starter_source(workbook_root: Path, relative: str) -> str:
    """The pristine starter file ``relative`` (``forge/...`` or ``transfer/...``) as text."""
    data = starter_bytes(workbook_root, relative)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise StarterError(_("the pristine starter {relative} is not UTF-8 text: use starter_bytes()").format(
            relative=relative)) from None


def unfinished_functions(path: Path) -> list[str]:
    """Functions of a module that are still the starter's ``raise NotImplementedError`` stub."""
    try:
        tree = pyast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = [item for item in node.body if not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant))]
            if len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None:
                raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
                if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
                    found.append(node.name)
    return found
