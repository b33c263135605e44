"""`forgelab grade` over generated fixture submissions: the grade and the reason a careful
instructor would give, a batch that always finishes, untouched submissions, and identical rows
when the same submissions are graded twice.

The submissions are built once (see grading_fixtures.py) and graded twice with ``--stages 01
--jobs 2``; under pytest-xdist the work is shared between workers through a file lock, so it is
done once per test session, not once per worker.
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli
from grading_fixtures import build_all, snapshot

# the first test that needs a grading waits for the fixtures to be built and graded (about a minute)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

NAMES = ("correct", "wrong", "hangs", "syntax", "edited-tests", "forged", "hand-edited", "transfer-typo", "trivial")
GRADE_ARGS = ("--stages", "01", "--jobs", "2", "--test-timeout", "2", "--cell-timeout", "20")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _shared(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """``make(folder)`` once per session, shared by xdist workers; its JSON result is cached."""
    base = tmp_path_factory.getbasetemp()
    # under xdist every worker has its own basetemp inside the session's folder: share that one
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "grading-shared"
    folder, done = root / name, root / f"{name}.json"
    with _locked(root / f"{name}.lock"):
        if not done.is_file():
            done.write_text(json.dumps(make(folder)), encoding="utf-8")
    return json.loads(done.read_text(encoding="utf-8"))


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    for name, data in sorted(snapshot(path).items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


@pytest.fixture(scope="session")
def submissions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    def make(folder: Path) -> dict[str, Any]:
        paths = build_all(folder)
        return {"paths": {name: str(path) for name, path in paths.items()},
                "digests": {name: _digest(path) for name, path in paths.items()}}

    return _shared(tmp_path_factory, "submissions", make)


def _grade(submissions: dict[str, Any], out: Path) -> dict[str, Any]:
    paths = [submissions["paths"][name] for name in NAMES]
    result = run_cli(ROOT, "grade", *paths, "--out", str(out), *GRADE_ARGS, timeout=600)
    connection = sqlite3.connect(out / "gradebook.sqlite")
    rows = [list(row) for row in connection.execute(
        "SELECT submission, stage, item, points, max_points, outcome, flag, reason FROM grades "
        "ORDER BY submission, stage, item_order")]
    connection.close()
    return {"returncode": result.returncode, "stdout": result.stdout, "stderr": result.stderr, "rows": rows,
            "out": str(out)}


@pytest.fixture(scope="session")
def first(submissions: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _shared(tmp_path_factory, "first", lambda folder: _grade(submissions, folder))


@pytest.fixture(scope="session")
def second(submissions: dict[str, Any], first: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _shared(tmp_path_factory, "second", lambda folder: _grade(submissions, folder))


def items(graded: dict[str, Any], submission: str) -> dict[str, dict[str, Any]]:
    keys = ("submission", "stage", "item", "points", "max_points", "outcome", "flag", "reason")
    return {row[2]: dict(zip(keys, row)) for row in graded["rows"] if row[0] == submission}


def total(graded: dict[str, Any], submission: str) -> int:
    return sum(row["points"] for row in items(graded, submission).values())


# ---------------------------------------------------------------- the batch


def test_the_batch_finishes_with_a_row_for_every_item(first: dict[str, Any]) -> None:
    assert first["returncode"] == 0, first["stdout"] + first["stderr"]
    assert "Traceback" not in first["stdout"] + first["stderr"]
    for name in NAMES:
        assert len(items(first, name)) == 7, name
        assert f"] {name}: " in first["stdout"]  # a progress line per submission
    assert f"[{len(NAMES)}/{len(NAMES)}]" in first["stdout"]
    assert "no network" in first["stdout"]


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
    assert rows["notebook"]["outcome"] == "partial"
    assert "output differs from the reference" in rows["notebook"]["reason"]
    assert "same_rank_later" in rows["notebook"]["reason"]  # the demonstration line that differs
    assert rows["instructor_checks"]["points"] < rows["instructor_checks"]["max_points"]
    # the rest of the work is sound, and the learner's evidence is honest
    for key in ("fault_lab", "transfer", "design_answer", "evidence"):
        assert rows[key]["outcome"] == "passed", (key, rows[key]["reason"])
    assert not any(row["flag"] for row in rows.values())
    assert 50 < total(first, "wrong") < 100


def test_code_that_hangs_is_a_timeout_never_a_pass(first: dict[str, Any]) -> None:
    rows = items(first, "hangs")
    for key in ("stage_tests", "instructor_checks", "notebook", "transfer"):
        assert rows[key]["outcome"] == "timeout", (key, rows[key]["reason"])
        assert rows[key]["points"] == 0
    assert "Timeout" in rows["stage_tests"]["reason"]
    assert "timed out" in rows["notebook"]["reason"]
    assert rows["fault_lab"]["outcome"] == "passed"  # the lab is a separate, fixed file


def test_a_syntax_error_is_a_graded_error_that_names_file_and_line(first: dict[str, Any]) -> None:
    rows = items(first, "syntax")
    for key in ("stage_tests", "notebook"):
        assert rows[key]["outcome"] == "error" and rows[key]["points"] == 0
        assert "syntax error in forge/instructions.py, line" in rows[key]["reason"]
    assert rows["instructor_checks"]["outcome"] == "error"
    assert rows["transfer"]["points"] == 0


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
    assert "also passes on a known-wrong implementation" in transfer["reason"]
    assert "cannot tell right from wrong" in transfer["reason"]
    # it does pass on the learner's own forge/, and the evidence says so honestly
    assert "1 transfer test(s) passed on your forge/" in transfer["reason"]
    for key in ("stage_tests", "instructor_checks", "notebook", "fault_lab", "design_answer", "evidence"):
        assert rows[key]["outcome"] == "passed", (key, rows[key]["reason"])
    assert total(first, "trivial") == 90
    # the reference transfer test tells the known-wrong implementation from the right one
    correct = items(first, "correct")["transfer"]
    assert correct["points"] == 10 and "fails on a known-wrong implementation, as it should" in correct["reason"]
    page = (Path(first["out"]) / "feedback" / "trivial.html").read_text(encoding="utf-8")
    assert "cannot tell right from wrong" in page and "Your instructor will look at this item personally." in page


def test_instructor_checks_appear_by_name_and_outcome_only(first: dict[str, Any]) -> None:
    out = Path(first["out"])
    page = (out / "feedback" / "wrong.html").read_text(encoding="utf-8")
    gradebook = (out / "gradebook.csv").read_text(encoding="utf-8")
    assert "test_random_instruction_sets_match_the_contract" in page
    source = (ROOT / "instructor" / "checks" / "test_01_instruction_hierarchy.py").read_text(encoding="utf-8")
    leaks = [line.strip() for line in source.splitlines() if line.strip().startswith(("assert", "def oracle", "for items"))]
    assert leaks
    for text in (page, gradebook):
        for line in leaks:
            assert line not in text
        assert "expected_accepted" not in text and "oracle" not in text


def test_feedback_pages_explain_each_item_in_plain_words(first: dict[str, Any]) -> None:
    out = Path(first["out"])
    for name in NAMES:
        page = (out / "feedback" / f"{name}.html").read_text(encoding="utf-8")
        assert page.startswith("<!doctype html>")
        assert "Stage 01" in page and "Next step" in page or name == "correct"
    hangs = (out / "feedback" / "hangs.html").read_text(encoding="utf-8")
    assert "ran longer than the time limit" in hangs
    with (out / "totals.csv").open(encoding="utf-8") as handle:
        totals = {row["submission"]: row for row in csv.DictReader(handle)}
    assert totals["correct"]["points"] == "100" and totals["forged"]["review_items"] == "1"


def test_submissions_are_byte_identical_after_grading(submissions: dict[str, Any], second: dict[str, Any]) -> None:
    for name, path in submissions["paths"].items():
        assert _digest(Path(path)) == submissions["digests"][name], f"{name} was written during grading"


def test_grading_twice_gives_identical_rows(first: dict[str, Any], second: dict[str, Any]) -> None:
    assert second["returncode"] == 0
    assert first["rows"] == second["rows"]
    first_csv = (Path(first["out"]) / "gradebook.csv").read_text(encoding="utf-8")
    assert first_csv == (Path(second["out"]) / "gradebook.csv").read_text(encoding="utf-8")


def test_the_gradebook_keeps_time_apart_from_grades(first: dict[str, Any]) -> None:
    from forgelab.grading.gradebook import SCHEMA_VERSION

    connection = sqlite3.connect(Path(first["out"]) / "gradebook.sqlite")
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    columns = [row[1] for row in connection.execute("PRAGMA table_info(grades)")]
    assert not any("time" in column or column.endswith("_s") or column.endswith("_at") for column in columns)
    started, finished = connection.execute("SELECT started_at, finished_at FROM runs").fetchone()
    assert started and finished
    phases = {row[0] for row in connection.execute("SELECT DISTINCT phase FROM timings")}
    assert {"tests_s", "kernel_start_s", "notebook_execution_s", "worker_wall_s"} <= phases
    connection.close()
