"""The notebook widgets as Python objects: the predict quiz, the hint button and the design answer.

A widget is driven the way JupyterLab drives it (set a value, click a button) and the test reads what
the learner would see (HTML values, labels, layouts) and what is recorded in ``.forgelab/state.json``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser import ROOT

ipywidgets = pytest.importorskip("ipywidgets")


@pytest.fixture
def tools(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """Stage 01's notebook tools on the course repository, with a throwaway workspace for the state."""
    from forgelab.learner.notebook import stage_tools

    monkeypatch.setenv("FORGELAB_ROOT", str(ROOT))
    monkeypatch.setenv("FORGELAB_WORKSPACE", str(tmp_path))
    monkeypatch.delenv("FORGELAB_TARGET", raising=False)
    return stage_tools("01")


def walk(widget: Any) -> Iterator[Any]:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


def of_type(root: Any, kind: type) -> list[Any]:
    return [w for w in walk(root) if type(w) is kind]


def recorded(tools: Any) -> dict[str, Any]:
    from forgelab.learner import state

    return state.load(tools.workbook).model_dump(exclude_defaults=True)


def visible_text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


# ---------------------------------------------------------------- predict


def test_the_check_button_is_as_wide_as_its_label(tools: Any) -> None:
    quiz = tools.predict()
    (button,) = of_type(quiz, ipywidgets.Button)
    assert button.description == "Check my prediction"
    # The default width of a widget button (148 px) cuts this label to "Check my predict…".
    assert button.layout.width == "max-content" and button.layout.min_width == "max-content"


def test_options_render_code_and_emphasis_as_html(tools: Any) -> None:
    from forgelab.core.registry import load_course

    quiz = tools.predict()
    options = [w.value for w in of_type(quiz, ipywidgets.HTML) if w.value]
    assert len(options) == len(tools.text.prediction.options) == 4
    assert not any("`" in value for value in options), options
    # every option, rationale and hint of every stage renders without a literal Markdown mark left over
    from forgelab.learner.notebook import _html, _markdown

    for stage in load_course(ROOT).stages:
        text = stage.text()
        for line in (*text.prediction.options, *text.hints):
            rendered = _html(line)
            assert "`" not in rendered and "**" not in rendered, (stage.number, rendered)
            if "`" in line:
                assert "<code>" in rendered
        rationale = _markdown(text.prediction.rationale)
        assert "`" not in rationale and not re.search(r"(?<![\w*])\*\w", rationale), (stage.number, rationale)


def test_a_fence_marker_in_a_hint_is_shown_as_code(tools: Any) -> None:
    from forgelab.learner.notebook import _html

    assert _html("start with ```` ``` ```` or `~~~`") == "start with <code>```</code> or <code>~~~</code>"
    assert _html("an unclosed ```json fence") == "an unclosed ```json fence"


def test_markdown_in_a_made_up_option_becomes_html(tools: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    prediction = tools.text.prediction
    made_up = prediction.model_copy(update={"options": ["use `resolve()` *first*", "**never** <script>", "plain", "x < y"],
                                            "rationale": "Because `rank` wins, *not* position.\n\nA second **paragraph**."})
    text = tools.text.model_copy(update={"prediction": made_up})
    monkeypatch.setattr(type(tools), "text", property(lambda self: text))
    quiz = tools.predict()
    options = [w.value for w in of_type(quiz, ipywidgets.HTML) if w.value]
    assert options == ["use <code>resolve()</code> <em>first</em>", "<strong>never</strong> &lt;script&gt;",
                       "plain", "x &lt; y"]
    picks = of_type(quiz, ipywidgets.ToggleButton)
    picks[0].value = True
    of_type(quiz, ipywidgets.Button)[0].click()
    verdict = of_type(quiz, ipywidgets.HTML)[-1].value
    assert "<p>Because <code>rank</code> wins, <em>not</em> position.</p>" in verdict
    assert "<p>A second <strong>paragraph</strong>.</p>" in verdict


def test_the_question_is_not_repeated_in_the_widget(tools: Any) -> None:
    quiz = tools.predict()
    question = visible_text(tools.text.prediction.question)[:40]
    assert not any(question in visible_text(w.value) for w in of_type(quiz, ipywidgets.HTML))


def test_choosing_and_checking_records_the_choice_and_reveals_the_rationale(tools: Any) -> None:
    prediction = tools.text.prediction
    quiz = tools.predict()
    picks = of_type(quiz, ipywidgets.ToggleButton)
    (button,) = of_type(quiz, ipywidgets.Button)
    verdict = of_type(quiz, ipywidgets.HTML)[-1]
    assert [p.description for p in picks] == ["A", "B", "C", "D"]

    button.click()  # nothing chosen yet
    assert "Pick one option first" in verdict.value
    assert "predictions" not in recorded(tools)

    wrong = (prediction.answer + 1) % 4
    picks[wrong].value = True
    button.click()
    assert recorded(tools)["predictions"]["01"] == {"choice": wrong, "correct": False}
    assert "Not quite" in verdict.value and "rank" in visible_text(verdict.value)
    assert picks[wrong].button_style == "danger" and picks[prediction.answer].button_style == "success"

    picks[prediction.answer].value = True  # choosing another letter un-chooses the first
    assert [p.value for p in picks].count(True) == 1 and picks[wrong].value is False
    assert verdict.value == ""  # the new choice has not been checked yet
    button.click()
    assert recorded(tools)["predictions"]["01"] == {"choice": prediction.answer, "correct": True}
    assert visible_text(verdict.value).startswith("Right:")


def test_pressing_the_chosen_letter_again_unchooses_it(tools: Any) -> None:
    quiz = tools.predict()
    picks = of_type(quiz, ipywidgets.ToggleButton)
    picks[2].value = True
    picks[2].value = False
    of_type(quiz, ipywidgets.Button)[0].click()
    assert "Pick one option first" in of_type(quiz, ipywidgets.HTML)[-1].value
    assert "predictions" not in recorded(tools)


# ---------------------------------------------------------------- hints and design answer


def test_hints_render_markdown_and_the_button_fits_its_label(tools: Any) -> None:
    panel = tools.hint()
    (button,) = of_type(panel, ipywidgets.Button)
    assert button.layout.width == "max-content"
    shown = of_type(panel, ipywidgets.HTML)[0]
    assert "<li" not in shown.value
    button.click()  # no test run yet: the ladder's first hint, and a line saying how hints come to follow a failure
    assert recorded(tools)["hints"]["01"] == [1]
    first = tools.text.hints[0]
    assert shown.value.count('<li value="1">') == 1 and shown.value.count("<li") == 1
    assert "the next hint follows your first failing test" in shown.value
    if "`" in first:
        assert "<code>" in shown.value and "`" not in shown.value


def test_design_answer_shows_no_second_copy_of_the_question_and_saves(tools: Any) -> None:
    panel = tools.design_answer()
    question = visible_text(tools.text.design.question)[:40]
    assert not any(question in visible_text(w.value) for w in of_type(panel, ipywidgets.HTML))
    (area,) = of_type(panel, ipywidgets.Textarea)
    (button,) = of_type(panel, ipywidgets.Button)
    assert button.description == "Save my answer" and button.layout.width == "max-content"
    area.value = " ".join(["The system rank protects the boundary against injected retrieved text."] * 6)
    button.click()
    feedback = of_type(panel, ipywidgets.HTML)[-1].value
    assert "Saved to" in feedback and "<li>" in feedback
    saved = tools.workbook.workspace / tools.stage.design_answer_file
    assert saved.read_text(encoding="utf-8").startswith("The system rank protects")


# ---------------------------------------------------------------- fault lab


def test_the_fault_lab_buttons_start_the_lab_in_the_workspace_and_check_it(tools: Any) -> None:
    panel = tools.fault_lab()
    buttons = {button.description: button for button in of_type(panel, ipywidgets.Button)}
    assert set(buttons) >= {"Start the lab", "Check my fix", "Show my changes", "Next diagnosis step"}
    shown = of_type(panel, ipywidgets.HTML)[0]
    buttons["Start the lab"].click()
    assert (tools.workbook.workspace / tools.stage.lab_module).is_file()
    assert "working" not in shown.value and shown.value
    buttons["Check my fix"].click()
    assert tools.stage.fault.target_test in visible_text(shown.value)


# ---------------------------------------------------------------- the notebook's language, in every callback


def test_a_chinese_notebooks_buttons_answer_in_chinese_from_outside_the_cell(monkeypatch: pytest.MonkeyPatch,
                                                                              tmp_path: Path) -> None:
    """JupyterLab runs a widget's callback in the kernel's message handler, not in the cell that made the widget,
    so a language chosen in the cell is not there: the Chinese edition's buttons answered in English (seen in the
    released bundle: the evidence button's whole report). Here the cell and the click each run in a context of
    their own, as in the kernel."""
    import contextvars

    from forgelab.core import i18n
    from forgelab.learner.notebook import stage_tools

    monkeypatch.setenv("FORGELAB_ROOT", str(ROOT))
    monkeypatch.setenv("FORGELAB_WORKSPACE", str(tmp_path))
    monkeypatch.delenv("FORGELAB_TARGET", raising=False)
    cell = contextvars.copy_context()
    panel = cell.run(lambda: stage_tools("01", lang="zh").hint())
    (button,) = of_type(panel, ipywidgets.Button)
    assert button.description == "显示下一条提示"  # made in the cell: Chinese either way
    contextvars.Context().run(button.click)  # the kernel's handler: English is the default there
    assert i18n.active() == "en"  # the test's own context is untouched
    text = visible_text(of_type(panel, ipywidgets.HTML)[0].value)
    assert "条提示" in text and "hint" not in text, text
