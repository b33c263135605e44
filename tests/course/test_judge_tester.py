"""The process that runs a learner's own test file (the tester) imports Hypothesis only when the file uses it, and
then with the judge's profile (no deadline, the same examples every run, no database) before any test runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT
from grading_fixtures import MODULE

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.judge import core
from forgelab.judge.core import LearnerTests, TargetSpec
from forgelab.judge.outcomes import Outcome
from forgelab.judge.settings import DEFAULT
from forgelab.verdicts import jobs

PLAIN = '''import sys

from forge.instructions import Instruction


def test_without_it():
    assert Instruction("system", "write", "deny").key == "write"
    assert ("hypo" + "thesis") not in sys.modules  # the word itself would make the judge import it
'''
WITH_IT = '''from hypothesis import given, settings, strategies

from forge.instructions import Instruction


def test_the_judge_profile():
    assert settings.default.deadline is None and settings.default.derandomize and settings.default.database is None


@given(strategies.sampled_from(["read", "write"]))
def test_given(action):
    assert Instruction("system", action, "deny").key == action
'''
HIDDEN = '''import importlib

settings = importlib.import_module("hypo" + "thesis").settings  # imported without naming it


def test_the_judge_profile_all_the_same():
    assert settings.default.deadline is None and settings.default.derandomize and settings.default.database is None
'''


@pytest.mark.parametrize("source", [PLAIN, WITH_IT, HIDDEN], ids=["plain", "with-hypothesis", "hidden-import"])
def test_a_learner_test_gets_hypothesis_only_when_it_uses_it_and_then_the_judge_profile(tmp_path: Path,
                                                                                        source: str) -> None:
    test_file = tmp_path / "test_01_mine.py"
    test_file.write_text(source, encoding="utf-8")
    starters = jobs.starters(Workbook(ROOT, ROOT))
    target = TargetSpec("transfer-01", (starters / "forge", ROOT / "solutions" / "forge"), "01", (MODULE,))
    job = core.Job(ROOT, starters, jobs.stage_modules(load_course(ROOT)), (target,),
                   learner_tests=(LearnerTests("transfer-01", ((test_file, "transfer/test_01_mine.py"),)),))
    report = core.run(job, DEFAULT)
    assert report.problem is None and not report.target_problems and report.rows, report
    assert {row.nodeid: (row.outcome, row.cause) for row in report.rows} == {
        row.nodeid: (Outcome.PASSED, "") for row in report.rows}


def test_a_testers_folder_shares_the_templates_files_but_never_writes_into_them(tmp_path: Path) -> None:
    from forgelab.judge import relay

    template = tmp_path / "template"
    (template / "transfer").mkdir(parents=True)
    (template / "forge.py").write_text("shared = 1\n", encoding="utf-8")
    (template / "transfer" / "test_01_mine.py").write_text("# the template's own\n", encoding="utf-8")
    learner = tmp_path / "test_01_mine.py"
    learner.write_text("def test_mine():\n    pass\n", encoding="utf-8")
    folder = relay.tester_folder(template, tmp_path / "tester", learner, "transfer/test_01_mine.py")
    assert (folder / "transfer" / "test_01_mine.py").read_text(encoding="utf-8") == learner.read_text(encoding="utf-8")
    assert (folder / "forge.py").read_text(encoding="utf-8") == "shared = 1\n"
    assert (template / "transfer" / "test_01_mine.py").read_text(encoding="utf-8") == "# the template's own\n"
