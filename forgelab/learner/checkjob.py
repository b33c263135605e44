"""What a ``check`` judges, as one :class:`CheckPlan` holding the judge's :class:`~forgelab.judge.core.Job` — and that
job started at once.

The plan is made once, where the command starts (:func:`plan_check`): which transfer test is judged and whether it
is still the shipped starter, which lab folder and whether its module is still the broken variant, which targets
and suites the judge runs. Everything after it — the run, the verdict on each part (:func:`forgelab.learner.check.
run_check`) — reads the plan and never works any of it out again, so a stage id moves from the command line
through the check only downward.

Kept apart from :mod:`forgelab.learner.check` (which words the verdict on each part and writes the evidence) so
that ``forgelab check NN`` can hand the judge its job as early as it can: this module loads only the course's
registry and the judge, and :func:`start_check` runs the job on a thread while the command loads the rest of its
tools (the verdicts, the evidence, the table it prints) beside the running tests — on the other CPU.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from forgelab.core.i18n import LANGUAGES, N_, _, speaking
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage
from forgelab.core.starters import StarterError, starter_bytes
from forgelab.core.targets import Target
from forgelab.judge import channel, core, early, waiting
from forgelab.judge.core import CourseTests, LearnerTests
from forgelab.judge.outcomes import RunReport
from forgelab.judge.settings import JudgeSettings
from forgelab.verdicts import jobs

TARGET, LAB, KNOWN_WRONG = "target", "lab", "known-wrong"
# the lab's regression test on the learner's repaired lab, and on the lab with its broken module laid over it
REGRESSION_FIXED, REGRESSION_BROKEN = "regression-fixed", "regression-broken"
# the parts of a check that run learner code; a partial check (watch mode) runs some and keeps the others
TESTS, FAULT_LAB, TRANSFER = "tests", "fault_lab", "transfer"
ALL_PARTS = frozenset({TESTS, FAULT_LAB, TRANSFER})


def lab_dir(workbook: Workbook, stage: Stage, target: Target) -> Path:
    base = workbook.workspace if target.kind == "learner" else target.home
    return base / stage.lab_dir


def transfer_file(workbook: Workbook, stage: Stage, target: Target) -> Path:
    if target.is_reference:
        return workbook.root / stage.reference_transfer
    base = workbook.root if target.kind == "learner" else target.home
    return base / stage.transfer_file


def untouched_lab(workbook_root: Path, stage: Stage, lab: Path) -> bool:
    """The lab's module is still the broken variant, byte for byte: it is broken, nothing need run to know it."""
    module, variant = lab / stage.fault.fault_file, workbook_root / stage.fault_variant
    return module.is_file() and variant.is_file() and module.read_bytes() == variant.read_bytes()


def untouched_transfer(workbook: Workbook, stage: Stage, path: Path) -> bool:
    """The transfer test is still the shipped starter, byte for byte: it only skips, nothing need run to know it."""
    try:
        return path.is_file() and path.read_bytes() == starter_bytes(workbook.root, stage.transfer_file)
    except StarterError:
        return False


# the lab's regression test as ``fault start`` writes it: what it must do, never the answer
REGRESSION_DOC = N_("""Regression test for fault lab {number} — {title}.

Write a test that pins the defect you found in {module}: it must FAIL on the lab's broken copy and PASS once the
module is repaired. `forgelab fault check {number}` runs it on both and says which. Grading runs it on the course's
reference implementation (where it must pass) and on the lab's broken module (where it must fail): that earns the
lab's diagnosis points. Import what you test from forge (`from {package} import ...`) and assert the exact result
the module's contract promises for an input that shows the defect.""")
REGRESSION_SKIP = N_("not written yet: replace this line with your regression test")


def regression_starter_text(stage: Stage) -> str:
    """The starter of the lab's regression test in the active language: a docstring saying what it must do and one
    skipped test."""
    package = stage.module.removesuffix(".py").replace("/", ".")
    doc = _(REGRESSION_DOC).format(number=stage.number, title=stage.text().title, module=stage.module, package=package)
    return (f'"""{doc}\n"""\n\nimport pytest\n\n\ndef test_the_defect_stays_fixed() -> None:\n'
            f'    pytest.skip({_(REGRESSION_SKIP)!r})\n')


def untouched_regression(stage: Stage, path: Path) -> bool:
    """The regression test is still ``fault start``'s starter (in either language), byte for byte: it only skips,
    nothing need run to know it."""
    try:
        written = path.read_bytes()
    except OSError:
        return False
    for language in LANGUAGES:
        with speaking(language):
            if written == regression_starter_text(stage).encode("utf-8"):
                return True
    return False


def regression_file(lab: Path, stage: Stage) -> Path:
    """The lab's regression test in the lab folder ``lab`` (``labs/NN-slug/test_diagnosis.py``)."""
    return lab / Path(stage.regression_test).name


def regression_runs(workbook: Workbook, stage: Stage, lab: Path,
                    lab_untouched: bool | None = None) -> tuple[list[core.TargetSpec], list[LearnerTests]]:
    """The lab's regression test, run like a transfer test: on the repaired lab (unless it is still the broken
    variant) and on the lab with the broken module laid over it — the course's code, so that run reports outcomes and
    lines only. Nothing when the lab or its test is missing."""
    test = regression_file(lab, stage)
    if not (lab / "forge").is_dir() or not test.is_file() or not (workbook.root / stage.fault_variant).is_file() \
            or untouched_regression(stage, test):
        return [], []
    shown = ((test, stage.regression_test),)
    targets = [core.TargetSpec(REGRESSION_BROKEN, (lab / "forge", jobs.fault_variant(workbook, stage)), stage.number,
                               course_code=True)]
    tests = [LearnerTests(REGRESSION_BROKEN, shown)]
    if not (untouched_lab(workbook.root, stage, lab) if lab_untouched is None else lab_untouched):
        targets.append(jobs.lab_spec(lab, stage, REGRESSION_FIXED))
        tests.append(LearnerTests(REGRESSION_FIXED, shown))
    return targets, tests


def _digest_files(digest: Any, files: list[tuple[str, Path]]) -> None:
    for name, path in files:
        digest.update(name.encode("utf-8") + b"\0")
        try:
            digest.update(b"F" + path.read_bytes() if path.is_file() else b"-")
        except OSError as error:  # unreadable: the run would say so, and a readable file differs from it
            digest.update(f"unreadable: {error}".encode("utf-8", "replace"))
        digest.update(b"\0")


def _tree(folder: Path, label: str, skip: str = "") -> list[tuple[str, Path]]:
    """Every file of ``folder`` (bytecode left out), named by ``label`` and its path in it; ``skip`` left out too."""
    if not folder.is_dir():
        return [(f"{label}:missing", folder)]
    found = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if "__pycache__" in path.parts or path.suffix == ".pyc" or relative == skip or not path.is_file():
            continue
        found.append((f"{label}/{relative}", path))
    return found


def part_inputs(workbook: Workbook, stage: Stage, target: Target, transfer_path: Path | None = None,
                lab: Path | None = None) -> dict[str, str]:
    """A digest of every file each slow part of a check reads, by part: :data:`TRANSFER` (the transfer test on the
    target's ``forge``), :data:`KNOWN_WRONG` (the transfer test on the known-wrong module) and :data:`FAULT_LAB` (the
    lab's tests and its regression test). A part whose digest is the one it was last judged at gives the same rows
    again, so a check after a save runs only the parts whose files changed (:func:`forgelab.learner.check.run_check`).
    The stage's test file and the course's starters (the interface the runs import) are in every digest.
    ``transfer_path`` and ``lab`` are the check's transfer test and lab folder when it has found them already."""
    common = [("tests", workbook.root / stage.test_file), *_tree(workbook.root / "course" / "starters", "starters")]
    forge_layers = [item for index, layer in enumerate(target.layers) for item in _tree(layer, f"layer{index}")]
    transfer = [("transfer", transfer_path or transfer_file(workbook, stage, target)),
                ("variant", workbook.root / stage.fault_variant), ("sealed", workbook.root / stage.sealed_lab)]
    module = Path(stage.module).relative_to("forge").as_posix()  # its path inside a forge layer
    lab = lab or lab_dir(workbook, stage, target)
    parts = {
        TRANSFER: [*common, *forge_layers, *transfer],
        KNOWN_WRONG: [*common, *transfer,
                      *(item for index, layer in enumerate(target.layers) for item in _tree(layer, f"layer{index}",
                                                                                               skip=module))],
        FAULT_LAB: [*common, ("variant", workbook.root / stage.fault_variant), *_tree(lab, "lab")],
    }
    digests = {}
    for part, files in parts.items():
        digest = hashlib.sha256(f"{target.kind}\0{target.name}\0{stage.number}\0".encode("utf-8"))
        _digest_files(digest, files)
        digests[part] = digest.hexdigest()
    return digests


TransferState = Literal["missing", "starter", "written"]  # no file; still the shipped starter (learner); to be run


@dataclass(frozen=True)
class CheckPlan:
    """Everything a check decides before anything runs, decided once (see the module's docstring)."""

    stage: Stage
    target: Target
    parts: frozenset[str]  # which of TESTS, FAULT_LAB, TRANSFER the judge runs
    transfer_path: Path  # the transfer test judged (the course's own for a reference target)
    transfer_name: str  # that file as its rows name it
    transfer: TransferState
    lab: Path  # the fault lab's folder
    lab_untouched: bool  # the lab's module is still the broken variant, byte for byte
    job: core.Job

    @property
    def known_wrong(self) -> bool:
        """The transfer test also runs on the stage's known-wrong implementation."""
        return any(target.label == KNOWN_WRONG for target in self.job.targets)


def plan_check(course: Course, workbook: Workbook, stage: Stage, target: Target,
               parts: frozenset[str] = ALL_PARTS, known_wrong: bool = True, *, transfer_path: Path | None = None,
               lab: Path | None = None) -> CheckPlan:
    """The plan of a whole ``check`` (its one judge job: the stage tests, the lab, and the transfer test twice) — or
    of only the ``parts`` named (:data:`TESTS`, :data:`FAULT_LAB`, :data:`TRANSFER`); without ``known_wrong`` the
    transfer test runs only on the target (its run on the known-wrong module is taken from an earlier check of the
    same files). ``transfer_path`` and ``lab``: the transfer test and lab folder, when the check has found them."""
    transfer_path = transfer_path or transfer_file(workbook, stage, target)
    transfer: TransferState = ("missing" if not transfer_path.is_file() else
                               "starter" if target.kind == "learner" and untouched_transfer(workbook, stage, transfer_path)
                               else "written")
    lab = lab or lab_dir(workbook, stage, target)
    lab_untouched = untouched_lab(workbook.root, stage, lab)
    targets = [jobs.spec(target, TARGET, stage)]
    course_tests = [CourseTests(TARGET, (stage.test_file,))] if TESTS in parts else []
    learner_tests: list[LearnerTests] = []
    if FAULT_LAB in parts and target.kind in ("learner", "path") and (lab / "forge").is_dir() and not lab_untouched:
        targets.append(jobs.lab_spec(lab, stage, LAB))
        course_tests.append(CourseTests(LAB, (stage.test_file,)))
    if FAULT_LAB in parts and target.kind in ("learner", "path"):
        more_targets, more_tests = regression_runs(workbook, stage, lab, lab_untouched)
        targets += more_targets
        learner_tests += more_tests
    transfer_name = transfer_path.relative_to(workbook.root).as_posix() if target.is_reference else stage.transfer_file
    if TRANSFER in parts and transfer == "written":
        if target.is_reference:  # the reference transfer test is course code: it runs on the trusted side
            course_tests.append(CourseTests(TARGET, (transfer_name,)))
        else:
            learner_tests.append(LearnerTests(TARGET, ((transfer_path, stage.transfer_file),)))
            variant = jobs.fault_variant(workbook, stage)
            if known_wrong and (workbook.root / stage.fault_variant).is_file():
                targets.append(jobs.spec(target, KNOWN_WRONG, stage, extra=(variant,), course_code=True))
                learner_tests.append(LearnerTests(KNOWN_WRONG, ((transfer_path, stage.transfer_file),)))
    return CheckPlan(stage, target, parts, transfer_path, transfer_name, transfer, lab, lab_untouched,
                     jobs.job(course, workbook, targets, course_tests, learner_tests))


class PendingRun:
    """A check's judge run going on on a thread (:func:`start_check`); :meth:`result` waits for its report."""

    def __init__(self, job: core.Job, settings: JudgeSettings, plan: CheckPlan | None = None) -> None:
        self.job, self.plan = job, plan  # the plan the job was made from (start_check), if it was
        self._report: RunReport | None = None
        self._error: BaseException | None = None
        self._processes = channel.RunProcesses()  # what the run starts, stopped by abandon() from the command's thread
        self._started = early.handed_over_event()  # set when the session started early has its job (or never will)
        # set when the run is over, its folder removed: waited on instead of Thread.join, which Ctrl-C breaks in
        # Python 3.11 and 3.12 (an interrupted join marks a running thread as ended, so a later join returns at once)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(settings,), name="forgelab-check-judge", daemon=True)
        self._thread.start()

    def _run(self, settings: JudgeSettings) -> None:
        try:
            self._report = core.run(self.job, settings, processes=self._processes) if self.job.course_tests or self.job.learner_tests \
                else RunReport(())
        except BaseException as error:  # noqa: BLE001 - handed to the thread that waits for the report
            self._error = error
        finally:
            self._started.set()
            self._done.set()

    def wait_until_started(self) -> None:
        """Until the tests are running (the session has its job) or the run is over: what the command does
        next then takes the CPU the session does not use, not the time before the session starts."""
        try:
            waiting.wait(self._started)
        except BaseException:  # Ctrl-C while waiting
            self.abandon()
            raise

    def abandon(self) -> None:
        """Stop every process the run started and wait for it to end, its run folder removed (Ctrl-C). A process the
        run was about to start is ended as soon as it starts, so the run ends now, not when its tests would have."""
        self._processes.stop()
        channel.stop_tracked()
        early.discard()
        self._done.wait(timeout=60)

    def result(self) -> RunReport:
        try:
            waiting.wait(self._done)
        except BaseException:  # Ctrl-C while waiting: nothing the run started may keep running or stay behind
            self.abandon()
            raise
        if self._error is not None:
            raise self._error
        assert self._report is not None
        return self._report


def start_check(course: Course, workbook: Workbook, stage: Stage, target: Target, settings: JudgeSettings) -> PendingRun:
    """Start judging the whole of ``stage`` for ``target`` now (see :class:`PendingRun`), from its one plan."""
    plan = plan_check(course, workbook, stage, target)
    return PendingRun(plan.job, settings, plan)
