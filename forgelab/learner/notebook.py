"""Helpers the stage notebooks call. Learners use them; they never need to edit them.

``%load_ext forgelab.learner.notebook`` reloads a ``forge`` module whose file changed before each cell (edits take
effect without a kernel restart, and errors name the lines of the file as it is now) and makes *Run All*
safe: no cell raises — unfinished starter code, a syntax error, a failing call or an endless loop (stopped
after a stated CPU time) becomes one readable output that names file and line (:mod:`forgelab.learner.notebook_cells`),
so the notebook always reaches its last cell, which says what is still open. ``stage_tools("01")`` returns the
object behind every interactive cell of a stage notebook; it talks to the same facade as the
command line (:class:`forgelab.learner.workbench.Workbench`), so both say the same things.

Running the notebook starts no fault lab and writes no evidence: those happen only when the learner
presses a button (or calls ``lab.fault_start()`` / ``lab.write_evidence()``). Graded cells print
plain text (never inside an ipywidgets ``Output``), so nbval can compare them. The target comes from
``FORGELAB_TARGET`` (``learner`` unless the course builder or a grader says otherwise).
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgelab.learner.check import DIAGNOSIS_WORDS, TESTS, CheckOutcome
from forgelab.verdicts.parts import MIN_DESIGN_WORDS, PART_WORDS
from forgelab.core.display import Grid, symbol
from forgelab.core.i18n import _, active
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage, load_course
from forgelab.learner import notebook_cells, state
from forgelab.learner.recheck import Rechecker
from forgelab.learner.status import EVIDENCE_WORDS, imported_modules
from forgelab.core.text import esc, inline, md, word_count
from forgelab.core import i18n
from forgelab.judge.settings import DEFAULT
from forgelab.judge.warm import WarmUnavailable, WarmWorker
from forgelab.learner.workbench import Workbench
from forgelab.learner.watch import PENDING_WORDS
from forgelab.core import verification
from forgelab.judge.outcomes import Outcome
from forgelab.learner.faultlab import FaultLabError, is_fixed
from forgelab.verdicts.diagnosis import DiagnosisError
from forgelab.learner.answers import load_answer, length_warning, save_answer, answer_path
from forgelab.site.builder import SiteError
from forgelab.site.local import ensure_page, open_in_browser, page_file

if TYPE_CHECKING:
    from forgelab.core.course_files import StageTexts


# ---------------------------------------------------------------- IPython extension
def load_ipython_extension(ipython: Any) -> None:
    os.environ.setdefault("FORGELAB_WIDTH", "110")  # tables look the same in every kernel
    notebook_cells.install(ipython)


# ---------------------------------------------------------------- stage tools
class StageTools:
    """Everything a stage notebook does beyond plain code: predict, hint, test, fault lab, evidence."""

    def __init__(self, stage_number: str, target: str | None = None, lang: str | None = None) -> None:
        self.workbook: Workbook = Workbook.locate()
        # the notebook's edition: its widgets and tables speak its language
        i18n.use(i18n.resolve(lang, edition=i18n.workbook_edition(self.workbook.root)))
        self.language = i18n.active()
        self.course: Course = load_course(self.workbook.root)
        self.stage: Stage = self.course.stage(stage_number)
        self.target_name = target or os.environ.get("FORGELAB_TARGET", "learner")
        self.bench = Workbench(self.workbook, self.course, DEFAULT.with_(language=i18n.active()))
        self._last_tests: CheckOutcome | None = None  # the latest run of the test cell (part 6)
        self._rechecker: Rechecker | None = None  # the test cell's re-check on save, while it is on
        self._warm: WarmWorker | None = None  # its warm worker (forgelab.judge.warm), shared with run_tests()
        self._table: Any = None  # the display handle of the table run_tests() showed last (re-check updates it)
        self._toggle: Any = None  # the re-check toggle the test cell showed last

    @property
    def text(self) -> StageTexts:
        return self.stage.text()

    # part 2 — predict first
    def predict(self) -> Any:
        """The multiple-choice question's options (rendered Markdown), one letter button per option, and a
        check button that records the choice and reveals the rationale. The question itself is the Markdown
        cell above the widget, so it is not repeated here."""
        import ipywidgets as widgets


        prediction = self.text.prediction
        letters = [chr(ord("A") + index) for index in range(len(prediction.options))]
        picks = [widgets.ToggleButton(value=False, description=letter, tooltip=_("choose option {letter}").format(letter=letter),
                                      layout=widgets.Layout(width="2.6em", min_width="2.6em", flex="0 0 auto"))
                 for letter in letters]
        rows = [widgets.HBox([pick, widgets.HTML(value=_html(option),
                                                 layout=widgets.Layout(flex="1 1 auto", margin="0 0 0 0.6em"))],
                             layout=widgets.Layout(align_items="center", margin="0 0 0.2em 0"))
                for pick, option in zip(picks, prediction.options)]
        button = widgets.Button(description=_("Check my prediction"), button_style="primary", icon="check",
                                layout=widgets.Layout(width="max-content", min_width="max-content", margin="0.5em 0 0 0"))
        verdict = widgets.HTML(value="")
        chosen: list[int | None] = [None]

        def restyle() -> None:
            for index, pick in enumerate(picks):
                pick.button_style = "info" if index == chosen[0] else ""

        def on_pick(change: dict[str, Any]) -> None:  # free-form: ipywidgets' change notification
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
            pick.observe(self._spoken(on_pick), names="value")

        def reveal(_event: Any) -> None:
            choice = chosen[0]
            if choice is None:
                verdict.value = "<p>" + _("Pick one option first: press its letter.") + "</p>"
                return
            correct = choice == prediction.answer
            state.record_prediction(self.workbook, self.stage.number, choice, len(prediction.options), correct)
            answer = f"<strong>{letters[prediction.answer]}</strong> — {_html(prediction.options[prediction.answer])}"
            head = (_("<strong>Right:</strong> {answer}") if correct
                    else _("<strong>Not quite.</strong> The answer is {answer}")).format(answer=answer)
            restyle()
            picks[prediction.answer].button_style = "success"
            if not correct:
                picks[choice].button_style = "danger"
            verdict.value = f"<div {_TEXT_STYLE}><p>{head}</p>{_markdown(prediction.rationale)}</div>"

        button.on_click(self._spoken(reveal))
        return widgets.VBox([*rows, button, verdict])

    def _spoken(self, callback: Callable[[Any], None]) -> Callable[[Any], None]:
        """``callback`` in the notebook's language. A widget's callbacks run outside the cell that made the widget
        (the kernel's message handler), where the language is the default, English: a Chinese notebook's buttons
        answered in English."""
        language = self.language

        def spoken(event: Any) -> None:
            with i18n.speaking(language):
                callback(event)

        return spoken

    # part 4 — experiment card
    def card(self) -> None:
        accepted = self._evidence_accepted()
        status = (_("pending — no evidence yet (part 10 writes it)") if accepted is None
                  else _(UNREADABLE) if accepted == "unreadable"
                  else _("accepted") if accepted else _("not accepted yet — see part 10"))
        scenario = self.course.scenario(self.stage.scenario).input
        rows = [(_("experiment id"), self.stage.experiment_id), (_("input scenario"), scenario),
                (_("module"), self.stage.module), (_("evidence folder"), f"{self.stage.evidence_dir}/"),
                (_("acceptance"), status)]
        _show(Grid((), rows))

    def table(self, headers: list[str], rows: list[list[Any]] | list[tuple[Any, ...]], right: tuple[int, ...] = ()) -> None:
        """Show a table under the cell: HTML in JupyterLab, so its columns line up in both editions whatever width the
        font gives a Chinese character; text elsewhere. ``right``: the indexes of the columns to right-align."""
        _show(Grid(headers, rows, right))

    def _evidence_accepted(self) -> bool | str | None:
        """What the stage's verification.json says, read through its model: accepted or not, None when there is
        none, ``"unreadable"`` when it is not such a document (never a traceback, never "accepted")."""
        path = self.workbook.workspace / self.stage.evidence_file
        if not path.is_file():
            return None
        try:
            return verification.read(path).accepted
        except verification.Unreadable:
            return "unreadable"

    # part 6 — hints and tests
    def hint(self) -> Any:
        import ipywidgets as widgets


        hints = self.text.hints
        shown = widgets.HTML(value="")
        button = widgets.Button(description=_("Show the next hint"), icon="lightbulb-o",
                                layout=widgets.Layout(width="max-content", min_width="max-content"))

        def render(reason: str = "", new: int | None = None) -> None:
            revealed = state.revealed_hints(self.workbook, self.stage.number, len(hints))
            items = "".join(f'<li value="{rung}">' + (f"<strong>{_html(hints[rung - 1])}</strong>" if rung == new
                                                       else _html(hints[rung - 1])) + "</li>" for rung in revealed)
            left = len(hints) - len(revealed)
            more = _("{count} more hint(s) available.").format(count=left) if left else _("All hints are shown.")
            why = f"<p>{_html(reason)}</p>" if reason else ""
            shown.value = f"<div {_TEXT_STYLE}>" + (f"<ol>{items}</ol>" if items else "") + f"{why}<p>{more}</p></div>"
            button.disabled = left == 0

        def reveal(_event: Any) -> None:
            # the learner's checks (terminal, watch, this notebook) all keep their first failing test in the state
            message = self.bench.hint(self.stage, latest=None if self.target_name == "learner" else self._last_tests)
            new = message.extra.get("rung")
            render(message.lines[-1] if isinstance(new, int) else "", new if isinstance(new, int) else None)

        button.on_click(self._spoken(reveal))
        render()
        return widgets.VBox([button, shown])

    def run_tests(self) -> None:
        """The stage tests against your code, one row each (writes no evidence); skipped, with a line saying why,
        while the module is marked hanging (a call into it was stopped for CPU time, and it has not been saved since)."""
        if (note := self._hang_note()) is not None:
            print(note)
            return
        outcome = self.bench.check(self.stage, self.target_name, write=False, warm=self._warm_worker(start=False))
        self._last_tests = outcome
        self._remember_hang(outcome)
        self._table = _show_bundle(self._tests_bundle(outcome))

    def _module_files(self) -> list[tuple[str, Path]]:
        """The stage's module and the forge modules it imports, as module names and the files this target runs."""
        target = self.bench.target(self.target_name)
        return [(module.removesuffix(".py").replace("/", "."), target.module_path(module) or self.workbook.root / module)
                for module in imported_modules(self.workbook, self.stage)]

    def _hang_note(self) -> str | None:
        """One line when a module this stage runs is marked hanging: the call would wait for the same limit again."""
        hang = notebook_cells.hanging(path for _name, path in self._module_files())
        if hang is None:
            return None
        return _("skipped — {file} was stopped after it ran out of CPU time ({where}) and has not been saved since; "
                 "this would wait for the same limit again. Save a change to {file}, then run this cell again.").format(
            file=hang.shown, where=hang.where)

    def _remember_hang(self, outcome: CheckOutcome) -> None:
        """A test stopped for CPU time marks the stage's module hanging (the later cells skip it), as a cell does."""
        stopped = next((row for row in (*outcome.tests, *outcome.transfer_tests) if row.outcome is Outcome.TIMEOUT), None)
        if stopped is not None:
            module = self.stage.module.removesuffix(".py").replace("/", ".")
            path = dict(self._module_files()).get(module, self.workbook.root / self.stage.module)
            notebook_cells.block(module, path, "hang", None, _("{test}: {cause}").format(test=stopped.name,
                                                                                        cause=stopped.cause))

    def _warm_worker(self, *, start: bool) -> WarmWorker | None:
        """The warm worker while re-checking on save is on (``start``: start it if it is not running; a line of text
        saying why is raised as :class:`WarmUnavailable` when it cannot start). A check that finds it busy or gone
        runs the cold session: the same verdict, only later."""
        if self._warm is not None and not self._warm.alive:
            self._warm.close()
            self._warm = None
        if self._warm is None and start:
            self._warm = WarmWorker.start()
        return self._warm

    def _tests_bundle(self, outcome: CheckOutcome, rechecking: bool = False) -> dict[str, str]:
        """The table and its footer as text and as HTML (where the table is a ``<table>``); ``rechecking``: the toggle
        under it is on, so a save (not a re-run of the cell, which would turn it off) checks again."""
        rows = self.bench.tests_rows(outcome)
        head = Grid([_("test"), _("outcome"), _("cause")], rows, total_width=96) if rows is not None else None
        lines = self._tests_footer(outcome, rechecking)
        text = "\n".join([head.text() if head else self.bench.tests_table(outcome)[0], "", *lines])
        top = head.html() if head else f"<p>{_html(self.bench.tests_table(outcome)[0])}</p>"
        return {"text/plain": text, "text/html": f"<div {_TEXT_STYLE}>{top}"
                + "".join(f"<p>{_html(line)}</p>" for line in lines) + "</div>"}

    def _tests_footer(self, outcome: CheckOutcome, rechecking: bool) -> list[str]:
        summary = outcome.document["summary"]
        lines = [_("required tests: {passed}/{total} passed").format(passed=summary["required_passed"],
                                                                     total=summary["required_total"])]
        if summary["required_passed"] == summary["required_total"]:
            lines.append(_("All stage tests pass. Next: the fault lab (part 7)."))
        elif rechecking:
            lines.append(_("Keep going: edit {module} and save it — re-checking is on, and this table follows every "
                           "save (the Why? button below shows a whole failure).").format(module=self.stage.module))
        else:
            lines.append(_("Keep going: edit {module} and run this cell again (the Why? button below shows a whole "
                           "failure).").format(module=self.stage.module))
        return lines

    def recheck_on_save(self) -> None:
        """A toggle, off until you turn it on: then the stage tests run again after every save of the stage's module
        and the table ``run_tests()`` showed above it is updated in place (its display id), so one table stands and
        its footer says what is true now; the line under the toggle says when it last checked. The tests run exactly
        as ``run_tests()`` runs them. Off, it adds no output (nbval compares the cell as before)."""
        import ipywidgets as widgets
        from IPython.display import display

        toggle = widgets.ToggleButton(value=False, description=_("Re-check on save"), icon="refresh",
                                      tooltip=_("run the stage tests again after every save of {module}").format(
                                          module=self.stage.module),
                                      layout=widgets.Layout(width="max-content", min_width="max-content"))
        live = widgets.HTML(value="")
        module = self.bench.target(self.target_name).module_path(self.stage.module) \
            or self.workbook.root / self.stage.module

        table = [""]  # the latest table under the toggle (only when run_tests() showed none above it)
        cold = [""]  # why the checks run cold (the warm worker could not start), once it is known
        above = self._table  # the table run_tests() showed in this cell, updated in place
        self._table = None  # a later cell's run_tests() shows a table of its own

        def show(outcome: CheckOutcome, rechecking: bool) -> str:
            """The table where it stands: run_tests()'s, updated in place; else under the toggle (HTML returned)."""
            bundle = self._tests_bundle(outcome, rechecking)
            if above is not None:
                above.update(bundle, raw=True)
                return ""
            table[0] = bundle["text/html"]
            return table[0]

        def check(saved: list[Path]) -> None:
            now = _dt.datetime.now().strftime("%H:%M:%S")
            head = (_("{time} · checking after saving {module}…") if saved
                    else _("{time} · checking {module}…")).format(time=now, module=self.stage.module)
            live.value = f"<p>{_html(head)}</p>{table[0]}"
            try:
                warm = self._warm_worker(start=not cold[0])
            except WarmUnavailable as error:  # said once; every check of this toggle then runs cold
                cold[0] = _("{why}: every save runs a whole cold check instead (the same verdict, only later)").format(
                    why=error)
                warm = None
            try:
                # the stage tests first, as watch mode does; the slow parts whose files changed since the last check
                # (the transfer test after a save of the module) are judged next, the others are taken from that check
                outcome = self.bench.check(self.stage, self.target_name, write=False, warm=warm, record=False,
                                           parts=frozenset({TESTS}))
                if outcome.stale and not stopped():
                    self._last_tests = outcome
                    names = _(", ").join(_(PENDING_WORDS[part]) for part in sorted(outcome.stale))
                    head = _("{time} · stage tests re-checked after saving {module}; still judging: {parts}").format(
                        time=_dt.datetime.now().strftime("%H:%M:%S"), module=self.stage.module, parts=names)
                    shown = show(outcome, rechecking=True)
                    live.value = f"<p>{_html(head)}</p>" + (f"<p>{_html(cold[0])}</p>" if cold[0] else "") + shown
                    # kept for hint meanwhile (its transfer verdict is not: Workbench.record keeps no stale part)
                    self._keep(outcome)
                    outcome = self.bench.check(self.stage, self.target_name, write=False, warm=warm, record=False,
                                               parts=outcome.stale, previous=outcome)
            except Exception as error:  # the watcher keeps watching, and says what went wrong
                live.value = _pre(_("the check could not run: {cause}").format(cause=error))
                return
            try:
                if stopped():
                    return  # turned off while this check ran: the toggle says it is off
                self._last_tests = outcome
                done = (_("{time} · re-checked after saving {module}; the next save checks again") if saved
                        else _("{time} · checked; every save of {module} checks again")).format(
                    time=_dt.datetime.now().strftime("%H:%M:%S"), module=self.stage.module)
                shown = show(outcome, rechecking=True)
                live.value = f"<p>{_html(done)}</p>" + (f"<p>{_html(cold[0])}</p>" if cold[0] else "") + shown
            finally:  # what check keeps for later commands (status, hint), once the table is shown
                self._keep(outcome)

        def stopped() -> bool:
            return self._rechecker is None or self._rechecker.stopped

        def switch(change: dict[str, Any]) -> None:  # free-form: ipywidgets' change notification
            self._stop_rechecking()
            if change["new"]:
                self._rechecker = Rechecker(module, check).start()
            else:
                shown = show(self._last_tests, rechecking=False) if self._last_tests is not None else ""
                live.value = "<p>" + _html(_("Re-checking is off: run this cell again, or turn it on.")) + "</p>" + shown

        toggle.observe(self._spoken(switch), names="value")
        self._stop_rechecking()  # this cell ran again: the toggle it made before is gone
        self._toggle = toggle
        display(widgets.VBox([toggle, live]))

    def _keep(self, outcome: CheckOutcome) -> None:
        """What a re-check keeps for later commands (status, hint), as check keeps it; bookkeeping only: the table
        stands whatever happens here, and the next check keeps them."""
        try:
            self.bench.record(outcome, self.target_name, write=False)
        except Exception:  # noqa: BLE001 - see the docstring
            pass

    def _stop_rechecking(self) -> None:
        if self._rechecker is not None:
            self._rechecker.stop()
            self._rechecker = None
        if self._warm is not None:  # and its warm worker, with every process it started
            self._warm.close()
            self._warm = None

    def why(self) -> Any:
        """A picker of the failing tests that shows one's source, whole failure and what your code printed — or, when
        the test cell above found every test passing, says so instead of offering a failure to explain."""
        import ipywidgets as widgets


        last = self._last_tests
        failing = [name for name in self.stage.required_tests
                   if last is not None and any(row.name == name and row.outcome is not Outcome.PASSED
                                               for row in last.tests)]
        if last is not None and not failing and last.import_problem is None:
            return widgets.HTML(value=f"<p {_TEXT_STYLE}>" + _html(_(
                "All {count} tests pass: there is no failure to explain. (After an edit, run the test cell again; a "
                "failing test then appears here.)").format(count=len(self.stage.required_tests))) + "</p>")
        choices = failing or list(self.stage.required_tests)
        choice = widgets.Dropdown(options=choices, description=_("test"), layout=widgets.Layout(width="max-content"))
        label = _("Why does it fail?") if failing else _("Show its whole result")
        button = widgets.Button(description=label, icon="search",
                                layout=widgets.Layout(width="max-content", min_width="max-content"))
        shown = widgets.HTML(value="")

        def explain(_event: Any) -> None:
            shown.value = "<p>" + _("running the test…") + "</p>"
            message = self.bench.why(self.stage, str(choice.value), self.target_name)
            shown.value = _pre(message.text())

        button.on_click(self._spoken(explain))
        return widgets.VBox([widgets.HBox([choice, button]), shown])

    # part 7 — fault lab (nothing happens until the learner asks)
    def fault_lab(self) -> Any:
        """Buttons for the fault lab: start it, check the fix, show the changes, reveal the next diagnosis step."""
        import ipywidgets as widgets

        shown = widgets.HTML(value=_pre(self._lab_state()))
        actions = [(_("Start the lab"), "play", self.bench.fault_start),
                   (_("Check my fix"), "check", self.bench.fault_check),
                   (_("Show my changes"), "code", self.bench.fault_diff),
                   (_("Next diagnosis step"), "lightbulb-o", self.bench.fault_hint)]
        buttons = []
        for label, icon, action in actions:
            button = widgets.Button(description=label, icon=icon,
                                    layout=widgets.Layout(width="max-content", min_width="max-content"))

            def run(_event: Any, action: Any = action) -> None:
                shown.value = "<p>" + _("working…") + "</p>"
                try:
                    shown.value = _pre(action(self.stage).text())
                except FaultLabError as error:
                    shown.value = _pre(str(error))

            button.on_click(self._spoken(run))
            buttons.append(button)
        return widgets.VBox([widgets.HBox(buttons), shown])

    def diagnose(self) -> Any:
        """Diagnosis before repair: which test shows the defect, which function it lies in, what it is (one of the
        stage's choices), and a sentence in your own words — checked at once, saved with your evidence."""
        import ipywidgets as widgets


        try:
            key = self.bench.diagnosis_questions(self.stage)
        except DiagnosisError as error:
            return widgets.HTML(value=_pre(str(error)))
        previous = self.bench.diagnosis(self.stage)
        wide = widgets.Layout(width="auto", max_width="100%")
        test = widgets.Dropdown(options=list(key.test.choices), value=previous.test if previous else None,
                                description=_("test"), layout=wide)
        function = widgets.Dropdown(options=[(f"{name}()", name) for name in key.function.choices],
                                    value=previous.function if previous and previous.function in key.function.choices
                                    else None, description=_("function"), layout=wide)
        ids = [choice.id for choice in key.defect.choices]
        picks = [widgets.ToggleButton(value=previous is not None and previous.defect == choice.id,
                                      description=str(index), layout=widgets.Layout(width="2.6em", flex="0 0 auto"))
                 for index, choice in enumerate(key.defect.choices, 1)]
        rows = [widgets.HBox([pick, widgets.HTML(value=_html(choice.text.get(active()) or choice.text["en"]),
                                                 layout=widgets.Layout(flex="1 1 auto", margin="0 0 0 0.6em"))],
                             layout=widgets.Layout(align_items="center"))
                for pick, choice in zip(picks, key.defect.choices)]

        def on_pick(change: dict[str, Any]) -> None:  # free-form: ipywidgets' change notification
            if change["new"]:
                for other in picks:
                    if other is not change["owner"]:
                        other.value = False

        for pick in picks:
            pick.observe(self._spoken(on_pick), names="value")
        sentence = widgets.Textarea(value=previous.explanation if previous else "",
                                    placeholder=_("In your own words: what is wrong, and how does the failing test show "
                                                  "it? ").strip(), layout=widgets.Layout(width="100%", height="5em"))
        button = widgets.Button(description=_("Check my diagnosis"), button_style="primary", icon="stethoscope",
                                layout=widgets.Layout(width="max-content", min_width="max-content"))
        shown = widgets.HTML(value="")

        def check(_event: Any) -> None:
            chosen = next((ids[index] for index, pick in enumerate(picks) if pick.value), None)
            if test.value is None or function.value is None or chosen is None:
                shown.value = "<p>" + _("Choose a test, a function and one of the defects first.") + "</p>"
                return
            shown.value = "<p>" + _("checking…") + "</p>"
            try:
                message = self.bench.fault_diagnose(self.stage, str(test.value), str(function.value), chosen,
                                                    sentence.value)
                shown.value = _pre(message.text(width=96))
            except (DiagnosisError, FaultLabError) as error:
                shown.value = _pre(str(error))

        button.on_click(self._spoken(check))
        questions = [widgets.HTML(value="<p><strong>1.</strong> " + _html(_("Which test shows the defect?")) + "</p>"), test,
                     widgets.HTML(value="<p><strong>2.</strong> " + _html(_("In which function of {module} does the defect lie?")
                                                                          .format(module=self.stage.module)) + "</p>"),
                     function,
                     widgets.HTML(value="<p><strong>3.</strong> " + _html(_("What is the defect?")) + "</p>"), *rows,
                     widgets.HTML(value="<p><strong>4.</strong> " + _html(_("Say it in your own words (at least six "
                                                                            "words).")) + "</p>"),
                     sentence, button, shown]
        return widgets.VBox(questions)

    def fault_diagnose(self, test: str, function: str, defect: str, because: str) -> None:
        """The same as the diagnosis widget, in a cell: choices by name or number (see the widget)."""
        print(self.bench.fault_diagnose(self.stage, test, function, defect, because).text(width=96))

    def _lab_state(self) -> str:
        lab = self.workbook.workspace / self.stage.lab_module
        if not lab.is_file():
            return _("The lab is not started. Press \"Start the lab\" (or run lab.fault_start()) when you are ready.")
        return _("The lab is in {path}: edit it, then press \"Check my fix\".").format(path=self.stage.lab_module)

    def fault_start(self) -> None:
        print(self.bench.fault_start(self.stage, self.target_name).text())

    def fault_check(self) -> None:
        print(self.bench.fault_check(self.stage).text())

    def fault_diff(self) -> None:
        print(self.bench.fault_diff(self.stage).text())

    def fault_reset(self) -> None:
        print(self.bench.fault_reset(self.stage).text())

    # part 8 — transfer
    def run_transfer(self) -> None:
        """Your transfer test against your code, and against the stage's known-wrong code (writes no evidence)."""
        if (note := self._hang_note()) is not None:
            print(note)
            return
        outcome = self.bench.check(self.stage, self.target_name, write=False)
        self._remember_hang(outcome)
        part = outcome.transfer
        print(_("transfer challenge: {status} — {detail}").format(status=_(PART_WORDS.get(part.status, part.status)),
                                                                   detail=part.detail))
        for row in outcome.transfer_tests:
            print(f"  {row.name}: {symbol(row.outcome)}" + (f" — {row.cause}" if row.cause and row.outcome != "passed" else ""))

    # part 9 — design question
    def design_answer(self) -> Any:
        import ipywidgets as widgets


        area = widgets.Textarea(value=load_answer(self.workbook, self.stage), placeholder=_("Your answer…"),
                                layout=widgets.Layout(width="100%", height="12em"))
        button = widgets.Button(description=_("Save my answer"), button_style="primary", icon="save",
                                layout=widgets.Layout(width="max-content", min_width="max-content"))
        feedback = widgets.HTML(value="")

        def save(_event: Any) -> None:
            feedback.value = self._save(area.value)

        button.on_click(self._spoken(save))
        # The question is the Markdown cell above this widget; it is not repeated here.
        return widgets.VBox([area, button, feedback])

    def save_answer(self, text: str) -> None:
        """The same as the Save button, for people who prefer typing the answer into a cell."""
        import re

        print(re.sub(r"<[^>]+>", " ", self._save(text)).strip())

    def _save(self, text: str) -> str:

        if not text.strip():
            return "<p>" + _("The answer is empty: write it first.") + "</p>"
        path, words = save_answer(self.workbook, self.stage, text)
        rubric = "".join(f"<li>{_html(point)}</li>" for point in self.text.design.rubric)
        saved = _("Saved to {path} ({words} words). Compare it with the rubric — a strong answer covers:").format(
            path=self.workbook.relative(path), words=words)
        warning = length_warning(self.stage, words)
        shown = f'<p style="color:#a40000">{esc(warning)}</p>' if warning else ""
        return f"{shown}<p>{saved}</p><ul>{rubric}</ul>"

    # part 10 — evidence (written only when the learner asks)
    def evidence(self) -> Any:
        """A button that runs every part for real and writes verification.json."""
        import ipywidgets as widgets

        button = widgets.Button(description=_("Check everything and write my evidence"), button_style="primary",
                                icon="check-square-o", layout=widgets.Layout(width="max-content", min_width="max-content"))
        shown = widgets.HTML(value="")

        def run(_event: Any) -> None:
            shown.value = "<p>" + _("checking every part…") + "</p>"
            shown.value = _pre(self._evidence_text())

        button.on_click(self._spoken(run))
        return widgets.VBox([button, shown])

    def write_evidence(self) -> None:
        """The same as the evidence button, for people who prefer a cell."""
        print(self._evidence_text())

    def _evidence_text(self) -> str:
        outcome = self.bench.check(self.stage, self.target_name)
        shown = self.workbook.relative(outcome.path) if outcome.path else None
        text = self.bench.check_message(outcome, shown, width=96).text(width=96)
        page = _("self-check passed") if outcome.accepted else _("results read, with the items above still open")
        return text + "\n\n" + _("The course page will show: {state}.").format(state=page)

    def summary(self) -> None:
        """What is still open in this stage (runs the stage tests; writes nothing)."""
        if (note := self._hang_note()) is not None:
            print(_("Stage {number} at a glance:").format(number=self.stage.number), note)
            return
        outcome = self.bench.check(self.stage, self.target_name, write=False)
        self._remember_hang(outcome)
        doc = outcome.document
        summary = doc["summary"]
        lab = self.workbook.workspace / self.stage.lab_module
        answer = answer_path(self.workbook, self.stage)
        words = word_count(answer.read_text(encoding="utf-8")) if answer.is_file() else 0
        fixed = is_fixed(self.workbook, self.stage)
        diagnosis = outcome.diagnosis
        accepted = self._evidence_accepted()
        rows = [
            (_("stage tests"), summary["required_passed"] == summary["required_total"],
             _("{passed}/{total} pass").format(passed=summary["required_passed"], total=summary["required_total"])),
            (_("fault lab"), fixed,
             _("fixed") if fixed else (_("started, not fixed yet") if lab.is_file() else _("not started"))),
            (_("diagnosis"), diagnosis.status == "right", _(DIAGNOSIS_WORDS.get(diagnosis.status, diagnosis.status))),
            (_("transfer test"), outcome.transfer.status == "passed",
             _(PART_WORDS.get(outcome.transfer.status, outcome.transfer.status))),
            (_("design answer"), words >= MIN_DESIGN_WORDS,
             _("{words} words (at least {minimum})").format(words=words, minimum=MIN_DESIGN_WORDS)),
        ]
        open_items = [name for name, ok, _detail in rows if not ok]
        current = accepted is True and not open_items  # a file accepted earlier says nothing about the parts now
        evidence_detail = (_("not written yet (part 10 button)") if accepted is None
                           else _(UNREADABLE) if accepted == "unreadable"
                           else _("written: accepted") if current
                           else _("written earlier, accepted then; a part is open now (part 10 writes it again)")
                           if accepted else _("written: not accepted"))
        rows.append((_("evidence"), current, evidence_detail))
        print(_("Stage {number} at a glance:").format(number=self.stage.number))
        _show(Grid((), [(_("done") if ok else _("open"), name, detail) for name, ok, detail in rows], indent=2))
        page = self.bench.page_path(self.stage)
        if open_items:
            print(_("Still open: {items}. Next: {step}").format(items=_(", ").join(open_items),
                                                                step=self.bench.next_step(outcome)))
        elif current:
            print(_("Accepted. Self-check it: open {page} (below) and pick your verification.json.").format(page=page))
        else:
            print(_("Every part holds. Write your evidence (part 10), then open {page} (below) and pick it.").format(
                page=page))


    # after part 10 — the course page that came with the workbook
    def page(self) -> Any:
        """The stage's course page (``page/``): its path and address, and a button that opens it in your browser
        (JupyterLab shows HTML files inside itself without their scripts, so the page opens in the browser instead).
        Nothing is built or opened until the button is pressed: *Run All* writes nothing."""
        import ipywidgets as widgets


        path = page_file(self.workbook, self.course, active(), self.stage)
        address = widgets.HTML(value=_pre(_("course page: {path}\n{uri}").format(
            path=self.workbook.relative(path), uri=path.as_uri())))
        button = widgets.Button(description=_("Open the course page in my browser"), icon="external-link",
                                button_style="primary", layout=widgets.Layout(width="max-content", min_width="max-content"))
        shown = widgets.HTML(value="")

        def open_page(_event: Any) -> None:
            try:
                ensure_page(self.workbook, self.course)
            except (SiteError, OSError) as error:
                shown.value = _pre(_("cannot build the course page in page/ ({cause})").format(
                    cause=getattr(error, "strerror", None) or error))
                return
            if open_in_browser(path.as_uri()):
                shown.value = "<p>" + _html(_("Opened in your web browser: pick your `verification.json` on the page.")) \
                    + "</p>"
            else:
                shown.value = "<p>" + _html(_("No browser can be started from this kernel (JupyterLab runs on another "
                                              "computer?): open the address above in your browser, or run `forgelab page "
                                              "{number}` in a terminal on the computer that has the workbook.").format(
                    number=self.stage.number)) + "</p>"

        button.on_click(self._spoken(open_page))
        return widgets.VBox([address, button, shown])


def stage_tools(stage_number: str, target: str | None = None, lang: str | None = None) -> StageTools:
    return StageTools(stage_number, target, lang)


UNREADABLE = EVIDENCE_WORDS["unreadable"]  # "unreadable: run check again", as status says it

# Widget HTML inherits the 28 px line height of a widget row; running text reads better at 1.5.
_TEXT_STYLE = 'style="line-height: 1.5"'


def _show_bundle(bundle: dict[str, str]) -> Any:
    """Show text (and its HTML) as a cell's output that can be replaced later: its display handle (in a kernel), or
    the text printed."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display

    if not InteractiveShell.initialized():
        print(bundle["text/plain"])
        return None
    return display(bundle, raw=True, display_id=True)


def _show(grid: Grid) -> None:
    """A table under the cell: HTML and text in a kernel (the front end picks HTML), the text printed elsewhere."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display

    if InteractiveShell.initialized():
        display(grid)
    else:
        print(grid.text())


def _pre(text: str) -> str:
    return f'<pre style="white-space: pre-wrap; line-height: 1.4">{esc(text)}</pre>'


def _html(text: str) -> str:
    """One line of stage text as HTML: escaped, with `code`, *emphasis* and **bold** rendered."""
    return inline(text)


def _markdown(text: str) -> str:
    """A block of stage text (paragraphs and lists) as HTML, escaped, with inline Markdown rendered."""
    return md(text)
