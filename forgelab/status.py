"""``forgelab status``: every stage at a glance, quickly, and the next step to take.

Test results are judged per stage, by node id, in that stage's own test file — a test name that
several stage files share never mixes their results. A stage is run again only when something it
depends on changed since its results were last seen (its module and the ``forge`` modules that module
imports, ``forge/project/``, its test file, its transfer test); otherwise the remembered row is
shown. Everything that does need a run goes into one judge job (:mod:`forgelab.judge`): one learner
process per stage, so a module that hangs or breaks at import spoils only its own row, and the
learner's transfer tests in the sandbox. ``forgelab check NN`` remembers its results the same way.

Fault-lab status comes from the last ``fault check``; evidence from the verification.json files.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from forgelab import evidence, state
from forgelab.answers import answer_path, word_count
from forgelab.checker import MIN_DESIGN_WORDS, judge_transfer
from forgelab.i18n import N_, _, active
from forgelab.judge import core, jobs
from forgelab.judge.core import CourseTests, LearnerTests, TargetSpec
from forgelab.judge.outcomes import Outcome, RunReport
from forgelab.judge.settings import DEFAULT, JudgeSettings
from forgelab.paths import Workbook
from forgelab.registry import Course, Stage

CACHE_SECTION = "status-v2"
TRANSFER_TARGET = "transfer"


@dataclass(frozen=True)
class TestsCell:
    passed: int
    total: int
    problem: str  # "" or the one-line import problem

    @property
    def ok(self) -> bool:
        return not self.problem and self.passed == self.total

    @property
    def text(self) -> str:
        return _("cannot import: {cause}").format(cause=self.problem) if self.problem else f"{self.passed}/{self.total}"


# the words shown for each state (the states themselves are codes: they never depend on the language)
TRANSFER_WORDS = {"missing": N_("missing"), "not_written": N_("not written"), "passed": N_("passed"),
                  "failed": N_("failing"), "error": N_("error"), "cannot_tell": N_("cannot tell")}
LAB_WORDS = {"not_started": N_("not started"), "started": N_("started"), "edited": N_("edited, not checked"),
             "broken": N_("broken"), "fixed": N_("fixed"), "error": N_("error")}
EVIDENCE_WORDS = {"none": N_("none"), "unreadable": N_("unreadable: run check again"), "accepted": N_("accepted"),
                  "not_accepted": N_("not accepted"), "stale_accepted": N_("accepted (stale: code changed)"),
                  "stale_not_accepted": N_("not accepted (stale: code changed)")}


@dataclass(frozen=True)
class StageStatus:
    stage: Stage
    tests: TestsCell
    transfer: str  # a Part status: missing | not_written | passed | failed | error | cannot_tell
    lab: str  # a LAB_WORDS key
    lab_ok: bool
    design_words: int | None  # None when there is no answer
    design_ok: bool
    evidence: str  # an EVIDENCE_WORDS key
    fresh: bool  # True when the results were run now, False when remembered

    @property
    def transfer_ok(self) -> bool:
        return self.transfer == "passed"

    def cells(self) -> tuple[str, ...]:
        if self.design_words is None:
            design = _("missing")
        elif self.design_ok:
            design = _("{count} words").format(count=self.design_words)
        else:
            design = _("too short ({count})").format(count=self.design_words)
        return (self.stage.number, self.stage.text().title, self.tests.text, _(LAB_WORDS.get(self.lab, self.lab)),
                _(TRANSFER_WORDS.get(self.transfer, self.transfer)), design, _(EVIDENCE_WORDS.get(self.evidence, self.evidence)))


@dataclass(frozen=True)
class StatusReport:
    stages: list[StageStatus]
    next_step: str
    problem: str | None
    ran: tuple[str, ...]  # the stages whose tests ran now

    @property
    def rows(self) -> list[tuple[str, ...]]:
        return [item.cells() for item in self.stages]


# ---------------------------------------------------------------- what a stage depends on


def _imports(path: Path) -> set[str]:
    """The ``forge`` modules a module imports (by file path), read from its syntax tree."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return set()
    found = set()
    for node in ast.walk(tree):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
            [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
        for name in names:
            if name.startswith("forge.") and not name.startswith("forge.project"):
                found.add(name.replace(".", "/") + ".py")
    return found


def dependency_files(workbook: Workbook, stage: Stage) -> list[Path]:
    """The stage module, every forge module it imports (transitively), forge/__init__.py and forge/project/."""
    seen: set[str] = set()
    todo = [stage.module]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo.extend(_imports(workbook.root / module) - seen)
    files = [workbook.root / module for module in sorted(seen)] + [workbook.root / "forge" / "__init__.py"]
    project = workbook.root / "forge" / "project"
    if project.is_dir():
        files += sorted(p for p in project.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return files


def stage_key(course: Course, workbook: Workbook, stage: Stage) -> str:
    """A digest of everything the stage's results depend on; a different key means "run it again"."""
    digest = hashlib.sha256(f"course {course.version}\0".encode())
    for path in [*dependency_files(workbook, stage), course.root / stage.test_file, workbook.root / stage.transfer_file,
                 workbook.root / stage.fault_variant]:
        digest.update(str(path.relative_to(workbook.root) if path.is_relative_to(workbook.root) else path).encode())
        digest.update(b"\0" + (path.read_bytes() if path.is_file() else b"<missing>") + b"\0")
    return digest.hexdigest()


def remember(workbook: Workbook, stage: Stage, key: str, tests: TestsCell, transfer: str) -> None:
    state.update(workbook, CACHE_SECTION, stage.number,
                 {"key": key, "tests": asdict(tests), "transfer": transfer})


def remembered(workbook: Workbook, stage: Stage, key: str) -> tuple[TestsCell, str] | None:
    entry = state.get(workbook, CACHE_SECTION, stage.number)
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    try:
        cell = TestsCell(**entry["tests"])
    except (TypeError, KeyError):
        return None
    return cell, str(entry.get("transfer", ""))


# ---------------------------------------------------------------- cells


def tests_cell(stage: Stage, report: RunReport, label: str) -> TestsCell:
    problem = report.import_problems.get(label)
    if problem is not None:
        return TestsCell(0, len(stage.required_tests), problem.cause)
    errors = [e for e in report.collect_errors if e.target == label and e.file == stage.test_file]
    if errors:
        return TestsCell(0, len(stage.required_tests),
                         _("the stage tests could not be loaded: {cause}").format(cause=errors[0].cause))
    rows = report.in_file(label, stage.test_file)
    passed = sum(1 for name in stage.required_tests
                 if (mine := [r for r in rows if r.name == name]) and all(r.outcome is Outcome.PASSED for r in mine))
    return TestsCell(passed, len(stage.required_tests), "")


def transfer_cell(workbook: Workbook, stage: Stage, report: RunReport, wrong_label: str | None) -> str:
    if not (workbook.root / stage.transfer_file).is_file():
        return "missing"
    rows = report.in_file(TRANSFER_TARGET, stage.transfer_file)
    errors = [e.cause for e in report.collect_errors if e.target == TRANSFER_TARGET and e.file == stage.transfer_file]
    problem = report.target_problems.get(TRANSFER_TARGET) or (errors[0] if errors else None)
    on_wrong = report.in_file(wrong_label, stage.transfer_file) if wrong_label else None
    return judge_transfer(rows, problem, stage.transfer_file, on_wrong).status


def _lab_cell(workbook: Workbook, stage: Stage) -> tuple[str, bool]:
    lab_module = workbook.workspace / stage.lab_module
    if not lab_module.is_file():
        return "not_started", False
    last = state.get(workbook, "fault_lab", stage.number)
    if not last:
        return "started", False
    if last.get("file_sha256") != evidence.sha256_file(lab_module):
        return "edited", False
    status = str(last.get("status", "started"))
    return (status if status in LAB_WORDS else "started"), status == "fixed"


def _design_cell(workbook: Workbook, stage: Stage) -> tuple[int | None, bool]:
    path = answer_path(workbook, stage)
    if not path.is_file():
        return None, False
    words = word_count(path.read_text(encoding="utf-8", errors="replace"))
    return words, words >= MIN_DESIGN_WORDS


def _evidence_cell(workbook: Workbook, stage: Stage) -> str:
    path = workbook.workspace / stage.evidence_file
    if not path.is_file():
        return "none"
    try:
        document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return "unreadable"
    module_now = evidence.sha256_file(workbook.root / stage.module)
    stale = document.get("digests", {}).get("module", {}).get("sha256") != module_now
    verdict = "accepted" if document.get("accepted") else "not_accepted"
    return f"stale_{verdict}" if stale and document.get("target", {}).get("kind") == "learner" else verdict


def _is_starter(workbook: Workbook, relative: str) -> bool:
    from forgelab.starters import StarterError, starter_bytes

    path = workbook.root / relative
    try:
        return path.is_file() and path.read_bytes() == starter_bytes(workbook.root, relative)
    except StarterError:
        return False


# ---------------------------------------------------------------- the whole table


def status_job(course: Course, workbook: Workbook, stages: list[Stage]) -> tuple[core.Job, dict[str, str | None]]:
    """One judge job for the stages that need a run; returns it with each stage's known-wrong label."""
    forge = workbook.root / "forge"
    targets = [TargetSpec(f"stage-{s.number}", (forge,), s.number, (s.module,)) for s in stages]
    course_tests = [CourseTests(f"stage-{s.number}", (s.test_file,)) for s in stages]
    written = [s for s in stages if (workbook.root / s.transfer_file).is_file()]
    learner_tests: list[LearnerTests] = []
    wrong: dict[str, str | None] = {s.number: None for s in stages}
    if written:
        targets.append(TargetSpec(TRANSFER_TARGET, (forge,)))
        learner_tests.append(LearnerTests(TRANSFER_TARGET, tuple((workbook.root / s.transfer_file, s.transfer_file)
                                                                for s in written)))
    for stage in written:
        variant = jobs.fault_variant(workbook, stage)
        if _is_starter(workbook, stage.transfer_file) or not (workbook.root / stage.fault_variant).is_file():
            continue
        label = f"known-wrong-{stage.number}"
        wrong[stage.number] = label
        targets.append(TargetSpec(label, (forge, variant), stage.number))
        learner_tests.append(LearnerTests(label, ((workbook.root / stage.transfer_file, stage.transfer_file),)))
    return jobs.job(course, workbook, targets, course_tests, learner_tests), wrong


def next_step_for(item: StageStatus) -> str | None:
    stage = item.stage
    number = stage.number
    if item.tests.problem:
        return _("stage {number}: {cause}").format(number=number, cause=item.tests.problem)
    if not item.tests.ok:
        return _("stage {number}: open {notebook} and implement {module}; then `forgelab check {number}`").format(
            number=number, notebook=stage.notebook_in(active()), module=stage.module)
    if not item.lab_ok:
        return _("stage {number}: `forgelab fault start {number}` then `forgelab fault check {number}`").format(
            number=number)
    if item.transfer == "cannot_tell":
        return _("stage {number}: your transfer test passes on the known-wrong implementation too — make it assert the "
                 "exact results the challenge asks for ({path})").format(number=number, path=stage.transfer_file)
    if not item.transfer_ok:
        return _("stage {number}: write your transfer test in {path}").format(number=number, path=stage.transfer_file)
    if not item.design_ok:
        return _("stage {number}: answer the design question (notebook part 9 or `forgelab answer {number}`)").format(
            number=number)
    if item.evidence != "accepted":
        return _("stage {number}: `forgelab check {number}` to write your evidence").format(number=number)
    return None


def collect_status(workbook: Workbook, course: Course, settings: JudgeSettings = DEFAULT,
                   force: bool = False) -> StatusReport:
    keys = {stage.number: stage_key(course, workbook, stage) for stage in course.stages}
    known = {stage.number: None if force else remembered(workbook, stage, keys[stage.number]) for stage in course.stages}
    stale = [stage for stage in course.stages if known[stage.number] is None]
    results: dict[str, tuple[TestsCell, str]] = {n: k for n, k in known.items() if k is not None}
    problem = None
    if stale:
        job, wrong = status_job(course, workbook, stale)
        report = core.run(job, settings)
        problem = report.problem
        for stage in stale:
            cell = tests_cell(stage, report, f"stage-{stage.number}")
            transfer = transfer_cell(workbook, stage, report, wrong[stage.number])
            results[stage.number] = (cell, transfer)
            if not report.problem:
                remember(workbook, stage, keys[stage.number], cell, transfer)
    stages = []
    for stage in course.stages:
        cell, transfer = results[stage.number]
        lab, lab_ok = _lab_cell(workbook, stage)
        words, design_ok = _design_cell(workbook, stage)
        stages.append(StageStatus(stage, cell, transfer, lab, lab_ok, words, design_ok, _evidence_cell(workbook, stage),
                                  stage in stale))
    next_step = next((step for item in stages if (step := next_step_for(item))), None)
    return StatusReport(stages, next_step or _("every stage is accepted: open the course page and self-check your "
                                               "evidence"), problem, tuple(stage.number for stage in stale))
