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


# ---------------------------------------------------------------- the last word of a process that ends

LATE_FAILURE = '''import time

from forge.instructions import Instruction, resolve


def test_wrong_on_purpose():
    accepted, _rejected = resolve([Instruction("system", "write", "deny")])
    time.sleep(0.2)  # the judge's select times out meanwhile
    assert accepted["write"] == "allow"
'''
EXITING_HOST = '''

import os as _os
import threading as _threading
import time as _time

_resolve = resolve


def resolve(instructions):  # answers, then its process ends while the judge is not looking
    _time.sleep(0.2)
    _threading.Timer(0.05, _os._exit, (0,)).start()
    return _resolve(instructions)
'''
ANSWERED = '''from forge.instructions import Instruction, resolve


def test_answered_before_it_ended():
    accepted, _rejected = resolve([Instruction("system", "write", "deny")])
    assert accepted == {"write": "deny"}
'''


def _descheduled_after_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every wait of the judge that times out is followed by 0.8 s in which the judge's thread does not run (as on a
    busy machine): the process it waits on writes its last frames and ends meanwhile."""
    import time

    from forgelab.judge.watchdog import Watchdog

    real = Watchdog.wait

    def wait(self: Watchdog, *, read: int | None = None, write: int | None = None) -> bool:
        ready = real(self, read=read, write=write)
        if not ready and read is not None:
            time.sleep(0.8)
        return ready

    monkeypatch.setattr(Watchdog, "wait", wait)


def _run_one(tmp_path: Path, source: str, *layers: Path) -> dict[str, tuple[Outcome, str]]:
    test_file = tmp_path / "test_01_mine.py"
    test_file.write_text(source, encoding="utf-8")
    starters = jobs.starters(Workbook(ROOT, ROOT))
    target = TargetSpec("transfer-01", (starters / "forge", ROOT / "solutions" / "forge", *layers), "01", (MODULE,))
    job = core.Job(ROOT, starters, jobs.stage_modules(load_course(ROOT)), (target,),
                   learner_tests=(LearnerTests("transfer-01", ((test_file, "transfer/test_01_mine.py"),)),))
    report = core.run(job, DEFAULT)
    assert report.problem is None and not report.target_problems, report
    return {row.nodeid: (row.outcome, row.cause) for row in report.rows}


def test_a_test_that_fails_just_before_its_process_ends_is_failed_however_late_the_judge_looks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its report and the run's end arrive while the judge is not looking; before, the judge saw the process ended and
    stopped reading, and the test that had started was kept as passed (a known-wrong implementation 'passed' a
    learner's transfer test in a busy grading run)."""
    _descheduled_after_a_timeout(monkeypatch)
    rows = _run_one(tmp_path, LATE_FAILURE)
    assert rows == {"transfer/test_01_mine.py::test_wrong_on_purpose": (Outcome.FAILED,
                                                                       "AssertionError: assert 'deny' == 'allow'")}


def test_an_answer_written_just_before_the_learners_process_ends_is_read(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    layer = tmp_path / "layer" / "instructions.py"
    layer.parent.mkdir()
    layer.write_text((ROOT / "solutions" / MODULE).read_text(encoding="utf-8") + EXITING_HOST, encoding="utf-8")
    _descheduled_after_a_timeout(monkeypatch)
    rows = _run_one(tmp_path, ANSWERED, layer.parent)
    assert rows == {"transfer/test_01_mine.py::test_answered_before_it_ended": (Outcome.PASSED, "")}


def test_a_test_whose_process_ends_during_it_has_no_result_not_a_pass(tmp_path: Path) -> None:
    rows = _run_one(tmp_path, "import os\n\n\ndef test_ends_the_process():\n    os._exit(0)\n")
    [(outcome, cause)] = rows.values()
    assert outcome is Outcome.ERROR and "without reporting its result" in cause
