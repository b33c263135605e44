"""``forgelab status``: every stage at a glance, in about the time of one check, and the next step to take.

Nothing is run that need not run:

* **Untouched files are recognised by their digest.** A stage whose module (with ``forge/__init__.py`` and
  ``forge/project/``) is still the shipped starter has not been started: its tests are not run. A transfer
  test that is still the shipped starter is "not written"; a fault lab whose file is still the broken variant
  is not fixed. On a fresh workbook, status runs nothing at all.
* **Unchanged stages are remembered.** A stage whose inputs (its module and the ``forge`` modules it
  imports, ``forge/project/``, its test file, its transfer test, its known-wrong variant) have the digest of
  its last run — by ``status`` or ``check`` — shows the remembered row.
* **A module that never finishes importing costs one time limit, once.** The changed stages run in one judge
  job, each in its own learner process. A stage whose module imports another changed module, and a transfer
  test that imports one besides its own stage's, waits for a second job until the modules they import are known
  to import; whatever depends on a module that did not import gets that module's cause without running. A
  transfer test that waits only for its own stage's module (the end of a stage: nothing else changed) runs in a
  job of its own beside the first; that job is stopped, its results unread, as soon as the module is found not
  to import (when the first job's limit stops the import). The result is remembered like any other, so the next
  ``status`` does not wait again.

Test results are judged per stage, by node id, in that stage's own test file. Fault-lab status comes from the
last ``fault check`` (or the lab file's digest); evidence from the verification.json files.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from forgelab.core import evidence, verification
from forgelab.learner import state
from forgelab.verdicts.parts import MIN_DESIGN_WORDS, judge_transfer
from forgelab.learner.answers import answer_path
from forgelab.core.text import word_count
from forgelab.core.i18n import N_, _, active, ngettext
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage
from forgelab.judge.outcomes import Outcome
from forgelab.verdicts.diagnosis import judged_record
from forgelab.core.starters import pristine_starters_dir, StarterError, starter_bytes
from forgelab.core import pyast

if TYPE_CHECKING:  # the judge (and pytest with it) is imported only when something has to run
    from forgelab.judge import core
    from forgelab.judge.outcomes import ImportProblem, RunReport
    from forgelab.judge.settings import JudgeSettings

TRANSFER_TARGET = "transfer"


@dataclass(frozen=True)
class TestsCell:
    passed: int
    total: int
    problem: str  # "" or the one-line import problem
    starter: bool = False  # the stage's module is still the shipped starter: its tests were not run

    @property
    def ok(self) -> bool:
        return not self.starter and not self.problem and self.passed == self.total

    @property
    def text(self) -> str:
        if self.starter:
            return _("not started")
        return _("cannot import: {cause}").format(cause=self.problem) if self.problem else f"{self.passed}/{self.total}"


# the words shown for each state (the states themselves are codes: they never depend on the language)
TRANSFER_WORDS = {"missing": N_("missing"), "not_written": N_("not written"), "passed": N_("passed"),
                  "failed": N_("failing"), "error": N_("error"), "cannot_tell": N_("cannot tell")}
LAB_WORDS = {"not_started": N_("not started"), "started": N_("started"), "untouched": N_("started, not fixed"),
             "edited": N_("edited, not checked"), "broken": N_("broken"), "fixed": N_("fixed and diagnosed"),
             "fixed_undiagnosed": N_("fixed, diagnosis missing"), "error": N_("error")}
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
    fresh: bool  # True when the results were run now, False when remembered or known by digest

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
    ran: tuple[str, ...]  # the stages whose tests or transfer test ran now
    remembered: tuple[str, ...] = ()  # the stages shown from their last run
    untouched: tuple[str, ...] = ()  # the stages known by digest (starters), nothing run

    @property
    def rows(self) -> list[tuple[str, ...]]:
        return [item.cells() for item in self.stages]

    @property
    def notes(self) -> list[str]:
        """What ran and what did not, in a line or two."""
        lines = []
        if not self.ran:
            lines.append(_("nothing needed running: every stage is either untouched or unchanged since its last run"))
        if self.remembered:
            lines.append(ngettext(
                "{count} stage unchanged since its last run: its results are remembered (`forgelab status --rerun` "
                "runs every stage again)",
                "{count} stages unchanged since their last run: their results are remembered (`forgelab status "
                "--rerun` runs every stage again)", len(self.remembered)).format(count=len(self.remembered)))
        return lines


# ---------------------------------------------------------------- what a stage depends on


def _imports(path: Path) -> set[str]:
    """The ``forge`` modules a module imports (by file path), read from its syntax tree."""
    try:
        source = path.read_bytes()
    except OSError:
        return set()
    return set(_imports_of(source))


@functools.lru_cache(maxsize=256)
def _imports_of(source: bytes) -> frozenset[str]:
    """:func:`_imports` of a module's bytes, parsed once per process for each content (status reads every stage's
    imports twice: for its key and for its plan; the modules a stage imports are read again for every later stage)."""
    try:
        tree = pyast.parse(source.decode("utf-8"))
    except (SyntaxError, ValueError):
        return frozenset()
    found = set()
    for node in ast.walk(tree):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
            [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
        for name in names:
            if name.startswith("forge.") and not name.startswith("forge.project"):
                found.add(name.replace(".", "/") + ".py")
    return frozenset(found)


def imported_modules(workbook: Workbook, stage: Stage) -> list[str]:
    """The stage module and every ``forge`` module it imports, transitively (workbook paths, sorted)."""
    seen: set[str] = set()
    todo = [stage.module]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo.extend(_imports(workbook.root / module) - seen)
    return sorted(seen)


def _infrastructure(workbook: Workbook) -> list[Path]:
    """``forge/__init__.py`` and ``forge/project/``: every stage imports them."""
    files = [workbook.root / "forge" / "__init__.py"]
    project = workbook.root / "forge" / "project"
    if project.is_dir():
        files += sorted(p for p in project.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return files


def dependency_files(workbook: Workbook, stage: Stage) -> list[Path]:
    """The stage module, every forge module it imports (transitively), forge/__init__.py and forge/project/."""
    return [workbook.root / module for module in imported_modules(workbook, stage)] + _infrastructure(workbook)


def stage_key(course: Course, workbook: Workbook, stage: Stage) -> str:
    """A digest of everything the stage's results depend on; a different key means "run it again"."""
    digest = hashlib.sha256(f"course {course.version}\0".encode())
    for path in [*dependency_files(workbook, stage), course.root / stage.test_file, workbook.root / stage.transfer_file,
                 workbook.root / stage.fault_variant]:
        digest.update(str(path.relative_to(workbook.root) if path.is_relative_to(workbook.root) else path).encode())
        digest.update(b"\0" + (path.read_bytes() if path.is_file() else b"<missing>") + b"\0")
    return digest.hexdigest()


def import_key(workbook: Workbook, stage: Stage) -> str:
    """A digest of what importing the stage's module runs: it and the forge modules it imports, and the
    infrastructure. The same key imported cleanly before means it imports cleanly now."""
    digest = hashlib.sha256()
    for path in dependency_files(workbook, stage):
        digest.update(path.relative_to(workbook.root).as_posix().encode() + b"\0")
        digest.update((path.read_bytes() if path.is_file() else b"<missing>") + b"\0")
    return digest.hexdigest()


def remember_import(workbook: Workbook, stage: Stage, key: str) -> None:
    """The stage's module (with what it imports) imported cleanly: a later status need not find out again."""
    state.remember_import(workbook, stage.module, key)


def _entry(key: str, tests: TestsCell, transfer: str) -> state.StatusEntry:
    return state.StatusEntry(key=key, tests=state.StatusTests.model_validate(asdict(tests)), transfer=transfer)


def remember(workbook: Workbook, stage: Stage, key: str, tests: TestsCell, transfer: str) -> None:
    state.remember_status(workbook, stage.number, _entry(key, tests, transfer))


def _remembered(saved: state.WorkspaceState, stage: Stage, key: str) -> tuple[TestsCell, str] | None:
    entry = saved.status.get(stage.number)
    if entry is None or entry.key != key:
        return None
    return TestsCell(**entry.tests.model_dump()), entry.transfer


# ---------------------------------------------------------------- untouched files, by digest


class Pristine:
    """The shipped starters, read once: which of the learner's files are still exactly as shipped."""

    def __init__(self, workbook: Workbook) -> None:
        self.workbook = workbook
        shipped = pristine_starters_dir(workbook.root)
        if shipped is None or not (shipped / "forge").is_dir():
            from forgelab.verdicts import jobs  # lazy: the judge (and pytest with it) loads only when something has to run

            shipped = jobs.starters(workbook)  # the course repository: forge/ as committed
        self.forge = shipped / "forge"
        self._transfer: dict[str, bytes | None] = {}

    def _same(self, path: Path, pristine: Path) -> bool:
        return path.is_file() and pristine.is_file() and path.read_bytes() == pristine.read_bytes()

    def module(self, relative: str) -> bool:
        """Whether ``forge/<…>`` is the shipped starter."""
        return self._same(self.workbook.root / relative, self.forge.joinpath(*Path(relative).parts[1:]))

    def infrastructure(self) -> bool:
        return all(self._same(path, self.forge / path.relative_to(self.workbook.forge))
                   for path in _infrastructure(self.workbook))

    def untouched_stage(self, stage: Stage) -> bool:
        """The stage's own module and the infrastructure are as shipped: the stage has not been started."""
        return self.module(stage.module) and self.infrastructure()

    def transfer(self, stage: Stage) -> bool:
        """The transfer test is still the shipped starter (it only skips)."""
        path = self.workbook.root / stage.transfer_file
        if stage.transfer_file not in self._transfer:
            try:
                self._transfer[stage.transfer_file] = starter_bytes(self.workbook.root, stage.transfer_file)
            except StarterError:
                self._transfer[stage.transfer_file] = None
        shipped = self._transfer[stage.transfer_file]
        return shipped is not None and path.is_file() and path.read_bytes() == shipped


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


def transfer_cell(workbook: Workbook, stage: Stage, report: RunReport, label: str, wrong_label: str | None) -> str:
    if not (workbook.root / stage.transfer_file).is_file():
        return "missing"
    rows = report.in_file(label, stage.transfer_file)
    errors = [e.cause for e in report.collect_errors if e.target == label and e.file == stage.transfer_file]
    problem = report.target_problems.get(label) or (errors[0] if errors else None)
    on_wrong = report.in_file(wrong_label, stage.transfer_file) if wrong_label else None
    return judge_transfer(rows, problem, stage.transfer_file, on_wrong).status


def _lab_cell(workbook: Workbook, stage: Stage, last: state.FaultCheck | None) -> tuple[str, bool]:
    lab_module = workbook.workspace / stage.lab_module
    if not lab_module.is_file():
        return "not_started", False
    variant = workbook.root / stage.fault_variant
    if variant.is_file() and lab_module.read_bytes() == variant.read_bytes():
        return "untouched", False  # still the broken variant: not fixed, whatever ran before
    if last is None:
        return "started", False
    if last.file_sha256 != evidence.sha256_file(lab_module):
        return "edited", False
    status = last.status
    if status == "fixed":
        _record, right = judged_record(workbook.root, workbook.workspace, stage)
        return ("fixed", True) if right and all(right.values()) else ("fixed_undiagnosed", False)
    return (status if status in LAB_WORDS else "started"), False


def _design_cell(workbook: Workbook, stage: Stage) -> tuple[int | None, bool]:
    path = answer_path(workbook, stage)
    if not path.is_file():
        return None, False
    words = word_count(path.read_text(encoding="utf-8", errors="replace"))
    return words, words >= MIN_DESIGN_WORDS


def evidence_cell(workbook: Workbook, stage: Stage) -> str:
    """The stage's evidence as :data:`EVIDENCE_WORDS` names it (read through its model, never run): none, accepted,
    stale_… ; "unreadable" for a file that is not a verification.json (another shape, a key missing, not JSON)."""
    path = workbook.workspace / stage.evidence_file
    if not path.is_file():
        return "none"
    try:
        document = verification.read(path)
    except verification.Unreadable:
        return "unreadable"
    stale = document.digests.module.sha256 != evidence.sha256_file(workbook.root / stage.module)
    verdict = "accepted" if document.accepted else "not_accepted"
    return f"stale_{verdict}" if stale and document.target.kind == "learner" else verdict


# ---------------------------------------------------------------- what to run, and in which order


@dataclass(frozen=True)
class _Plan:
    """What one stage needs: its tests run or not, its transfer test run or not (and against the known-wrong)."""

    stage: Stage
    run_tests: bool
    run_transfer: bool
    known_wrong: bool  # the transfer test also runs against the stage's known-wrong implementation
    needs: frozenset[str]  # the changed modules its tests import, besides its own
    unknown: frozenset[str]  # of those and its own module, the ones not yet known to import cleanly


def _plans(workbook: Workbook, course: Course, stages: list[Stage], pristine: Pristine,
           saved: state.WorkspaceState) -> list[_Plan]:
    changed = {stage.module: stage for stage in course.stages if not pristine.module(stage.module)}
    clean = {module for module, stage in changed.items()
             if saved.imports_cleanly.get(stage.module) == import_key(workbook, stage)}
    plans = []
    for stage in stages:
        run_tests = not pristine.untouched_stage(stage)
        written = (workbook.root / stage.transfer_file).is_file() and not pristine.transfer(stage)
        needs = frozenset(set(imported_modules(workbook, stage)) & set(changed) - {stage.module})
        unknown = frozenset((needs | ({stage.module} & set(changed))) - clean)
        plans.append(_Plan(stage, run_tests, written, written and (workbook.root / stage.fault_variant).is_file(),
                           needs, unknown))
    return plans


def _job(course: Course, workbook: Workbook, tests: list[Stage], transfers: list[_Plan]) -> tuple[core.Job, dict[str, str | None]]:
    """One judge job: the stage tests of ``tests``, each in its own learner process, and the transfer tests."""
    # lazy: the judge (and pytest with it) loads only when something has to run
    from forgelab.judge.core import CourseTests, LearnerTests, TargetSpec
    from forgelab.verdicts import jobs

    forge = workbook.root / "forge"
    targets = [TargetSpec(f"stage-{s.number}", (forge,), s.number, (s.module,)) for s in tests]
    course_tests = [CourseTests(f"stage-{s.number}", (s.test_file,)) for s in tests]
    learner_tests: list[LearnerTests] = []
    wrong: dict[str, str | None] = {}
    if transfers:
        targets.append(TargetSpec(TRANSFER_TARGET, (forge,)))
        learner_tests.append(LearnerTests(TRANSFER_TARGET, tuple((workbook.root / p.stage.transfer_file,
                                                                 p.stage.transfer_file) for p in transfers)))
    for plan in transfers:
        stage = plan.stage
        wrong[stage.number] = None
        if not plan.known_wrong:
            continue
        label = f"known-wrong-{stage.number}"
        wrong[stage.number] = label
        targets.append(TargetSpec(label, (forge, jobs.fault_variant(workbook, stage)), stage.number, course_code=True))
        learner_tests.append(LearnerTests(label, ((workbook.root / stage.transfer_file, stage.transfer_file),)))
    return jobs.job(course, workbook, targets, course_tests, learner_tests), wrong


class _Ahead:
    """The transfer tests of the stages whose own module's health the first wave finds out, judged on a thread beside
    it (one judge job, :func:`_job`): :meth:`finish` keeps the report, or stops the run and drops it (a module did not
    import: those transfer tests then say "error" as when they waited, and a module that never finishes importing
    still costs one time limit — the run beside it is stopped when the first wave's limit stops the import)."""

    def __init__(self, course: Course, workbook: Workbook, plans: list[_Plan], settings: JudgeSettings) -> None:
        # lazy: the judge (and pytest with it) loads only when something has to run
        from forgelab.judge import channel

        self.job, self.wrong = _job(course, workbook, [], plans)
        self.report: RunReport | None = None
        self._error: BaseException | None = None
        self._processes = channel.RunProcesses()  # what this run starts: stop() ends it, and nothing else
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(settings,), name="forgelab-status-transfer",
                                        daemon=True)
        self._thread.start()

    def _run(self, settings: JudgeSettings) -> None:
        from forgelab.judge import core  # lazy: loaded already by the caller

        try:
            self.report = core.run(self.job, settings, processes=self._processes)
        except BaseException as error:  # noqa: BLE001 - handed to the thread that waits for the report
            self._error = error
        finally:
            self._done.set()

    def finish(self, keep: bool) -> None:
        """Wait for the run (``keep``), or stop it and wait for it to end, its report dropped."""
        from forgelab.judge import waiting  # lazy: loaded already, with the judge that runs beside

        if not keep:
            self._processes.stop()
        waiting.wait(self._done)
        if not keep:
            self.report = None
        elif self._error is not None:
            raise self._error


def collect_status(workbook: Workbook, course: Course, settings: JudgeSettings | None = None,
                   force: bool = False) -> StatusReport:
    pristine = Pristine(workbook)
    saved = state.load(workbook)  # read once: what earlier runs remembered (stages, imports, fault checks)
    keys = {stage.number: stage_key(course, workbook, stage) for stage in course.stages}
    known = {stage.number: None if force else _remembered(saved, stage, keys[stage.number]) for stage in course.stages}
    results: dict[str, tuple[TestsCell, str]] = {n: k for n, k in known.items() if k is not None}
    remembered_now = tuple(number for number in results)
    plans = _plans(workbook, course, [stage for stage in course.stages if known[stage.number] is None], pristine,
                   saved)
    untouched = tuple(p.stage.number for p in plans if not p.run_tests and not p.run_transfer)

    # First wave: the tests of every changed stage that imports no other changed module of unknown health, and
    # the transfer tests whose modules are known to import. Second wave: the rest, minus whatever needs a module
    # that did not import in the first (it gets that module's cause instead of waiting for the same limit again).
    broken: dict[str, ImportProblem] = {}  # changed module -> why it did not import
    cells: dict[str, TestsCell] = {}
    transfers: dict[str, str] = {}
    problem = None
    ran: list[str] = []
    tests_now = [p for p in plans if p.run_tests and not (p.unknown - {p.stage.module})]
    transfers_now = [p for p in plans if p.run_transfer and not p.unknown]
    # the transfer tests that wait only for their own stage's module, whose tests run in the first wave: judged
    # beside those tests, and their run stopped (its results never read) once that module is found not to import
    ahead = [p for p in plans if p.run_transfer and p.unknown and p.run_tests and p.unknown == {p.stage.module}]
    for wave in (1, 2):
        if wave == 2:
            tests_now = [p for p in plans if p.run_tests and p.stage.number not in cells
                         and not (p.needs & set(broken))]
            transfers_now = [p for p in plans if p.run_transfer and p.stage.number not in transfers
                             and not ((p.needs | {p.stage.module}) & set(broken))]
        if not tests_now and not transfers_now:
            continue
        # lazy: the judge (and pytest with it) loads only when something has to run
        from forgelab.judge import early

        if wave == 1 and tests_now:  # its session starts now, while the judge loads and the code is laid out
            early.start_session()
        from forgelab.judge import core  # lazy: as above
        from forgelab.judge.settings import DEFAULT  # lazy: as above

        beside = _Ahead(course, workbook, ahead, settings or DEFAULT) if wave == 1 and ahead else None
        try:
            job, wrong = _job(course, workbook, [p.stage for p in tests_now], transfers_now)
            report = core.run(job, settings or DEFAULT)
        except BaseException:  # Ctrl-C or a failure: the run beside it ends too
            if beside is not None:
                beside.finish(keep=False)
            raise
        finally:
            early.discard()  # the session started early, if this run did not take it
        if beside is not None:  # kept only when every module its transfer tests wait for did import
            beside.finish(keep=not any(f"stage-{p.stage.number}" in report.import_problems for p in ahead))
            if beside.report is not None:
                problem = problem or beside.report.problem
                for plan in ahead:
                    transfers[plan.stage.number] = transfer_cell(workbook, plan.stage, beside.report,
                                                                 TRANSFER_TARGET, beside.wrong[plan.stage.number])
                    ran.append(plan.stage.number)
        problem = problem or report.problem
        for plan in tests_now:
            stage = plan.stage
            cells[stage.number] = tests_cell(stage, report, f"stage-{stage.number}")
            stuck = report.import_problems.get(f"stage-{stage.number}")
            if stuck is not None:
                broken.setdefault(stage.module, stuck)
            elif not report.problem:
                remember_import(workbook, stage, import_key(workbook, stage))
            ran.append(stage.number)
        for plan in transfers_now:
            transfers[plan.stage.number] = transfer_cell(workbook, plan.stage, report, TRANSFER_TARGET,
                                                         wrong[plan.stage.number])
            ran.append(plan.stage.number)
    for plan in plans:
        stage, number = plan.stage, plan.stage.number
        blocked = next((broken[m] for m in sorted(plan.needs | {stage.module}) if m in broken), None)
        if number not in cells:
            cells[number] = (TestsCell(0, len(stage.required_tests), blocked.cause) if plan.run_tests and blocked
                             else TestsCell(0, len(stage.required_tests), "", starter=True))
        if number not in transfers:
            if not (workbook.root / stage.transfer_file).is_file():
                transfers[number] = "missing"
            elif plan.run_transfer:
                transfers[number] = "error"  # a module it needs does not import: the tests cell says why
            else:
                transfers[number] = "not_written"
        results[number] = (cells[number], transfers[number])
    if plans and not problem:  # every stage's row remembered at once (one write of the state, not one a stage)
        entries = {plan.stage.number: _entry(keys[plan.stage.number], *results[plan.stage.number]) for plan in plans}
        state.modify(workbook, lambda data: data.status.update(entries))

    stages = []
    for stage in course.stages:
        cell, transfer = results[stage.number]
        lab, lab_ok = _lab_cell(workbook, stage, saved.fault_lab.get(stage.number))
        words, design_ok = _design_cell(workbook, stage)
        stages.append(StageStatus(stage, cell, transfer, lab, lab_ok, words, design_ok, evidence_cell(workbook, stage),
                                  stage.number in ran))
    next_step = next((step for item in stages if (step := next_step_for(item))), None)
    return StatusReport(stages, next_step or _("every stage is accepted: open the course page (`forgelab page`) and "
                                               "self-check your evidence"),
                        problem, tuple(dict.fromkeys(ran)), remembered_now, untouched)


def next_step_for(item: StageStatus) -> str | None:
    stage = item.stage
    number = stage.number
    if item.tests.problem:
        return _("stage {number}: {cause}").format(number=number, cause=item.tests.problem)
    if not item.tests.ok:
        return _("stage {number}: open {notebook} and implement {module}; then `forgelab check {number}`").format(
            number=number, notebook=stage.notebook_in(active()), module=stage.module)
    if item.lab == "fixed_undiagnosed":
        return _("stage {number}: state your diagnosis of the fault lab: `forgelab fault diagnose {number}`").format(
            number=number)
    if not item.lab_ok:
        return _("stage {number}: `forgelab fault start {number}`, `forgelab fault check {number}`, then "
                 "`forgelab fault diagnose {number}` before you repair it").format(number=number)
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
