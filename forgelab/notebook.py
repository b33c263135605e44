"""Helpers the stage notebooks call. Learners use them; they never need to edit them.

``%load_ext forgelab.notebook`` turns on autoreload (edits to ``forge/`` take effect without a
kernel restart) and shows unfinished starter code as one friendly line instead of a traceback.
``stage_tools("01")`` returns the object behind every interactive cell of a stage notebook.

Graded cells print plain text (never inside an ipywidgets ``Output``), so nbval can compare them.
The target comes from ``FORGELAB_TARGET`` (``learner`` unless the course builder or a grader says
otherwise).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from forgelab.paths import Workbook
from forgelab.registry import Course, Stage, load_course


# ---------------------------------------------------------------- IPython extension
def _friendly(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: int | None = None) -> None:
    if isinstance(value, NotImplementedError):
        message = str(value) or "this function is not implemented yet — see hint 1"
        print(f"not implemented yet — {message}" if "not implemented yet" not in message else message)
        return
    if isinstance(value, SyntaxError) and value.filename and "forge" in Path(value.filename).parts:
        print(f"syntax error in {Path(value.filename).name}, line {value.lineno}: {value.msg} — fix it and run the cell again")
        return
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def load_ipython_extension(ipython: Any) -> None:
    os.environ.setdefault("FORGELAB_WIDTH", "110")  # tables look the same in every kernel
    ipython.run_line_magic("load_ext", "autoreload")
    ipython.run_line_magic("autoreload", "2")
    ipython.set_custom_exc((NotImplementedError, SyntaxError), _friendly)


# ---------------------------------------------------------------- stage tools
class StageTools:
    """Everything a stage notebook does beyond plain code: predict, hint, test, fault lab, evidence."""

    def __init__(self, stage_number: str, target: str | None = None) -> None:
        self.workbook: Workbook = Workbook.locate()
        self.course: Course = load_course(self.workbook.root)
        self.stage: Stage = self.course.stage(stage_number)
        self.target_name = target or os.environ.get("FORGELAB_TARGET", "learner")

    @property
    def text(self):  # type: ignore[no-untyped-def]
        return self.stage.text()

    def _target(self):  # type: ignore[no-untyped-def]
        from forgelab.targets import resolve_target

        return resolve_target(self.target_name, self.workbook, self.course)

    # part 2 — predict first
    def predict(self) -> Any:
        """The multiple-choice question's options (rendered Markdown), one letter button per option, and a
        check button that records the choice and reveals the rationale. The question itself is the Markdown
        cell above the widget, so it is not repeated here."""
        import ipywidgets as widgets

        from forgelab import state

        prediction = self.text.prediction
        letters = [chr(ord("A") + index) for index in range(len(prediction.options))]
        picks = [widgets.ToggleButton(value=False, description=letter, tooltip=f"choose option {letter}",
                                      layout=widgets.Layout(width="2.6em", min_width="2.6em", flex="0 0 auto"))
                 for letter in letters]
        rows = [widgets.HBox([pick, widgets.HTML(value=_html(option),
                                                 layout=widgets.Layout(flex="1 1 auto", margin="0 0 0 0.6em"))],
                             layout=widgets.Layout(align_items="center", margin="0 0 0.2em 0"))
                for pick, option in zip(picks, prediction.options)]
        button = widgets.Button(description="Check my prediction", button_style="primary", icon="check",
                                layout=widgets.Layout(width="max-content", min_width="max-content", margin="0.5em 0 0 0"))
        verdict = widgets.HTML(value="")
        chosen: list[int | None] = [None]

        def restyle() -> None:
            for index, pick in enumerate(picks):
                pick.button_style = "info" if index == chosen[0] else ""

        def on_pick(change: dict[str, Any]) -> None:
            index = picks.index(change["owner"])
            if change["new"]:
                chosen[0] = index
                for other in picks:
                    if other is not change["owner"]:
                        other.value = False
            elif chosen[0] == index:
                chosen[0] = None
            restyle()
            verdict.value = ""  # a changed choice has not been checked yet

        for pick in picks:
            pick.observe(on_pick, names="value")

        def reveal(_: Any) -> None:
            choice = chosen[0]
            if choice is None:
                verdict.value = "<p>Pick one option first: press its letter.</p>"
                return
            correct = choice == prediction.answer
            state.update(self.workbook, "predictions", self.stage.number, {"choice": choice, "correct": correct})
            answer = f"<strong>{letters[prediction.answer]}</strong> — {_html(prediction.options[prediction.answer])}"
            head = f"<strong>Right:</strong> {answer}" if correct else f"<strong>Not quite.</strong> The answer is {answer}"
            restyle()
            picks[prediction.answer].button_style = "success"
            if not correct:
                picks[choice].button_style = "danger"
            verdict.value = f"<div {_TEXT_STYLE}><p>{head}</p>{_markdown(prediction.rationale)}</div>"

        button.on_click(reveal)
        return widgets.VBox([*rows, button, verdict])

    # part 4 — experiment card
    def card(self) -> None:
        import json

        from forgelab.evidence import FILENAME

        path = self.workbook.workspace / self.stage.evidence_dir / FILENAME
        status = "pending — no evidence yet (part 10 writes it)"
        if path.is_file():
            try:
                accepted = json.loads(path.read_text(encoding="utf-8")).get("accepted")
                status = "accepted" if accepted else "not accepted yet — see part 10"
            except (OSError, ValueError):
                status = "unreadable evidence — run part 10 again"
        scenario = self.course.scenario(self.stage.scenario).input
        print(f"experiment id   {self.stage.experiment_id}")
        print(f"input scenario  {scenario}")
        print(f"module          {self.stage.module}")
        print(f"evidence folder {self.stage.evidence_dir}/")
        print(f"acceptance      {status}")

    # part 6 — hints and tests
    def hint(self) -> Any:
        import ipywidgets as widgets

        from forgelab import state

        hints = self.text.hints
        shown = widgets.HTML(value="")
        button = widgets.Button(description="Show the next hint", icon="lightbulb-o",
                                layout=widgets.Layout(width="max-content", min_width="max-content"))

        def render() -> None:
            count = state.hints_shown(self.workbook, self.stage.number)
            items = "".join(f"<li>{_html(h)}</li>" for h in hints[:count])
            left = len(hints) - count
            shown.value = f"<div {_TEXT_STYLE}>" + (f"<ol>{items}</ol>" if items else "") + (
                f"<p>{left} more hint(s) available.</p>" if left else "<p>All hints are shown.</p>") + "</div>"
            button.disabled = left == 0

        def reveal(_: Any) -> None:
            state.reveal_next_hint(self.workbook, self.stage.number, hints)
            render()

        button.on_click(reveal)
        render()
        return widgets.VBox([button, shown])

    def run_tests(self) -> None:
        from forgelab.checker import run_check
        from forgelab.report import collapse
        from forgelab.display import table

        outcome = run_check(self.course, self.workbook, self.stage, self._target(), write=False)
        rows = collapse(self.stage.required_tests, outcome.tests)
        print(table(["test", "outcome", "cause"], rows, total_width=110))
        summary = outcome.document["summary"]
        print(f"\nrequired tests: {summary['required_passed']}/{summary['required_total']} passed")
        if summary["required_passed"] == summary["required_total"]:
            print("All stage tests pass. Next: the fault lab (part 7).")
        else:
            print(f"Keep going: edit {self.stage.module} and run this cell again.")

    # part 7 — fault lab
    def fault_start(self) -> None:
        from forgelab import faultlab

        target = self._target()
        with target.importable() as import_dir:
            base = import_dir / "forge" if target.kind != "learner" else None
            module, created = faultlab.start(self.workbook, self.stage, base)
        shown = self.workbook.relative(module)
        if created:
            print(f"fault lab started: the broken module is {shown}")
        else:
            print(f"fault lab already started: your edits in {shown} are kept (reset: forgelab fault reset {self.stage.number})")
        print("your own forge/ is not touched by the lab")

    def fault_check(self) -> None:
        from forgelab import faultlab

        result = faultlab.check(self.workbook, self.course, self.stage)
        target = self.stage.fault.target_test
        if result.status == "fixed":
            print(f"FIXED: {target} and the whole stage pass in the lab workspace.")
            print(f"Fix principle: {self.text.fault_fix_principle}")
        elif result.status == "error":
            print(f"the lab module does not import: {result.problem}")
        elif result.target is not None and result.target.outcome != "passed":
            print(f"{target}: {result.target.outcome.upper()}")
            print(f"  {result.target.cause}")
            if result.symptom_matched:
                print(f"  declared symptom seen: {result.symptom_text}")
        else:
            print(f"{target} passes, but these stage tests still fail: {', '.join(result.failing)}")

    def fault_diff(self) -> None:
        from forgelab import faultlab

        text = faultlab.diff(self.workbook, self.stage)
        print(text if text else "no changes yet: the lab file is still the broken variant")

    # part 8 — transfer
    def run_transfer(self) -> None:
        from forgelab.checker import run_check

        outcome = run_check(self.course, self.workbook, self.stage, self._target(), write=False)
        part = outcome.transfer
        print(f"transfer challenge: {part.status.replace('_', ' ')} — {part.detail}")
        for row in outcome.transfer_tests:
            print(f"  {row.name}: {row.outcome}" + (f" — {row.cause}" if row.cause and row.outcome != "passed" else ""))

    # part 9 — design question
    def design_answer(self) -> Any:
        import ipywidgets as widgets

        from forgelab.answers import load_answer

        area = widgets.Textarea(value=load_answer(self.workbook, self.stage), placeholder="Your answer…",
                                layout=widgets.Layout(width="100%", height="12em"))
        button = widgets.Button(description="Save my answer", button_style="primary", icon="save",
                                layout=widgets.Layout(width="max-content", min_width="max-content"))
        feedback = widgets.HTML(value="")

        def save(_: Any) -> None:
            feedback.value = self._save(area.value)

        button.on_click(save)
        # The question is the Markdown cell above this widget; it is not repeated here.
        return widgets.VBox([area, button, feedback])

    def save_answer(self, text: str) -> None:
        """The same as the Save button, for people who prefer typing the answer into a cell."""
        import re

        print(re.sub(r"<[^>]+>", " ", self._save(text)).strip())

    def _save(self, text: str) -> str:
        from forgelab.answers import save_answer

        if not text.strip():
            return "<p>The answer is empty: write it first.</p>"
        path, words = save_answer(self.workbook, self.stage, text)
        rubric = "".join(f"<li>{_html(point)}</li>" for point in self.text.design_rubric)
        return (f"<p>Saved to {self.workbook.relative(path)} ({words} words). Compare it with the rubric — "
                f"a strong answer covers:</p><ul>{rubric}</ul>")

    # part 10 — evidence
    def check(self) -> None:
        from forgelab.checker import run_check
        from forgelab.report import format_check

        outcome = run_check(self.course, self.workbook, self.stage, self._target())
        shown = self.workbook.relative(outcome.path) if outcome.path else None
        print(format_check(outcome, shown))
        if outcome.accepted:
            print("\nThe course page will show: self-check passed.")
        else:
            print("\nThe course page will show: results read, with the items above still open.")


def stage_tools(stage_number: str, target: str | None = None) -> StageTools:
    return StageTools(stage_number, target)


# Widget HTML inherits the 28 px line height of a widget row; running text reads better at 1.5.
_TEXT_STYLE = 'style="line-height: 1.5"'


def _html(text: str) -> str:
    """One line of stage text as HTML: escaped, with `code`, *emphasis* and **bold** rendered."""
    from forgelab.site.pages import inline

    return inline(text)


def _markdown(text: str) -> str:
    """A block of stage text (paragraphs and lists) as HTML, escaped, with inline Markdown rendered."""
    from forgelab.site.pages import md

    return md(text)
