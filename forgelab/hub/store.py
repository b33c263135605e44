"""The course service's storage: SQLite rows that point at content-addressed files.

``ROOT/course.sqlite``   submissions, deadlines, feedback (WAL journal, ``synchronous=FULL``)
``ROOT/blobs/ab/abcd…``  every zip and feedback page, named by its sha256; never changed once written
``ROOT/incoming/``       uploads being received; whatever is left there at start was cut off by a crash and is removed

The order of every write is what makes a crash harmless: the bytes go to a temporary file in ``incoming/``, are
flushed to disk (``fsync``), renamed to their digest's name in ``blobs/`` (the folder flushed too), and only then is a
row inserted that points at them, in one transaction. Killed before the rename, the upload is an orphan in
``incoming/`` and nothing refers to it; killed after it, the file is whole. Rows are only ever added (every version
of a submission is kept), and a feedback page replaces the previous one by a new row.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from forgelab.hub.models import Collection, Deadline, Feedback, Receipt

SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    learner TEXT NOT NULL,
    stage TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    received_at TEXT NOT NULL,
    late_for TEXT NOT NULL,
    files TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS submissions_by_learner ON submissions (learner, id);
CREATE TABLE IF NOT EXISTS deadlines (stage TEXT PRIMARY KEY, due TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS feedback (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    learner TEXT NOT NULL,
    points REAL NOT NULL,
    max_points REAL NOT NULL,
    sha256 TEXT NOT NULL,
    published_at TEXT NOT NULL,
    submission_id INTEGER
);
CREATE INDEX IF NOT EXISTS feedback_by_learner ON feedback (learner, id);
"""


def now() -> datetime:
    return datetime.now(UTC)


class Incoming:
    """An upload being received: written to a temporary file, hashed and counted as it arrives."""

    def __init__(self, folder: Path) -> None:
        handle, name = tempfile.mkstemp(dir=folder, prefix="upload-", suffix=".zip")
        self.path = Path(name)
        self.file: IO[bytes] = os.fdopen(handle, "wb", buffering=0)  # what arrived is on its way to disk
        self.hash = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self.file.write(chunk)
        self.hash.update(chunk)
        self.size += len(chunk)

    def finish(self) -> str:
        """Flush it to disk; its sha256."""
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        return self.hash.hexdigest()

    def discard(self) -> None:
        if not self.file.closed:
            self.file.close()
        self.path.unlink(missing_ok=True)


class Store:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.blobs, self.incoming_dir = root / "blobs", root / "incoming"
        for folder in (root, self.blobs, self.incoming_dir):
            folder.mkdir(parents=True, exist_ok=True)
        for orphan in self.incoming_dir.iterdir():  # cut off by a crash: nothing points at it
            orphan.unlink(missing_ok=True)
        self.database = root / "course.sqlite"
        with self._connect() as connection:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        connection = sqlite3.connect(self.database, timeout=30, isolation_level=None)
        try:
            connection.execute("PRAGMA synchronous=FULL")
            connection.row_factory = sqlite3.Row
            yield connection
        finally:
            connection.close()

    # ------------------------------------------------------------ files

    def incoming(self) -> Incoming:
        return Incoming(self.incoming_dir)

    def blob_path(self, sha256: str) -> Path:
        return self.blobs / sha256[:2] / sha256

    def keep(self, upload: Incoming, sha256: str) -> Path:
        """Move a finished upload to its content address (a file already there is the same bytes)."""
        target = self.blob_path(sha256)
        target.parent.mkdir(exist_ok=True)
        os.replace(upload.path, target)
        _sync_folder(target.parent)
        return target

    def keep_bytes(self, data: bytes) -> str:
        upload = self.incoming()
        try:
            upload.write(data)
            sha = upload.finish()
            self.keep(upload, sha)
        except BaseException:
            upload.discard()
            raise
        return sha

    # ------------------------------------------------------------ deadlines

    def set_deadlines(self, deadlines: list[Deadline]) -> None:
        with self._connect() as connection:
            connection.execute("BEGIN IMMEDIATE")
            for deadline in deadlines:
                connection.execute("INSERT INTO deadlines (stage, due) VALUES (?, ?) ON CONFLICT (stage) DO UPDATE "
                                   "SET due = excluded.due", (deadline.stage, deadline.due.isoformat()))
            connection.execute("COMMIT")

    def deadlines(self) -> list[Deadline]:
        with self._connect() as connection:
            rows = connection.execute("SELECT stage, due FROM deadlines ORDER BY stage").fetchall()
        return [Deadline(stage=row["stage"], due=datetime.fromisoformat(row["due"])) for row in rows]

    def late_for(self, stage: str, at: datetime) -> list[str]:
        """The stages a snapshot handed in at ``at`` for ``stage`` is late for."""
        return [d.stage for d in self.deadlines() if (stage == "all" or d.stage == stage) and at > d.due]

    # ------------------------------------------------------------ submissions

    def add_submission(self, learner: str, stage: str, sha256: str, content_sha256: str, size: int,
                       files: list[str], at: datetime | None = None) -> Receipt:
        """Record a submission whose zip is already kept at ``blob_path(sha256)``."""
        received = at or now()
        late = self.late_for(stage, received)
        with self._connect() as connection:
            cursor = connection.execute(
                "INSERT INTO submissions (learner, stage, sha256, content_sha256, size, received_at, late_for, files) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (learner, stage, sha256, content_sha256, size, received.isoformat(), json.dumps(late), json.dumps(files)))
            number = cursor.lastrowid
        assert number is not None
        return Receipt(id=number, learner=learner, stage=stage, sha256=sha256, content_sha256=content_sha256, size=size,
                       received_at=received, late_for=late, files=files)

    def submissions(self, learner: str | None = None) -> list[Receipt]:
        """Every submission (of one learner), oldest first."""
        with self._connect() as connection:
            if learner is None:
                rows = connection.execute("SELECT * FROM submissions ORDER BY id").fetchall()
            else:
                rows = connection.execute("SELECT * FROM submissions WHERE learner = ? ORDER BY id",
                                          (learner,)).fetchall()
        return [_receipt(row) for row in rows]

    def submission(self, number: int) -> Receipt | None:
        with self._connect() as connection:
            row = connection.execute("SELECT * FROM submissions WHERE id = ?", (number,)).fetchone()
        return _receipt(row) if row else None

    def collect(self, stage: str) -> Collection:
        """The latest submission of each learner received by the deadline of ``stage`` (``all``: the last deadline;
        no deadline: the latest of all)."""
        deadlines = {d.stage: d.due for d in self.deadlines()}
        due = (max(deadlines.values()) if deadlines else None) if stage == "all" else deadlines.get(stage)
        latest: dict[str, Receipt] = {}
        handed_in: set[str] = set()
        for receipt in self.submissions():
            handed_in.add(receipt.learner)
            if due is None or receipt.received_at <= due:
                latest[receipt.learner] = receipt  # ordered by id: a later one replaces an earlier one
        chosen = [latest[name] for name in sorted(latest)]
        return Collection(stage=stage, due=due, submissions=chosen, late_only=sorted(handed_in - set(latest)))

    # ------------------------------------------------------------ feedback

    def publish(self, learner: str, html: bytes, points: float, max_points: float,
                submission_id: int | None) -> Feedback:
        sha = self.keep_bytes(html)
        at = now()
        with self._connect() as connection:
            connection.execute("INSERT INTO feedback (learner, points, max_points, sha256, published_at, submission_id) "
                               "VALUES (?, ?, ?, ?, ?, ?)", (learner, points, max_points, sha, at.isoformat(),
                                                               submission_id))
        return Feedback(learner=learner, points=points, max_points=max_points, sha256=sha, published_at=at,
                        submission_id=submission_id)

    def feedback(self, learner: str) -> Feedback | None:
        with self._connect() as connection:
            row = connection.execute("SELECT * FROM feedback WHERE learner = ? ORDER BY id DESC LIMIT 1",
                                     (learner,)).fetchone()
        return _feedback(row) if row else None

    def totals(self) -> list[Feedback]:
        """The latest published feedback of every learner, by name."""
        with self._connect() as connection:
            rows = connection.execute("SELECT * FROM feedback WHERE id IN (SELECT MAX(id) FROM feedback GROUP BY "
                                      "learner) ORDER BY learner").fetchall()
        return [_feedback(row) for row in rows]


def _receipt(row: sqlite3.Row) -> Receipt:
    return Receipt(id=row["id"], learner=row["learner"], stage=row["stage"], sha256=row["sha256"],
                   content_sha256=row["content_sha256"], size=row["size"],
                   received_at=datetime.fromisoformat(row["received_at"]), late_for=json.loads(row["late_for"]),
                   files=json.loads(row["files"]))


def _feedback(row: sqlite3.Row) -> Feedback:
    return Feedback(learner=row["learner"], points=row["points"], max_points=row["max_points"], sha256=row["sha256"],
                    published_at=datetime.fromisoformat(row["published_at"]), submission_id=row["submission_id"])


def _sync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
