"""A check's plan is made once (forgelab/learner/checkjob.py: plan_check), so a stage id moves through check only
downward: from the command to the plan, the plan to the judge's job and to the verdict on each part — nothing on
the way works out again which transfer test or lab folder is judged, or whether they are still the shipped files."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest
from conftest import copy_workbook

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.learner import check, checkjob
from forgelab.learner.checkjob import start_check
from forgelab.learner.workbench import Workbench

DECISIONS = ("transfer_file", "lab_dir", "untouched_lab", "untouched_transfer")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Workbench:
    root = copy_workbook(tmp_path_factory.mktemp("plan") / "workbook").root
    return Workbench(Workbook(root=root, workspace=root), load_course(root))


def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each decision of the plan is made, wherever a check makes it."""
    calls: Counter[str] = Counter()
    for name in DECISIONS:
        original = getattr(checkjob, name)

        def counting(*args: object, _name: str = name, _original: Callable[..., object] = original) -> object:
            calls[_name] += 1
            return _original(*args)

        for module in (checkjob, check):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, counting)
    return calls


def test_forgelab_check_makes_its_plan_once_and_judges_from_it(bench: Workbench, monkeypatch: pytest.MonkeyPatch) -> None:
    """As `forgelab check NN` does it: the run starts from the plan, the verdict reads the same plan."""
    calls = counted(monkeypatch)
    stage = bench.course.stage("01")
    pending = start_check(bench.course, bench.workbook, stage, bench.target("learner"), bench.settings)
    assert pending.plan is not None and pending.plan.job is pending.job
    outcome = bench.check(stage, write=False, pending=pending)
    assert calls == Counter({name: 1 for name in DECISIONS}), calls
    assert outcome.transfer.status == "not_written" and outcome.fault_lab.status == "not_started"


def test_a_check_without_a_started_run_makes_its_plan_once_too(bench: Workbench, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counted(monkeypatch)
    outcome = bench.check(bench.course.stage("01"), write=False)
    assert calls == Counter({name: 1 for name in DECISIONS}), calls
    assert outcome.transfer.status == "not_written"
