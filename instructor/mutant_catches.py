"""How many known-wrong variants each instructor check file catches.

    .venv/bin/python instructor/mutant_catches.py [NN ...]      (default: every stage with checks)

For each stage, ``instructor/checks/test_NN_*.py`` runs through the judge — as ``forgelab grade`` runs it —
against the ``solution`` target, against the solution with each ``[[mutant]]`` of
``course/stages/NN-slug/mutants.toml`` applied, and against ``fault:NN`` (the fault lab's broken module), all
in one judge job. A variant is *caught* when at least one check does not pass on it. The checks must pass on
the unchanged solution, or the stage is reported as failing. Nothing in the repository is written.
Exit status 1 when the checks of a stage fail on the solution.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage, load_course
from forgelab.core.targets import resolve_target
from forgelab.grading.plan import check_files
from forgelab.judge import core
from forgelab.judge.core import CourseTests
from forgelab.judge.outcomes import Outcome, RunReport
from forgelab.judge.settings import DEFAULT
from forgelab.verdicts import jobs
from forgelab.verdicts.mutants import mutant_targets

ROOT = Path(__file__).resolve().parent.parent
SOLUTION, FAULT = "solution", "fault"


def _passes(report: RunReport, label: str) -> bool:
    rows = report.for_target(label)
    return bool(rows) and label not in report.import_problems and all(row.outcome is Outcome.PASSED for row in rows)


def catches(course: Course, workbook: Workbook, stage: Stage, checks: list[str]) -> str:
    """One line for the stage: how many of its variants the checks catch, or that they fail on the solution."""
    with tempfile.TemporaryDirectory(prefix="forgelab-catches-") as scratch:
        solution = resolve_target(SOLUTION, workbook, course)
        fault = resolve_target(f"fault:{stage.number}", workbook, course)
        made = mutant_targets(workbook, stage, Path(scratch))
        targets = [jobs.spec(solution, SOLUTION, stage), jobs.spec(fault, FAULT, stage), *(spec for spec, _ in made)]
        job = jobs.job(course, workbook, targets, [CourseTests(target.label, tuple(checks)) for target in targets])
        report = core.run(job, DEFAULT)
    if not _passes(report, SOLUTION):
        return f"stage {stage.number}: the checks FAIL on the solution — fix them first"
    survived = [name for spec, name in made if _passes(report, spec.label)]
    fault_caught = not _passes(report, FAULT)
    return (f"stage {stage.number}: {len(made) - len(survived)} of {len(made)} mutants caught; fault lab "
            f"{'caught' if fault_caught else 'NOT caught'}" + (f"; survivors: {', '.join(survived)}" if survived else ""))


def main(argv: list[str]) -> int:
    course = load_course(ROOT)
    workbook = Workbook(root=ROOT, workspace=ROOT)
    failures = 0
    for number in argv or [stage.number for stage in course.stages]:
        stage = course.stage(number)
        checks = check_files(course.root, stage)
        if not checks:
            print(f"stage {stage.number}: no instructor checks")
            continue
        line = catches(course, workbook, stage, checks)
        failures += "FAIL" in line
        print(line, flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
