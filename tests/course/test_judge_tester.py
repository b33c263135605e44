"""The process that runs a learner's own test file (the tester) imports Hypothesis only when the file uses it, and
then with the judge's profile (no deadline, the same examples every run, no database) before any test runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import ROOT, wait_until
from grading_fixtures import MODULE

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.judge import core
from forgelab.judge.core import LearnerTests, TargetSpec
from forgelab.judge.outcomes import Outcome
from forgelab.judge.settings import DEFAULT, JudgeSettings
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


def _run_one(tmp_path: Path, source: str, *layers: Path,
             settings: JudgeSettings = DEFAULT) -> dict[str, tuple[Outcome, str]]:
    test_file = tmp_path / "test_01_mine.py"
    test_file.write_text(source, encoding="utf-8")
    starters = jobs.starters(Workbook(ROOT, ROOT))
    target = TargetSpec("transfer-01", (starters / "forge", ROOT / "solutions" / "forge", *layers), "01", (MODULE,))
    job = core.Job(ROOT, starters, jobs.stage_modules(load_course(ROOT)), (target,),
                   learner_tests=(LearnerTests("transfer-01", ((test_file, "transfer/test_01_mine.py"),)),))
    report = core.run(job, settings)
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



FLOODING_HOST = '''

import sys as _sys

_resolve_quietly = resolve


def resolve(instructions):  # prints PRINTED_KB KB, then answers at once
    _sys.stdout.write("F" * (PRINTED_KB * 1024))
    _sys.stdout.flush()
    return _resolve_quietly(instructions)
'''


def _flooding_layer(tmp_path: Path, printed_kb: int) -> Path:
    layer = tmp_path / "layer" / "instructions.py"
    layer.parent.mkdir()
    layer.write_text((ROOT / "solutions" / MODULE).read_text(encoding="utf-8")
                     + FLOODING_HOST.replace("PRINTED_KB", str(printed_kb)), encoding="utf-8")
    return layer.parent


def test_a_flood_printed_within_one_wait_of_the_judge_is_over_the_output_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """100 MB through a pipe can take less than one of the judge's waits: the answer that follows it was taken as
    it came, the limit was looked at only between waits, and the flood went unnamed (the hostile batch's flood was
    graded as the honest control in one fresh-clone run). Here every wait lasts until something arrives."""
    import select

    from forgelab.judge.watchdog import Watchdog

    def wait(self: Watchdog, *, read: int | None = None, write: int | None = None) -> bool:
        ready = select.select([read] if read is not None else [], [write] if write is not None else [], [], 60)
        return bool(ready[0] or ready[1])

    monkeypatch.setattr(Watchdog, "wait", wait)
    rows = _run_one(tmp_path, ANSWERED, _flooding_layer(tmp_path, 100 * 1024))
    [(outcome, cause)] = rows.values()
    assert outcome is Outcome.TIMEOUT and "printed more than 4096 KB" in cause, (outcome, cause)


def test_what_was_printed_before_the_answer_counts_however_late_it_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """16 KB over the limit, the last of it still in the pipe when the answer arrives, because the thread that reads
    the pipe has not run yet (here it sleeps before every read): it is counted before the answer is taken."""
    import time

    from forgelab.judge import printed

    real = printed.select.select

    class LateReader:
        @staticmethod
        def select(*args: object) -> object:
            time.sleep(0.3)
            return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(printed, "select", LateReader)
    settings = DEFAULT.with_(output_kb=64)
    rows = _run_one(tmp_path, ANSWERED, _flooding_layer(tmp_path, 64 + 16), settings=settings)
    [(outcome, cause)] = rows.values()
    assert outcome is Outcome.TIMEOUT and "printed more than 64 KB" in cause, (outcome, cause)


# ---------------------------------------------------------------- a run stops its own processes, and only them

SLOW_PASS = '''import time

from forge.instructions import Instruction, resolve


def test_slow_but_right():
    time.sleep(3)  # another run fails meanwhile
    accepted, _rejected = resolve([Instruction("system", "write", "deny")])
    assert accepted == {"write": "deny"}
'''
LONGER_THAN_ABANDON_WAITS = '''import time


def test_outlasts_the_wait():
    time.sleep(120)
'''


def _job(tmp_path: Path, name: str, source: str) -> core.Job:
    test_file = tmp_path / name / "test_01_mine.py"
    test_file.parent.mkdir()
    test_file.write_text(source, encoding="utf-8")
    starters = jobs.starters(Workbook(ROOT, ROOT))
    target = TargetSpec("transfer-01", (starters / "forge", ROOT / "solutions" / "forge"), "01", (MODULE,))
    return core.Job(ROOT, starters, jobs.stage_modules(load_course(ROOT)), (target,),
                    learner_tests=(LearnerTests("transfer-01", ((test_file, "transfer/test_01_mine.py"),)),))


def test_a_run_that_fails_ends_its_own_processes_and_not_those_of_a_run_beside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`forgelab grade --jobs 2` judges two submissions on threads of one process: when one run fails (a grader
    failure), the other's tester must go on — before, the failing run killed every process the grader had started,
    and the other learner's test, stopped mid-way, was blamed."""
    import contextvars
    import threading

    from forgelab.judge import channel

    def testers() -> list[object]:
        with channel._LIVE_LOCK:
            return [p for p in channel._LIVE if "_judge_tester.py" in " ".join(map(str, p.args))]

    real = core._learner_file

    def learner_file(label: str, test_file: Path, *args: object) -> object:
        if test_file.parent.name == "broken":  # this run's grader breaks once the other run's tester is running
            # from then on, ending every process the grader started would stop the other learner's test (3 s long)
            wait_until(lambda: testers() or None, timeout=120, what="the other run's tester to start")
            raise RuntimeError("the grader broke on this submission")
        return real(label, test_file, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(core, "_learner_file", learner_file)
    results: dict[str, object] = {}

    def judge_the_other() -> None:
        results["report"] = core.run(_job(tmp_path, "honest", SLOW_PASS), DEFAULT)

    other = threading.Thread(target=contextvars.copy_context().run, args=(judge_the_other,))
    other.start()
    with pytest.raises(RuntimeError, match="the grader broke"):
        core.run(_job(tmp_path, "broken", SLOW_PASS), DEFAULT)
    other.join(timeout=120)
    report = results["report"]
    assert isinstance(report, core.RunReport) and not report.target_problems, report
    assert {row.nodeid: (row.outcome, row.cause) for row in report.rows} == {
        "transfer/test_01_mine.py::test_slow_but_right": (Outcome.PASSED, "")}


def test_a_run_abandoned_before_its_tester_started_ends_at_once_and_leaves_no_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in `forgelab check` can come while the run is still laying out a tester's folder: the tester it starts
    after that is ended as it starts. Before, it ran its test to the end (here two minutes), the command gave up
    waiting after 60 s and left the run's folder behind."""
    import tempfile
    import time

    from forgelab.learner.checkjob import PendingRun

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    pending = PendingRun(_job(tmp_path, "slow", LONGER_THAN_ABANDON_WAITS), DEFAULT)
    began = time.monotonic()
    pending.abandon()
    assert pending._done.is_set(), f"the run still goes on {time.monotonic() - began:.0f} s after Ctrl-C"
    assert list(scratch.iterdir()) == []


CTRL_C_WHILE_WAITING = r'''
import json, os, signal, sys, tempfile, threading, time
from pathlib import Path

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.judge import core
from forgelab.judge.core import LearnerTests, TargetSpec
from forgelab.judge.settings import DEFAULT, JudgeSettings
from forgelab.learner.checkjob import PendingRun
from forgelab.verdicts import jobs

root, test_file = Path(sys.argv[1]), Path(sys.argv[2])
starters = jobs.starters(Workbook(root, root))
target = TargetSpec("transfer-01", (starters / "forge", root / "solutions" / "forge"), "01", ("forge/instructions.py",))
job = core.Job(root, starters, jobs.stage_modules(load_course(root)), (target,),
               learner_tests=(LearnerTests("transfer-01", ((test_file, "transfer/test_01_mine.py"),)),))
pending = PendingRun(job, DEFAULT)


def waiting_for_the_report() -> bool:
    """Whether the main thread is inside PendingRun.result, blocked on the run's end."""
    frame = sys._current_frames().get(threading.main_thread().ident)
    names = []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return "result" in names and names[0] == "wait"


def ctrl_c() -> None:  # once the command waits for the report (it does nothing else here)
    pending._started.wait()
    deadline = time.monotonic() + 120
    while not waiting_for_the_report():  # a condition, asked again every 10 ms
        if time.monotonic() > deadline:
            print("the command never waited for its report", file=sys.stderr)
            os._exit(3)
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGINT)


threading.Thread(target=ctrl_c, daemon=True).start()
try:
    pending.result()
except KeyboardInterrupt:
    pass
print(json.dumps({"left": sorted(os.listdir(tempfile.gettempdir()))}))
'''


def test_ctrl_c_while_check_waits_for_its_report_ends_the_run_before_the_command_ends(tmp_path: Path) -> None:
    """In Python 3.11 an interrupted Thread.join marks the still running thread as ended, so a second join returned at
    once: `forgelab check` said "interrupted" and ended while its run went on, and the run's folder stayed behind
    (seen in a learner bundle: Ctrl-C a second into a check, 7 times of 7). The run's end is an event of its own now."""
    import json
    import subprocess
    import sys

    test_file = tmp_path / "test_01_mine.py"
    test_file.write_text(LONGER_THAN_ABANDON_WAITS, encoding="utf-8")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = subprocess.run([sys.executable, "-c", CTRL_C_WHILE_WAITING, str(ROOT), str(test_file)], cwd=ROOT,
                          env={**os.environ, "TMPDIR": str(scratch)}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"left": []}


def test_the_testers_copy_of_forgelab_holds_every_module_those_modules_import() -> None:
    """The tester's sandbox has only TESTER_MODULES of forgelab: a module they import and the list forgets fails
    every learner's transfer test with ModuleNotFoundError, as the judge's, not the learner's, fault."""
    import ast

    from forgelab.judge.relay import TESTER_MODULES

    package = ROOT / "forgelab"

    def file_of(module: str) -> str:
        path = package.joinpath(*module.split(".")[1:])
        return (path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).relative_to(package).as_posix()

    missing = set()
    for relative in TESTER_MODULES:
        for node in ast.walk(ast.parse((package / relative).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "forgelab":
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names if alias.name.split(".")[0] == "forgelab"]
            else:
                continue
            missing |= {(relative, file_of(name)) for name in names
                        if (package / file_of(name)).is_file() and file_of(name) not in TESTER_MODULES}
    assert not missing
