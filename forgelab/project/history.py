"""The prompt regression history: a SQLite file under the workspace (``.forgelab/regressions.sqlite3``).

Schema (versioned with ``PRAGMA user_version``; ``MIGRATIONS`` upgrades older files in place)::

    prompt_versions(sha256 PK, version_id, label, text, first_seen)
    runs(id PK, sha256 → prompt_versions, target, model, settings, started_at, cases, failures)
    case_results(run_id → runs, case_id, scenario, passed, problems JSON; PK (run_id, case_id))

A prompt version is keyed by the SHA-256 of its text; ``version_id`` is the short form stage 07 uses
(``p-`` + 12 hex digits). A run and all of its case results are written in ONE transaction: a run that
is interrupted — an exception, Ctrl-C, a killed process — leaves nothing behind, and SQLite's journal
rolls a half-written transaction back the next time the file is opened.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from forgelab.core.i18n import _

FILENAME = "regressions.sqlite3"

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE prompt_versions (
               sha256 TEXT PRIMARY KEY,
               version_id TEXT NOT NULL,
               label TEXT NOT NULL,
               text TEXT NOT NULL,
               first_seen TEXT NOT NULL)""",
        """CREATE TABLE runs (
               id INTEGER PRIMARY KEY AUTOINCREMENT,
               sha256 TEXT NOT NULL REFERENCES prompt_versions(sha256),
               target TEXT NOT NULL,
               model TEXT NOT NULL,
               started_at TEXT NOT NULL,
               cases INTEGER NOT NULL,
               failures INTEGER NOT NULL)""",
        """CREATE TABLE case_results (
               run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
               case_id TEXT NOT NULL,
               scenario TEXT NOT NULL,
               passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
               problems TEXT NOT NULL,
               PRIMARY KEY (run_id, case_id))""",
    ),
    2: (
        "ALTER TABLE runs ADD COLUMN settings TEXT NOT NULL DEFAULT '{}'",
        "CREATE INDEX runs_by_target ON runs(target, id)",
    ),
}
SCHEMA_VERSION = max(MIGRATIONS)


class HistoryError(RuntimeError):
    """The history file cannot be used; the message says why and what to do."""


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def version_id(text: str) -> str:
    """The short id of a prompt text, as stage 07 defines it: ``p-`` + the first 12 hex digits of its SHA-256."""
    return "p-" + text_sha256(text)[:12]


@dataclass(frozen=True)
class CaseOutcome:
    case_id: str
    scenario: str
    problems: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class StoredRun:
    id: int
    sha256: str
    version_id: str
    label: str
    target: str
    model: str
    settings: str
    started_at: str
    cases: int
    failures: int


@dataclass(frozen=True)
class StoredVersion:
    sha256: str
    version_id: str
    label: str
    text: str


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class History:
    """An open history file. Use as a context manager, or call ``close()``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(path, isolation_level=None, timeout=10)
            self.db.execute("PRAGMA foreign_keys = ON")
            self.migrate()
        except sqlite3.DatabaseError as error:
            raise HistoryError(_("{name} is not a usable regression history ({error})").format(name=path.name,
                                                                                              error=error)) from None

    @classmethod
    def open(cls, state_dir: Path) -> History:
        return cls(state_dir / FILENAME)

    def __enter__(self) -> History:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------ schema
    @property
    def schema_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> None:
        """Bring the file to ``SCHEMA_VERSION``, one migration per transaction."""
        current = self.schema_version
        if current > SCHEMA_VERSION:
            raise HistoryError(_("{name} has schema version {current}, newer than this forgelab knows ({known}): update "
                                 "forgelab, or move the file away to start a new history").format(
                name=self.path.name, current=current, known=SCHEMA_VERSION))
        for version in range(current + 1, SCHEMA_VERSION + 1):
            self.db.execute("BEGIN IMMEDIATE")
            try:
                for statement in MIGRATIONS[version]:
                    self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {version}")
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------ writing
    def record_run(self, *, text: str, label: str, target: str, model: str, settings: dict[str, object],
                   outcomes: Iterable[CaseOutcome]) -> StoredRun:
        """Store one run and its case results atomically; nothing is stored if anything fails."""
        sha = text_sha256(text)
        started = _now()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute(
                "INSERT OR IGNORE INTO prompt_versions (sha256, version_id, label, text, first_seen) VALUES (?, ?, ?, ?, ?)",
                (sha, version_id(text), label, text, started))
            cursor = self.db.execute(
                "INSERT INTO runs (sha256, target, model, settings, started_at, cases, failures) VALUES (?, ?, ?, ?, ?, 0, 0)",
                (sha, target, model, json.dumps(settings, sort_keys=True), started))
            run_id = int(cursor.lastrowid or 0)
            cases = failures = 0
            for outcome in outcomes:
                self.db.execute(
                    "INSERT INTO case_results (run_id, case_id, scenario, passed, problems) VALUES (?, ?, ?, ?, ?)",
                    (run_id, outcome.case_id, outcome.scenario, int(outcome.passed),
                     json.dumps(list(outcome.problems), ensure_ascii=False)))
                cases += 1
                failures += not outcome.passed
            self.db.execute("UPDATE runs SET cases = ?, failures = ? WHERE id = ?", (cases, failures, run_id))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        run = self.run(run_id)
        assert run is not None
        return run

    # ------------------------------------------------------------ reading
    _RUN_COLUMNS = ("runs.id, runs.sha256, prompt_versions.version_id, prompt_versions.label, runs.target, runs.model, "
                    "runs.settings, runs.started_at, runs.cases, runs.failures")

    def _runs(self, where: str, params: tuple[object, ...], limit: int | None = None) -> list[StoredRun]:
        query = (f"SELECT {self._RUN_COLUMNS} FROM runs JOIN prompt_versions USING (sha256) "
                 f"WHERE {where} ORDER BY runs.id DESC" + (f" LIMIT {int(limit)}" if limit else ""))
        return [StoredRun(*row) for row in self.db.execute(query, params)]

    def run(self, run_id: int) -> StoredRun | None:
        found = self._runs("runs.id = ?", (run_id,))
        return found[0] if found else None

    def runs(self, target: str | None = None, limit: int = 20) -> list[StoredRun]:
        if target is None:
            return self._runs("1", (), limit)
        return self._runs("runs.target = ?", (target,), limit)

    def latest_run(self, target: str, sha256: str | None = None, *, passing_only: bool = False) -> StoredRun | None:
        where, params = "runs.target = ?", [target]
        if sha256 is not None:
            where += " AND runs.sha256 = ?"
            params.append(sha256)
        if passing_only:
            where += " AND runs.failures = 0"
        found = self._runs(where, tuple(params), limit=1)
        return found[0] if found else None

    def results(self, run_id: int) -> dict[str, CaseOutcome]:
        rows = self.db.execute("SELECT case_id, scenario, problems FROM case_results WHERE run_id = ? ORDER BY rowid",
                               (run_id,))
        return {case_id: CaseOutcome(case_id, scenario, tuple(json.loads(problems))) for case_id, scenario, problems in rows}

    def version(self, sha256: str) -> StoredVersion | None:
        row = self.db.execute("SELECT sha256, version_id, label, text FROM prompt_versions WHERE sha256 = ?",
                              (sha256,)).fetchone()
        return StoredVersion(*row) if row else None

    def find_versions(self, reference: str) -> list[StoredVersion]:
        """Stored versions whose id (``p-…``), SHA-256 prefix or label matches ``reference``."""
        wanted = reference.strip().lower()
        prefix = wanted.removeprefix("p-")
        rows = self.db.execute("SELECT sha256, version_id, label, text FROM prompt_versions ORDER BY first_seen, sha256")
        found = []
        for row in rows:
            version = StoredVersion(*row)
            if (len(prefix) >= 4 and all(c in "0123456789abcdef" for c in prefix) and version.sha256.startswith(prefix)) \
                    or version.label.lower() == wanted:
                found.append(version)
        return found

    def counts(self) -> tuple[int, int, int]:
        """(prompt versions, runs, case results) stored."""
        return tuple(int(self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # type: ignore[return-value]
                     for table in ("prompt_versions", "runs", "case_results"))
