"""The learner's feedback page (forgelab/grading/feedback.py, template forgelab/data/templates/feedback.html.j2):
rendered by Jinja2 with autoescape, in the class's language."""

from __future__ import annotations

from forgelab.grading import feedback
from forgelab.grading.rubric import ITEMS, GradeItem


def _rows(reason: str = "the test `test_resolve` failed: *why*") -> list[GradeItem]:
    return [GradeItem("alice", "01", spec.key, 0, spec.max_points, "failed", reason) for spec in ITEMS]


def test_the_english_page_says_en_and_shows_the_reasons_as_plain_text(course) -> None:  # type: ignore[no-untyped-def]
    page = feedback.page(course, "alice", "ab" * 32, _rows(), "en")
    assert page.startswith('<!doctype html>\n<html lang="en">')
    assert "<h1>Feedback for alice</h1>" in page and "Stage 01 · Instruction hierarchy — 0/100" in page
    assert 'the test `test_resolve` failed: *why*' in page  # a reason is not Markdown: it may hold the learner's text
    assert "Next step: Run <code>forgelab check 01</code>, read the cause of each failing test" in page
    assert "Graded files digest: <code>abababababababab</code>." in page


def test_a_chinese_class_gets_a_chinese_page(course) -> None:  # type: ignore[no-untyped-def]
    page = feedback.page(course, "alice", "ab" * 32, _rows(), "zh")
    assert page.startswith('<!doctype html>\n<html lang="zh-CN">')
    assert "<h1>alice 的评分反馈</h1>" in page and "阶段 01 · 指令层级（0/100 分）" in page
    assert "<th>得分</th>" in page and "<strong>尚未达到。</strong>" in page
    assert "下一步：运行 <code>forgelab check 01</code>" in page and "检查内容：本阶段的必需测试" in page
    assert "所评文件的摘要：<code>abababababababab</code>。" in page
    assert "Feedback for" not in page and "Next step" not in page and "Stage tests" not in page


def test_everything_a_learner_controls_is_escaped_in_both_editions(course) -> None:  # type: ignore[no-untyped-def]
    for lang in ("en", "zh"):
        rows = [GradeItem("<b>alice</b>", "01", spec.key, 0, spec.max_points, "failed",
                          "got '<script>alert(1)</script>' & `<img src=x onerror=alert(2)>`") for spec in ITEMS]
        page = feedback.page(course, "<b>alice</b>", "", rows, lang)
        assert "<script>" not in page and "&lt;script&gt;" in page and "<img" not in page
        assert "<b>alice</b>" not in page and "&lt;b&gt;alice&lt;/b&gt;" in page


def test_learner_markdown_inside_a_reason_is_shown_as_typed_not_as_formatting(course) -> None:  # type: ignore[no-untyped-def]
    """Issue 30 (7): an exception message with Markdown used to render as bold and code inside the grader's words."""
    reason = "1 of 5 required tests pass; failing: test_x (failed: ValueError: **you passed** — `grade = 100`)"
    for lang in ("en", "zh"):
        page = feedback.page(course, "alice", "ab" * 32, _rows(reason), lang)
        assert "**you passed** — `grade = 100`" in page
        assert "<strong>you passed</strong>" not in page and "<code>grade = 100</code>" not in page
        assert "<code>forgelab check 01</code>" in page  # the course's own next step is still Markdown
