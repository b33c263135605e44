"""Issue 30 (5): the class report shows only course-authored text, counts and numbers.

Two or more submissions that raise the same message naming a third person used to get that message listed as a
common first difference in report.json and report.html (escaped, but with the name and the e-mail). Now a first
difference is shown as its kind and, for values that differ, the path into the course's expected value, each name
of which must be a word of the course's own files (forgelab/grading/report.py: course_difference).
The class is analysed from test results as grading stores them, without grading anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import ROOT

from forgelab.core.i18n import speaking
from forgelab.core.registry import load_course
from forgelab.grading import gradebook, report_page
from forgelab.grading.class_facts import STAGE_TEST, StageFacts
from forgelab.grading.class_facts import TestResult as Result  # not a test class
from forgelab.grading.report import ClassReport, analyse, course_difference, course_words, difference_words
from forgelab.grading.rubric import GradeItem

CAROL = "Carol Jones (student 4711, carol@example.edu) copied this lab from her neighbour"
SECRETS = ("Carol", "carol", "4711", "example.edu", "neighbour")
COURSE = load_course(ROOT)


def _report(causes: dict[str, str], min_class: int = 5) -> ClassReport:
    """Each submission fails the first stage-01 test with its cause (as grading stored it) and passes the rest."""
    names = COURSE.stage("01").required_tests
    tests, grades, facts = [], [], []
    for submission, cause in causes.items():
        for index, name in enumerate(names):
            failed = index == 0 and bool(cause)
            tests.append(Result(submission, "01", STAGE_TEST, name, "failed" if failed else "passed",
                                    cause if failed else ""))
        grades.append(GradeItem(submission, "01", "stage_tests", 30, 40, "partial", ""))
        facts.append((submission, "01", StageFacts(transfer="passed")))
    runs = [gradebook.RunRecord("2026-03-02T09:00:00Z", "2026-03-02T09:01:00Z", "0.1.0", COURSE.version, "01", 2,
                                len(causes), "", "", "")]
    return analyse(COURSE, grades, tests, facts, runs, min_class)


def _listed(report: ClassReport) -> list[tuple[str, int]]:
    return [(d.words(), d.count) for d in report.stage_figures[0].tests[0].differences]


def _everything_shown(report: ClassReport, folder: Path) -> dict[str, str]:
    """report.json, and report.html with its figures in both editions, as `forgelab grade report --html` writes them."""
    shown = {"report.json": report.model_dump_json()}
    for language in ("en", "zh"):
        with speaking(language):
            report_page.write(COURSE, report, folder / language)
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            shown[path.relative_to(folder).as_posix()] = path.read_text(encoding="utf-8")
    return shown


def test_a_message_naming_a_third_person_is_never_published(tmp_path: Path) -> None:
    """The issue's case: submissions raise the same message that names someone; more raise it with their own
    exception class, one puts it into an assertion message with a first-difference path of its own."""
    causes = {
        "ana": f"ValueError: {CAROL}",
        "bo": f"ValueError: {CAROL}",
        "cai": f"forge/instructions.py, line 12: CarolJones4711Error: {CAROL}",
        "dee": f"forge/instructions.py, line 12: CarolJones4711Error: {CAROL}",
        "eva": f"First difference at ['carol_4711']: got '{CAROL}', expected 'markdown'",
        "fin": f"First difference at ['carol_4711']: got '{CAROL}', expected 'markdown'",
        "gus": "",
    }
    report = _report(causes)
    assert _listed(report) == [("raised ValueError", 2), ("values differ", 2)]  # the kinds, never the message
    assert report.stage_figures[0].tests[0].unshared == 2  # the learners' own exception class is not named
    shown = _everything_shown(report, tmp_path)
    assert len(shown) >= 3 and any("raised ValueError" in text for text in shown.values())
    for where, text in shown.items():
        assert not [secret for secret in SECRETS if secret in text], where


def _said(outcome: str, cause: str, words: frozenset[str]) -> str:
    found = course_difference(outcome, cause, words)
    return difference_words(*found) if found is not None else ""


def test_a_first_difference_keeps_its_path_into_the_course_s_expected_value() -> None:
    words = course_words(COURSE)
    assert "format" in words and "carol_4711" not in words
    said = _said("failed", "First difference at ['format']: got 'plain text', expected 'markdown'", words)
    assert said == "values differ at ['format']"
    assert _said("failed", "First difference at [1].reason (character 3): got 'x…', expected 'y…'",
                             words) == "values differ at [1].reason"
    assert _said("failed", "First difference at [2]['carol_4711'][0]: got 1, expected 2",
                             words) == "values differ at [2]"  # the path stops before a name the course never wrote
    assert _said("failed", "First difference at the top level: got 1, expected 2",
                             words) == "values differ at the top level"
    assert _said("failed", "assert 'Carol' == 'markdown'", words) == "an assertion failed"
    assert _said("failed", "AssertionError: Carol Jones", words) == "an assertion failed"
    assert _said("failed", "Carol Jones (student 4711) copied this", words) == ""
    assert _said("timeout", "your code used more than 10 s of CPU time; Carol", words) == "stopped at a limit"
    assert _said("error", "error in setup: Carol", words) == "could not run"
    with speaking("zh"):
        assert _said("failed", "第一处差异在 ['format']：得到 'plain text'，期望 'markdown'",
                                 words) == _said("failed", "First difference at ['format']: x", words)


def test_medians_over_a_group_smaller_than_min_class_are_withheld() -> None:
    def recorded(minutes: int) -> Any:
        return StageFacts(transfer="passed", learning="recorded", hints_deepest=2, hints_available=6,
                          first_check_at="2026-03-02T09:00:00Z", accepted_at=f"2026-03-02T09:{minutes:02d}:00Z")

    class_ = {name: "" for name in ("ana", "bo", "cai", "dee", "eva", "fin")}
    report = _report(class_)
    stage = report.stage_figures[0]
    assert stage.accepted_timed == 0 and stage.median_minutes_to_accept is None
    names = COURSE.stage("01").required_tests
    for count, expected in ((2, None), (5, 30.0)):  # 2 learners' own times are withheld; 5 are a group
        tests = [Result(n, "01", STAGE_TEST, names[0], "passed", "") for n in class_]
        grades = [GradeItem(n, "01", "stage_tests", 40, 40, "passed", "") for n in class_]
        facts = [(n, "01", recorded(10 * (i + 1)) if i < count else StageFacts(transfer="passed"))
                 for i, n in enumerate(class_)]
        runs = [gradebook.RunRecord("t", "u", "0.1.0", COURSE.version, "01", 1, len(class_), "", "", "")]
        stage = analyse(COURSE, grades, tests, facts, runs, 5).stage_figures[0]
        assert (stage.accepted_timed, stage.median_minutes_to_accept, stage.hints.median) == (
            count, expected, None if expected is None else 2.0)
        with speaking("en"):
            page = report_page.render(COURSE, analyse(COURSE, grades, tests, facts, runs, 5),
                                      {name: "" for name in ("score-distribution", "failure-heat-map", "discrimination")})
        assert ("withheld: 2 record(s), fewer than --min-class 5" in page) == (expected is None)
