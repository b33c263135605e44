"""Grade one submission: one judge job for all its stages, then seven items per stage.

The submission is only read: the files grading needs are copied into a scratch layout
(:mod:`forgelab.core.submission`). Everything that runs its code goes through one judge job
(:mod:`forgelab.judge`):

=====================  ================================================================================
``sub-NN``             its ``forge/``, one learner process per stage (a module that does not import
                       spoils only its own stage): the course's stage tests, the instructor checks and
                       the replay of the reference notebook's worked demonstration, all on the
                       trusted side
``lab-NN``             its ``labs/NN-slug/forge/``: the stage tests again (the fault lab)
``transfer-NN``        the course's reference implementation (the pristine starters with ``solutions/``
                       laid over them): its own transfer test of the stage, run by pytest in a sandbox of
                       its own that holds the course's interface instead of ``forge`` (the judge relays
                       each call to that ``forge`` in another sandbox); it must pass there
``known-wrong-NN``     the reference with the stage's fault-lab variant laid over it, and
``known-wrong-NN-M``   with each further known-wrong variant the stage declares (``[transfer]
                       known_wrong``): the same transfer test, run the same way, which must fail on each
``regression-NN``      the reference again: the lab's regression test ``labs/NN-slug/test_diagnosis.py``,
                       run like the transfer test, must pass there (a learner bundle: on the submission's
                       repaired lab)
``regression-broken``  the same with the fault lab's broken module laid over it: the regression test must
``-NN``                fail there — it pins the defect (the diagnosis points of the fault lab)
=====================  ================================================================================

A transfer test is judged on the course's implementations, never on the submission's own ``forge/``:
a ``forge`` the learner controls could answer the test from a back door. (A learner bundle has no
reference: there the test runs on the submission's ``forge/`` as ``forgelab check`` does, and the reason
says so.)

No process of the submission sees the course's solutions, mutants, instructor checks, other
submissions or this grader's files; the grader never runs a line of it. A transfer test never shares
a process with the ``forge`` it tests, and both runs of it look the same from inside, so ``forge`` code
cannot change the test's outcome and the test can tell the two runs apart only by what ``forge`` does
(:mod:`forgelab.judge.relay`). Items are then judged from typed rows (:mod:`forgelab.grading.items`).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from forgelab.core import submission as submissions
from forgelab.grading import class_facts, items, similarity
from forgelab.grading.class_facts import StageFacts, TestResult
from forgelab.grading.plan import (Laid, check_files, lab_handed_in, lab_label, lay_out, reference_layers,
                                   regression_broken_label, regression_label, sub_label, transfer_label, wrong_label,
                                   wrong_labels)
from forgelab.grading.rubric import ERROR, GradeItem
from forgelab.judge import core
from forgelab.verdicts import jobs
from forgelab.judge.core import CourseTests, LearnerTests, TargetSpec
from forgelab.judge.outcomes import RunReport
from forgelab.judge.settings import JudgeSettings
from forgelab.verdicts.mutants import transfer_variants
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage


def grading_job(course: Course, workbook: Workbook, stages: list[Stage], laid: Laid, scratch: Path,
                sessions: int = 1) -> core.Job:
    """The judge job of one submission; its course tests split over ``sessions`` trusted sessions (whole targets
    each: see :func:`grade_submission` for why the verdicts do not depend on it)."""
    forge = laid.import_dir / "forge"
    reference = reference_layers(workbook)
    targets: list[TargetSpec] = []
    course_tests: list[CourseTests] = []
    learner_tests: list[LearnerTests] = []
    alone: set[str] = set()  # stages whose transfer test also runs where the regression test does not (a mutant)
    for stage in stages:
        label = sub_label(stage)
        targets.append(TargetSpec(label, (forge,), stage.number, (stage.module,)))
        notebook = [stage.notebook] if (course.root / stage.notebook).is_file() else []
        course_tests.append(CourseTests(label, (stage.test_file, *check_files(course.root, stage), *notebook)))
        lab = laid.home / stage.lab_dir / "forge"
        if lab_handed_in(laid, stage):
            targets.append(TargetSpec(lab_label(stage), (lab,), stage.number, (stage.module,)))
            course_tests.append(CourseTests(lab_label(stage), (stage.test_file,)))
    written = [stage for stage in stages if (laid.home / stage.transfer_file).is_file()]
    for stage in written:  # each stage's file alone, so that a test that hits a limit spoils only its own stage
        base = reference or (forge,)  # the course's implementation; the submission's only in a learner bundle
        test = ((laid.home / stage.transfer_file, stage.transfer_file),)
        # on the course's code (reference, variants) the test's failures say pass/fail and the learner's line only
        targets.append(TargetSpec(transfer_label(stage), base, stage.number, course_code=reference is not None))
        learner_tests.append(LearnerTests(transfer_label(stage), test))
        variants = [jobs.fault_variant(workbook, stage)] if (workbook.root / stage.fault_variant).is_file() else []
        if reference is not None:
            variants += [folder for _name, folder in transfer_variants(workbook, stage, scratch / "variants")]
        for label, variant in zip(wrong_labels(stage, len(variants) - 1), variants):
            targets.append(TargetSpec(label, (*base, variant), stage.number, course_code=True))
            learner_tests.append(LearnerTests(label, test))
        if len(variants) > 1:
            alone.add(stage.number)
    for stage in stages:  # the lab's regression test: like the transfer test, never on the submission's own code
        if not (laid.home / stage.regression_test).is_file() or not (workbook.root / stage.fault_variant).is_file():
            continue
        lab = laid.home / stage.lab_dir / "forge"
        fixed = reference or ((lab,) if lab_handed_in(laid, stage) else (forge,))
        test = ((laid.home / stage.regression_test, stage.regression_test),)
        targets.append(TargetSpec(regression_label(stage), fixed, stage.number, course_code=reference is not None))
        targets.append(TargetSpec(regression_broken_label(stage), (*fixed, jobs.fault_variant(workbook, stage)),
                                  stage.number, course_code=True))
        learner_tests += [LearnerTests(regression_label(stage), test), LearnerTests(regression_broken_label(stage), test)]
    job = jobs.job(course, workbook, targets, course_tests, learner_tests)
    return core.Job(job.course_root, job.starters, job.stage_modules, job.targets, job.course_tests, job.learner_tests,
                    cache_dir=job.cache_dir, sessions=max(1, sessions), rewritten_tests=True,
                    together=_together(stages, targets, learner_tests, alone))


def _together(stages: list[Stage], targets: list[TargetSpec], learner_tests: list[LearnerTests],
              alone: set[str]) -> tuple[tuple[str, ...], ...]:
    """A stage's transfer test and its lab's regression test run in one tester where both are judged on the same code:
    on the course's reference, and with the fault lab's defect laid over it (one tester start instead of two, each).

    Both pairs or neither: a run of the two files must look, from inside, like the run the verdict compares it with.
    So a stage whose transfer test is also run on a mutant (where the regression test is not) keeps every file alone,
    and so does one whose two files are judged on different code (a learner bundle with the lab handed in)."""
    code = {target.label: (target.layers, target.course_code) for target in targets}
    present = {suite.target for suite in learner_tests}
    groups: list[tuple[str, ...]] = []
    for stage in stages:
        pairs = [(transfer_label(stage), regression_label(stage)),
                 (wrong_label(stage), regression_broken_label(stage))]
        if stage.number not in alone and all(label in present and label in code for pair in pairs for label in pair) \
                and all(code[first] == code[second] for first, second in pairs):
            groups += pairs
    return tuple(groups)


@dataclass(frozen=True)
class Graded:
    submission: submissions.Submission
    content_sha256: str
    items: list[GradeItem]
    timings: list[tuple[str, str, float]]  # (stage, phase, seconds)
    wall_s: float
    problem: str | None = None
    sandbox: str = ""
    tests: list[TestResult] = field(default_factory=list)  # each course test, for the class report
    facts: list[tuple[str, StageFacts]] = field(default_factory=list)  # (stage, facts), for the class report
    modules: list[similarity.HandedModule] = field(default_factory=list)  # its stage modules, for the similarity check

    @property
    def points(self) -> int:
        return sum(item.points for item in self.items)

    @property
    def max_points(self) -> int:
        return sum(item.max_points for item in self.items)


def timings_of(report: RunReport, stages: list[Stage], course_root: Path) -> list[tuple[str, str, float]]:
    """Where the time went, per stage: stage tests, instructor checks, notebook cells, fault lab, transfer."""
    found: list[tuple[str, str, float]] = []
    for stage in stages:
        checks = set(check_files(course_root, stage))
        phases = {"stage_tests_s": 0.0, "instructor_checks_s": 0.0, "notebook_cells_s": 0.0, "fault_lab_s": 0.0,
                  "transfer_s": 0.0}
        for row in report.rows:
            seconds = row.duration_ms / 1000
            if row.target == sub_label(stage):
                phase = ("notebook_cells_s" if row.file.endswith(".ipynb") else
                         "instructor_checks_s" if row.file in checks else "stage_tests_s")
                phases[phase] += seconds
            elif row.target == lab_label(stage):
                phases["fault_lab_s"] += seconds
            elif (row.target == transfer_label(stage) or row.target.startswith(wrong_label(stage))) \
                    and row.file == stage.transfer_file:
                phases["transfer_s"] += seconds
        found.extend((stage.number, phase, round(value, 3)) for phase, value in sorted(phases.items()))
    return found


def grade_submission(course: Course, workbook: Workbook, stages: list[Stage], sub: submissions.Submission,
                     settings: JudgeSettings, sessions: int = 1,
                     similar: similarity.Thresholds | None = None) -> Graded:
    """Everything for one submission; a failure of the grader itself becomes flagged rows, never a crash.

    ``sessions`` > 1 runs the course's tests in that many trusted sessions at once (``grade`` with CPUs to spare).
    Each session holds the learner's code to the submission's time budget on its own, so where the sessions together
    spent half of it or more — where one session might have used it up and left tests not run — the submission is
    graded again in one session: its verdicts are the one session's, however many CPUs the grader had.

    ``similar``: the batch's similarity thresholds; the submission's modules are then lexed and winnowed for the
    similarity check while the judge runs (:func:`forgelab.grading.similarity.prepare_in_background`)."""
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="forgelab-grade-"))
    try:
        try:
            laid = lay_out(sub, scratch / "submission")
        except submissions.LayoutError as problem:  # the submission's own problem: graded as such, not flagged
            reason = items.cannot_lay_out(problem)
            unlaid = [row for stage in stages for row in items.failed_stage(sub.id, stage, ERROR, reason,
                                                                             course.root, flag="")]
            failing = [test for stage in stages
                       for test in class_facts.unlaid_results(course, stage, sub.id, items.clean(reason, course.root))]
            return Graded(sub, "", unlaid, [], time.monotonic() - started, reason, tests=failing,
                          facts=[(stage.number, StageFacts(transfer="error")) for stage in stages])
        copied = time.monotonic() - started
        handed = similarity.read_modules(laid.import_dir / "forge", stages)  # read as text, before any of it runs
        if similar is not None:
            similarity.prepare_in_background(workbook, stages, similar, handed)
        # the judge's folder is removed while the rows are built (grade never ends with os._exit)
        report = core.run(grading_job(course, workbook, stages, laid, scratch, sessions), settings, remove_later=True)
        if sessions > 1 and report.course_budget_spent_s >= settings.submission_wall_s / 2:
            report = core.run(grading_job(course, workbook, stages, laid, scratch), settings, remove_later=True)
        rows: list[GradeItem] = []
        tests: list[TestResult] = []
        facts: list[tuple[str, StageFacts]] = []
        on_reference = reference_layers(workbook) is not None
        for stage in stages:
            rows.extend(items.grade_stage(course, workbook, stage, laid, report, on_reference))
            if not report.problem:  # a session that died saw nothing to report on (its rows say: grade again)
                tests.extend(class_facts.test_results(course, stage, sub.id, report))
                transfer, _stopped = items.transfer_part(stage, report, laid, on_reference)
                facts.append((stage.number, class_facts.stage_facts(course.root, stage, laid.home, transfer.status)))
        timings = [("", "copy_s", round(copied, 3)), *timings_of(report, stages, course.root)]
        wall = time.monotonic() - started
        timings.append(("", "submission_wall_s", round(wall, 3)))
        return Graded(sub, laid.content_sha256, rows, timings, wall, report.problem, report.sandbox, tests, facts,
                      handed)
    except Exception as error:  # noqa: BLE001 - one submission must never stop the batch
        reason = items.grader_crashed(error)
        rows = [row for stage in stages for row in items.failed_stage(sub.id, stage, ERROR, reason, course.root)]
        return Graded(sub, "", rows, [], time.monotonic() - started, reason)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
