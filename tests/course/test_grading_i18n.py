"""Grading in the class's language: the reasons are written in it, and the rows are still recognised in every one.

A Chinese class gets Chinese reasons in its gradebook and on its feedback pages; what scripts read — the columns,
the item keys, the outcome and the flag — is the same in both languages. Rows lost to a grader failure or to a
submission that cannot be laid out are recognised by their reason's opening in either language, so a page
rendered in one language from a gradebook graded in the other still says the grader failed, not the learner.
(The end-to-end run — `forgelab grade --lang zh` on a class of two — is tests/course/test_cli_chinese.py.)
"""

from __future__ import annotations

import re

import pytest

from conftest import ROOT
from forgelab.core.files import LayoutError, Problem
from forgelab.core.i18n import speaking
from forgelab.core.registry import load_course
from forgelab.grading import feedback, items
from forgelab.grading.rubric import ERROR, REGRADE

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def course():  # type: ignore[no-untyped-def]
    return load_course(ROOT)


def _rows(course, language: str, reason: str, flag: str):  # type: ignore[no-untyped-def]
    return items.failed_stage("ana", course.stage("01"), ERROR, reason, course.root, flag=flag)


@pytest.mark.parametrize("graded_in", ["en", "zh"])
def test_grader_failures_and_unlaid_submissions_are_recognised_in_either_language(course, graded_in: str) -> None:  # type: ignore[no-untyped-def]
    with speaking(graded_in):
        crashed = _rows(course, graded_in, items.grader_crashed(RuntimeError("the judge broke")), REGRADE)
        unlaid = _rows(course, graded_in, items.cannot_lay_out(
            LayoutError(Problem.TOO_DEEP, "forge/a/a/a is nested more than 32 folders deep", "32 folder levels")), "")
    graded = [row for row in crashed if row.max_points]
    assert graded and all(items.is_grader_failure(row) and not items.is_unlaid(row) for row in graded)
    assert all(items.is_unlaid(row) and not items.is_grader_failure(row) for row in unlaid if row.max_points)
    assert bool(CJK.search(graded[0].reason)) == (graded_in == "zh"), graded[0].reason
    assert "RuntimeError: the judge broke" in graded[0].reason  # the error itself is quoted as raised
    for page_language in ("en", "zh"):  # a page in either language says the grader failed, not the learner
        page = feedback.page(course, "ana", "ab" * 32, crashed, page_language)
        words = "The grader failed here, not you." if page_language == "en" else "这里出故障的是评分工具，不是你。"
        assert page.count(words) == len(graded), page_language


def test_a_chinese_reason_reads_as_chinese_punctuation_and_all(course) -> None:  # type: ignore[no-untyped-def]
    with speaking("zh"):
        unlaid = items.cannot_lay_out(LayoutError(Problem.TOO_DEEP, "forge/a/a/a is nested more than 32 folders deep",
                                                  "32 folder levels"))
        session = items._lost_to_the_grader(items._Stage("ana", course.stage("01"), course.root),
                                            _dead_report(), _Laid(), course.root)
        listed = items._listed([f"test_{n}" for n in range(6)])
    assert unlaid.startswith("未评分：这份提交无法摆放成可评分的样子：") and "这是提交本身的问题，不是评分工具的问题" in unlaid
    assert session["stage_tests"].reason.startswith("评分工具出了故障：") and "这不是学员的错" in session["stage_tests"].reason
    assert listed == "test_0；test_1；test_2；test_3；另有 2 项"
    assert not re.search(r"[,;:] ", listed + unlaid + session["stage_tests"].reason)  # no ASCII clause marks


def _dead_report():  # type: ignore[no-untyped-def]
    from forgelab.judge.outcomes import RunReport

    return RunReport((), problem="the test session could not finish: Killed")


class _Laid:
    """Just enough of a laid-out submission for :func:`items._lost_to_the_grader` (no lab handed in)."""

    def __init__(self) -> None:
        from pathlib import Path

        self.home = Path("/nonexistent-submission")


def test_a_submission_that_cannot_be_laid_out_is_told_why_in_chinese() -> None:
    """The limit a submission broke (core.files) is said in the class's language too, inside the reason."""
    from pathlib import PurePosixPath

    from forgelab.core.files import DEFAULT_LIMITS, _Budget

    with speaking("zh"):
        with pytest.raises(LayoutError) as caught:
            _Budget(DEFAULT_LIMITS).file(PurePosixPath("forge/huge.bin"), DEFAULT_LIMITS.file_bytes + 1)
        reason = items.cannot_lay_out(caught.value)
    assert reason.startswith("未评分：这份提交无法摆放成可评分的样子：forge/huge.bin 有 "), reason
    assert "——上限：每个文件 " in reason and reason.endswith("。这是提交本身的问题，不是评分工具的问题：请把它去掉后再交练习册")
    with pytest.raises(LayoutError) as caught:  # English when the class is English
        _Budget(DEFAULT_LIMITS).file(PurePosixPath("forge/huge.bin"), DEFAULT_LIMITS.file_bytes + 1)
    assert str(caught.value).startswith("forge/huge.bin is ") and caught.value.limit.endswith(" per file")
