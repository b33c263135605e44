"""The gradebook: SQLite (standard library) with a versioned schema, plus CSV exports.

``grades`` holds one row per submission × stage × item: points, the maximum, the outcome, a review
flag and the reason. Rows carry no timestamps and no durations, so grading the same submission
twice writes identical rows. When and how long are kept apart, in ``runs`` and ``timings``.
``tests`` (each course test's outcome and first difference) and ``facts`` (the transfer verdict and
the submission's own learning evidence, :mod:`forgelab.grading.class_facts`) feed the class report;
they too are the same whenever the same submission is graded. ``modules`` keeps each submission's stage modules as
handed in (text, for the similarity check) and ``similarity`` the pairs that check flagged for review
(:mod:`forgelab.grading.similarity`), recomputed from ``modules`` whenever the exports are written.

The schema version is SQLite's ``PRAGMA user_version``. A gradebook from a newer forgelab is
refused rather than guessed at; older ones are migrated in place, step by step.
"""

from __future__ import annotations

import csv
import io
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from forgelab.core.i18n import _
from forgelab.grading import seal
from forgelab.grading.class_facts import StageFacts, TestResult
from forgelab.grading.rubric import ITEM_ORDER, GradeItem
from forgelab.grading.similarity import HandedModule, Kind, Pair, Status, cell

SCHEMA_VERSION = 5
FILENAME = "gradebook.sqlite"
CSV_NAME = "gradebook.csv"
TOTALS_NAME = "totals.csv"
CSV_COLUMNS = ("submission", "stage", "item", "points", "max_points", "outcome", "reason", "flag", "similarity")

_MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE submissions (
        submission TEXT PRIMARY KEY,
        content_sha256 TEXT NOT NULL,
        source TEXT NOT NULL,
        kind TEXT NOT NULL
    );
    CREATE TABLE grades (
        submission TEXT NOT NULL REFERENCES submissions(submission),
        stage TEXT NOT NULL,
        item TEXT NOT NULL,
        item_order INTEGER NOT NULL,
        points INTEGER NOT NULL CHECK (points >= 0 AND points <= max_points),
        max_points INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        flag TEXT NOT NULL,
        reason TEXT NOT NULL,
        PRIMARY KEY (submission, stage, item)
    );
    CREATE TABLE runs (
        run_id INTEGER PRIMARY KEY AUTOINCREMENT,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        tool_version TEXT NOT NULL,
        course_version TEXT NOT NULL,
        stages TEXT NOT NULL,
        jobs INTEGER NOT NULL,
        network TEXT NOT NULL,
        submissions INTEGER NOT NULL
    );
    CREATE TABLE timings (
        run_id INTEGER NOT NULL REFERENCES runs(run_id),
        submission TEXT NOT NULL,
        stage TEXT NOT NULL,
        phase TEXT NOT NULL,
        seconds REAL NOT NULL,
        PRIMARY KEY (run_id, submission, stage, phase)
    );
    """,
    2: """
    ALTER TABLE runs ADD COLUMN sandbox TEXT NOT NULL DEFAULT '';
    ALTER TABLE runs ADD COLUMN shard TEXT NOT NULL DEFAULT '';
    ALTER TABLE submissions ADD COLUMN feedback_page TEXT NOT NULL DEFAULT '';
    """,
    3: """
    ALTER TABLE runs ADD COLUMN settings TEXT NOT NULL DEFAULT '';
    """,
    4: """
    CREATE TABLE tests (
        submission TEXT NOT NULL REFERENCES submissions(submission),
        stage TEXT NOT NULL,
        kind TEXT NOT NULL,
        test TEXT NOT NULL,
        outcome TEXT NOT NULL,
        cause TEXT NOT NULL,
        PRIMARY KEY (submission, stage, kind, test)
    );
    CREATE TABLE facts (
        submission TEXT NOT NULL REFERENCES submissions(submission),
        stage TEXT NOT NULL,
        facts TEXT NOT NULL,
        PRIMARY KEY (submission, stage)
    );
    ALTER TABLE runs ADD COLUMN merged_from TEXT NOT NULL DEFAULT '';
    """,
    5: """
    CREATE TABLE modules (
        submission TEXT NOT NULL REFERENCES submissions(submission),
        stage TEXT NOT NULL,
        module TEXT NOT NULL,
        status TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (submission, stage)
    );
    CREATE TABLE similarity (
        stage TEXT NOT NULL,
        submission TEXT NOT NULL,
        other TEXT NOT NULL,
        other_kind TEXT NOT NULL,
        percent REAL NOT NULL,
        other_percent REAL NOT NULL,
        tokens INTEGER NOT NULL,
        page TEXT NOT NULL,
        PRIMARY KEY (stage, submission, other)
    );
    """,
}


class GradebookError(RuntimeError):
    """The gradebook file cannot be used; the message says why and what to do."""


@dataclass(frozen=True)
class SubmissionRecord:
    submission: str
    content_sha256: str
    source: str
    kind: str


def open_gradebook(path: Path) -> sqlite3.Connection:
    """Open (creating or migrating) the gradebook at ``path``."""
    try:
        connection = sqlite3.connect(path)
        version = connection.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as error:
        raise GradebookError(_("{path} is not a gradebook ({error}): choose another --out folder").format(
            path=path, error=error)) from None
    if version > SCHEMA_VERSION:
        connection.close()
        raise GradebookError(_("{path} has schema version {version}, newer than this forgelab ({known}): update "
                               "forgelab or choose another --out folder").format(path=path, version=version,
                                                                                 known=SCHEMA_VERSION))
    if version == 0 and connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
        connection.close()
        raise GradebookError(_("{path} is an SQLite file but not a gradebook: choose another --out folder").format(
            path=path))
    for step in range(version + 1, SCHEMA_VERSION + 1):
        with connection:
            connection.executescript(_MIGRATIONS[step])
            connection.execute(f"PRAGMA user_version = {step}")
    connection.execute("PRAGMA foreign_keys = ON")
    return connection


def start_run(connection: sqlite3.Connection, *, started_at: str, tool_version: str, course_version: str,
              stages: str, jobs: int, network: str, submissions: int, sandbox: str = "", shard: str = "",
              settings: str = "") -> int:
    """Record a grading run: when, with which tool, course, stages and settings (the judge's limits and sandbox
    mode, as JSON), and how learner code was isolated."""
    with connection:
        cursor = connection.execute(
            "INSERT INTO runs (started_at, tool_version, course_version, stages, jobs, network, submissions, sandbox, "
            "shard, settings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (started_at, tool_version, course_version, stages, jobs, network, submissions, sandbox, shard, settings))
    return int(cursor.lastrowid or 0)


def finish_run(connection: sqlite3.Connection, run_id: int, finished_at: str) -> None:
    with connection:
        connection.execute("UPDATE runs SET finished_at = ? WHERE run_id = ?", (finished_at, run_id))


def record(connection: sqlite3.Connection, run_id: int, record: SubmissionRecord, items: list[GradeItem],
           timings: Iterable[tuple[str, str, float]], tests: Iterable[TestResult] = (),
           facts: Iterable[tuple[str, StageFacts]] = (), modules: Iterable[HandedModule] = ()) -> None:
    """Replace this submission's rows for the stages in ``items`` (grades, tests and facts) and keep the run's
    timings."""
    unique: dict[tuple[str, str], GradeItem] = {}
    for item in items:  # one row per stage and item, whatever a caller passed (the last one wins)
        if item.submission == record.submission:
            unique[(item.stage, item.item)] = item
    items = list(unique.values())
    stages = sorted({item.stage for item in items})
    with connection:
        connection.execute(
            "INSERT INTO submissions (submission, content_sha256, source, kind) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(submission) DO UPDATE SET content_sha256 = excluded.content_sha256, "
            "source = excluded.source, kind = excluded.kind",
            (record.submission, record.content_sha256, record.source, record.kind))
        for table in ("grades", "tests", "facts", "modules"):
            connection.executemany(f"DELETE FROM {table} WHERE submission = ? AND stage = ?",
                                   [(record.submission, stage) for stage in stages])
        connection.executemany(
            "INSERT INTO grades (submission, stage, item, item_order, points, max_points, outcome, flag, reason) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(i.submission, i.stage, i.item, ITEM_ORDER[i.item], i.points, i.max_points, i.outcome, i.flag, i.reason)
             for i in sorted(items, key=lambda i: i.sort_key)])
        _insert_class_records(connection, record.submission, set(stages), tests, facts)
        _insert_modules(connection, record.submission, set(stages), modules)
        connection.executemany(
            "INSERT OR REPLACE INTO timings (run_id, submission, stage, phase, seconds) VALUES (?, ?, ?, ?, ?)",
            [(run_id, record.submission, stage, phase, float(seconds)) for stage, phase, seconds in timings])


def _insert_class_records(connection: sqlite3.Connection, submission: str, stages: set[str],
                          tests: Iterable[TestResult], facts: Iterable[tuple[str, StageFacts]]) -> None:
    """This submission's test results and stage facts for ``stages`` (inside the caller's transaction)."""
    connection.executemany(
        "INSERT OR REPLACE INTO tests (submission, stage, kind, test, outcome, cause) VALUES (?, ?, ?, ?, ?, ?)",
        sorted((t.submission, t.stage, t.kind, t.test, t.outcome, t.cause) for t in tests
               if t.submission == submission and t.stage in stages))
    connection.executemany(
        "INSERT OR REPLACE INTO facts (submission, stage, facts) VALUES (?, ?, ?)",
        sorted((submission, stage, found.dump()) for stage, found in facts if stage in stages))


def _insert_modules(connection: sqlite3.Connection, submission: str, stages: set[str],
                    modules: Iterable[HandedModule]) -> None:
    connection.executemany(
        "INSERT OR REPLACE INTO modules (submission, stage, module, status, sha256, text) VALUES (?, ?, ?, ?, ?, ?)",
        sorted((submission, m.stage, m.module, str(m.status), m.sha256, m.text) for m in modules if m.stage in stages))


def handed_modules(connection: sqlite3.Connection) -> dict[str, list[HandedModule]]:
    """Every submission's stage modules as handed in, by submission (stages in order)."""
    found: dict[str, list[HandedModule]] = {}
    for submission, stage, module, status, sha256, text in connection.execute(
            "SELECT submission, stage, module, status, sha256, text FROM modules ORDER BY submission, stage"):
        found.setdefault(submission, []).append(HandedModule(stage, module, Status(status), sha256, text))
    return found


def set_similarity(connection: sqlite3.Connection, pairs: list[Pair]) -> None:
    """The flagged pairs replace the table's rows (they are recomputed over the whole gradebook each time)."""
    with connection:
        connection.execute("DELETE FROM similarity")
        connection.executemany(
            "INSERT INTO similarity (stage, submission, other, other_kind, percent, other_percent, tokens, page) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(p.stage, p.submission, p.other, str(p.kind), p.percent, p.other_percent, p.tokens, p.page)
             for p in pairs])


def similarity_pairs(connection: sqlite3.Connection) -> list[Pair]:
    """The flagged pairs, in a stable order: stage, submission, other."""
    return [Pair(stage, submission, other, Kind(kind), percent, other_percent, tokens, page)
            for stage, submission, other, kind, percent, other_percent, tokens, page in connection.execute(
                "SELECT stage, submission, other, other_kind, percent, other_percent, tokens, page FROM similarity "
                "ORDER BY stage, submission, other")]


def rows(connection: sqlite3.Connection, submissions: list[str] | None = None) -> list[GradeItem]:
    """Grade rows in a stable order: submission, stage, item order."""
    query = ("SELECT submission, stage, item, points, max_points, outcome, reason, flag FROM grades "
             "ORDER BY submission, stage, item_order")
    found = [GradeItem(*row) for row in connection.execute(query)]
    return [row for row in found if submissions is None or row.submission in submissions]


def test_results(connection: sqlite3.Connection) -> list[TestResult]:
    """Every course test of every graded submission, in a stable order: submission, stage, kind, test."""
    return [TestResult(*row) for row in connection.execute(
        "SELECT submission, stage, kind, test, outcome, cause FROM tests ORDER BY submission, stage, kind, test")]


def stage_facts(connection: sqlite3.Connection) -> list[tuple[str, str, StageFacts]]:
    """(submission, stage, facts) for every graded submission's stages, in a stable order."""
    return [(submission, stage, StageFacts.load(text)) for submission, stage, text in connection.execute(
        "SELECT submission, stage, facts FROM facts ORDER BY submission, stage")]


@dataclass(frozen=True)
class RunRecord:
    """One grading run as the gradebook keeps it (a merged gradebook holds each shard's runs)."""

    started_at: str
    finished_at: str | None
    tool_version: str
    course_version: str
    stages: str
    jobs: int
    submissions: int
    sandbox: str
    shard: str
    merged_from: str


def run_records(connection: sqlite3.Connection) -> list[RunRecord]:
    return [RunRecord(*row) for row in connection.execute(
        "SELECT started_at, finished_at, tool_version, course_version, stages, jobs, submissions, sandbox, shard, "
        "merged_from FROM runs ORDER BY run_id")]


def _cell(value: object) -> object:
    """A text cell that a spreadsheet will not run as a formula (learners control some of the text)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _csv(rows: Iterable[Iterable[object]]) -> str:
    """CSV text with one ``\\n``-ended line per row. A cell that holds a line break — ``\\n`` or a lone ``\\r``,
    e.g. in a submission folder's name — is quoted (QUOTE_MINIMAL), so every row stays one record for any reader."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)  # both characters trigger quoting
    lines = []
    for row in rows:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(row)
        lines.append(buffer.getvalue()[:-2] + "\n")
    return "".join(lines)


PARTIAL_COLUMN = "partial"  # a last column, only in a gradebook merged with --allow-partial (see partial_note)


def partial_note(connection: sqlite3.Connection) -> str:
    """'' for a whole gradebook; for one merged without some shards of its split, the words that say which."""
    _found, missing = shards_read(run_records(connection))
    return _("partial: shard(s) {missing} missing").format(missing=_(", ").join(missing)) if missing else ""


def csv_text(items: list[GradeItem], partial: str = "", pairs: list[Pair] | None = None) -> str:
    """``similarity`` names, on the first row of a stage, the flagged pairs of that submission's module (the other
    side, the share, the side-by-side page); ``partial`` (see :func:`partial_note`) adds a last column that says so on
    every line."""
    extra: list[object] = [partial] if partial else []
    first = {(item.submission, item.stage): item for item in reversed(items)}
    return _csv([[*CSV_COLUMNS, *([PARTIAL_COLUMN] if partial else [])],
                 *([_cell(item.submission), item.stage, item.item, item.points, item.max_points,
                    item.outcome, _cell(item.reason), item.flag,
                    _cell(cell(pairs or [], item.submission, item.stage)) if first[(item.submission, item.stage)] is item
                    else "", *extra] for item in items)])


def totals_text(items: list[GradeItem], partial: str = "", pairs: list[Pair] | None = None) -> str:
    """One line per submission: points per stage, the total, how many items need review, the flagged similar pairs
    (``similarity``: stage, the other side, the share, the side-by-side page), and ``partial``, as in
    :func:`csv_text`."""
    stages = sorted({item.stage for item in items})
    by_sub: dict[str, list[GradeItem]] = {}
    for item in items:
        by_sub.setdefault(item.submission, []).append(item)
    extra: list[object] = [partial] if partial else []
    lines: list[list[object]] = [["submission", *[f"stage_{s}" for s in stages], "points", "max_points", "review_items",
                                  "similarity", *([PARTIAL_COLUMN] if partial else [])]]
    for sub in sorted(by_sub):
        mine = by_sub[sub]
        per_stage = []
        for stage in stages:
            rows_ = [i for i in mine if i.stage == stage]
            per_stage.append(f"{sum(i.points for i in rows_)}/{sum(i.max_points for i in rows_)}" if rows_ else "")
        lines.append([_cell(sub), *per_stage, sum(i.points for i in mine), sum(i.max_points for i in mine),
                      sum(1 for i in mine if i.flag), _cell(cell(pairs or [], sub)), *extra])
    return _csv(lines)


def export(connection: sqlite3.Connection, out: Path) -> tuple[Path, Path]:
    items, pairs = rows(connection), similarity_pairs(connection)
    grades, totals = out / CSV_NAME, out / TOTALS_NAME
    partial = partial_note(connection)
    grades.write_text(csv_text(items, partial, pairs), encoding="utf-8")
    totals.write_text(totals_text(items, partial, pairs), encoding="utf-8")
    return grades, totals


def set_feedback_pages(connection: sqlite3.Connection, pages: dict[str, str]) -> None:
    """Record which feedback page (file name under feedback/) belongs to each submission."""
    with connection:
        connection.executemany("UPDATE submissions SET feedback_page = ? WHERE submission = ?",
                               [(page, submission) for submission, page in sorted(pages.items())])


def submission_records(connection: sqlite3.Connection) -> list[SubmissionRecord]:
    return [SubmissionRecord(*row) for row in connection.execute(
        "SELECT submission, content_sha256, source, kind FROM submissions ORDER BY submission")]


# ---------------------------------------------------------------- merging shards


@dataclass(frozen=True)
class Shard:
    path: Path
    records: list[SubmissionRecord]
    items: list[GradeItem]
    runs: list[tuple[object, ...]]
    timings: list[tuple[object, ...]]
    tests: dict[str, list[TestResult]]  # by submission
    facts: dict[str, list[tuple[str, StageFacts]]]  # by submission: (stage, facts)
    modules: dict[str, list[HandedModule]]  # by submission: the stage modules as handed in

    def class_records(self, submission: str) -> tuple[list[TestResult], list[tuple[str, StageFacts]]]:
        return self.tests.get(submission, []), self.facts.get(submission, [])


def read_shard(folder: Path) -> Shard:
    """The gradebook of one grading run's ``--out`` folder, checked against its seal first (:mod:`seal`)."""
    path = folder / FILENAME
    if not path.is_file():
        raise GradebookError(_("{folder} holds no {file}: give the --out folder of a `forgelab grade --shard` run").format(
            folder=folder, file=FILENAME))
    try:
        seal.check(folder, path)
    except seal.SealError as error:
        raise GradebookError(str(error)) from None
    connection = open_gradebook(path)
    try:
        runs = list(connection.execute("SELECT run_id, started_at, finished_at, tool_version, course_version, stages, "
                                       "jobs, network, submissions, sandbox, shard, settings, merged_from FROM runs "
                                       "ORDER BY run_id"))
        timings = list(connection.execute("SELECT run_id, submission, stage, phase, seconds FROM timings"))
        tests: dict[str, list[TestResult]] = {}
        for test in test_results(connection):
            tests.setdefault(test.submission, []).append(test)
        facts: dict[str, list[tuple[str, StageFacts]]] = {}
        for submission, stage, found in stage_facts(connection):
            facts.setdefault(submission, []).append((stage, found))
        return Shard(folder, submission_records(connection), rows(connection), runs, timings, tests, facts,
                     handed_modules(connection))
    finally:
        connection.close()


def merge(folders: list[Path], into: Path, allow_partial: bool = False) -> tuple[sqlite3.Connection,
                                                                               list[SubmissionRecord]]:
    """One gradebook from the shards' gradebooks: the same rows a single run would have written.

    Refused: a shard that is not sealed or no longer matches its seal (:func:`read_shard`), shards graded
    differently, a submission graded in two shards with different rows, and — unless ``allow_partial`` — a split
    with a shard missing (a partial merge says so wherever it is shown: :func:`partial_note`).
    """
    shards = [read_shard(folder) for folder in folders]
    _same_grading(shards)
    _found, missing = split_of([str(run[10] or "") for shard in shards for run in shard.runs])
    if missing and not allow_partial:
        raise GradebookError(_("shard(s) {missing} of this split are missing: give every shard's --out folder (their "
                               "submissions would not be in the merged gradebook), or merge with --allow-partial to "
                               "get a gradebook marked partial").format(missing=_(", ").join(missing)))
    into.mkdir(parents=True, exist_ok=True)
    target = into / FILENAME
    if target.exists() and any(target.resolve() == (s.path / FILENAME).resolve() for s in shards):
        raise GradebookError(_("--into {into} is one of the shards: merge into a new folder").format(into=into))
    if target.exists():
        target.unlink()
    connection = open_gradebook(target)
    seen: dict[str, tuple[SubmissionRecord, list[GradeItem], Path, Shard]] = {}
    for shard in shards:
        for record in shard.records:
            mine = sorted((item for item in shard.items if item.submission == record.submission), key=lambda i: i.sort_key)
            if record.submission in seen:
                earlier, earlier_items, where, other = seen[record.submission]
                if earlier_items != mine or earlier.content_sha256 != record.content_sha256 \
                        or other.class_records(record.submission) != shard.class_records(record.submission):
                    connection.close()
                    raise GradebookError(_("submission {submission} was graded differently in {one} and {other}: grade "
                                           "it once (each submission belongs to one shard)").format(
                        submission=repr(record.submission), one=where, other=shard.path))
                continue
            seen[record.submission] = (record, mine, shard.path, shard)
    for shard in shards:
        for run in shard.runs:
            with connection:
                cursor = connection.execute(
                    "INSERT INTO runs (started_at, finished_at, tool_version, course_version, stages, jobs, network, "
                    "submissions, sandbox, shard, settings, merged_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*run[1:12], run[12] or str(shard.path)))
                new_id = cursor.lastrowid
                connection.executemany(
                    "INSERT OR REPLACE INTO timings (run_id, submission, stage, phase, seconds) VALUES (?, ?, ?, ?, ?)",
                    [(new_id, *timing[1:]) for timing in shard.timings if timing[0] == run[0]])
    for submission in sorted(seen):
        record, mine, _where, shard = seen[submission]
        tests, facts = shard.class_records(submission)
        record_rows(connection, record, mine, tests, facts, shard.modules.get(submission, []))
    return connection, [seen[name][0] for name in sorted(seen)]


def _same_grading(shards: list[Shard]) -> None:
    """Shards merge only when they were graded alike: the same course version, stages and settings (limits and
    sandbox). Rows graded otherwise would not mean the same, so the merge is refused, naming the difference."""
    first: tuple[Path, tuple[object, ...]] | None = None
    for shard in shards:
        for run in shard.runs:
            course_version, stages, settings = run[4], run[5], run[11]
            if not settings:
                raise GradebookError(_("{shard} was graded by a forgelab that did not record its settings: grade that "
                                       "shard again with this forgelab, then merge").format(shard=shard.path))
            settings = _graded_alike(str(settings))
            if first is None:
                first = (shard.path, (course_version, stages, settings))
                continue
            where, (course_0, stages_0, settings_0) = first
            if stages != stages_0:
                raise GradebookError(_("{one} was graded with stages {stages_one} but {other} with stages {stages_other}: "
                                       "grade every shard with the same --stages, then merge").format(
                    one=where, stages_one=stages_0, other=shard.path, stages_other=stages))
            if course_version != course_0:
                raise GradebookError(_("{one} was graded with course version {version_one} but {other} with "
                                       "{version_other}: grade every shard with the same course, then merge").format(
                    one=where, version_one=course_0, other=shard.path, version_other=course_version))
            if settings != settings_0:
                differ = _settings_difference(str(settings_0), str(settings))
                raise GradebookError(_("{one} and {other} were graded with different settings ({differ}): grade every "
                                       "shard with the same limits and sandbox mode, then merge").format(
                    one=where, other=shard.path, differ=differ))
    _same_split(shards)


def _same_split(shards: list[Shard]) -> None:
    """Shards K/N merge only with shards of the same N: another N is another split of the submissions, whose
    slices overlap or leave some out."""
    counts: dict[str, tuple[str, Path]] = {}
    for shard in shards:
        for run in shard.runs:
            text = str(run[10] or "")
            if "/" in text:
                counts.setdefault(text.split("/", 1)[1], (text, shard.path))
    if len(counts) > 1:
        (one, (shard_a, where_a)), (two, (shard_b, where_b)) = sorted(counts.items())[:2]
        raise GradebookError(_("{where_a} is shard {shard_a} but {where_b} is shard {shard_b}: shards of {one} and of "
                               "{two} split the submissions differently; merge the shards of one split (the same N in "
                               "every --shard K/N)").format(where_a=where_a, shard_a=shard_a, where_b=where_b,
                                                            shard_b=shard_b, one=one, two=two))


def shards_read(runs: list[RunRecord]) -> tuple[list[str], list[str]]:
    """The shards a gradebook's runs came from (``K/N``, in order) and the shards of that split that are missing."""
    return split_of([run.shard for run in runs])


def split_of(shards: list[str]) -> tuple[list[str], list[str]]:
    """The ``K/N`` shards among ``shards`` (in order) and the shards of their split that are missing."""
    found = sorted({text for text in shards if "/" in text}, key=lambda text: int(text.split("/")[0]))
    if not found:
        return [], []
    count = int(found[0].split("/")[1])
    return found, [f"{index}/{count}" for index in range(1, count + 1) if f"{index}/{count}" not in found]


def _graded_alike(settings: str) -> str:
    """The settings that decide what a row means: all but the language the reasons were worded in (a shard graded
    with ``--lang zh`` merges with one graded in English; the codes, points and outcomes are the same)."""
    import json

    try:
        values = json.loads(settings)
    except ValueError:
        return settings
    if isinstance(values, dict):
        values.pop("language", None)
    return json.dumps(values, sort_keys=True)


def _settings_difference(left: str, right: str) -> str:
    import json

    try:
        one, two = json.loads(left), json.loads(right)
    except ValueError:
        return _("unreadable settings")
    keys = sorted(key for key in set(one) | set(two) if one.get(key) != two.get(key))
    return _(", ").join(_("{key}: {one} and {other}").format(key=key, one=one.get(key), other=two.get(key))
                        for key in keys[:4]) or _("the same values written differently")


def record_rows(connection: sqlite3.Connection, record_: SubmissionRecord, items: list[GradeItem],
                tests: Iterable[TestResult] = (), facts: Iterable[tuple[str, StageFacts]] = (),
                modules: Iterable[HandedModule] = ()) -> None:
    """The submission, its grade rows, test results, stage facts and modules, without timings (used by merge)."""
    with connection:
        connection.execute(
            "INSERT INTO submissions (submission, content_sha256, source, kind) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(submission) DO UPDATE SET content_sha256 = excluded.content_sha256, "
            "source = excluded.source, kind = excluded.kind",
            (record_.submission, record_.content_sha256, record_.source, record_.kind))
        connection.executemany(
            "INSERT OR REPLACE INTO grades (submission, stage, item, item_order, points, max_points, outcome, flag, reason) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(i.submission, i.stage, i.item, ITEM_ORDER[i.item], i.points, i.max_points, i.outcome, i.flag, i.reason)
             for i in sorted(items, key=lambda i: i.sort_key)])
        _insert_class_records(connection, record_.submission, {item.stage for item in items}, tests, facts)
        _insert_modules(connection, record_.submission, {item.stage for item in items}, modules)
