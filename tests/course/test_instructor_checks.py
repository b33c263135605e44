"""Every stage's instructor checks pass on the course's reference, and still catch its fault variant.

Grading runs ``instructor/checks/test_NN_*.py`` against a learner's module; a check that fails on
``solutions/forge/`` takes points from every correct submission. ``forgelab verify-course`` does not
run these checks, and the grading fixtures hand in only stages 01, 05 and 07, so stage 11's checks
kept the deletion order of before its ``memory`` step and failed on the reference unnoticed. This
module runs all of them, for every stage, in one judge run: on the reference (every check passes),
on each stage's fault variant and on stage 11's deletion-order mutants (at least one check fails, so
they still tell right from wrong); then it grades a complete correct stage 11 as a learner hands it in.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from grading_fixtures import build_correct, hand_in

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.core.targets import resolve_target
from forgelab.judge import core
from forgelab.judge.core import CourseTests
from forgelab.judge.outcomes import Outcome, RunReport
from forgelab.judge.settings import JudgeSettings
from forgelab.verdicts import jobs
from forgelab.verdicts.mutants import mutant_targets

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# stage 11's known-wrong deletion plans (course/stages/11-context-pipeline/mutants.toml) its checks are meant to catch
DELETION_MUTANTS = ("memory-never-let-go", "memory-after-tool-output", "smaller-first-within-a-step",
                    "by-size-across-the-steps", "one-deletion-too-many", "dependents-left-dangling",
                    "kept-duplicate-by-id-alone", "irrelevant-even-when-not-recoverable",
                    "no-needed-list-means-nothing-is-needed", "short-budget-returns-a-partial-plan",
                    "what-protected-objects-need-is-not-protected")


def _checks_by_stage() -> dict[str, tuple[str, ...]]:
    course = load_course(ROOT)
    return {stage.number: tuple(path.relative_to(ROOT).as_posix() for path in sorted(ROOT.glob(stage.instructor_checks)))
            for stage in course.stages}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunReport, dict[str, str]]:
    """One judge run: every stage's checks on the reference and on its fault variant, stage 11's on its
    deletion-order mutants."""
    course, workbook = load_course(ROOT), Workbook(ROOT, ROOT)
    checks = _checks_by_stage()
    targets = [jobs.spec(resolve_target("solution", workbook, course), "solution")]
    suites = [CourseTests("solution", tuple(file for files in checks.values() for file in files))]
    for stage in course.stages:
        label = f"fault:{stage.number}"
        targets.append(jobs.spec(resolve_target(label, workbook, course), label, stage))
        suites.append(CourseTests(label, checks[stage.number]))
    mutants = [(spec, name) for spec, name in mutant_targets(workbook, course.stage("11"), tmp_path_factory.mktemp("mutants"))
               if name in DELETION_MUTANTS]
    targets.extend(spec for spec, _name in mutants)
    suites.extend(CourseTests(spec.label, checks["11"]) for spec, _name in mutants)
    report = core.run(jobs.job(course, workbook, targets, suites), JudgeSettings(test_cpu_s=60))
    return report, {name: spec.label for spec, name in mutants}


@pytest.fixture(scope="module")
def report(judged: tuple[RunReport, dict[str, str]]) -> RunReport:
    return judged[0]


def test_every_stage_has_instructor_checks() -> None:
    checks = _checks_by_stage()
    assert len(checks) == 11 and all(checks.values()), checks


@pytest.mark.parametrize("stage", sorted(_checks_by_stage()))
def test_the_instructor_checks_pass_on_the_reference(report: RunReport, stage: str) -> None:
    assert report.problem is None, report.problem
    rows = [row for file in _checks_by_stage()[stage] for row in report.in_file("solution", file)]
    assert rows, f"stage {stage}: no instructor check ran on the reference"
    failing = {row.nodeid: (row.outcome.value, row.cause) for row in rows if row.outcome is not Outcome.PASSED}
    assert failing == {}, f"stage {stage}: instructor checks fail on solutions/forge (a correct submission loses points)"


@pytest.mark.parametrize("stage", sorted(_checks_by_stage()))
def test_the_instructor_checks_still_catch_the_fault_variant(report: RunReport, stage: str) -> None:
    rows = [row for file in _checks_by_stage()[stage] for row in report.in_file(f"fault:{stage}", file)]
    assert rows and any(row.outcome is not Outcome.PASSED for row in rows), \
        f"stage {stage}: every instructor check passes on the known-wrong fault variant"


def test_a_complete_correct_stage_11_gets_all_its_points(tmp_path: Path) -> None:
    """Graded as a learner hands it in: stage 11's instructor checks give a correct submission every point."""
    folder = hand_in(build_correct(tmp_path / "correct", ("11",)))
    out = tmp_path / "graded"
    result = run_cli(ROOT, "grade", str(folder), "--out", str(out), "--stages", "11", "--cpu-limit", "10", timeout=800)
    assert result.returncode == 0, result.stdout + result.stderr
    connection = sqlite3.connect(out / "gradebook.sqlite")
    rows = {item: (points, max_points, outcome, reason) for item, points, max_points, outcome, reason in connection.execute(
        "SELECT item, points, max_points, outcome, reason FROM grades WHERE stage = '11' ORDER BY item_order")}
    connection.close()
    points, max_points, outcome, reason = rows["instructor_checks"]
    assert (outcome, points) == ("passed", max_points) and max_points > 0, reason
    assert {item: row[2] for item, row in rows.items()} == {item: "passed" for item in rows}, rows


def test_stage_11_s_checks_kill_the_deletion_order_mutants(judged: tuple[RunReport, dict[str, str]]) -> None:
    """The checks' own oracle follows the stage's order (memory after the waste, before tool output)."""
    report, labels = judged
    assert sorted(labels) == sorted(DELETION_MUTANTS), "a mutant was renamed or removed: update DELETION_MUTANTS"
    survivors = [name for name in DELETION_MUTANTS
                 if all(row.outcome is Outcome.PASSED for row in report.for_target(labels[name]))]
    assert survivors == []
