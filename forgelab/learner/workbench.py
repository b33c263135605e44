"""The learner's operations, once: used by the command line and by the notebooks' ``StageTools``.

Each operation does the work and returns a :class:`Message` — the lines a person reads, whether it
went well, and the next step — so that the terminal and the notebook say exactly the same things,
and a behaviour (recording a fixed lab in the evidence, choosing the next step) exists in one place.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from forgelab.learner import backups, faultlab, stagehints, state
from forgelab.learner.check import ALL_PARTS, FAULT_LAB, CheckOutcome, DIAGNOSIS_WORDS, run_check
from forgelab.learner.checkjob import PendingRun
from forgelab.core.display import columns, symbol, table, width as terminal_width, wrap
from forgelab.core.i18n import _, active
from forgelab.judge.outcomes import ImportProblem, Outcome, TestRow
from forgelab.judge.settings import DEFAULT, JudgeSettings
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage, load_course
from forgelab.core.targets import Target, resolve_target
from forgelab.core.starters import unfinished_functions
from forgelab.verdicts.diagnosis import (AnswerKey, DiagnosisError, DiagnosisRecord, MIN_EXPLANATION_WORDS,
                                         RECORD_SCHEMA, confirm_step, defect_text, explanation_words, judge,
                                         load_key, load_record, record_file)
from forgelab.learner.status import TestsCell, import_key, remember, remember_import, stage_key
from forgelab.verdicts.parts import PART_WORDS
from forgelab.site.local import page_file
from forgelab.learner.faulthints import ladder, shown_line
from forgelab.core.evidence import sha256_file, write_atomic
from forgelab.core import learning
from forgelab.core import pyast

if TYPE_CHECKING:  # watch mode hands a worker in; a check never loads the warm worker's module
    from forgelab.judge.warm import WarmWorker


def target_words(target: dict[str, str]) -> str:
    """What a check judged, in the learner's words, with the ``--target`` value that names it in brackets."""
    name, kind = target["name"], target["kind"]
    if kind == "learner":
        return _("your forge/ ({name})").format(name=name)
    if kind == "solution":
        return _("the reference solution ({name})").format(name=name)
    if kind == "fault":
        return _("the fault lab's broken copy ({name})").format(name=name)
    return _("the forge/ of the folder you named ({name})").format(name=name)


@dataclass(frozen=True)
class Message:
    """What an operation says: its lines, whether it went well, and the next step.

    :meth:`text` wraps every line wider than the terminal (continuation lines indented), so nothing is cut
    and nothing runs off the screen; ``verbatim`` messages (source code, a whole failure) keep their lines."""

    lines: tuple[str, ...]
    ok: bool = True
    next_step: str = ""
    extra: dict[str, object] = field(default_factory=dict)
    verbatim: bool = False

    def text(self, width: int | None = None) -> str:
        lines = list(self.lines)
        if self.next_step:
            lines.append(_("next: {step}").format(step=self.next_step))
        if self.verbatim:
            return "\n".join(lines)
        total = width or terminal_width()
        out: list[str] = []
        for block in lines:
            for line in block.split("\n"):
                out.append(line if columns(line) <= total else wrap(line, total, indent=2))
        return "\n".join(out)


ORDER = ["timeout", "error", "failed", "not_run", "skipped", "passed"]


def collapse(stage_required: tuple[str, ...], tests: tuple[TestRow, ...]) -> list[tuple[str, str, str]]:
    """One row per required test: worst outcome across its cases and the first cause."""
    rows = []
    for name in stage_required:
        cases = [r for r in tests if r.name == name]
        worst = min(cases, key=lambda r: ORDER.index(r.outcome))
        label = name if len(cases) == 1 else _("{name} ({count} cases)").format(name=name, count=len(cases))
        cause = "" if worst.outcome == "passed" else worst.cause
        rows.append((label, symbol(worst.outcome), cause))
    return rows


class Workbench:
    """One workbook, its course, and the judge's settings."""

    def __init__(self, workbook: Workbook, course: Course, settings: JudgeSettings = DEFAULT) -> None:
        self.workbook, self.course, self.settings = workbook, course, settings
        # the last check of each stage and target in this process (the notebook's kernel): a later check runs again
        # only the slow parts whose files changed since (see run_check's ``previous``)
        self._judged: dict[tuple[str, str, str], CheckOutcome] = {}

    @classmethod
    def locate(cls, settings: JudgeSettings = DEFAULT) -> Workbench:
        workbook = Workbook.locate()
        return cls(workbook, load_course(workbook.root), settings)

    def target(self, name: str = "learner") -> Target:
        return resolve_target(name, self.workbook, self.course)

    # ------------------------------------------------------------ checking

    def check(self, stage: Stage, target: str = "learner", *, write: bool = True, out: Path | None = None,
              parts: frozenset[str] = ALL_PARTS, previous: CheckOutcome | None = None,
              warm: WarmWorker | None = None, pending: PendingRun | None = None, record: bool = True) -> CheckOutcome:
        """``forgelab check``; with ``previous``, only ``parts`` run again, and with ``warm`` the tests run in a
        session forked from that worker (watch mode, see :func:`run_check`); with ``pending``, the judge's run of
        this check was started already (:func:`forgelab.learner.checkjob.start_check`). With ``record=False`` the
        caller calls :meth:`record` itself (watch mode: once the verdict is on screen)."""
        key = (stage.number, target, active())
        if previous is None and pending is None:
            previous = self._judged.get(key)
        outcome = run_check(self.course, self.workbook, stage, self.target(target), write=write, out=out,
                            settings=self.settings, parts=parts, previous=previous, warm=warm, pending=pending)
        self._judged[key] = outcome
        if record:
            self.record(outcome, target, write=write, out=out)
        return outcome

    def record(self, outcome: CheckOutcome, target: str = "learner", *, write: bool = True,
               out: Path | None = None) -> None:
        """What a check of the learner's code leaves for later commands: what ``status`` need not run again, the
        first failing test (for ``hint``), and the learning record (first check, acceptance). The verdict and its
        evidence (verification.json) do not depend on it."""
        if target == "learner":
            self._remember(outcome)
            if write and out is None and outcome.path is not None:  # the learning record: first check, acceptance

                learning.note_check(self.workbook, outcome.stage.number, outcome.accepted)

    def _remember(self, outcome: CheckOutcome) -> None:
        """``status`` need not run a stage again whose code has not changed since this check."""
        stage = outcome.stage
        summary = outcome.document["summary"]
        problem = outcome.import_problem.cause if outcome.import_problem else ""
        if outcome.report is not None and outcome.report.problem:
            return  # the judge itself failed: nothing to remember
        cell = TestsCell(0 if problem else int(summary["required_passed"]), len(stage.required_tests), problem)
        state.remember_first_failing(self.workbook, stage.number,
                                     None if outcome.import_problem else stagehints.first_failing(stage, outcome.tests))
        if not outcome.stale:  # a transfer verdict judged on other files than these is not remembered as theirs
            remember(self.workbook, stage, stage_key(self.course, self.workbook, stage), cell, outcome.transfer.status)
        if not problem:
            remember_import(self.workbook, stage, import_key(self.workbook, stage))
        self._remember_lab(outcome)

    def _remember_lab(self, outcome: CheckOutcome) -> None:
        """A check that judged the fault lab leaves that verdict as ``forgelab fault check`` does: ``status``'s fault
        lab column and the next step it suggests then agree with the evidence the check wrote (a lab repaired and
        checked with ``forgelab check`` alone was shown as "started", with "next: fault start")."""
        lab_module = self.workbook.workspace / outcome.stage.lab_module
        if FAULT_LAB in outcome.stale or outcome.fault_lab.status not in ("fixed", "broken") or not lab_module.is_file():
            return
        judged = outcome.fault_lab.extra.get("fixed_file_sha256") if outcome.fault_lab.status == "fixed" else None
        state.remember_fault_check(self.workbook, outcome.stage.number, outcome.fault_lab.status,
                                   str(judged) if judged else sha256_file(lab_module))

    def tests_rows(self, outcome: CheckOutcome) -> list[tuple[str, str, str]] | None:
        """The required tests as rows (test, outcome, cause); None when the module does not import (no test ran)."""
        if outcome.import_problem is not None:
            return None
        return collapse(outcome.stage.required_tests, outcome.tests)

    def tests_table(self, outcome: CheckOutcome, width: int | None = None) -> list[str]:
        """The required tests, one row each — or, when the module does not import, one line that says why."""
        stage = outcome.stage
        if outcome.import_problem is not None:
            return [_("all {count} tests not run — {cause}").format(count=len(stage.required_tests),
                                                                   cause=outcome.import_problem.cause)]
        return [table([_("test"), _("outcome"), _("cause")], collapse(stage.required_tests, outcome.tests),
                      total_width=width)]

    def check_message(self, outcome: CheckOutcome, evidence_path: str | None = None, width: int | None = None) -> Message:
        stage, doc = outcome.stage, outcome.document

        lines = [_("Stage {number} · {title} · target: {target}").format(
            number=stage.number, title=stage.text().title, target=target_words(doc["target"])), ""]
        lines += self.tests_table(outcome, width)
        summary = doc["summary"]
        lines.append(_("required tests: {passed}/{total} passed").format(passed=summary["required_passed"],
                                                                        total=summary["required_total"]))
        lines.append("")

        parts = [(_("fault lab"), _(PART_WORDS.get(outcome.fault_lab.status, outcome.fault_lab.status)),
                  outcome.fault_lab.detail),
                 (_("regression test"), _(PART_WORDS.get(outcome.regression.status, outcome.regression.status)),
                  outcome.regression.detail),
                 (_("diagnosis (self-reported)"),
                  _(DIAGNOSIS_WORDS.get(outcome.diagnosis.status, outcome.diagnosis.status)), outcome.diagnosis.detail),
                 (_("transfer"), _(PART_WORDS.get(outcome.transfer.status, outcome.transfer.status)),
                  outcome.transfer.detail),
                 (_("design answer"), _(PART_WORDS.get(outcome.design.status, outcome.design.status)),
                  outcome.design.detail)]
        lines.append(table([_("part"), _("status"), _("detail")], parts, total_width=width))
        lines.append("")
        verdict = _("ACCEPTED") if doc["accepted"] else _("NOT ACCEPTED")
        if evidence_path:
            lines.append(_("verdict: {verdict} — evidence: {path}").format(verdict=verdict, path=evidence_path))
            lines.append(_("self-check page: {page} (`forgelab page {number}` opens it; pick the evidence there)").format(
                page=self.page_path(stage), number=stage.number))
        else:
            lines.append(_("verdict: {verdict}").format(verdict=verdict))
        return Message(tuple(lines), bool(doc["accepted"]), self.next_step(outcome))

    def page_path(self, stage: Stage | None = None) -> str:
        """The workbook's copy of the course page for ``stage`` (or its index), as the learner sees the path."""
        return self.workbook.relative(page_file(self.workbook, self.course, active(), stage))

    def next_step(self, outcome: CheckOutcome) -> str:
        stage = outcome.stage
        acceptance = outcome.document["acceptance"]
        if outcome.import_problem is not None:
            return self._import_next_step(stage, outcome.import_problem)
        if not acceptance["required_tests_passed"]:
            failing = [row for row in outcome.tests if row.outcome is not Outcome.PASSED]
            if failing and all(row.unfinished for row in failing):
                return _("implement {module} (notebook part 6; `forgelab hint {number}` for a hint)").format(
                    module=stage.module, number=stage.number)
            first = failing[0] if failing else None
            if first is None:
                return _("make the failing tests pass in {module}").format(module=stage.module)
            return _("make the failing tests pass in {module}; `forgelab check {number} --why {test}` shows the whole "
                     "failure").format(module=stage.module, number=stage.number, test=first.name)
        if not acceptance["fault_lab_fixed"] or not acceptance["fault_lab_diagnosed"]:
            if outcome.fault_lab.status == "not_started":
                return _("start the fault lab: `forgelab fault start {number}`").format(number=stage.number)
            if not acceptance["fault_lab_diagnosed"]:
                return _("state your diagnosis of the lab: `forgelab fault diagnose {number}` (which test shows the "
                         "defect, where it lies, what it is){then}").format(
                    number=stage.number, then="" if acceptance["fault_lab_fixed"] else _(", then repair it"))
            return _("fix {path}, then `forgelab fault check {number}`").format(path=stage.lab_module, number=stage.number)
        if outcome.transfer.status == "cannot_tell":
            return _("make your transfer test in {path} assert the exact results the challenge asks for, so that it "
                     "fails on the known-wrong implementation").format(path=stage.transfer_file)
        if not acceptance["transfer_passed"]:
            return _("write your transfer test in {path} (notebook part 8)").format(path=stage.transfer_file)
        if not acceptance["design_answer_present"]:
            return _("answer the design question (notebook part 9, or `forgelab answer {number} --file answer.md`)").format(
                number=stage.number)
        return _("`forgelab page {number}` opens this stage's course page: pick this verification.json there to "
                 "self-check it").format(number=stage.number)

    @staticmethod
    def _import_next_step(stage: Stage, problem: ImportProblem) -> str:
        if problem.kind == "syntax" and problem.where:
            return _("fix {where} ({message}), then run `forgelab check {number}` again").format(
                where=problem.where, message=problem.message, number=stage.number)
        if problem.kind == "missing":
            return _("`forgelab starter {number}` brings back the shipped {module}").format(number=stage.number,
                                                                                          module=stage.module)
        if problem.kind == "limit":
            return _("remove the loop that runs when {module} is imported, then check again").format(module=stage.module)
        if problem.where:
            return _("fix the error at {where} so that {module} imports cleanly, then check again").format(
                where=problem.where, module=stage.module)
        return _("fix the error so that {module} imports cleanly, then check again").format(module=stage.module)

    def why(self, stage: Stage, test: str, target: str = "learner") -> Message:
        """Everything about one test: its source in the course, the full failure, what the code printed."""
        outcome = self.check(stage, target, write=False)
        rows = [row for row in outcome.tests if row.name == test or row.nodeid.endswith(f"::{test}")]
        if not rows:
            names = _(", ").join(stage.required_tests)
            return Message((_("stage {number} has no test called {test!r}").format(number=stage.number, test=test),),
                           False, _("pick one of: {names}").format(names=names))
        lines = [f"{stage.test_file}::{test}", "", *test_source(self.course.root / stage.test_file, rows[0].name), ""]
        for row in rows:
            lines.append(f"{row.nodeid.split('::', 1)[1]}: {symbol(row.outcome)}" + (f" ({row.limit})" if row.limit else ""))
            if row.outcome is not Outcome.PASSED:
                lines.append(_("  cause: {cause}").format(cause=row.cause))
                if row.detail:
                    lines += ["", *["  " + line for line in row.detail.rstrip().splitlines()], ""]
            if row.printed.strip():
                lines += [_("  printed by your code:"), *["    " + line for line in row.printed.rstrip().splitlines()]]
        passed = all(row.outcome is Outcome.PASSED for row in rows)
        return Message(tuple(lines), passed, "" if passed else _("edit {module}, then run this again").format(
            module=stage.module), verbatim=True)

    # ------------------------------------------------------------ the fault lab

    def unfinished_prerequisites(self, stage: Stage) -> list[str]:
        """Earlier stages this stage's lab needs whose module still has unwritten functions."""
        missing = []
        for number in stage.builds_on:
            earlier = self.course.stage(number)
            if unfinished_functions(self.workbook.root / earlier.module):
                missing.append(f"{earlier.number} ({earlier.module})")
        return missing

    def _prerequisites_note(self, stage: Stage) -> list[str]:
        missing = self.unfinished_prerequisites(stage)
        if not missing:
            return []
        return [_("note: this lab builds on stage(s) {stages}, which still have functions to write; the lab copies your "
                  "modules, so finish those stages first (or lay in the reference modules from a checkpoint pack: "
                  "`forgelab restore {number} --from FILE`)").format(stages=_(", ").join(missing), number=stage.number)]

    def fault_start(self, stage: Stage, target: str = "learner") -> Message:
        chosen = self.target(target)
        opened = False
        if faultlab.is_sealed(self.workbook, stage) and not (faultlab.lab_path(self.workbook, stage)
                                                             / stage.fault.fault_file).is_file():
            faultlab.unseal(self.workbook, self.course, stage, chosen.layers, self.settings)
            opened = True
        with chosen.importable() as import_dir:
            base = import_dir / "forge" if chosen.kind != "learner" else None
            module, created = faultlab.start(self.workbook, stage, base)
        shown = self.workbook.relative(module)
        number = stage.number
        if created:
            unsealed = [_("stage {number}'s required tests pass on your forge/: its fault lab is open").format(
                number=number)] if opened else []
            lines = [*unsealed, _("fault lab {number} started: the broken module is {path}").format(number=number, path=shown),
                     _("your own forge/ is not touched by the lab"), *self._prerequisites_note(stage)]
            return Message(tuple(lines), True, _("`forgelab fault check {number}` to watch the target test fail").format(
                number=number))
        return Message((_("fault lab {number} is already started; your edits in {path} are kept").format(
            number=number, path=shown),), True,
            _("`forgelab fault check {number}`, or `forgelab fault reset {number}` to start over").format(number=number))

    def fault_check(self, stage: Stage) -> Message:
        result, regression = faultlab.check(self.workbook, self.course, stage, self.settings)
        target = stage.fault.target_test
        tested = _("regression test {path} ({status}): {detail}").format(
            path=stage.regression_test, status=_(PART_WORDS.get(regression.status, regression.status)),
            detail=regression.detail)
        note = [tested, *self._prerequisites_note(stage)]
        number = stage.number
        if result.status == "error":
            return Message((_("fault lab {number}: the lab module does not import — {problem}").format(
                number=number, problem=result.problem), *note), False,
                _("fix {path} so that it imports").format(path=stage.lab_module))
        if result.status == "fixed":
            lines = [_("fault lab {number}: FIXED — {test} and every other stage {number} test pass in the lab").format(
                number=number, test=target),
                _("fix principle: {principle}").format(principle=stage.text().fault.fix_principle), tested]
            diagnosed = self.diagnosis(stage)
            if diagnosed is None:
                lines.append(_("your self-reported diagnosis is not stated yet: your evidence accepts the lab once you "
                               "say what was wrong (`forgelab fault diagnose {number}`)").format(number=number))
            outcome = self.check(stage)  # a fixed lab goes into the stage's evidence at once
            verdict = _("accepted") if outcome.accepted else _("not accepted yet")
            if outcome.path:
                lines.append(_("evidence updated: {path} — fault lab fixed, stage {verdict}").format(
                    path=self.workbook.relative(outcome.path), verdict=verdict))
            return Message(tuple(lines), True, self.next_step(outcome) if not outcome.accepted else "")
        row = result.target
        if row is not None and row.outcome is not Outcome.PASSED:
            lines = [_("fault lab {number}: {test} {outcome}").format(number=number, test=target,
                                                                      outcome=symbol(row.outcome)), f"  {row.cause}"]
            lines.append(_("  declared symptom seen: {symptom}").format(symptom=result.symptom_text)
                         if result.symptom_matched
                         else _("  (this is not the declared symptom any more — your change moved the failure)"))
        else:
            lines = [_("fault lab {number}: {test} passes, but these stage tests still fail: {tests}").format(
                number=number, test=target, tests=_(", ").join(result.failing))]
        diagnosed = self.diagnosis(stage)
        step = (_("repair {path}, then `forgelab fault check {number}` again").format(path=stage.lab_module, number=number)
                if diagnosed is not None and diagnosed.is_right else
                _("find the cause and state it with `forgelab fault diagnose {number}` before you repair {path}; "
                  "`forgelab fault hint {number}` reveals the next diagnosis step").format(path=stage.lab_module,
                                                                                          number=number))
        return Message((*lines, *note), False, step)

    def fault_diff(self, stage: Stage) -> Message:
        text = faultlab.diff(self.workbook, stage)
        return Message((text.rstrip("\n") if text else _("no changes yet: the lab file is still the broken variant"),),
                       verbatim=bool(text))

    def fault_reset(self, stage: Stage) -> Message:
        saved = faultlab.reset(self.workbook, stage)
        return Message((_("fault lab {number} reset to the broken variant; your previous file is kept in backup "
                          "{backup}").format(number=stage.number, backup=saved.name),), True,
                       _("`forgelab fault check {number}`").format(number=stage.number))

    def fault_hint(self, stage: Stage, reset: bool = False) -> Message:
        """Reveal the next rung of the fault lab's ladder: what you observe, each diagnosis step, the fix principle.

        The last diagnosis step names the defect: it opens once the learner's own diagnosis is right."""
        number = stage.number
        diagnosed = self.diagnosis(stage)
        confirm = self._confirm_step(stage, diagnosed)
        rungs = ladder(stage.text(), confirm)
        total = len(rungs)
        if reset:
            state.hide_fault_hints(self.workbook, number)
            return Message((_("fault lab {number}: the story, diagnosis steps and fix principle are hidden again "
                              "(0 of {total} shown)").format(number=number, total=total),), True,
                           _("`forgelab fault hint {number}` shows the first").format(number=number))
        before = min(state.fault_hints_shown(self.workbook, number), total)
        locked = before < total and rungs[before].sealed and confirm is None
        if before < total and not locked:
            state.show_fault_hints(self.workbook, number, before + 1)
        shown = before + 1 if before < total and not locked else before
        lines = [shown_line(index, total, rung, index == shown and shown > before)
                 for index, rung in enumerate(rungs[:shown], 1)]
        lab_started = (faultlab.lab_path(self.workbook, stage) / stage.fault.fault_file).is_file()
        fixed = faultlab.is_fixed(self.workbook, stage)
        if locked:
            lines.append(_("{index}/{total} {label}: the step that names the defect — it opens when your diagnosis is "
                           "right").format(index=shown + 1, total=total, label=rungs[shown].label))
            next_step = _("state your diagnosis: `forgelab fault diagnose {number}` (which test shows it, which "
                          "function, what the defect is)").format(number=number)
        elif shown == total:
            lines.append(_("all {total} are shown (the story, {steps} diagnosis steps and the fix principle); "
                           "`forgelab fault hint {number} --reset` hides them again").format(
                total=total, steps=total - 2, number=number))
            next_step = ""
        elif not lab_started:
            next_step = _("`forgelab fault start {number}` and watch the target test fail, then diagnose").format(
                number=number)
        else:
            next_step = _("try the step in the lab, `forgelab fault check {number}` to re-check; "
                          "`forgelab fault hint {number}` reveals the next one ({left} left)").format(
                number=number, left=total - shown)
        if fixed:  # nothing to try any more: say where the lab stands instead
            next_step = (_("the lab is FIXED — no hint is needed any more; state your diagnosis: `forgelab fault "
                           "diagnose {number}`").format(number=number) if diagnosed is None or not diagnosed.is_right
                         else _("the lab is FIXED and your diagnosis is right: nothing is left to do in it")).rstrip()
        elif not next_step and lab_started:
            next_step = _("fix {path}, then `forgelab fault check {number}`").format(path=stage.lab_module, number=number)
        elif not next_step:
            next_step = _("`forgelab fault start {number}`").format(number=number)
        return Message(tuple(lines), True, next_step)

    # ------------------------------------------------------------ diagnosis before repair

    def diagnosis(self, stage: Stage) -> DiagnosisRecord | None:
        return load_record(self.workbook.workspace, stage)

    def _confirm_step(self, stage: Stage, record: DiagnosisRecord | None) -> str | None:
        """The last diagnosis step, open once a stated diagnosis named the right defect."""
        if record is None or not record.right.get("defect"):
            return None
        try:
            return confirm_step(load_key(self.workbook.root, stage), record.defect, active())
        except DiagnosisError:
            return None

    def diagnosis_questions(self, stage: Stage) -> AnswerKey:
        """The three questions' choices (the answer key holds only salted digests of the answers)."""
        return load_key(self.workbook.root, stage)

    def fault_diagnose(self, stage: Stage, test: str, function: str, defect: str, explanation: str) -> Message:
        """Check a stated diagnosis, save it with the evidence, and say which answers are right."""
        number = stage.number
        if not (faultlab.lab_path(self.workbook, stage) / stage.fault.fault_file).is_file():
            raise faultlab.FaultLabError(_("the fault lab for stage {number} is not started: run `forgelab fault start "
                                           "{number}`, watch the symptom with `forgelab fault check {number}`, then "
                                           "state your diagnosis").format(number=number))
        key = self.diagnosis_questions(stage)
        test = _choose(test, key.test.choices, _("test"))
        function = _choose(function, key.function.choices, _("function"))
        defect = _choose(defect, tuple(choice.id for choice in key.defect.choices), _("defect"))
        words = explanation_words(explanation)
        if words < MIN_EXPLANATION_WORDS:
            raise DiagnosisError(_("say in your own words what is wrong — at least {minimum} words (this has {words})"
                                   ).format(minimum=MIN_EXPLANATION_WORDS, words=words))
        right = judge(key, test, function, defect)
        previous = self.diagnosis(stage)
        attempts = (previous.attempts if previous else 0) + 1
        first_right = previous.first_right_at if previous and previous.first_right_at else (
            attempts if all(right.values()) else None)
        record = DiagnosisRecord(schema_version=RECORD_SCHEMA, stage=number, test=test, function=function,
                                 defect=defect, explanation=" ".join(explanation.split()), right=right,
                                 attempts=attempts, first_right_at=first_right,
                                 hints_shown=state.fault_hints_shown(self.workbook, number),
                                 stated_after_fix=faultlab.is_fixed(self.workbook, stage))
        path = self.workbook.workspace / record_file(stage)
        if path.is_file():
            backups.take(self.workbook, f"diagnosis-{number}", {record_file(stage): path})
        write_atomic(path, json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n")
        language = active()
        marks = {True: _("right"), False: _("not right")}
        lines = [_("fault lab {number}: your self-reported diagnosis (attempt {attempts}), saved to {path} — a learning "
                   "aid that earns no points; the lab's regression test {test_file} earns them").format(
                     number=number, attempts=attempts, path=self.workbook.relative(path), test_file=stage.regression_test),
                 _("  which test shows it: {test} — {verdict}").format(test=test, verdict=marks[right["test"]]),
                 _("  where it lies: {function}() — {verdict}").format(function=function, verdict=marks[right["function"]]),
                 _("  what the defect is: {defect} — {verdict}").format(defect=defect_text(key, defect, language),
                                                                        verdict=marks[right["defect"]])]
        if not all(right.values()):
            if not right["test"]:
                lines.append(_("  that test passes on the broken copy: pick one that `forgelab fault check {number}` "
                               "shows failing").format(number=number))
            if not right["function"]:
                lines.append(_("  the defect is not in that function's code: read the functions the failing test "
                               "calls"))
            return Message(tuple(lines), False, _("look again (`forgelab fault hint {number}` reveals the next step), "
                                                  "then state it again").format(number=number))
        confirm = confirm_step(key, defect, language)
        if confirm:
            lines += [_("Right. The last diagnosis step, the one that names the defect, is open now:"),
                      "  " + confirm]
        if record.stated_after_fix:
            outcome = self.check(stage)  # the diagnosis goes into the stage's evidence at once, like a fixed lab
            if outcome.path:
                lines.append(_("evidence updated: {path} — fault lab fixed and diagnosed, stage {verdict}").format(
                    path=self.workbook.relative(outcome.path),
                    verdict=_("accepted") if outcome.accepted else _("not accepted yet")))
            return Message(tuple(lines), True, "" if outcome.accepted else self.next_step(outcome))
        return Message(tuple(lines), True, _("repair {path}, then `forgelab fault check {number}`").format(
            path=stage.lab_module, number=number))

    # ------------------------------------------------------------ hints

    def hint(self, stage: Stage, reset: bool = False, latest: CheckOutcome | None = None) -> Message:
        """Reveal the next stage hint: the next unrevealed rung that addresses the first failing test of the stage's
        latest check (``latest`` when given — watch mode holds its own), else the next in the ladder's order
        (:mod:`forgelab.learner.stagehints`); every revealed rung is listed, the new one marked."""
        hints = stage.text().hints
        if reset:
            state.hide_hints(self.workbook, stage.number)
            return Message((_("stage {number}: hints hidden again (0 of {total} shown)").format(
                number=stage.number, total=len(hints)),))
        if latest is not None:
            known, test = True, None if latest.import_problem else stagehints.first_failing(stage, latest.tests)
        else:
            known, test = state.first_failing(self.workbook, stage.number)
        chosen: list[stagehints.Choice] = []

        def choose(revealed: tuple[int, ...]) -> int | None:
            choice = stagehints.next_rung(stage, len(hints), revealed, test)
            chosen[:] = [choice] if choice is not None else []
            return choice.rung if choice is not None else None

        revealed, new = state.reveal_hint(self.workbook, stage.number, len(hints), choose)
        if new is not None:
            learning.note_hint(self.workbook, stage.number, len(revealed), len(hints), new, test, chosen[0].addressed)
        lines = [(_("hint {index}/{total} (new): {hint}") if index == new
                  else _("hint {index}/{total}: {hint}")).format(index=index, total=len(hints), hint=hints[index - 1])
                 for index in revealed]
        if new is None:
            lines.append(_("all {total} hints are shown; the notebook's worked demonstration (part 5) shows the idea "
                           "end to end").format(total=len(hints)))
        else:
            lines.append(self._hint_reason(stage, chosen[0], known))
        return Message(tuple(lines), extra={"rung": new, "test": test,
                                            "addressed": bool(chosen and chosen[0].addressed)})

    @staticmethod
    def _hint_reason(stage: Stage, choice: stagehints.Choice, known: bool) -> str:
        """One line on why this rung was revealed."""
        if choice.addressed:
            return _("hint {index} is for {test}, the first failing test of your latest check").format(
                index=choice.rung, test=choice.test)
        if choice.test is not None:
            return _("no hint is left for {test}, the first failing test of your latest check: hint {index} is the "
                     "next in the ladder's order").format(test=choice.test, index=choice.rung)
        if known:
            return _("your latest check has no failing test: hint {index} is the next in the ladder's order").format(
                index=choice.rung)
        return _("hint {index} is the next in the ladder's order; after `forgelab check {number}` the next hint "
                 "follows your first failing test").format(index=choice.rung, number=stage.number)


def _choose(given: str, choices: tuple[str, ...], what: str) -> str:
    """A choice by its name (or its number in the list, from 1): the learner may type either."""
    wanted = given.strip()
    if wanted in choices:
        return wanted
    if wanted.isdigit() and 1 <= int(wanted) <= len(choices):
        return choices[int(wanted) - 1]
    raise DiagnosisError(_("{given!r} is not one of the choices for the {what}: give its number (1–{count}) or its "
                           "name, e.g. {example}").format(given=given, what=what, count=len(choices),
                                                          example=choices[0]))


def test_source(path: Path, name: str) -> list[str]:
    """The source lines of one test function (and its decorators) in a course test file."""
    try:
        source = path.read_text(encoding="utf-8")
        tree = pyast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return []
    lines = source.splitlines()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            start = min([node.lineno, *[d.lineno for d in node.decorator_list]])
            return [f"{number:>4}  {lines[number - 1]}" for number in range(start, (node.end_lineno or node.lineno) + 1)]
    return []
