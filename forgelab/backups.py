"""Timestamped backups of the learner's ``forge/`` (and fault-lab files) before any write.

A backup is a folder ``.forgelab/backups/<name>/`` holding a copy of the files; its name says when
and why it was taken (``20261129-231500-restore-03``). Restoring a backup first backs up what is
there now, so a restore can itself be undone.
"""

from __future__ import annotations

import datetime as _dt
import shutil
from dataclasses import dataclass
from pathlib import Path

from forgelab.i18n import _
from forgelab.paths import Workbook


class BackupError(ValueError):
    """A backup that does not exist or cannot be restored."""


@dataclass(frozen=True)
class Backup:
    name: str
    path: Path

    @property
    def files(self) -> list[str]:
        return sorted(p.relative_to(self.path).as_posix() for p in self.path.rglob("*") if p.is_file())


def _copy_tree(source: Path, destination: Path) -> None:
    for item in sorted(source.rglob("*")):
        if "__pycache__" in item.parts or item.suffix == ".pyc" or not item.is_file():
            continue
        target = destination / item.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(item, target)


def take(workbook: Workbook, reason: str, files: dict[str, Path] | None = None) -> Backup:
    """Back up ``forge/`` (or only ``files``: name in backup -> source path) and return the backup."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = f"{stamp}-{reason}"
    name, counter = base, 1
    while (workbook.backups / name).exists():
        counter += 1
        name = f"{base}-{counter}"
    folder = workbook.backups / name
    folder.mkdir(parents=True)
    if files is None:
        if workbook.forge.is_dir():
            _copy_tree(workbook.forge, folder / "forge")
    else:
        for relative, source in files.items():
            if source.is_file():
                (folder / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, folder / relative)
    return Backup(name, folder)


def listing(workbook: Workbook) -> list[Backup]:
    if not workbook.backups.is_dir():
        return []
    return [Backup(p.name, p) for p in sorted(workbook.backups.iterdir()) if p.is_dir()]


def find(workbook: Workbook, name: str) -> Backup:
    for backup in listing(workbook):
        if backup.name == name:
            return backup
    known = ", ".join(b.name for b in listing(workbook)[-5:]) or _("none yet")
    raise BackupError(_("no backup named {name!r}: recent backups are {known} (see `forgelab backup list`)").format(
        name=name, known=known))


def restore(workbook: Workbook, name: str) -> tuple[Backup, Backup]:
    """Make ``forge/`` equal to the backup; returns (restored backup, backup of what was there)."""
    backup = find(workbook, name)
    saved_forge = backup.path / "forge"
    if not saved_forge.is_dir():
        raise BackupError(_("backup {name!r} holds no forge/ folder (it is a fault-lab backup: {files})").format(
            name=name, files=", ".join(backup.files)))
    safety = take(workbook, "before-restore")
    if workbook.forge.is_dir():
        for item in sorted(workbook.forge.rglob("*"), reverse=True):
            if item.is_file() and "__pycache__" not in item.parts:
                item.unlink()
    _copy_tree(saved_forge, workbook.forge)
    return backup, safety
