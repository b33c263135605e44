"""The process that runs a learner's own test file (the tester) imports Hypothesis only when the file uses it, and
then with the judge's profile (no deadline, the same examples every run, no database) before any test runs."""

from __future__ import annotations

import os
import shutil
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
    folder = relay.tester_folder(template, tmp_path / "tester", [(learner, "transfer/test_01_mine.py")])
    assert (folder / "transfer" / "test_01_mine.py").read_text(encoding="utf-8") == learner.read_text(encoding="utf-8")
    assert (folder / "forge.py").read_text(encoding="utf-8") == "shared = 1\n"
    assert (template / "transfer" / "test_01_mine.py").read_text(encoding="utf-8") == "# the template's own\n"


LOOKS_AROUND = """import hashlib
import os


def test_what_the_folder_holds():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    seen = []
    for folder, folders, files in os.walk(root):
        folders.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                seen.append(f"{os.path.relpath(path, root)} {hashlib.sha256(handle.read()).hexdigest()[:12]}")
    assert False, f"{len(seen)} files: " + hashlib.sha256("\\n".join(seen).encode()).hexdigest()
"""


def test_a_sandboxed_tester_sees_the_same_folder_whether_the_template_is_bound_over_it_or_linked_into_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from forgelab.judge import relay
    from forgelab.judge.sandbox import isolation

    if not isolation("auto").sandboxed:
        pytest.skip("needs the sandbox")
    test_file = tmp_path / "test_01_mine.py"
    test_file.write_text(LOOKS_AROUND, encoding="utf-8")
    starters = jobs.starters(Workbook(ROOT, ROOT))
    target = TargetSpec("transfer-01", (starters / "forge", ROOT / "solutions" / "forge"))
    job = core.Job(ROOT, starters, jobs.stage_modules(load_course(ROOT)), (target,),
                   learner_tests=(LearnerTests("transfer-01", ((test_file, "transfer/test_01_mine.py"),)),))
    made: list[Path] = []
    folder_of = relay.tester_folder

    def kept(template: Path, into: Path, files: list[tuple[Path, str]], mounted: bool = False) -> Path:
        made.append(folder_of(template, into, files, mounted))
        return made[-1]

    def seen() -> str:
        report = core.run(job, DEFAULT, remove_later=True)
        assert report.problem is None and [row.outcome for row in report.rows] == [Outcome.FAILED], report
        return report.rows[0].cause

    monkeypatch.setattr(relay, "tester_folder", kept)
    from forgelab.judge import removal

    runs: list[Path] = []
    monkeypatch.setattr(removal, "remove_soon", runs.append)  # removed below, once their folders are counted
    bound = seen()
    on_disk = sum(len(files) for _root, _folders, files in os.walk(made[-1]))
    monkeypatch.setattr(relay, "tester_folder", lambda template, into, files, mounted=False: kept(template, into,
                                                                                                     files, False))
    run_files = relay.run_files
    monkeypatch.setattr(relay, "run_files", lambda *args, **kwargs: run_files(*args[:8]))  # no template to bind
    linked = seen()
    in_copy = sum(len(files) for _root, _folders, files in os.walk(made[-1]))
    for folder in runs:
        shutil.rmtree(folder)
    assert bound == linked and " files: " in bound
    assert int(bound.split(" files: ")[0].split()[-1]) == in_copy > 20  # the tester sees the template's files either way
    assert on_disk == 3  # the bound folder itself: the test file and the template's two files' mount points


# ---------------------------------------------------------------- the last word of a process that ends

LATE_FAILURE = '''from forge.instructions import Instruction, resolve


def test_wrong_on_purpose():
    accepted, _rejected = resolve([Instruction("system", "write", "deny")])
    assert accepted["write"] == "allow"  # its report and the run's end follow while the judge is not looking
'''
EXITING_HOST = '''

import os as _os
import sys as _sys

_resolve = resolve


def resolve(instructions):  # answers, then its process ends: its next read of the judge's requests finds them closed
    _quiet = _os.open(_os.devnull, _os.O_RDONLY)
    _os.dup2(_quiet, int(_sys.argv[_sys.argv.index("--in") + 1]))
    return _resolve(instructions)
'''
ANSWERED = '''from forge.instructions import Instruction, resolve


def test_answered_before_it_ended():
    accepted, _rejected = resolve([Instruction("system", "write", "deny")])
    assert accepted == {"write": "deny"}
'''


class _LooksAway:
    """Stages "the judge's wait timed out, and meanwhile the process it waits on wrote its last frames and ended" by
    a condition, not by time (as a busy machine can: the judge's thread does not run while the process finishes).

    :meth:`arm` a watchdog: its next wait to read does not look at the descriptor; it returns, as a wait that timed
    out does (False), once the watched process has ended. Every other wait is the judge's own."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from forgelab.judge.watchdog import Watchdog

        self.armed: list[Watchdog] = []
        self.looked_away = 0
        real = Watchdog.wait

        def wait(watchdog: Watchdog, *, read: int | None = None, write: int | None = None) -> bool:
            if read is not None and any(item is watchdog for item in self.armed):
                self.armed = [item for item in self.armed if item is not watchdog]
                assert watchdog.process is not None
                watchdog.process.wait(timeout=120)  # the process finishes; the judge's thread is not running
                self.looked_away += 1
                return False
            return real(watchdog, read=read, write=write)

        monkeypatch.setattr(Watchdog, "wait", wait)

    def arm(self, watchdog: object) -> None:
        from forgelab.judge.watchdog import Watchdog

        assert isinstance(watchdog, Watchdog)
        self.armed.append(watchdog)


def _resolving(frame: dict[str, object]) -> bool:
    return frame.get("op") == "call" and str(frame.get("target", "")).endswith(":resolve")


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
    learner's transfer test in a busy grading run). Staged: once the tester has its answer, the judge's next wait
    for it returns only after the tester has ended."""
    from forgelab.judge import relay

    looks_away = _LooksAway(monkeypatch)
    real = relay._Relay._to_host

    def to_host(self: relay._Relay, frame: dict[str, object]) -> dict[str, object] | None:
        reply = real(self, frame)
        if _resolving(frame):
            looks_away.arm(self.watchdog)
        return reply

    monkeypatch.setattr(relay._Relay, "_to_host", to_host)
    rows = _run_one(tmp_path, LATE_FAILURE)
    assert rows == {"transfer/test_01_mine.py::test_wrong_on_purpose": (Outcome.FAILED,
                                                                       "AssertionError: assert 'deny' == 'allow'")}
    assert looks_away.looked_away == 1, "the race was not staged"


def test_an_answer_written_just_before_the_learners_process_ends_is_read(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The learner's process answers and then ends while the judge is not looking: the answer counts, the end does
    not make the call a crash. Staged: once the call is sent, the judge's next wait for the answer returns only after
    the learner's process has ended."""
    from forgelab.judge import channel

    layer = tmp_path / "layer" / "instructions.py"
    layer.parent.mkdir()
    layer.write_text((ROOT / "solutions" / MODULE).read_text(encoding="utf-8") + EXITING_HOST, encoding="utf-8")
    looks_away = _LooksAway(monkeypatch)
    real = channel.Host.relay

    def relay(self: channel.Host, message: dict[str, object], deadline: float | None = None) -> dict[str, object]:
        if _resolving(message):
            looks_away.arm(self._watchdog)
        return real(self, message, deadline)

    monkeypatch.setattr(channel.Host, "relay", relay)
    rows = _run_one(tmp_path, ANSWERED, layer.parent)
    assert rows == {"transfer/test_01_mine.py::test_answered_before_it_ended": (Outcome.PASSED, "")}
    assert looks_away.looked_away == 1, "the race was not staged"


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
    the pipe has not run yet: it is counted before the answer is taken. Staged by conditions, not by time: the
    threads that read the learner's process's pipes read only while a pipe is full (the process is blocked on it) or
    once the judge has asked for what is still in the pipes."""
    import fcntl
    import threading

    from forgelab.judge import channel, printed

    gated: dict[int, Gated] = {}  # descriptor -> the output it is read into
    asked_at: list[int] = []  # the bytes counted when the judge first asked for what was still in the pipes

    class Gated(printed.PrintedOutput):
        def __init__(self, cap: int) -> None:
            super().__init__(cap)
            self.asked = threading.Event()

        def read(self, fd: int) -> threading.Thread:
            gated[fd] = self
            return super().read(fd)

        def settle(self, timeout_s: float = printed.SETTLE_S) -> None:
            with self._changed:
                waiting = any(printed._unread(fd) for fd in self._open)
            if waiting and not self.asked.is_set():
                asked_at.append(self.printed)
                self.asked.set()
            super().settle(timeout_s)

    def full(fd: int) -> bool:
        return printed._unread(fd) >= fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)

    real = printed.select.select

    class LateReader:
        @staticmethod
        def select(read: list[int], *rest: object) -> object:
            output = gated.get(read[0])
            if output is not None and not output.asked.is_set():
                if printed._unread(read[0]) == 0:
                    real(read, *rest)  # type: ignore[arg-type]  # until something arrives, or the writers are gone
                if printed._unread(read[0]):
                    wait_until(lambda: output.asked.is_set() or full(read[0]), timeout=60,
                               what="a full pipe or the judge asking for what is in it")
            return real(read, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(channel, "PrintedOutput", Gated)
    monkeypatch.setattr(printed, "select", LateReader)
    settings = DEFAULT.with_(output_kb=64)
    rows = _run_one(tmp_path, ANSWERED, _flooding_layer(tmp_path, 64 + 16), settings=settings)
    [(outcome, cause)] = rows.values()
    assert outcome is Outcome.TIMEOUT and "printed more than 64 KB" in cause, (outcome, cause)
    assert asked_at and asked_at[0] < (64 + 16) * 1024, f"the race was not staged: {asked_at}"


# ---------------------------------------------------------------- a run stops its own processes, and only them

SLOW_PASS = '''from forge.instructions import Instruction, resolve


def test_slow_but_right():  # another run fails while this test waits for its answer
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

    from forgelab.judge import relay

    mid_test, failed = threading.Event(), threading.Event()  # the other learner's test waits for its answer; we failed
    real_to_host, real_learner_files = relay._Relay._to_host, core._learner_files

    def to_host(self: relay._Relay, frame: dict[str, object]) -> dict[str, object] | None:
        if _resolving(frame):  # only the honest run gets this far: its test waits here until the other run failed
            mid_test.set()
            assert failed.wait(timeout=120), "the broken run never failed"
        return real_to_host(self, frame)

    def learner_files(unit: list[core._LearnerFile], *args: object) -> object:
        if unit[0].test_file.parent.name == "broken":  # this run's grader breaks while the other learner's test runs
            assert mid_test.wait(timeout=120), "the other run's test never started"
            raise RuntimeError("the grader broke on this submission")
        return real_learner_files(unit, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(relay._Relay, "_to_host", to_host)
    monkeypatch.setattr(core, "_learner_files", learner_files)
    results: dict[str, object] = {}

    def judge_the_other() -> None:
        results["report"] = core.run(_job(tmp_path, "honest", SLOW_PASS), DEFAULT)

    other = threading.Thread(target=contextvars.copy_context().run, args=(judge_the_other,))
    other.start()
    try:
        with pytest.raises(RuntimeError, match="the grader broke"):
            core.run(_job(tmp_path, "broken", SLOW_PASS), DEFAULT)
    finally:
        failed.set()  # the broken run has ended (and stopped what it stopped): the other test gets its answer now
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
import json, os, signal, sys, tempfile, threading
from pathlib import Path

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.judge import core
from forgelab.judge.core import LearnerTests, TargetSpec
from forgelab.judge.settings import DEFAULT, JudgeSettings
from forgelab.learner.checkjob import PendingRun
from forgelab.verdicts import jobs

root, test_file = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, str(root / "tests" / "course"))
from conftest import wait_until  # the tests' one wait helper
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
    try:
        wait_until(waiting_for_the_report, timeout=120, what="the command to wait for its report", every=0.01)
    except AssertionError as never:
        print(never, file=sys.stderr)
        os._exit(3)
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


REMOVAL_CUT_SHORT = '''import atexit, sys, tempfile, threading
from pathlib import Path
sys.path.insert(0, {tests!r})
from grading_fixtures import MODULE
from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.judge import core, removal
from forgelab.judge.core import TargetSpec
from forgelab.judge.settings import DEFAULT
from forgelab.verdicts import jobs

root = Path({root!r})
tempfile.tempdir = {scratch!r}
starters = jobs.starters(Workbook(root, root))
target = TargetSpec("transfer-01", (starters / "forge", root / "solutions" / "forge"), "01", (MODULE,))
job = core.Job(root, starters, jobs.stage_modules(load_course(root)), (target,))  # nothing to test: a quick run
never = threading.Event()
removing = removal._remove
removal._remove = lambda folder: never.wait()  # the removing thread is still at work when the process ends
done = threading.Event()
threading.Thread(target=lambda: (core.run(job, DEFAULT, remove_later=True), done.set()), daemon=True).start()
assert done.wait(120), "the run did not end"
removal._remove = removing
assert [p.name[:15] for p in Path({scratch!r}).iterdir()] == ["forgelab-judge-"], "the run's folder is not there"
if {unregister!r}:
    atexit.unregister(removal.remove_pending)
raise KeyboardInterrupt  # Ctrl-C, or a closed terminal in watch mode, ends the process
'''


@pytest.mark.parametrize("at_exit", [True, False], ids=["removed-at-exit", "left-without-the-exit-handler"])
def test_a_run_folder_whose_removal_is_cut_short_by_the_end_of_the_process_is_removed_at_exit(
        tmp_path: Path, at_exit: bool) -> None:
    """Watch mode and the notebook's re-check run the judge on daemon threads and remove a run's folder on a thread
    of its own after the verdict. The interpreter does not wait for that thread at exit; Ctrl-C in `forgelab watch`
    during a removal left the judge's folder in the temporary folder (seen once in a CI round beside two busy
    loops). What the thread has not finished is removed at exit; without that handler the same run leaves its
    folder, which shows this test can fail."""
    import subprocess
    import sys

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    script = REMOVAL_CUT_SHORT.format(tests=str(Path(__file__).parent), root=str(ROOT), scratch=str(scratch),
                                      unregister=not at_exit)
    ended = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert "KeyboardInterrupt" in ended.stderr and "AssertionError" not in ended.stderr, ended.stderr
    left = [p.name[:15] for p in scratch.iterdir()]
    assert left == ([] if at_exit else ["forgelab-judge-"])


def test_targets_laid_from_the_same_folders_share_one_code_folder(tmp_path: Path) -> None:
    """A run makes one code folder per distinct layering (a graded submission's eleven stage targets, and the
    reference its transfer tests run on, were each eleven copies of one folder); a target laid otherwise gets its
    own, with its own files."""
    from concurrent.futures import ThreadPoolExecutor

    learner, fault = tmp_path / "learner", tmp_path / "fault"
    for folder, text in ((learner, "A = 1\n"), (fault, "A = 2\n")):
        folder.mkdir()
        (folder / "m.py").write_text(text, encoding="utf-8")
    folders = core._CodeFolders(tmp_path / "targets")
    stages = [TargetSpec(f"sub-{n:02d}", (learner,), f"{n:02d}") for n in range(1, 12)]
    lab = TargetSpec("lab-01", (learner, fault), "01")
    with ThreadPoolExecutor(max_workers=4) as pool:  # the learner's tests' runs ask for theirs from their threads
        made = list(pool.map(folders.of, [*stages, lab, *stages]))
    assert len(set(made)) == 2 and made[-1] == made[0] != made[11]
    assert (made[0] / "forge" / "m.py").read_text(encoding="utf-8") == "A = 1\n"
    assert (made[11] / "forge" / "m.py").read_text(encoding="utf-8") == "A = 2\n"
    assert sorted(path.name[:4] for path in (tmp_path / "targets").iterdir()) == ["lab-", "sub-"]  # whichever came first
