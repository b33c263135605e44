"""The learner's operations, once: used by the command line and by the notebooks' ``StageTools``.

Each operation does the work and returns a :class:`Message` — the lines a person reads, whether it
went well, and the next step — so that the terminal and the notebook say exactly the same things,
and a behaviour (recording a fixed lab in the evidence, choosing the next step) exists in one place.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from forgelab import faultlab, state
from forgelab.checker import CheckOutcome, run_check
from forgelab.display import table
from forgelab.judge.outcomes import ImportProblem, Outcome
from forgelab.judge.settings import DEFAULT, JudgeSettings
from forgelab.paths import Workbook
from forgelab.registry import Course, Stage, load_course
from forgelab.report import collapse
from forgelab.targets import Target, resolve_target


@dataclass(frozen=True)
class Message:
    lines: tuple[str, ...]
    ok: bool = True
    next_step: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    def text(self) -> str:
        lines = list(self.lines)
        if self.next_step:
            lines.append(f"next: {self.next_step}")
        return "\n".join(lines)


def unfinished_functions(path: Path) -> list[str]:
    """Functions of a module that are still the starter's ``raise NotImplementedError`` stub."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = [item for item in node.body if not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant))]
            if len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None:
                raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
                if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
                    found.append(node.name)
    return found


class Workbench:
    """One workbook, its course, and the judge's settings."""

    def __init__(self, workbook: Workbook, course: Course, settings: JudgeSettings = DEFAULT) -> None:
        self.workbook, self.course, self.settings = workbook, course, settings

    @classmethod
    def locate(cls, settings: JudgeSettings = DEFAULT) -> Workbench:
        workbook = Workbook.locate()
        return cls(workbook, load_course(workbook.root), settings)

    def target(self, name: str = "learner") -> Target:
        return resolve_target(name, self.workbook, self.course)

    # ------------------------------------------------------------ checking

    def check(self, stage: Stage, target: str = "learner", *, write: bool = True, out: Path | None = None) -> CheckOutcome:
        outcome = run_check(self.course, self.workbook, stage, self.target(target), write=write, out=out,
                            settings=self.settings)
        if target == "learner":
            self._remember(outcome)
        return outcome

    def _remember(self, outcome: CheckOutcome) -> None:
        """``status`` need not run a stage again whose code has not changed since this check."""
        from forgelab.status import TestsCell, remember, stage_key

        stage = outcome.stage
        summary = outcome.document["summary"]
        problem = outcome.import_problem.cause if outcome.import_problem else ""
        cell = TestsCell(0 if problem else int(summary["required_passed"]), len(stage.required_tests), problem)
        remember(self.workbook, stage, stage_key(self.course, self.workbook, stage), cell, outcome.transfer.status)

    def tests_table(self, outcome: CheckOutcome, width: int | None = None) -> list[str]:
        """The required tests, one row each — or, when the module does not import, one line that says why."""
        stage = outcome.stage
        if outcome.import_problem is not None:
            return [f"all {len(stage.required_tests)} tests not run — {outcome.import_problem.cause}"]
        return [table(["test", "outcome", "cause"], collapse(stage.required_tests, outcome.tests), total_width=width)]

    def check_message(self, outcome: CheckOutcome, evidence_path: str | None = None, width: int | None = None) -> Message:
        stage, doc = outcome.stage, outcome.document
        lines = [f"Stage {stage.number} · {stage.text().title} · target: {doc['target']['name']}", ""]
        lines += self.tests_table(outcome, width)
        summary = doc["summary"]
        lines.append(f"required tests: {summary['required_passed']}/{summary['required_total']} passed")
        lines.append("")
        parts = [("fault lab", outcome.fault_lab.status, outcome.fault_lab.detail),
                 ("transfer", outcome.transfer.status, outcome.transfer.detail),
                 ("design answer", outcome.design.status, outcome.design.detail)]
        lines.append(table(["part", "status", "detail"], [(p, s.replace("_", " "), d) for p, s, d in parts],
                           total_width=width))
        lines.append("")
        verdict = "ACCEPTED" if doc["accepted"] else "NOT ACCEPTED"
        where = f" — evidence: {evidence_path}" if evidence_path else ""
        lines.append(f"verdict: {verdict}{where}")
        return Message(tuple(lines), bool(doc["accepted"]), self.next_step(outcome))

    def next_step(self, outcome: CheckOutcome) -> str:
        stage = outcome.stage
        acceptance = outcome.document["acceptance"]
        if outcome.import_problem is not None:
            return self._import_next_step(stage, outcome.import_problem)
        if not acceptance["required_tests_passed"]:
            failing = [row for row in outcome.tests if row.outcome is not Outcome.PASSED]
            if failing and all(row.unfinished for row in failing):
                return f"implement {stage.module} (notebook part 6; `forgelab hint {stage.number}` for a hint)"
            first = failing[0] if failing else None
            why = f"; `forgelab check {stage.number} --why {first.name}` shows the whole failure" if first else ""
            return f"make the failing tests pass in {stage.module}{why}"
        if not acceptance["fault_lab_fixed"]:
            if outcome.fault_lab.status == "not_started":
                return f"start the fault lab: `forgelab fault start {stage.number}`"
            return f"fix {stage.lab_module}, then `forgelab fault check {stage.number}`"
        if outcome.transfer.status == "cannot_tell":
            return (f"make your transfer test in {stage.transfer_file} assert the exact results the challenge asks "
                    "for, so that it fails on the known-wrong implementation")
        if not acceptance["transfer_passed"]:
            return f"write your transfer test in {stage.transfer_file} (notebook part 8)"
        if not acceptance["design_answer_present"]:
            return f"answer the design question (notebook part 9, or `forgelab answer {stage.number} --file answer.md`)"
        return f"open the course page and pick this verification.json on the Stage {stage.number} page"

    @staticmethod
    def _import_next_step(stage: Stage, problem: ImportProblem) -> str:
        if problem.kind == "syntax" and problem.where:
            return f"fix {problem.where} ({problem.message}), then run `forgelab check {stage.number}` again"
        if problem.kind == "missing":
            return f"`forgelab starter {stage.number}` brings back the shipped {stage.module}"
        if problem.kind == "limit":
            return f"remove the loop that runs when {stage.module} is imported, then check again"
        where = f" at {problem.where}" if problem.where else ""
        return f"fix the error{where} so that {stage.module} imports cleanly, then check again"

    def why(self, stage: Stage, test: str, target: str = "learner") -> Message:
        """Everything about one test: its source in the course, the full failure, what the code printed."""
        outcome = self.check(stage, target, write=False)
        rows = [row for row in outcome.tests if row.name == test or row.nodeid.endswith(f"::{test}")]
        if not rows:
            names = ", ".join(stage.required_tests)
            return Message((f"stage {stage.number} has no test called {test!r}",), False,
                           f"pick one of: {names}")
        lines = [f"{stage.test_file}::{test}", "", *test_source(self.course.root / stage.test_file, rows[0].name), ""]
        for row in rows:
            lines.append(f"{row.nodeid.split('::', 1)[1]}: {row.outcome}" + (f" ({row.limit})" if row.limit else ""))
            if row.outcome is not Outcome.PASSED:
                lines.append(f"  cause: {row.cause}")
                if row.detail:
                    lines += ["", *["  " + line for line in row.detail.rstrip().splitlines()], ""]
            if row.printed.strip():
                lines += ["  printed by your code:", *["    " + line for line in row.printed.rstrip().splitlines()]]
        passed = all(row.outcome is Outcome.PASSED for row in rows)
        return Message(tuple(lines), passed, "" if passed else f"edit {stage.module}, then run this again")

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
        return [f"note: this lab builds on stage(s) {', '.join(missing)}, which still have functions to write; "
                f"the lab copies your modules, so finish those stages first (or lay in the reference modules "
                f"from a checkpoint pack: `forgelab restore {stage.number} --from FILE`)"]

    def fault_start(self, stage: Stage, target: str = "learner") -> Message:
        chosen = self.target(target)
        with chosen.importable() as import_dir:
            base = import_dir / "forge" if chosen.kind != "learner" else None
            module, created = faultlab.start(self.workbook, stage, base)
        shown = self.workbook.relative(module)
        if created:
            lines = [f"fault lab {stage.number} started: the broken module is {shown}",
                     "your own forge/ is not touched by the lab", *self._prerequisites_note(stage)]
            return Message(tuple(lines), True, f"`forgelab fault check {stage.number}` to watch the target test fail")
        return Message((f"fault lab {stage.number} is already started; your edits in {shown} are kept",),
                       True, f"`forgelab fault check {stage.number}`, or `forgelab fault reset {stage.number}` to start over")

    def fault_check(self, stage: Stage) -> Message:
        result = faultlab.check(self.workbook, self.course, stage, self.settings)
        target = stage.fault.target_test
        note = self._prerequisites_note(stage)
        if result.status == "error":
            return Message((f"fault lab {stage.number}: the lab module does not import — {result.problem}", *note), False,
                           f"fix {stage.lab_module} so that it imports")
        if result.status == "fixed":
            lines = [f"fault lab {stage.number}: FIXED — {target} and every other stage {stage.number} test pass in the lab",
                     f"fix principle: {stage.text().fault_fix_principle}"]
            outcome = self.check(stage)  # a fixed lab goes into the stage's evidence at once
            verdict = "accepted" if outcome.accepted else "not accepted yet"
            if outcome.path:
                lines.append(f"evidence updated: {self.workbook.relative(outcome.path)} — fault lab "
                             f"{outcome.fault_lab.status}, stage {verdict}")
            return Message(tuple(lines), True, self.next_step(outcome) if not outcome.accepted else "")
        row = result.target
        if row is not None and row.outcome is not Outcome.PASSED:
            lines = [f"fault lab {stage.number}: {target} {row.outcome.upper()}", f"  {row.cause}"]
            lines.append(f"  declared symptom seen: {result.symptom_text}" if result.symptom_matched
                         else "  (this is not the declared symptom any more — your change moved the failure)")
        else:
            lines = [f"fault lab {stage.number}: {target} passes, but these stage tests still fail: "
                     f"{', '.join(result.failing)}"]
        return Message((*lines, *note), False, f"diagnose and edit {stage.lab_module}; "
                                               f"`forgelab hint {stage.number}` and the notebook part 7 help")

    def fault_diff(self, stage: Stage) -> Message:
        text = faultlab.diff(self.workbook, stage)
        return Message((text.rstrip("\n") if text else "no changes yet: the lab file is still the broken variant",))

    def fault_reset(self, stage: Stage) -> Message:
        saved = faultlab.reset(self.workbook, stage)
        return Message((f"fault lab {stage.number} reset to the broken variant; your previous file is kept in "
                        f"backup {saved.name}",), True, f"`forgelab fault check {stage.number}`")

    def fault_hint(self, stage: Stage, reset: bool = False) -> Message:
        """Reveal the next rung of the fault lab's ladder: what you observe, each diagnosis step, the fix principle."""
        from forgelab.faulthints import ladder

        rungs = ladder(stage.text())
        if reset:
            state.hide_fault_hints(self.workbook, stage.number)
            return Message((f"fault lab {stage.number}: the story, diagnosis steps and fix principle are hidden again "
                            f"(0 of {len(rungs)} shown)",), True, f"`forgelab fault hint {stage.number}` shows the first")
        shown, new = state.reveal_next_fault_hint(self.workbook, stage.number, tuple(rung.text for rung in rungs))
        shown = min(shown, len(rungs))
        lines = [f"[{'new' if new is not None and index == shown else '   '}] {index}/{len(rungs)} {rung.label}: {rung.text}"
                 for index, rung in enumerate(rungs[:shown], 1)]
        lab_started = (faultlab.lab_path(self.workbook, stage) / stage.fault.fault_file).is_file()
        if new is None:
            lines.append(f"all {len(rungs)} are shown (the story, {len(rungs) - 2} diagnosis steps and the fix principle); "
                         f"`forgelab fault hint {stage.number} --reset` hides them again")
            next_step = (f"fix {stage.lab_module}, then `forgelab fault check {stage.number}`" if lab_started
                         else f"`forgelab fault start {stage.number}`")
        elif not lab_started:
            next_step = f"`forgelab fault start {stage.number}` and watch the target test fail, then diagnose"
        else:
            next_step = (f"try the step in the lab, `forgelab fault check {stage.number}` to re-check; "
                         f"`forgelab fault hint {stage.number}` reveals the next one ({len(rungs) - shown} left)")
        return Message(tuple(lines), True, next_step)

    # ------------------------------------------------------------ hints

    def hint(self, stage: Stage, reset: bool = False) -> Message:
        hints = stage.text().hints
        if reset:
            state.update(self.workbook, "hints", stage.number, 0)
            return Message((f"stage {stage.number}: hints hidden again (0 of {len(hints)} shown)",))
        shown, new = state.reveal_next_hint(self.workbook, stage.number, hints)
        lines = [f"[{'new' if new is not None and index == shown else '   '}] hint {index}/{len(hints)}: {hint}"
                 for index, hint in enumerate(hints[:shown], 1)]
        if new is None:
            lines.append(f"all {len(hints)} hints are shown; the notebook's worked demonstration (part 5) shows the "
                         "idea end to end")
        return Message(tuple(lines))


def test_source(path: Path, name: str) -> list[str]:
    """The source lines of one test function (and its decorators) in a course test file."""
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return []
    lines = source.splitlines()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            start = min([node.lineno, *[d.lineno for d in node.decorator_list]])
            return [f"{number:>4}  {lines[number - 1]}" for number in range(start, (node.end_lineno or node.lineno) + 1)]
    return []
