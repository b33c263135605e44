"""A stage's transfer test and its lab's regression test, judged on the same code, share one tester (Job.together).

Grading runs each of the two files on the course's reference and again with the fault lab's defect laid over it.
Where both files are judged on the same code, one tester runs them one after the other (forgelab/judge/relay.py):
one interpreter and one pytest start instead of two. Each file must still get exactly the verdict it gets alone.
Each case here runs the same two files both ways, on the learner's forge and on it with the known-wrong module
(``mine`` and ``wrong``), and compares every row, problem and collection error:

* honest files: the same rows, from two tester starts instead of four;
* a first file whose test loops in the tester, calls ``os._exit``, or floods the output: it is stopped as it would be
  alone, and the second file, which that tester never reached, runs alone afterwards; one that cannot be collected
  spoils only itself (the second file's session still runs in the same tester);
* a file's limits are its own: two files that each use most of one file's CPU allowance both pass;
* a test stopped before the judge read that it had begun (a late look, on a busy machine) is still the one named;
* a test that claims, through the tester's link, that the next file has begun gets no more than that file's
  allowance (the claim is taken once, in order), and the runs of both targets still look alike from inside;
* grading pairs the files of a stage only where every run the verdict compares looks the same (not where the
  transfer test also runs on a mutant).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import WorkbookCopy, copy_with_reference_forge, wait_until

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.grading import grader
from forgelab.judge import core, relay
from forgelab.judge.core import LearnerTests, TargetSpec
from forgelab.judge.outcomes import Limit, Outcome, RunReport
from forgelab.judge.settings import JudgeSettings
from forgelab.verdicts import jobs

FIRST = "transfer/test_01_instruction_hierarchy.py"
SECOND = "labs/01-instruction-hierarchy/test_diagnosis.py"
SETTINGS = JudgeSettings(test_cpu_s=1, output_kb=64)  # each file's tester: 2 CPU seconds, 64 KB of output
PAIRS = (("mine", "mine-second"), ("wrong", "wrong-second"))

PASSING = '''from forge.instructions import Instruction, resolve


def test_a_system_rule_is_kept() -> None:
    accepted, _rejected = resolve([Instruction("system", "write", "deny")])
    assert accepted == {"write": "deny"}
'''
LOOPING = '''def test_loops_in_the_tester() -> None:
    while True:
        pass
'''
EXITING = '''import os


def test_ends_the_process() -> None:
    os._exit(0)
'''
FLOODING = '''def test_prints_too_much(capsys) -> None:
    with capsys.disabled():  # past pytest's capture, into the tester's own output
        print("x" * 200_000, flush=True)
    while True:  # until the judge stops it: the output limit is looked at before the CPU one
        pass
'''
BUSY = '''import time


def test_uses_most_of_one_allowance() -> None:
    started = time.process_time()
    while time.process_time() - started < 1.2:  # of 2 s for the file: two such files are over one allowance
        pass
'''
CLAIMING = '''from forgelab.judge import remote


def test_claims_the_next_file_has_begun() -> None:
    link = remote._POOL.current_host()
    for path in ("%s", "%s", "%s"):  # the next file, then itself again, then the next again
        link.event({"event": "file", "path": path})
    while True:
        pass
''' % (SECOND, FIRST, SECOND)


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> WorkbookCopy:
    return copy_with_reference_forge(tmp_path_factory.mktemp("together") / "workbook")


def _run(book: WorkbookCopy, folder: Path, first: str, second: str, together: bool,
         monkeypatch: pytest.MonkeyPatch) -> tuple[RunReport, list[list[str]]]:
    """Both files against the learner's forge and with the known-wrong module over it; the report and the command
    line of every tester started."""
    course, workbook = load_course(book.root), Workbook(book.root, book.root)
    files = []
    for shown, text in ((FIRST, first), (SECOND, second)):
        path = folder / "files" / shown
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        files.append(((path, shown),))
    forge = book.root / "forge"
    wrong = (forge, jobs.fault_variant(workbook, course.stage("01")))
    targets = [TargetSpec("mine", (forge,), "01"), TargetSpec("mine-second", (forge,), "01"),
               TargetSpec("wrong", wrong, "01"), TargetSpec("wrong-second", wrong, "01")]
    suites = [LearnerTests("mine", files[0]), LearnerTests("mine-second", files[1]),
              LearnerTests("wrong", files[0]), LearnerTests("wrong-second", files[1])]
    job = jobs.job(course, workbook, targets, [], suites)
    job = core.Job(job.course_root, job.starters, job.stage_modules, job.targets, (), job.learner_tests,
                   cache_dir=job.cache_dir, together=PAIRS if together else ())
    started: list[list[str]] = []
    (folder / "kept").mkdir()
    real = relay._Relay._start_tester

    def start(self: relay._Relay, link_in: int, link_out: int):  # type: ignore[no-untyped-def]
        kept = Path(tempfile.mkdtemp(dir=folder / "kept")) / "tester"  # two runs start testers at once
        shutil.copytree(self.tester_dir, kept)  # what the tester sees of its folder (the run removes its own)
        process = real(self, link_in, link_out)
        started.append([str(argument) for argument in process.args])
        return process

    monkeypatch.setattr(relay._Relay, "_start_tester", start)
    report = core.run(job, SETTINGS)
    monkeypatch.undo()
    return report, started


def _seen(report: RunReport) -> tuple[object, ...]:
    """Everything a verdict is made of, in an order that does not depend on which run finished first."""
    rows = sorted((row.target, row.nodeid, row.outcome.value, row.limit.value if row.limit else "", row.cause)
                  for row in report.rows)
    errors = sorted((error.target, error.file, error.cause) for error in report.collect_errors)
    return rows, errors, sorted(report.target_problems.items()), report.problem


def _both(book: WorkbookCopy, tmp_path: Path, first: str, second: str, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    alone, alone_started = _run(book, tmp_path / "alone", first, second, False, monkeypatch)
    shared, shared_started = _run(book, tmp_path / "together", first, second, True, monkeypatch)
    assert len(alone_started) == 4
    assert _seen(shared) == _seen(alone)
    return shared, shared_started


def _outcomes(report: RunReport, label: str) -> dict[str, tuple[Outcome, Limit | None]]:
    return {row.name: (row.outcome, row.limit) for row in report.for_target(label)}


def test_honest_files_get_the_same_rows_from_half_the_tester_starts(book: WorkbookCopy, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    report, started = _both(book, tmp_path, PASSING, PASSING.replace("test_a_system", "test_again_a_system"),
                            monkeypatch)
    assert len(started) == 2
    assert all(argv.count("--file") == 2 for argv in started)
    assert _outcomes(report, "mine") == {"test_a_system_rule_is_kept": (Outcome.PASSED, None)}
    assert _outcomes(report, "wrong-second") == {"test_again_a_system_rule_is_kept": (Outcome.PASSED, None)}


@pytest.mark.parametrize(("first", "limit"), [(LOOPING, Limit.CPU), (EXITING, Limit.CRASH), (FLOODING, Limit.OUTPUT)],
                         ids=["loop", "exit", "flood"])
def test_a_first_file_stopped_in_the_tester_spoils_only_itself(book: WorkbookCopy, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch, first: str,
                                                               limit: Limit) -> None:
    report, started = _both(book, tmp_path, first, PASSING, monkeypatch)
    assert len(started) == 4  # each pair's tester was stopped (or ended) in the first file: the second ran alone
    assert [argv.count("--file") for argv in started].count(2) == 2
    for label in ("mine", "wrong"):
        rows = report.for_target(label)
        assert rows and all(row.outcome is not Outcome.PASSED for row in rows), rows
        assert any(row.limit is limit for row in rows) or limit is Limit.CRASH, rows
        assert _outcomes(report, f"{label}-second") == {"test_a_system_rule_is_kept": (Outcome.PASSED, None)}


def test_a_test_stopped_before_its_start_was_read_is_still_the_one_named(book: WorkbookCopy, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The tester says a test begins, then the test floods its output. On a busy machine the judge's thread may look
    only once the flood is counted, with the test's start in hand but not yet taken: it takes what the tester said
    before the limit first, so the row names the test, as it does when the judge looks in time (one CI round in
    ten named no test: its report differed from the run alone). Here every such look is made late on purpose."""
    relays = threading.local()
    late: list[str] = []
    real_from_tester, real_next = relay._Relay._from_tester, relay.FrameReader.next

    def from_tester(self: relay._Relay, reader: relay.FrameReader) -> Any:
        relays.current = self
        return real_from_tester(self, reader)

    def next_frame(self: relay.FrameReader) -> Any:
        frame = real_next(self)
        looking = getattr(relays, "current", None)
        event = frame.get("event") if isinstance(frame, dict) and frame.get("op") == "event" else None
        if looking is not None and isinstance(event, dict) and event.get("event") == "start" \
                and "test_prints_too_much" in str(event.get("nodeid")):
            wait_until(lambda: looking.tester_output.flooded, timeout=120, what="the flood to be counted")
            looking.looked = 0.0  # the limits are looked at before this frame is taken
            late.append(str(event.get("nodeid")))
        return frame

    monkeypatch.setattr(relay._Relay, "_from_tester", from_tester)
    monkeypatch.setattr(relay.FrameReader, "next", next_frame)
    report, _started = _run(book, tmp_path, FLOODING, PASSING, True, monkeypatch)
    monkeypatch.undo()
    assert late == [f"{FIRST}::test_prints_too_much"] * 2  # both targets' testers were looked at late
    for label in ("mine", "wrong"):
        assert [(row.name, row.outcome, row.limit) for row in report.for_target(label)] == \
            [("test_prints_too_much", Outcome.TIMEOUT, Limit.OUTPUT)], report.for_target(label)
        assert _outcomes(report, f"{label}-second") == {"test_a_system_rule_is_kept": (Outcome.PASSED, None)}


def test_each_file_gets_its_own_cpu_allowance(book: WorkbookCopy, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    report, started = _both(book, tmp_path, BUSY, BUSY.replace("test_uses", "test_also_uses"), monkeypatch)
    assert len(started) == 2
    for label in ("mine", "mine-second", "wrong", "wrong-second"):
        assert [row.outcome for row in report.for_target(label)] == [Outcome.PASSED], report.for_target(label)


def test_a_claimed_next_file_gives_no_more_than_its_allowance(book: WorkbookCopy, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    report, started = _run(book, tmp_path, CLAIMING, PASSING, True, monkeypatch)
    # taken once and in order: the loop then used the second file's allowance (2 s) and was stopped there, not by
    # the tester's own hard limit (two allowances and 5 s)
    assert len(started) == 2
    for label in ("mine", "mine-second", "wrong", "wrong-second"):
        assert all(row.outcome is not Outcome.PASSED for row in report.for_target(label))
    assert "mine-second" in report.target_problems and "stopped" in report.target_problems["mine-second"]
    assert "more than 2 s of CPU time" in report.target_problems["mine-second"]
    assert _seen_without_targets(report, "mine") == _seen_without_targets(report, "wrong")


def _seen_without_targets(report: RunReport, prefix: str) -> tuple[object, ...]:
    rows = sorted((row.target.removeprefix(prefix), row.nodeid, row.outcome.value, row.cause) for row in report.rows
                  if row.target.startswith(prefix))
    return rows, sorted((label.removeprefix(prefix), problem) for label, problem in report.target_problems.items()
                        if label.startswith(prefix))


def test_both_targets_runs_start_the_same_tester_with_the_same_files(book: WorkbookCopy, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The run on the learner's forge and the one with the known-wrong module over it must look alike from inside."""
    _report, started = _run(book, tmp_path, PASSING, PASSING, True, monkeypatch)
    inside = [argv[argv.index(sys.executable):] for argv in started]  # the tester's own command line, in the sandbox
    assert len(inside) == 2 and inside[0] == inside[1]
    assert [inside[0][index + 1] for index, item in enumerate(inside[0]) if item == "--file"] == [FIRST, SECOND]
    folders = [sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))
               for folder in sorted((tmp_path / "kept").glob("*/tester"))]
    assert len(folders) == 2 and folders[0] == folders[1] and SECOND in folders[0]


def test_grading_pairs_a_stages_files_only_where_every_compared_run_looks_the_same(book: WorkbookCopy) -> None:
    course = load_course(book.root)
    stages = [course.stage("01"), course.stage("02")]
    reference, variant = (Path("starters"), Path("solutions")), Path("variant")
    targets, suites = [], []
    for stage in stages:
        number = stage.number
        for label, layers in ((f"transfer-{number}", reference), (f"regression-{number}", reference),
                              (f"known-wrong-{number}", (*reference, variant)),
                              (f"regression-broken-{number}", (*reference, variant))):
            targets.append(TargetSpec(label, layers, number, course_code=True))
            suites.append(LearnerTests(label, ((Path(label), label),)))
    assert grader._together(stages, targets, suites, set()) == (
        ("transfer-01", "regression-01"), ("known-wrong-01", "regression-broken-01"),
        ("transfer-02", "regression-02"), ("known-wrong-02", "regression-broken-02"))
    # stage 01's transfer test also runs on a mutant: its files stay alone there, so they stay alone everywhere
    assert grader._together(stages, targets, suites, {"01"}) == (
        ("transfer-02", "regression-02"), ("known-wrong-02", "regression-broken-02"))
    # a learner bundle with the lab handed in: the regression test runs on the lab, the transfer test on forge/
    moved = [TargetSpec(t.label, (Path("lab"),), t.stage, course_code=False) if t.label == "regression-02" else t
             for t in targets]
    assert grader._together(stages, moved, suites, set()) == (
        ("transfer-01", "regression-01"), ("known-wrong-01", "regression-broken-01"))


def test_a_first_file_that_cannot_be_collected_spoils_only_itself(book: WorkbookCopy, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    report, started = _both(book, tmp_path, "def test_broken(:\n    pass\n", PASSING, monkeypatch)
    assert len(started) == 2
    assert {error.target for error in report.collect_errors} == {"mine", "wrong"}
    for label in ("mine-second", "wrong-second"):
        assert _outcomes(report, label) == {"test_a_system_rule_is_kept": (Outcome.PASSED, None)}
