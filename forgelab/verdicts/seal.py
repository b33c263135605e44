"""What opens a sealed fault lab (:mod:`forgelab.core.seal`): the stage's required tests and its seal probes, judged.

One judge run on one target: the stage's tests and ``course/stages/NN-slug/seal.py``, whose tests call the stage's
functions on fixed inputs and record each answer with ``forgelab_record`` (course code on the trusted side; the
target's code runs in its sandboxed host, the answers come back as data). ``forgelab release`` runs it on the
reference to seal the lab; ``forgelab fault start NN`` runs it on the learner's ``forge/`` to open it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from forgelab.core.registry import Stage
from forgelab.judge import core
from forgelab.judge.core import CourseTests, Job, TargetSpec
from forgelab.judge.outcomes import Outcome, RunReport
from forgelab.judge.settings import JudgeSettings

SEAL_TARGET = "seal"


@dataclass(frozen=True)
class SealRun:
    """The verdict a seal needs: which required tests pass, and each probe's answer (JSON text) by probe name."""

    required: tuple[str, ...]
    passing: tuple[str, ...]  # the required tests all of whose rows passed
    answers: dict[str, str]  # probe name (the probe test's name, with its parameters) -> recorded answer
    unanswered: tuple[str, ...]  # probes that ran but recorded nothing (they failed, or never called forgelab_record)
    problem: str | None  # why the target's code could not be judged at all (an import problem, a stopped session)

    @property
    def all_pass(self) -> bool:
        return len(self.passing) == len(self.required)


def seal_job(stage: Stage, course_root: Path, starters: Path, stage_modules: tuple[str, ...], layers: tuple[Path, ...],
             with_tests: bool = True, cache_dir: Path | None = None) -> Job:
    files = (stage.test_file, stage.seal_probes) if with_tests else (stage.seal_probes,)
    target = TargetSpec(SEAL_TARGET, layers, stage.number, (stage.module,))
    return Job(course_root, starters, stage_modules, (target,), (CourseTests(SEAL_TARGET, files),), cache_dir=cache_dir)


def read_run(stage: Stage, report: RunReport) -> SealRun:
    rows = report.for_target(SEAL_TARGET)
    tests = [row for row in rows if row.file == stage.test_file]
    passing = tuple(name for name in stage.required_tests
                    if (mine := [row for row in tests if row.name == name]) and all(row.passed for row in mine))
    probes = [row for row in rows if row.file == stage.seal_probes]
    answers = {row.nodeid.split("::", 1)[1]: row.recorded for row in probes if row.outcome is Outcome.PASSED and row.recorded}
    unanswered = tuple(row.nodeid.split("::", 1)[1] for row in probes if row.nodeid.split("::", 1)[1] not in answers)
    problem = report.import_problems.get(SEAL_TARGET)
    errors = [error.cause for error in report.collect_errors if error.target == SEAL_TARGET]
    why = problem.cause if problem is not None else (report.problem or (errors[0] if errors else None))
    return SealRun(tuple(stage.required_tests), passing, answers, unanswered, why)


def run_seal(stage: Stage, job: Job, settings: JudgeSettings) -> SealRun:
    return read_run(stage, core.run(job, settings))
