"""`forgelab status` runs only what changed (issue 20, item 4): untouched starters, transfer starters and fault
labs are known by their digest, only changed modules run, and a module that never finishes importing costs one
time limit, once. Each test watches the judge's jobs (what it was asked to run), never the clock."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from conftest import ROOT, WorkbookCopy

from forgelab.judge import channel, core
from forgelab.judge.settings import DEFAULT
from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.learner.workbench import Workbench

LOOP = "\n\nwhile True:  # never finishes importing\n    pass\n"
TRANSFER = '''from forge.instructions import Instruction, resolve


def test_the_system_keeps_write() -> None:
    user = Instruction("user", "write", "allow")
    accepted, rejected = resolve([Instruction("system", "write", "deny"), user])
    assert accepted["write"] == "deny" and user in rejected
'''


STOPPED: dict[int, channel.RunProcesses] = {}  # id(job) -> the processes of a run status may stop


@pytest.fixture
def jobs_run(monkeypatch: pytest.MonkeyPatch) -> list[core.Job]:
    """Every judge job started in this test (they still run)."""
    started: list[core.Job] = []
    real = core.run
    STOPPED.clear()

    def spy(job: core.Job, settings, isolation=None, **options):  # type: ignore[no-untyped-def]
        started.append(job)
        if options.get("processes") is not None:
            STOPPED[id(job)] = options["processes"]
        return real(job, settings, isolation, **options)

    monkeypatch.setattr(core, "run", spy)
    return started


def _labels(job: core.Job) -> list[str]:
    return [target.label for target in job.targets]


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
    # one learner process for stage 01's tests; stage 08 waited and was not run; the transfer test (which waits only
    # for stage 01's module) was judged beside it, and that run was stopped once the module was found not to import
    assert sorted(_labels(job) for job in jobs_run) == [["stage-01"], ["transfer", "known-wrong-01"]]
    transfer_job = next(job for job in jobs_run if _labels(job)[0] == "transfer")
    assert STOPPED[id(transfer_job)].stopped
    by_number = {item.stage.number: item for item in report.stages}
    for number in ("01", "08"):
        assert "forge/instructions.py did not finish" in by_number[number].tests.problem, by_number[number]
    assert by_number["01"].transfer == "error"
    again = _status(workbook.root, test_cpu_s=2)
    assert len(jobs_run) == 2 and again.ran == ()  # once: the next status remembers it
    (workbook.root / "forge/instructions.py").write_bytes((ROOT / "solutions/forge/instructions.py").read_bytes())
    fixed = _status(workbook.root, test_cpu_s=2)
    labels = [_labels(job) for job in jobs_run[2:]]
    assert sorted(labels[:2]) == [["stage-01"], ["transfer", "known-wrong-01"]], labels
    assert labels[2:] == [["stage-08"]], labels  # stage 08's tests waited for the module it imports
    assert {item.stage.number: item for item in fixed.stages}["01"].transfer == "passed"


def test_a_transfer_test_waiting_only_for_its_stage_module_is_judged_beside_its_tests(
        workbook: WorkbookCopy, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the end of stage 01 with nothing remembered, the transfer test (on forge/ and on the known-wrong module)
    runs while the stage tests run, not in a second judge run after them; the verdicts are those of a check."""
    _solution(workbook, "forge/instructions.py")
    workbook.write("transfer/test_01_instruction_hierarchy.py", TRANSFER)
    transfer_started = threading.Event()
    seen: list[tuple[list[str], bool]] = []  # each job, and whether the transfer job had started when it began
    real = core.run

    def spy(job: core.Job, settings, isolation=None, **options):  # type: ignore[no-untyped-def]
        if _labels(job)[0] == "transfer":
            transfer_started.set()
        else:  # the stage tests' run waits until the transfer test's has started (it never does when it waits)
            transfer_started.wait(timeout=60)
        seen.append((_labels(job), transfer_started.is_set()))
        return real(job, settings, isolation, **options)

    monkeypatch.setattr(core, "run", spy)
    report = _status(workbook.root)
    assert sorted(seen) == [(["stage-01"], True), (["transfer", "known-wrong-01"], True)], seen
    first = report.stages[0]
    assert (first.tests.passed, first.tests.total, first.transfer) == (13, 13, "passed")
    assert report.ran == ("01",)
    bench_outcome = Workbench(Workbook(workbook.root, workbook.root), load_course(workbook.root)).check(
        load_course(workbook.root).stage("01"), write=False)
    assert bench_outcome.transfer.status == first.transfer


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
