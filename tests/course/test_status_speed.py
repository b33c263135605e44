"""`forgelab status` runs only what changed (issue 20, item 4): untouched starters, transfer starters and fault
labs are known by their digest, only changed modules run, and a module that never finishes importing costs one
time limit, once. Each test watches the judge's jobs (what it was asked to run), never the clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, WorkbookCopy

from forgelab.judge import core
from forgelab.judge.settings import DEFAULT
from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course

LOOP = "\n\nwhile True:  # never finishes importing\n    pass\n"
TRANSFER = '''from forge.instructions import Instruction, resolve


def test_the_system_keeps_write() -> None:
    user = Instruction("user", "write", "allow")
    accepted, rejected = resolve([Instruction("system", "write", "deny"), user])
    assert accepted["write"] == "deny" and user in rejected
'''


@pytest.fixture
def jobs_run(monkeypatch: pytest.MonkeyPatch) -> list[core.Job]:
    """Every judge job started in this test (they still run)."""
    started: list[core.Job] = []
    real = core.run

    def spy(job: core.Job, settings, isolation=None, **options):  # type: ignore[no-untyped-def]
        started.append(job)
        return real(job, settings, isolation, **options)

    monkeypatch.setattr(core, "run", spy)
    return started


def _status(root: Path, **settings: int):  # type: ignore[no-untyped-def]
    from forgelab.learner.status import collect_status

    return collect_status(Workbook(root, root), load_course(root), DEFAULT.with_(**settings))


def _solution(workbook: WorkbookCopy, module: str) -> None:
    (workbook.root / module).write_bytes((ROOT / "solutions" / module).read_bytes())


def test_first_status_on_a_fresh_workbook_runs_no_stage(workbook: WorkbookCopy, jobs_run: list[core.Job]) -> None:
    report = _status(workbook.root)
    assert jobs_run == [] and report.ran == ()
    assert all(item.tests.starter and item.transfer == "not_written" for item in report.stages)
    assert report.next_step.startswith("stage 01: open notebooks/01-instruction-hierarchy.ipynb")
    done = workbook.run("status")
    assert done.returncode == 0, done.output
    assert "nothing needed running" in done.stdout and "not started" in done.stdout


def test_only_the_changed_module_runs_and_then_it_is_remembered(workbook: WorkbookCopy, jobs_run: list[core.Job]) -> None:
    _solution(workbook, "forge/instructions.py")
    report = _status(workbook.root)
    assert [[target.label for target in job.targets] for job in jobs_run] == [["stage-01"]]
    assert report.ran == ("01",)
    first = report.stages[0]
    assert (first.tests.passed, first.tests.total, first.tests.starter) == (13, 13, False)
    eight = next(item for item in report.stages if item.stage.number == "08")
    assert eight.tests.starter  # its own module is still the starter, although it imports stage 01's
    again = _status(workbook.root)
    assert len(jobs_run) == 1 and again.ran == () and again.remembered


def test_a_module_that_never_finishes_importing_costs_one_limit_once(workbook: WorkbookCopy,
                                                                     jobs_run: list[core.Job]) -> None:
    _solution(workbook, "forge/instructions.py")
    _solution(workbook, "forge/extractor.py")  # stage 08 imports stage 01's module
    with (workbook.root / "forge/instructions.py").open("a", encoding="utf-8") as module:
        module.write(LOOP)
    workbook.write("transfer/test_01_instruction_hierarchy.py", TRANSFER)
    report = _status(workbook.root, test_cpu_s=2)
    # one job, one learner process: stage 01's tests; stage 08 and the transfer test waited, and were not run
    assert [[target.label for target in job.targets] for job in jobs_run] == [["stage-01"]]
    by_number = {item.stage.number: item for item in report.stages}
    for number in ("01", "08"):
        assert "forge/instructions.py did not finish" in by_number[number].tests.problem, by_number[number]
    assert by_number["01"].transfer == "error"
    again = _status(workbook.root, test_cpu_s=2)
    assert len(jobs_run) == 1 and again.ran == ()  # once: the next status remembers it
    (workbook.root / "forge/instructions.py").write_bytes((ROOT / "solutions/forge/instructions.py").read_bytes())
    fixed = _status(workbook.root, test_cpu_s=2)
    labels = [[target.label for target in job.targets] for job in jobs_run[1:]]
    assert labels[0] == ["stage-01"] and "stage-08" in labels[1] and "transfer" in labels[1], labels
    assert {item.stage.number: item for item in fixed.stages}["01"].transfer == "passed"


def test_an_untouched_fault_lab_and_transfer_starter_are_known_without_running(workbook: WorkbookCopy,
                                                                              jobs_run: list[core.Job]) -> None:
    _solution(workbook, "forge/instructions.py")
    assert workbook.run("fault", "start", "01").returncode == 0
    from forgelab.core.targets import resolve_target
    from forgelab.learner.workbench import Workbench

    bench = Workbench(Workbook(workbook.root, workbook.root), load_course(workbook.root))
    outcome = bench.check(bench.course.stage("01"))
    labels = [target.label for target in jobs_run[-1].targets]
    assert labels == ["target"] and not jobs_run[-1].learner_tests  # no lab run, no transfer run
    assert outcome.fault_lab.status == "broken" and "still the broken variant" in outcome.fault_lab.detail
    assert outcome.transfer.status == "not_written"
    assert resolve_target("learner", bench.workbook, bench.course).kind == "learner"
    status = _status(workbook.root)
    assert status.stages[0].lab == "untouched" and status.ran == ()
