"""``forgelab starter NN``: bring back the shipped starter of a stage, after a backup of what is there.

:func:`plan` says what restoring the stage's starter module and/or transfer starter would write (nothing is
written); :func:`apply` takes a timestamped backup (:mod:`forgelab.learner.backups`, the mechanism
``forgelab restore`` uses) and then writes, so a wrecked or deleted module can always be brought back and the
wreck is kept. Where the pristine starters come from is :mod:`forgelab.core.starters`.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from forgelab.core.paths import Workbook
from forgelab.core.registry import Stage
from forgelab.core.starters import starter_bytes
from forgelab.learner import backups


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
