"""The reference is never an oracle: a learner's test run on the course's own code (its reference, a fault variant)
tells the learner which runs passed or failed and the line of the learner's own file where one failed — never a
value, repr or message made while the course's code ran.

A transfer test that fails on purpose with ``repr(explain(case))`` in its assertion message would otherwise read the
reference's answers for inputs it chooses: grading ran it on the reference and showed the first failure message on
the feedback page.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import WorkbookCopy, copy_workbook

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.grading import gradebook
from forgelab.judge import core
from forgelab.judge.core import LearnerTests, TargetSpec
from forgelab.judge.outcomes import Outcome
from forgelab.judge.settings import JudgeSettings
from forgelab.verdicts import jobs

TRANSFER_01 = "transfer/test_01_instruction_hierarchy.py"
# inputs only this test uses: the reference's repr of its answer holds them, and its reason codes
ORACLE_TEST = '''"""Reads the reference's answer through its assertion message."""
from forge.instructions import Instruction, explain


def test_read_the_reference() -> None:
    case = [Instruction("system", "quokka-key", "zebra-first"), Instruction("user", "quokka-key", "zebra-second"),
            Instruction("system", "quokka-key", "zebra-third")]
    winners, rejections = explain(case)
    assert False, "ORACLE " + repr(rejections) + " " + repr(winners)
'''
FAILS_AT = 9  # the assert's line in ORACLE_TEST
# what only the reference's answer holds (the learner's inputs appear in it, and its reason codes)
COURSE_MADE = ("same_rank_later", "lower_rank", "Rejection(", "zebra-", "quokka-", "ORACLE")


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> WorkbookCopy:
    return copy_workbook(tmp_path_factory.mktemp("oracle") / "workbook")


def _run(book: WorkbookCopy, tmp_path: Path, course_code: bool):  # type: ignore[no-untyped-def]
    course = load_course(book.root)
    workbook = Workbook(book.root, book.root)
    test_file = tmp_path / "mine" / "test_01_instruction_hierarchy.py"
    test_file.parent.mkdir(parents=True)
    test_file.write_text(ORACLE_TEST, encoding="utf-8")
    reference = (jobs.starters(workbook) / "forge", book.root / "solutions" / "forge")
    job = jobs.job(course, workbook, [TargetSpec("ref", reference, "01", course_code=course_code)], [],
                   [LearnerTests("ref", ((test_file, TRANSFER_01),))])
    return core.run(job, JudgeSettings(test_cpu_s=5))


def test_a_failure_on_the_course_code_reports_its_outcome_and_the_learners_line_only(
        book: WorkbookCopy, tmp_path: Path) -> None:
    sealed = _run(book, tmp_path / "sealed", course_code=True)
    (row,) = sealed.for_target("ref")
    assert row.outcome is Outcome.FAILED
    assert row.cause == f"at line {FAILS_AT} of {TRANSFER_01}", row
    assert row.detail == "" and row.printed == ""
    # the same run on code that is not the course's (the learner's own forge/) keeps pytest's message: the control
    plain = _run(book, tmp_path / "plain", course_code=False)
    (shown,) = plain.for_target("ref")
    assert "same_rank_later" in shown.cause + shown.detail, shown


def test_a_collection_error_on_the_course_code_names_the_line_only(book: WorkbookCopy, tmp_path: Path) -> None:
    course = load_course(book.root)
    workbook = Workbook(book.root, book.root)
    test_file = tmp_path / "test_01_instruction_hierarchy.py"
    test_file.write_text("from forge.instructions import Instruction, explain\n\n"
                         "raise RuntimeError(repr(explain([Instruction('system', 'k', 'zebra-a'), "
                         "Instruction('user', 'k', 'zebra-b')])))\n", encoding="utf-8")
    reference = (jobs.starters(workbook) / "forge", book.root / "solutions" / "forge")
    job = jobs.job(course, workbook, [TargetSpec("ref", reference, "01", course_code=True)], [],
                   [LearnerTests("ref", ((test_file, TRANSFER_01),))])
    report = core.run(job, JudgeSettings(test_cpu_s=5))
    (error,) = report.collect_errors
    assert error.cause == f"at line 3 of {TRANSFER_01}" and error.detail == "", error
    assert not any(part in str(report) for part in ("zebra-", "lower_rank", "Rejection(")), report


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_transfer_test_that_prints_the_references_answer_finds_none_of_it_on_its_feedback_page(
        book: WorkbookCopy, tmp_path: Path) -> None:
    folder = tmp_path / "alice"
    (folder / "forge").mkdir(parents=True)
    for module in sorted((book.root / "forge").glob("*.py")):
        shutil.copyfile(module, folder / "forge" / module.name)
    shutil.copyfile(book.root / "solutions" / "forge" / "instructions.py", folder / "forge" / "instructions.py")
    (folder / "transfer").mkdir()
    (folder / TRANSFER_01).write_text(ORACLE_TEST, encoding="utf-8")
    out = tmp_path / "out"
    graded = book.run("grade", str(folder), "--stages", "01", "--out", str(out), timeout=800)
    assert graded.returncode == 0, graded.output
    transfer = next(row for row in gradebook.rows(sqlite3.connect(out / "gradebook.sqlite")) if row.item == "transfer")
    assert (transfer.points, transfer.outcome) == (0, "failed"), transfer
    assert f"test_read_the_reference failed: at line {FAILS_AT} of {TRANSFER_01}" in transfer.reason, transfer.reason
    page = next((out / "feedback").glob("*.html")).read_text(encoding="utf-8")
    assert f"at line {FAILS_AT} of {TRANSFER_01}" in page
    for shown in (page, (out / "gradebook.csv").read_text(encoding="utf-8"),
                  (out / "totals.csv").read_text(encoding="utf-8")):
        found = [part for part in COURSE_MADE if part in shown]
        assert not found, found
