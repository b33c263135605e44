"""Pristine starters: the stage modules and transfer tests exactly as the course ships them.

Where a pristine starter comes from, in order:

1. ``course/starters/<relative>`` — the learner bundle ships a copy of every starter there
   (``forgelab release`` writes it from the committed ``forge/`` and ``transfer/``);
2. in the course repository (no ``course/starters/``): ``git show HEAD:<relative>``;
3. otherwise there is none, and :class:`StarterError` says what to do.

:func:`starter_source` is the one function other code calls. :func:`plan` and :func:`apply` are
``forgelab starter NN``: restore a stage's starter module and/or transfer starter into the learner's
folders after a timestamped backup (:mod:`forgelab.backups`, the mechanism ``forgelab restore``
uses), so that a wrecked or deleted module can always be brought back and the wreck is kept.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from forgelab import backups
from forgelab.i18n import _
from forgelab.paths import Workbook
from forgelab.registry import Stage

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


# ---------------------------------------------------------------- forgelab starter NN


@dataclass(frozen=True)
class StarterFile:
    relative: str  # forge/instructions.py or transfer/test_01_....py
    destination: Path
    pristine: bytes
    state: str  # "missing" | "changed" | "pristine"

    @property
    def needs_writing(self) -> bool:
        return self.state != "pristine"


@dataclass(frozen=True)
class StarterPlan:
    stage: Stage
    files: tuple[StarterFile, ...]

    @property
    def to_write(self) -> tuple[StarterFile, ...]:
        return tuple(item for item in self.files if item.needs_writing)


def _destination(workbook: Workbook, relative: str) -> Path:
    return workbook.root.joinpath(*PurePosixPath(relative).parts)


def plan(workbook: Workbook, stage: Stage, *, module: bool = True, transfer: bool = False) -> StarterPlan:
    """What restoring the starters of ``stage`` would write (nothing is written)."""
    chosen = ([stage.module] if module else []) + ([stage.transfer_file] if transfer else [])
    files = []
    for relative in chosen:
        pristine = starter_bytes(workbook.root, relative)
        destination = _destination(workbook, relative)
        if not destination.is_file():
            state = "missing"
        else:
            state = "pristine" if destination.read_bytes() == pristine else "changed"
        files.append(StarterFile(relative, destination, pristine, state))
    return StarterPlan(stage, tuple(files))


def _backup(workbook: Workbook, stage: Stage, files: tuple[StarterFile, ...]) -> backups.Backup:
    """One timestamped backup: all of forge/ when a module is restored (so `forgelab backup restore` can undo it),
    plus every transfer file about to be replaced."""
    transfer = {item.relative: item.destination for item in files if item.relative.startswith("transfer/")}
    module = any(item.relative.startswith("forge/") for item in files)
    return backups.take(workbook, f"starter-{stage.number}", transfer, whole_forge=module)


def apply(workbook: Workbook, chosen: StarterPlan) -> backups.Backup | None:
    """Back up what is there, then write the pristine starters; None when everything already is pristine."""
    writing = chosen.to_write
    if not writing:
        return None
    backup = _backup(workbook, chosen.stage, writing)
    for item in writing:
        item.destination.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=item.destination.parent, prefix=f".{item.destination.name}.",
                                        suffix=".starter-tmp")  # unique per call: two restores never share it
        with os.fdopen(handle, "wb") as temporary:
            temporary.write(item.pristine)
        os.chmod(name, 0o644)  # mkstemp makes it private; a starter is an ordinary file
        os.replace(name, item.destination)
    return backup
