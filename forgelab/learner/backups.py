"""Timestamped backups of the learner's files before any write, and their way back.

A backup is a folder ``.forgelab/backups/<name>/`` holding copies of files under their workbook paths
(``forge/…``, ``transfer/…``, ``labs/…``, ``evidence/…``); its name says when and why it was taken
(``20261129-231500-restore-03``). Every kind is restored the same way (:func:`plan_restore`,
:func:`restore`): each file goes back to its place, and a backup of all of ``forge/`` (what ``restore``
and ``starter`` take) also takes away modules created after it, so ``forge/`` is again what it was.
Restoring first backs up what is there now, so a restore can itself be undone.
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict

from forgelab.core.fileformat import FileFormatError, parse_json
from forgelab.core.i18n import _
from forgelab.core.paths import Workbook

MANIFEST = "backup.json"  # inside each backup: which files it holds and whether it is all of forge/
ROOT_FOLDERS = ("forge", "transfer")  # backed-up paths under the workbook root; the others are under the workspace


class BackupError(ValueError):
    """A backup that does not exist or cannot be restored."""


class BackupManifest(BaseModel):
    """``backup.json``: why the backup was taken and whether it is a copy of all of ``forge/``."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    reason: str
    whole_forge: bool


@dataclass(frozen=True)
class Backup:
    name: str
    path: Path

    @property
    def files(self) -> list[str]:
        return sorted(p.relative_to(self.path).as_posix() for p in self.path.rglob("*")
                      if p.is_file() and p.relative_to(self.path).as_posix() != MANIFEST)

    @property
    def whole_forge(self) -> bool:
        """Whether this is a copy of all of ``forge/`` (then restoring it also removes modules added since)."""
        manifest = self.path / MANIFEST
        if manifest.is_file():
            return self.manifest(manifest).whole_forge
        return (self.path / "forge").is_dir() and len([f for f in self.files if f.startswith("forge/")]) > 1

    def manifest(self, file: Path) -> BackupManifest:
        """The backup's ``backup.json``; :class:`BackupError` names the file and the field when it does not fit."""
        try:
            return parse_json(file.as_posix(), file.read_bytes(), BackupManifest,
                              _('the file was edited by hand or damaged: it holds "reason" (text) and "whole_forge" '
                                '(true when the backup is a copy of all of forge/); put that back, or restore another '
                                'backup (`forgelab backup list`)'))
        except OSError as error:
            raise BackupError(_("cannot read {file} ({cause})").format(file=file, cause=error.strerror or error)) \
                from None
        except FileFormatError as error:
            raise BackupError(str(error)) from None


def destination(workbook: Workbook, relative: str) -> Path:
    """Where a backed-up file belongs: ``forge/`` and ``transfer/`` in the workbook, the rest in the workspace."""
    parts = PurePosixPath(relative).parts
    if not parts or ".." in parts or PurePosixPath(relative).is_absolute():
        raise BackupError(_("{path!r} is not a path a backup can hold").format(path=relative))
    return (workbook.root if parts[0] in ROOT_FOLDERS else workbook.workspace).joinpath(*parts)


def _forge_files(workbook: Workbook) -> dict[str, Path]:
    if not workbook.forge.is_dir():
        return {}
    return {f"forge/{path.relative_to(workbook.forge).as_posix()}": path for path in sorted(workbook.forge.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"}


def take(workbook: Workbook, reason: str, files: dict[str, Path] | None = None, *, whole_forge: bool = False) -> Backup:
    """Back up all of ``forge/`` (``files`` None) or only ``files`` (path in the backup -> source), plus all of
    ``forge/`` when ``whole_forge``; return the backup."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = f"{stamp}-{reason}"
    name, counter = base, 1
    while (workbook.backups / name).exists():
        counter += 1
        name = f"{base}-{counter}"
    folder = workbook.backups / name
    folder.mkdir(parents=True)
    whole = files is None or whole_forge
    chosen = {**(_forge_files(workbook) if whole else {}), **(files or {})}
    for relative, source in chosen.items():
        if source.is_file():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / relative)
    manifest = BackupManifest(reason=reason, whole_forge=whole)
    (folder / MANIFEST).write_text(json.dumps(manifest.model_dump(), indent=2) + "\n", encoding="utf-8")
    return Backup(name, folder)


def listing(workbook: Workbook) -> list[Backup]:
    if not workbook.backups.is_dir():
        return []
    return [Backup(p.name, p) for p in sorted(workbook.backups.iterdir()) if p.is_dir()]


def find(workbook: Workbook, name: str) -> Backup:
    for backup in listing(workbook):
        if backup.name == name:
            return backup
    known = _(", ").join(b.name for b in listing(workbook)[-5:]) or _("none yet")
    raise BackupError(_("no backup named {name!r}: recent backups are {known} (see `forgelab backup list`)").format(
        name=name, known=known))


@dataclass(frozen=True)
class RestorePlan:
    backup: Backup
    changed: tuple[str, ...]  # files that exist now with other content: restoring replaces them
    missing: tuple[str, ...]  # files that do not exist now: restoring brings them back
    extra: tuple[str, ...]  # forge/ modules added since a whole-forge backup: restoring removes them
    same: tuple[str, ...]  # already as in the backup

    @property
    def overwrites(self) -> tuple[str, ...]:
        return self.changed + self.extra

    @property
    def to_write(self) -> tuple[str, ...]:
        return self.changed + self.missing


def plan_restore(workbook: Workbook, name: str) -> RestorePlan:
    """What restoring backup ``name`` would change (nothing is written)."""
    backup = find(workbook, name)
    files = backup.files
    if not files:
        raise BackupError(_("backup {name!r} is empty: there is nothing to restore").format(name=name))
    changed, missing, same = [], [], []
    for relative in files:
        place = destination(workbook, relative)
        if not place.is_file():
            missing.append(relative)
        elif place.read_bytes() != (backup.path / relative).read_bytes():
            changed.append(relative)
        else:
            same.append(relative)
    extra = sorted(set(_forge_files(workbook)) - set(files)) if backup.whole_forge else []
    return RestorePlan(backup, tuple(changed), tuple(missing), tuple(extra), tuple(same))


def restore(workbook: Workbook, name: str) -> tuple[RestorePlan, Backup | None]:
    """Put the files of backup ``name`` back; returns the plan carried out and the backup of what was there."""
    chosen = plan_restore(workbook, name)
    if not chosen.to_write and not chosen.extra:
        return chosen, None
    current = {relative: destination(workbook, relative) for relative in (*chosen.changed, *chosen.extra)}
    safety = take(workbook, "before-restore", current, whole_forge=chosen.backup.whole_forge)
    for relative in chosen.extra:
        destination(workbook, relative).unlink()
    for relative in chosen.to_write:
        place = destination(workbook, relative)
        place.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(chosen.backup.path / relative, place)
    return chosen, safety
