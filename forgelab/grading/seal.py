"""The seal of a grading run's gradebook: a digest over its rows and run parameters, checked before a merge.

``forgelab grade`` writes ``gradebook-seal.json`` beside ``gradebook.sqlite`` when its run is done (a run that was
interrupted leaves no seal), and ``forgelab gradebook merge`` writes one for the merged gradebook. The digest is
SHA-256 over every table of the gradebook — the rows (grades, test results, stage facts, submissions and their
digests) and the runs (course version, stages, settings, shard, tool version, times) — read in a canonical order;
only ``timings`` (seconds measured, not results) is left out.

:func:`check` refuses a gradebook that has no seal, that was sealed at another schema version, or whose rows no
longer give the digest of its seal: a shard edited by hand, or one whose run never finished. This protects a merge
against mistakes and against an edit made without recomputing the seal; it is not a signature, and someone who
recomputes the digest after editing the rows is not stopped by it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forgelab.core.evidence import write_atomic
from forgelab.core.i18n import _

SEAL_NAME = "gradebook-seal.json"
UNSEALED_TABLES = frozenset({"timings", "sqlite_sequence"})


class Seal(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    kind: Literal["forge-workbook/gradebook-seal"] = "forge-workbook/gradebook-seal"
    schema_version: Literal[1] = 1
    gradebook_schema: int  # the gradebook's schema version when it was sealed
    submissions: int
    digest: str = Field(pattern=r"^[0-9a-f]{64}$")


class SealError(RuntimeError):
    """A gradebook that is not sealed, or does not match its seal; the message names it and says what to do."""


def digest(connection: sqlite3.Connection) -> str:
    """SHA-256 over every sealed table, each row's values in column order, the rows in a canonical order."""
    found = hashlib.sha256()
    tables = sorted(name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                    if name not in UNSEALED_TABLES)
    for table in tables:
        columns = [row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')]
        quoted = ", ".join(f'"{column}"' for column in columns)
        found.update(json.dumps([table, columns]).encode() + b"\n")
        for row in connection.execute(f'SELECT {quoted} FROM "{table}" ORDER BY {quoted}'):
            found.update(json.dumps(list(row), ensure_ascii=False).encode() + b"\n")
    return found.hexdigest()


def write(connection: sqlite3.Connection, folder: Path) -> Path:
    """Seal the gradebook open on ``connection``, which lives in ``folder``."""
    version = int(connection.execute("PRAGMA user_version").fetchone()[0])
    count = int(connection.execute("SELECT count(*) FROM submissions").fetchone()[0])
    path = folder / SEAL_NAME
    seal = Seal(gradebook_schema=version, submissions=count, digest=digest(connection))
    write_atomic(path, seal.model_dump_json(indent=2) + "\n")
    return path


def check(folder: Path, gradebook_file: Path) -> None:
    """Raise :class:`SealError` unless ``folder``'s gradebook is sealed and still gives its seal's digest.

    The gradebook is read as it is on disk (opened read-only, never migrated), so a check changes nothing.
    """
    path = folder / SEAL_NAME
    if not path.is_file():
        raise SealError(_("{folder} has no {seal}: its grading run did not finish, or a forgelab that did not seal "
                          "its gradebooks graded it — grade that shard again, then merge").format(
            folder=folder, seal=SEAL_NAME))
    try:
        seal = Seal.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        raise SealError(_("{seal} in {folder} cannot be read as a gradebook seal: grade that shard again, then "
                          "merge").format(seal=SEAL_NAME, folder=folder)) from None
    try:
        connection = sqlite3.connect(f"{gradebook_file.resolve().as_uri()}?mode=ro", uri=True)
        try:
            version = int(connection.execute("PRAGMA user_version").fetchone()[0])
            found = digest(connection)
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        raise SealError(_("{book} cannot be read ({error}): grade that shard again, then merge").format(
            book=gradebook_file, error=error)) from None
    if version != seal.gradebook_schema or found != seal.digest:
        raise SealError(_("the rows of {folder} no longer match its seal: its gradebook was changed after grading — "
                          "grade that shard again (do not edit a gradebook by hand), then merge").format(folder=folder))
