"""Grade one submission: one judge job for all its stages, then seven items per stage.

The submission is only read: the files grading needs are copied into a scratch layout
(:mod:`forgelab.grading.submission`). Everything that runs its code goes through one judge job
(:mod:`forgelab.judge`):

=====================  ================================================================================
``sub-NN``             its ``forge/``, one learner process per stage (a module that does not import
                       spoils only its own stage): the course's stage tests, the instructor checks and
                       the replay of the reference notebook's worked demonstration, all on the
                       trusted side
``lab-NN``             its ``labs/NN-slug/forge/``: the stage tests again (the fault lab)
``transfer-NN``        its ``forge/``: its own transfer test of the stage, run by pytest in a sandbox of
                       its own that holds the course's interface instead of ``forge`` (the judge relays
                       each call to the submission's ``forge`` in another sandbox)
``known-wrong-NN``     its ``forge/`` with the stage's fault-lab variant laid over it (one merged
                       folder): the same transfer test, run the same way, which must not pass there
=====================  ================================================================================

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
from dataclasses import dataclass
from pathlib import Path

from forgelab.grading import items, submission as submissions
from forgelab.grading.rubric import GradeItem
from forgelab.judge import core, jobs
from forgelab.judge.core import CourseTests, LearnerTests, TargetSpec
from forgelab.judge.outcomes import RunReport
from forgelab.judge.settings import JudgeSettings
from forgelab.paths import Workbook
from forgelab.registry import Course, Stage

def transfer_label(stage: Stage) -> str:
    return f"transfer-{stage.number}"


def sub_label(stage: Stage) -> str:
    return f"sub-{stage.number}"


def lab_label(stage: Stage) -> str:
    return f"lab-{stage.number}"


def wrong_label(stage: Stage) -> str:
    return f"known-wrong-{stage.number}"


def check_files(course_root: Path, stage: Stage) -> list[str]:
    return sorted(path.relative_to(course_root).as_posix() for path in course_root.glob(stage.instructor_checks))


@dataclass(frozen=True)
class Laid:
    """A submission copied into scratch: ``import_dir/forge`` and ``home`` (transfer/, labs/, evidence/, tests/)."""

    submission: submissions.Submission
    content_sha256: str
    import_dir: Path
    home: Path
    file_count: int


def lay_out(sub: submissions.Submission, scratch: Path) -> Laid:
    files = submissions.read_files(sub)
    import_dir, home = submissions.lay_out(files, scratch)
    return Laid(sub, submissions.content_digest(files), import_dir, home, len(files))


def lab_handed_in(laid: Laid, stage: Stage) -> bool:
    return (laid.home / stage.lab_dir / "forge" / "__init__.py").is_file() or (laid.home / stage.lab_module).is_file()


def grading_job(course: Course, workbook: Workbook, stages: list[Stage], laid: Laid) -> core.Job:
    forge = laid.import_dir / "forge"
    targets: list[TargetSpec] = []
    course_tests: list[CourseTests] = []
    learner_tests: list[LearnerTests] = []
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
        targets.append(TargetSpec(transfer_label(stage), (forge,), stage.number))
        learner_tests.append(LearnerTests(transfer_label(stage), ((laid.home / stage.transfer_file, stage.transfer_file),)))
        variant = jobs.fault_variant(workbook, stage)
        if (workbook.root / stage.fault_variant).is_file():
            targets.append(TargetSpec(wrong_label(stage), (forge, variant), stage.number))
            learner_tests.append(LearnerTests(wrong_label(stage), ((laid.home / stage.transfer_file, stage.transfer_file),)))
    job = jobs.job(course, workbook, targets, course_tests, learner_tests)
    return core.Job(job.course_root, job.starters, job.stage_modules, job.targets, job.course_tests, job.learner_tests,
                    cache_dir=job.cache_dir, sessions=1)


@dataclass(frozen=True)
class Graded:
    submission: submissions.Submission
    content_sha256: str
    items: list[GradeItem]
    timings: list[tuple[str, str, float]]  # (stage, phase, seconds)
    wall_s: float
    problem: str | None = None
    sandbox: str = ""

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
            elif row.target in (transfer_label(stage), wrong_label(stage)) and row.file == stage.transfer_file:
                phases["transfer_s"] += seconds
        found.extend((stage.number, phase, round(value, 3)) for phase, value in sorted(phases.items()))
    return found


def grade_submission(course: Course, workbook: Workbook, stages: list[Stage], sub: submissions.Submission,
                     settings: JudgeSettings) -> Graded:
    """Everything for one submission; a failure of the grader itself becomes flagged rows, never a crash."""
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="forgelab-grade-"))
    try:
        laid = lay_out(sub, scratch / "submission")
        copied = time.monotonic() - started
        report = core.run(grading_job(course, workbook, stages, laid), settings)
        rows: list[GradeItem] = []
        for stage in stages:
            rows.extend(items.grade_stage(course, workbook, stage, laid, report))
        timings = [("", "copy_s", round(copied, 3)), *timings_of(report, stages, course.root)]
        wall = time.monotonic() - started
        timings.append(("", "submission_wall_s", round(wall, 3)))
        return Graded(sub, laid.content_sha256, rows, timings, wall, report.problem, report.sandbox)
    except Exception as error:  # noqa: BLE001 - one submission must never stop the batch
        reason = (f"{items.GRADER_FAILED} on this submission ({type(error).__name__}: {str(error)[:200]}); this is not "
                  "the learner's fault — report it to the course maintainers")
        rows = [row for stage in stages for row in items.failed_stage(sub.id, stage, "error", reason, course.root)]
        return Graded(sub, "", rows, [], time.monotonic() - started, reason)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
