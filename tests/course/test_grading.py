"""`forgelab grade` over generated fixture submissions: the grade and the reason a careful
instructor would give, a batch that always finishes, untouched submissions, and identical rows
when the same submissions are graded twice — once at ``--jobs 2``, once at ``--jobs 1``.

The submissions are built once (see grading_fixtures.py) and graded twice with ``--stages 01``;
under pytest-xdist the work is shared between workers through a file lock, so it is done once per
test session, not once per worker.
"""

from __future__ import annotations

import csv
import html
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli
from grading_fixtures import digest, shared, shared_submissions

# the first test that needs a grading waits for the fixtures to be built and graded (about a minute)
# one xdist worker takes the whole module: a second worker with one of its tests only waited for the shared batches
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("grading")]

NAMES = ("correct", "wrong", "hangs", "syntax", "edited-tests", "forged", "hand-edited", "transfer-typo", "trivial")
GRADE_ARGS = ("--stages", "01", "--cpu-limit", "2")
CSV_COLUMNS = ["submission", "stage", "item", "points", "max_points", "outcome", "reason", "flag", "similarity"]
ROW_KEYS = ("submission", "stage", "item", "points", "max_points", "outcome", "flag", "reason")


@pytest.fixture(scope="session")
def submissions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared_submissions(tmp_path_factory)


def _grade(submissions: dict[str, Any], out: Path, jobs: int) -> dict[str, Any]:
    paths = [submissions["paths"][name] for name in NAMES]
    result = run_cli(ROOT, "grade", *paths, "--out", str(out), "--jobs", str(jobs), *GRADE_ARGS, timeout=800)
    connection = sqlite3.connect(out / "gradebook.sqlite")
    rows = [list(row) for row in connection.execute(
        f"SELECT {', '.join(ROW_KEYS)} FROM grades ORDER BY submission, stage, item_order")]
    pages = dict(connection.execute("SELECT submission, feedback_page FROM submissions"))
    connection.close()
    return {"returncode": result.returncode, "stdout": result.stdout, "stderr": result.stderr, "rows": rows,
            "out": str(out), "pages": pages,
            "digests_after": {name: digest(Path(path)) for name, path in submissions["paths"].items()}}


@pytest.fixture(scope="session")
def first(submissions: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "first", lambda folder: _grade(submissions, folder, jobs=2))


@pytest.fixture(scope="session")
def second(submissions: dict[str, Any], first: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "second", lambda folder: _grade(submissions, folder, jobs=1))


def items(graded: dict[str, Any], submission: str) -> dict[str, dict[str, Any]]:
    return {row[2]: dict(zip(ROW_KEYS, row)) for row in graded["rows"] if row[0] == submission}


def total(graded: dict[str, Any], submission: str) -> int:
    return sum(row["points"] for row in items(graded, submission).values())


def page(graded: dict[str, Any], submission: str) -> str:
    return (Path(graded["out"]) / "feedback" / graded["pages"][submission]).read_text(encoding="utf-8")


# ---------------------------------------------------------------- the batch


def test_the_batch_finishes_with_a_row_for_every_item(first: dict[str, Any]) -> None:
    assert first["returncode"] == 0, first["stdout"] + first["stderr"]
    assert "Traceback" not in first["stdout"] + first["stderr"]
    for name in NAMES:
        assert len(items(first, name)) == 7, name
        assert f"] {name}: " in first["stdout"]  # a progress line per submission
    assert f"[{len(NAMES)}/{len(NAMES)}]" in first["stdout"]
    assert "sandbox: bubblewrap" in first["stdout"] and "no network" in first["stdout"]
    assert "limits: 2 s of CPU time" in first["stdout"]


def test_a_complete_correct_submission_gets_full_marks(first: dict[str, Any]) -> None:
    rows = items(first, "correct")
    assert {key: row["outcome"] for key, row in rows.items()} == {key: "passed" for key in rows}
    assert total(first, "correct") == 100
    assert not any(row["flag"] for row in rows.values())


def test_same_rank_last_wins_loses_test_and_notebook_points_with_the_reason(first: dict[str, Any]) -> None:
    rows = items(first, "wrong")
    tests = rows["stage_tests"]
    assert tests["outcome"] == "partial" and 0 < tests["points"] < tests["max_points"]
    assert "test_same_rank_conflict_keeps_the_earlier_instruction" in tests["reason"]
    assert "First difference" in tests["reason"]  # what differs, not only that something does
    assert rows["notebook"]["outcome"] == "partial"
    assert "output differs from the reference" in rows["notebook"]["reason"]
    assert "winners, rejections = explain(" in rows["notebook"]["reason"]  # the demonstration cell that differs
    assert rows["instructor_checks"]["points"] < rows["instructor_checks"]["max_points"]
    # the rest of the work is sound, and the learner's evidence is honest
    for key in ("fault_lab", "transfer", "design_answer", "evidence"):
        assert rows[key]["outcome"] == "passed", (key, rows[key]["reason"])
    assert not any(row["flag"] for row in rows.values())
    assert 50 < total(first, "wrong") < 100


def test_code_that_hangs_is_a_timeout_never_a_pass(first: dict[str, Any]) -> None:
    rows = items(first, "hangs")
    assert rows["stage_tests"]["outcome"] == "timeout" and rows["stage_tests"]["points"] == 0
    # the transfer test is judged on the course's implementations, where nothing hangs: it is sound, and earns its points
    assert rows["transfer"]["outcome"] == "passed", rows["transfer"]["reason"]
    assert "on the course's reference implementation" in rows["transfer"]["reason"]
    assert "more than 2 s of CPU time" in rows["stage_tests"]["reason"]
    assert "loop that never ends" in rows["stage_tests"]["reason"]
    for key in ("instructor_checks", "notebook"):
        assert rows[key]["points"] == 0
        assert "hit a limit" in rows[key]["reason"] or "not run" in rows[key]["reason"], rows[key]["reason"]


def test_items_not_run_because_the_code_hangs_are_timeouts_too(first: dict[str, Any]) -> None:
    """The instructor checks and the notebook cells of a hanging module were not run *because* of the hang:
    the feedback should say "stopped at a limit", not "not yet"."""
    rows = items(first, "hangs")
    for key in ("instructor_checks", "notebook"):
        assert rows[key]["outcome"] == "timeout", (key, rows[key]["outcome"], rows[key]["reason"][:200])


def test_a_hang_in_the_stage_module_does_not_spoil_the_fixed_fault_lab(first: dict[str, Any]) -> None:
    """The lab is a separate, fixed file: its tests run against their own target and must pass."""
    lab = items(first, "hangs")["fault_lab"]
    assert (lab["outcome"], lab["points"]) == ("passed", 10), lab["reason"]


def test_a_syntax_error_is_a_graded_error_that_names_file_and_line(first: dict[str, Any]) -> None:
    rows = items(first, "syntax")
    for key in ("stage_tests", "notebook"):
        assert rows[key]["outcome"] == "error" and rows[key]["points"] == 0
        assert "syntax error in forge/instructions.py, line 45" in rows[key]["reason"]
    assert rows["instructor_checks"]["outcome"] == "error"
    assert rows["transfer"]["points"] == 10  # the test is sound: judged on the course's implementations, not on forge/
    assert rows["fault_lab"]["outcome"] == "passed"  # the lab's own file has no syntax error


def test_edited_stage_tests_are_not_used_and_are_reported(first: dict[str, Any]) -> None:
    rows = items(first, "edited-tests")
    # graded with the course's tests: the edited ones do not help
    assert rows["stage_tests"] == {**items(first, "wrong")["stage_tests"], "submission": "edited-tests"}
    evidence = rows["evidence"]
    assert evidence["points"] == 0 and evidence["flag"] == "review"
    assert "the stage tests were edited" in evidence["reason"]
    assert "claims more than grading saw" in evidence["reason"]


def test_evidence_that_claims_passes_it_does_not_have_is_flagged(first: dict[str, Any]) -> None:
    forged = items(first, "forged")["evidence"]
    assert forged["points"] == 0 and forged["flag"] == "review"
    assert "claims more than grading saw" in forged["reason"]
    assert "test_same_rank_conflict_keeps_the_earlier_instruction" in forged["reason"]
    assert "integrity" not in forged["reason"]  # resealed: the digest holds, the claims do not
    edited = items(first, "hand-edited")["evidence"]
    assert edited["points"] == 0 and edited["flag"] == "review"
    assert "integrity digest does not match" in edited["reason"]
    # everything else is graded from the code, as for the honest wrong submission
    for key in ("stage_tests", "notebook", "instructor_checks"):
        assert items(first, "forged")[key]["points"] == items(first, "wrong")[key]["points"]
        assert items(first, "hand-edited")[key]["points"] == items(first, "wrong")[key]["points"]


def test_a_broken_transfer_test_costs_the_transfer_item_only(first: dict[str, Any]) -> None:
    rows = items(first, "transfer-typo")
    assert rows["transfer"]["outcome"] == "error" and rows["transfer"]["points"] == 0
    assert "could not collect" in rows["transfer"]["reason"]
    for key in ("stage_tests", "instructor_checks", "notebook", "fault_lab", "design_answer"):
        assert rows[key]["outcome"] == "passed", (key, rows[key]["reason"])
    # its evidence still claims the transfer test passed: produced for another version of that file
    evidence = rows["evidence"]
    assert evidence["flag"] == "review"
    assert "produced for other versions of transfer/test_01_instruction_hierarchy.py" in evidence["reason"]


def test_a_transfer_test_that_cannot_fail_earns_nothing(first: dict[str, Any]) -> None:
    rows = items(first, "trivial")
    transfer = rows["transfer"]
    assert (transfer["points"], transfer["outcome"], transfer["flag"]) == (0, "failed", "review")
    assert "it passes on the course's reference implementation, but on the stage's known-wrong implementation " \
           "too" in transfer["reason"]
    assert "cannot tell right from wrong" in transfer["reason"]
    # the rest is sound, and the evidence (checked again, not accepted) is honest
    for key in ("stage_tests", "instructor_checks", "notebook", "fault_lab", "design_answer", "evidence"):
        assert rows[key]["outcome"] == "passed", (key, rows[key]["reason"])
    assert total(first, "trivial") == 90
    # the reference transfer test tells the known-wrong implementation from the right one
    correct = items(first, "correct")["transfer"]
    assert correct["points"] == 10 and "1 transfer test(s) pass on the course's reference implementation and fail " \
           "on its known-wrong one, as they should" in correct["reason"]
    text = page(first, "trivial")
    assert "cannot tell right from wrong" in text and "Your instructor will look at this item personally." in text


def test_instructor_checks_appear_by_name_and_outcome_only(first: dict[str, Any]) -> None:
    out = Path(first["out"])
    assert "test_random_instruction_sets_match_the_contract" in page(first, "wrong")
    source = (ROOT / "instructor" / "checks" / "test_01_instruction_hierarchy.py").read_text(encoding="utf-8")
    leaks = [line.strip() for line in source.splitlines()
             if line.strip().startswith(("assert", "def oracle", "for items", "accepted, rejected", "winners"))]
    assert len(leaks) > 5
    texts = [html.unescape(page(first, name)) for name in NAMES]
    texts += [(out / "gradebook.csv").read_text(encoding="utf-8"), first["stdout"]]
    for text in texts:
        for line in leaks:
            assert line not in text
        assert "expected_accepted" not in text and "oracle" not in text and "random_sets(" not in text


def test_feedback_pages_explain_each_item_in_plain_words(first: dict[str, Any]) -> None:
    for name in NAMES:
        text = page(first, name)
        assert text.startswith("<!doctype html>")
        assert "Stage 01" in text and "How this was graded" in text
        assert ("Next step" in text) == (name != "correct"), name
        assert "Traceback" not in text and "/tmp/" not in text and str(ROOT) not in text
    assert "Stopped at a limit: it ran too long or used too much" in page(first, "hangs")
    assert "Not handed in." not in page(first, "correct")
    with (Path(first["out"]) / "totals.csv").open(encoding="utf-8") as handle:
        totals = {row["submission"]: row for row in csv.DictReader(handle)}
    assert totals["correct"]["points"] == "100" and totals["forged"]["review_items"] == "1"
    assert set(totals) == set(NAMES)


def test_submissions_are_byte_identical_after_grading(submissions: dict[str, Any], first: dict[str, Any],
                                                       second: dict[str, Any]) -> None:
    assert first["digests_after"] == submissions["digests"], "a submission was written during grading"
    assert second["digests_after"] == submissions["digests"], "a submission was written during grading"


def test_grading_twice_at_other_jobs_gives_identical_rows_csv_and_pages(first: dict[str, Any],
                                                                          second: dict[str, Any]) -> None:
    assert second["returncode"] == 0, second["stderr"]
    assert first["rows"] == second["rows"]
    first_out, second_out = Path(first["out"]), Path(second["out"])
    for name in ("gradebook.csv", "totals.csv"):
        assert (first_out / name).read_text(encoding="utf-8") == (second_out / name).read_text(encoding="utf-8")
    assert first["pages"] == second["pages"]
    for name in NAMES:
        assert page(first, name) == page(second, name), name


def test_the_gradebook_keeps_time_apart_from_grades(first: dict[str, Any]) -> None:
    from forgelab.grading.gradebook import SCHEMA_VERSION

    connection = sqlite3.connect(Path(first["out"]) / "gradebook.sqlite")
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
    for table in ("grades", "tests", "facts"):  # the class report's records are graded rows too
        columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
        assert columns and not any("time" in column or column.endswith("_s") or column.endswith("_at")
                                   for column in columns), (table, columns)
    started, finished, jobs, sandbox, network, settings = connection.execute(
        "SELECT started_at, finished_at, jobs, sandbox, network, settings FROM runs").fetchone()
    assert started and finished and jobs == 2
    assert json.loads(settings)["test_cpu_s"] == 2 and json.loads(settings)["sandbox"] == "required"
    assert sandbox.startswith("sandbox: bubblewrap") and network == "none"
    phases = {row[0] for row in connection.execute("SELECT DISTINCT phase FROM timings")}
    assert {"copy_s", "stage_tests_s", "instructor_checks_s", "notebook_cells_s", "fault_lab_s", "transfer_s",
            "submission_wall_s"} <= phases
    pages = dict(connection.execute("SELECT submission, feedback_page FROM submissions"))
    connection.close()
    assert pages == {name: f"{name}.html" for name in NAMES}


def test_the_gradebook_csv_has_exactly_the_documented_columns(first: dict[str, Any]) -> None:
    with (Path(first["out"]) / "gradebook.csv").open(encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        body = list(reader)
    assert header == CSV_COLUMNS
    assert len(body) == 7 * len(NAMES)
    as_rows = [[row[0], row[1], row[2], int(row[3]), int(row[4]), row[5], row[7], row[6]] for row in body]
    assert as_rows == first["rows"]


def _graded_in(submissions: dict[str, Any], name: str, sessions: int, settings: Any,
               monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[Any, ...]], list[int]]:
    """``name`` graded (stage 01) with its course tests over ``sessions`` sessions: its items, and the number of
    sessions of every judge run the grading made."""
    from forgelab.core import submission as found
    from forgelab.core.paths import Workbook
    from forgelab.core.registry import load_course
    from forgelab.grading import grader
    from forgelab.judge import core

    course = load_course(ROOT)
    runs: list[int] = []
    real = core.run

    def run(job: Any, *args: Any, **kwargs: Any) -> Any:
        runs.append(job.sessions)
        return real(job, *args, **kwargs)

    monkeypatch.setattr(core, "run", run)
    graded = grader.grade_submission(course, Workbook(ROOT, ROOT), [course.stage("01")],
                                     found.discover([submissions["paths"][name]])[0], settings, sessions)
    monkeypatch.undo()
    return [(item.item, item.points, item.outcome, item.reason, item.flag) for item in graded.items], runs


@pytest.mark.parametrize("name", ["correct", "wrong", "syntax"])
def test_course_tests_split_over_two_sessions_grade_as_one_session_does(submissions: dict[str, Any], name: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """`grade --jobs 1` on two CPUs runs each submission's course tests in two trusted sessions at once."""
    from forgelab.judge.settings import DEFAULT

    one, one_runs = _graded_in(submissions, name, 1, DEFAULT, monkeypatch)
    two, two_runs = _graded_in(submissions, name, 2, DEFAULT, monkeypatch)
    assert (one_runs, two_runs) == ([1], [2])
    assert two == one


def test_a_submission_that_spends_half_its_time_budget_is_graded_again_in_one_session(
        submissions: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each session holds the learner's code to the whole budget: where the sessions spent half of it together, one
    session might have used it up, so the verdicts come from one session, as they would on one CPU."""
    from forgelab.judge.settings import JudgeSettings

    settings = JudgeSettings(test_cpu_s=1, submission_wall_s=3)  # the loop uses 1 s at each of its tests' calls
    _items, runs = _graded_in(submissions, "hangs", 2, settings, monkeypatch)
    assert runs == [2, 1]
    _items, runs = _graded_in(submissions, "correct", 2, settings, monkeypatch)
    assert runs == [2]


def test_the_judges_folder_goes_in_a_thread_and_what_it_leaves_goes_at_exit(submissions: dict[str, Any], tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A full submission's judge folder holds about 3,000 files, whose removal took longer than building its rows,
    similarity check and pages: grade builds them while a thread removes it. The folder is remembered until that
    thread is done, and what it has not removed when the process ends is removed at exit (test_judge_tester proves
    that part in a process of its own), so `forgelab grade` leaves nothing behind."""
    from forgelab.judge import removal

    import tempfile
    import threading

    from forgelab.core import submission as found
    from forgelab.core.paths import Workbook
    from forgelab.core.registry import load_course
    from forgelab.grading import grader
    from forgelab.judge.settings import DEFAULT

    course = load_course(ROOT)
    removing: list[threading.Thread] = []
    start = threading.Thread.start

    def started(thread: threading.Thread) -> None:
        if thread.name == "forgelab-judge-cleanup":
            removing.append(thread)
        start(thread)

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(threading.Thread, "start", started)
    graded = grader.grade_submission(course, Workbook(ROOT, ROOT), [course.stage("01")],
                                     found.discover([submissions["paths"]["correct"]])[0], DEFAULT, 1)
    monkeypatch.undo()
    assert graded.points == graded.max_points
    assert len(removing) == 1
    removing[0].join()
    assert not [folder for folder in removal._pending if folder.parent == tmp_path]
    assert list(tmp_path.iterdir()) == []
