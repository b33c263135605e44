"""The test's own objects never pass through learner code (forgelab/judge/channel.py, ``ArgumentChanges``).

The learner's function always works on copies made on its own side. What it changes in them shows only in a
test marked ``watch_arguments`` (``test_input_is_not_mutated``), as in one process; every other test keeps its
objects exactly as it built them, so whatever it compares against after the call is its own.

A stage-01 module with no decision logic accepts every instruction. Its twin also rewrites the frozen
``Instruction`` objects it is given so that every key is different: if that change reached the tests' own
objects, expectations computed from them after the call (the instructor checks' oracle) would agree with
"everything is accepted". The twin must pass no test that the honest module fails, and must fail
``test_input_is_not_mutated``, which the honest one passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

from forgelab.judge import core
from forgelab.verdicts import jobs
from forgelab.judge.core import CourseTests, TargetSpec
from forgelab.judge.outcomes import Outcome, RunReport
from forgelab.judge.settings import JudgeSettings
from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course

pytestmark = pytest.mark.slow

ACCEPT_ALL = '''

def explain(instructions):
    for item in instructions:
        rank_of(item)
    return {item.key: item for item in instructions}, []


def resolve(instructions):
    winners, _ = explain(instructions)
    return {key: item.value for key, item in winners.items()}, []
'''

REWRITE_INPUTS = '''

_accept_all = explain


def explain(instructions):
    for index, item in enumerate(instructions):
        object.__setattr__(item, "key", f"{item.key}-{index}")  # every key different: nothing conflicts any more
    return _accept_all(instructions)
'''


def _module(kind: str) -> str:
    starter = (ROOT / "solutions" / "forge" / "instructions.py").read_text(encoding="utf-8")
    head = starter.split("def explain(", 1)[0]
    return head + ACCEPT_ALL + (REWRITE_INPUTS if kind == "rewrites" else "")


def _grade(tmp_path: Path) -> RunReport:
    course = load_course(ROOT)
    stage = course.stage("01")
    workbook = Workbook(ROOT, ROOT)
    checks = tuple(path.relative_to(ROOT).as_posix() for path in sorted(ROOT.glob(stage.instructor_checks)))
    targets, suites = [], []
    for kind in ("honest", "rewrites"):
        folder = tmp_path / kind / "forge"
        folder.mkdir(parents=True)
        (folder / "instructions.py").write_text(_module(kind), encoding="utf-8")
        targets.append(TargetSpec(kind, (jobs.starters(workbook) / "forge", folder), "01", (stage.module,)))
        suites.append(CourseTests(kind, (stage.test_file, *checks)))
    return core.run(jobs.job(course, workbook, targets, suites), JudgeSettings(test_cpu_s=5))


def test_a_rewritten_input_shows_only_where_the_test_watches_its_arguments(tmp_path: Path) -> None:
    report = _grade(tmp_path)
    assert report.problem is None
    honest = {row.nodeid: row.outcome for row in report.for_target("honest")}
    rewrites = {row.nodeid: row.outcome for row in report.for_target("rewrites")}
    assert honest.keys() == rewrites.keys() and len(honest) > 15
    watched = "tests/stages/test_01_instruction_hierarchy.py::test_input_is_not_mutated"
    assert honest[watched] is Outcome.PASSED
    assert rewrites[watched] is Outcome.FAILED
    # everywhere else, rewriting the inputs gains nothing: no test passes that the honest module fails
    gained = sorted(node for node, outcome in rewrites.items() if outcome is Outcome.PASSED
                    and honest[node] is not Outcome.PASSED)
    assert gained == []
    checks = [node for node in honest if node.startswith("instructor/")]
    assert checks and sum(honest[node] is Outcome.PASSED for node in checks) < len(checks)
