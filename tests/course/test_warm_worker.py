"""The warm worker (forgelab/judge/warm.py) gives the verdict of a cold `check`, only sooner.

One copy of the workbook and one warm worker serve the whole module. Each case plants a stage 01 module in
``forge/`` — the reference (honest), the reference with the same-rank mistake (wrong), and that mistake with
one of the grading suite's attacks appended (fork bomb, writes outside the sandbox, a patched pytest) — and
judges it twice in this process: as ``forgelab check`` does (a new session process) and as watch mode does
(a session forked from the worker). Every test's outcome and cause must be the same, an attack must gain
nothing over the plain mistake, leave no file and no process, and one run must leave nothing for the next.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest
from conftest import copy_workbook, wait_until
from grading_fixtures import MODULE, SAME_RANK_FIND, SAME_RANK_LAST_WINS
from hostile_submissions import (FORK_BOMB, MARKERS, PRELUDE, REPORT_PATCH, HostileContext, markers_nearby,
                                 processes_with)

from forgelab.core import i18n
from forgelab.core.paths import Workbook
from forgelab.core.registry import Stage, load_course
from forgelab.judge.outcomes import Limit
from forgelab.judge import warm as warm_module
from forgelab.judge.pytest_private import PROG, excludes_a_plugin, pytest11_names, skip_absent_entry_points
from forgelab.judge.warm import (Ended, Ready, Refused, RunRequest, Started, WarmProtocolError, WarmUnavailable,
                                 WarmWorker, encode, host_spec, read_reply, read_request)
from forgelab.learner.check import TESTS, CheckOutcome
from forgelab.learner.watch import Keys, Watch
from forgelab.learner.workbench import Workbench

SAME_RANK_TEST = "test_same_rank_conflict_keeps_the_earlier_instruction"
ATTACKS = {"fork-bomb": FORK_BOMB, "markers": MARKERS, "report-patch": REPORT_PATCH}

# A module that remembers, in its working folder and in /tmp, that it ran before, and answers wrong when it
# finds such a note: a second run that sees the first one's files fails where the first passed.
LEFTOVER = '''

# ======== leaves a note for the next run, and answers wrong when it finds one ========
import os as _os

_NOTES = [_os.path.join(_os.getcwd(), "ran-before-{token}"), "/tmp/ran-before-{token}"]
_SEEN_BEFORE = any(_os.path.exists(note) for note in _NOTES)
for _note in _NOTES:
    try:
        with open(_note, "w") as _handle:
            _handle.write("x")
    except OSError:
        pass
if _SEEN_BEFORE:
    RANK = {{source: 0 for source in RANK}}
'''


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Workbench:
    root = copy_workbook(tmp_path_factory.mktemp("warm") / "workbook").root
    return Workbench(Workbook(root=root, workspace=root), load_course(root))


@pytest.fixture(scope="module")
def warm() -> Iterator[WarmWorker]:
    with WarmWorker.start() as worker:
        yield worker


@pytest.fixture(scope="module")
def reference(bench: Workbench) -> str:
    return (bench.workbook.root / "solutions" / MODULE).read_text(encoding="utf-8")


def stage_01(bench: Workbench) -> Stage:
    return next(stage for stage in bench.course.stages if stage.number == "01")


def verdict(outcome: CheckOutcome) -> dict[str, object]:
    """What a check decides: acceptance, the import problem, and each test's outcome and cause (the stage's
    other parts — transfer test, fault lab, design answer — are not written in this workbook: never accepted)."""
    return {"accepted": outcome.accepted, "passed": all(row.outcome.value == "passed" for row in outcome.tests),
            "import_problem": outcome.import_problem.cause if outcome.import_problem else None,
            "tests": {row.name: (row.outcome.value, row.cause) for row in outcome.tests},
            "problem": outcome.report.problem if outcome.report else None}


def both(bench: Workbench, warm: WarmWorker, module: str) -> tuple[dict[str, object], dict[str, object]]:
    """The cold and the warm verdict on ``module`` planted in forge/ (no evidence written)."""
    (bench.workbook.root / MODULE).write_text(module, encoding="utf-8")
    stage = stage_01(bench)
    cold = bench.check(stage, write=False)
    hot = bench.check(stage, write=False, warm=warm)
    return verdict(cold), verdict(hot)


def test_the_reference_is_accepted_warm_as_cold(bench: Workbench, warm: WarmWorker, reference: str) -> None:
    cold, hot = both(bench, warm, reference)
    assert cold["passed"] is True, cold
    assert hot == cold


def test_a_wrong_module_fails_the_same_test_with_the_same_difference(bench: Workbench, warm: WarmWorker,
                                                                      reference: str) -> None:
    cold, hot = both(bench, warm, reference.replace(SAME_RANK_FIND, SAME_RANK_LAST_WINS))
    assert cold["passed"] is False
    tests = cold["tests"]
    assert isinstance(tests, dict) and tests[SAME_RANK_TEST][0] == "failed", tests
    assert hot == cold


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_hostile_module_gains_nothing_warm(bench: Workbench, warm: WarmWorker, reference: str, attack: str,
                                             tmp_path: Path) -> None:
    context = HostileContext(uuid.uuid4().hex[:12], str(bench.workbook.root), str(tmp_path), str(tmp_path),
                             str(bench.workbook.root), 1, str(tmp_path / "no.sock"), "forgelab-none")
    wrong = reference.replace(SAME_RANK_FIND, SAME_RANK_LAST_WINS)
    prelude = PRELUDE.format(attack=attack, context=json.dumps(asdict(context)), mark=context.marker(attack))
    cold, hot = both(bench, warm, wrong + prelude + ATTACKS[attack])
    assert hot["passed"] is False
    hot_tests, cold_tests = hot["tests"], cold["tests"]
    assert isinstance(hot_tests, dict) and isinstance(cold_tests, dict)
    assert hot_tests[SAME_RANK_TEST][0] != "passed", hot_tests  # the same mistake, still caught
    assert {name: row[0] for name, row in hot_tests.items()} == {name: row[0] for name, row in cold_tests.items()}
    assert markers_nearby(context) == []
    assert processes_with(context.token) == []
    assert warm.alive  # the attack could not reach the worker either


def test_one_run_leaves_nothing_for_the_next(bench: Workbench, warm: WarmWorker, reference: str) -> None:
    module = reference + LEFTOVER.format(token=uuid.uuid4().hex[:12])
    first, second = both(bench, warm, module)  # the cold run went first: the warm one must not see its notes
    third = verdict(bench.check(stage_01(bench), write=False, warm=warm))
    assert first["passed"] is True, first
    assert second == first
    assert third == first


@pytest.mark.parametrize("ending", ["import os as _os\n_os._exit(3)\n", "raise SystemExit(4)\n",
                                    "import signal as _signal, os as _os\n_os.kill(_os.getpid(), _signal.SIGKILL)\n"])
def test_a_module_that_ends_its_process_as_it_is_imported_is_told_the_same_warm_and_cold(
        bench: Workbench, warm: WarmWorker, reference: str, ending: str) -> None:
    """The waiting host is asked to import the saved module before the session starts; when the import ends the
    process, the session's handshake still reads what it said and tells why, as a cold check does."""
    cold, hot = both(bench, warm, reference + "\n" + ending)
    assert cold["import_problem"], cold
    assert hot == cold


def test_each_run_is_a_new_process_and_a_stopped_run_ends_with_all_it_started(tmp_path: Path) -> None:
    """The worker itself: a fresh pid per run, the run's own environment and folder, and the wall limit."""
    (tmp_path / "test_probe.py").write_text(
        "import os, time\n\n"
        "def test_where():\n"
        "    print('PID', os.getpid(), os.getcwd(), os.environ.get('PROBE'))\n\n"
        "def test_sleeps():\n"
        "    if os.environ.get('PROBE') == 'sleep':\n"
        "        time.sleep(300)\n", encoding="utf-8")
    args = ["-p", "no:cacheprovider", "-q", "-s", str(tmp_path / "test_probe.py")]
    with WarmWorker.start() as worker:
        seen = []
        for _run in range(2):
            done = worker.run(args, cwd=tmp_path, env={"PROBE": "here", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, wall_s=120, output_kb=64)
            assert done is not None and done.returncode == 0, done
            line = next(line for line in done.output.splitlines() if line.startswith("PID"))
            seen.append(line.split()[1])
            assert line.split()[2:] == [str(tmp_path), "here"]
        assert seen[0] != seen[1]
        started = time.monotonic()
        stopped = worker.run(args, cwd=tmp_path, env={"PROBE": "sleep", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, wall_s=3, output_kb=64)
        assert stopped is not None and stopped.limit is Limit.WALL and stopped.returncode is None
        assert time.monotonic() - started < 60
        assert worker.alive
        pid = worker._process.pid
    assert not worker.alive
    with pytest.raises(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)


def test_watch_says_in_one_line_when_the_worker_cannot_start(bench: Workbench, monkeypatch: pytest.MonkeyPatch) -> None:
    """Watch mode then judges every save with a cold session: one line says so, nothing else changes."""
    def cannot_start(cls: type[WarmWorker], timeout_s: float = 0) -> WarmWorker:
        raise WarmUnavailable("the warm worker could not start (no fork here)")

    monkeypatch.setattr(WarmWorker, "start", classmethod(cannot_start))
    out = io.StringIO()
    watch = Watch(bench, stage_01(bench), out=out, keys=Keys(io.StringIO()))
    with i18n.speaking("en"), watch.warm_worker() as worker:
        assert worker is None
    assert out.getvalue().splitlines() == [
        "the warm worker could not start (no fork here): every save runs a whole cold check instead "
        "(the same verdict, only later)"]


def test_the_watchdog_holds_a_forked_session_to_its_cpu_and_output_limits(tmp_path: Path) -> None:
    """The same limits as a cold session (starters.run_watched), by the same watchdog: CPU of the whole tree, output."""
    (tmp_path / "test_greedy.py").write_text(
        "import os, subprocess, sys\n\n"
        "def test_greedy():\n"
        "    if os.environ.get('PROBE') == 'cpu':\n"
        "        subprocess.run([sys.executable, '-c', 'while True: pass', os.getcwd()])\n"
        "    while True:\n"
        "        print('x' * 10000)\n", encoding="utf-8")
    args = ["-p", "no:cacheprovider", "-q", "-s", str(tmp_path / "test_greedy.py")]
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    with WarmWorker.start() as worker:
        cpu = worker.run(args, cwd=tmp_path, env={**env, "PROBE": "cpu"}, cpu_s=1.0, wall_s=120, output_kb=64)
        assert cpu is not None and cpu.limit is Limit.CPU and cpu.returncode is None, cpu
        flood = worker.run(args, cwd=tmp_path, env={**env, "PROBE": "print"}, wall_s=120, output_kb=64)
        assert flood is not None and flood.limit is Limit.OUTPUT and flood.returncode is None
        assert len(flood.output.encode()) <= 64 * 1024
        assert worker.alive and processes_with(str(tmp_path)) == []


def test_every_message_is_one_model_and_a_malformed_one_is_told_what_is_wrong(tmp_path: Path) -> None:
    request = RunRequest(args=["-q"], cwd=str(tmp_path), env={"A": "1"}, output=str(tmp_path / "out.txt"))
    assert read_request(encode(request)) == request
    for reply in (Ready(pid=7), Started(pid=8), Ended(pid=8, code=-9), Refused(error="no")):
        assert read_reply(encode(reply), type(reply)) == reply
    with pytest.raises(WarmProtocolError, match=r"malformed request .*env\.A: Input should be a valid string"):
        read_request(b'{"kind": "run", "args": [], "cwd": "/", "env": {"A": 1}, "output": "/o"}')
    with pytest.raises(WarmProtocolError, match=r"malformed request .*surprise: Extra inputs are not permitted"):
        read_request(b'{"kind": "run", "args": [], "cwd": "/", "env": {}, "output": "/o", "surprise": 1}')
    with pytest.raises(WarmProtocolError, match=r"malformed reply .*Invalid JSON"):
        read_reply(b"forgelab-warm-worker ready", Ready)
    with pytest.raises(WarmProtocolError, match=r"malformed reply .*ended\.code: Field required"):
        read_reply(b'{"kind": "ended", "pid": 3}', Ended)
    with pytest.raises(WarmProtocolError, match=r"said 'ended' where 'started' was due"):
        read_reply(encode(Ended(pid=3, code=0)), Started)
    with pytest.raises(WarmProtocolError, match=r"refused the request: bad"):
        read_reply(encode(Refused(error="bad")), Started)
    with WarmWorker.start() as worker:  # the worker itself refuses a malformed request, runs nothing, and serves on
        stdin = worker._process.stdin
        assert stdin is not None
        stdin.write(b'{"kind": "run", "args": "-q", "cwd": "/", "env": {}, "output": "/o"}\n')
        stdin.flush()
        line = worker._read_line(60)
        assert line is not None
        refused = read_reply(line, Refused)
        assert "malformed request to the warm worker (args: Input should be a valid array)" in refused.error
        (tmp_path / "test_ok.py").write_text("def test_ok():\n    pass\n", encoding="utf-8")
        done = worker.run(["-p", "no:cacheprovider", "-q", str(tmp_path / "test_ok.py")], cwd=tmp_path,
                          env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, wall_s=120, output_kb=64)
        assert done is not None and done.returncode == 0, done


CONFIG_PROBE = """import json, os, sys
import _pytest.config

warm = sys.modules.get("forgelab.judge.pytest_private")  # the worker's prepared configuration, if any


def test_config(pytestconfig):
    plugins = sorted(name for name, _plugin in pytestconfig.pluginmanager.list_name_plugin() if not name.isdigit())
    options = {key: repr(value) for key, value in sorted(vars(pytestconfig.option).items())}
    print("CONFIG", json.dumps({"plugins": plugins, "options": options, "args": list(pytestconfig.invocation_params.args),
                                "dir": str(pytestconfig.invocation_params.dir), "rootpath": str(pytestconfig.rootpath),
                                "inipath": str(pytestconfig.inipath), "pid": os.getpid()}))
    print("PREPARED", getattr(warm, "_PREPARED", None) == [] and getattr(warm, "_GET_CONFIG", []) != [],
          _pytest.config.get_config is not getattr(warm, "prepared_get_config", None))
"""


def _config_seen(output: str) -> tuple[dict[str, object], list[str]]:
    seen = json.loads(next(line for line in output.splitlines() if line.startswith("CONFIG "))[7:])
    return seen, next(line for line in output.splitlines() if line.startswith("PREPARED ")).split()[1:]


def test_a_forked_run_starts_from_the_prepared_configuration_and_ends_as_a_cold_one_does(tmp_path: Path) -> None:
    """The worker makes pytest's configuration once (the built-in plugins registered); each run gets its own copy,
    with its own arguments and folder, and ends configured exactly as a new pytest process with those arguments
    (the same plugins, the same options, the same rootdir). A run that keeps a built-in plugin out starts afresh."""
    import subprocess
    import sys

    (tmp_path / "test_config.py").write_text(CONFIG_PROBE, encoding="utf-8")
    (tmp_path / "run.ini").write_text("[pytest]\naddopts = -s\n", encoding="utf-8")
    args = ["-c", str(tmp_path / "run.ini"), f"--rootdir={tmp_path}", "--noconftest", "-q", "--tb=native", "--color=no",
            "-p", "pytester", str(tmp_path / "test_config.py")]
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1", "PATH": os.environ.get("PATH", "")}
    cold = subprocess.run([sys.executable, "-P", "-m", "pytest", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, check=False)
    cold_config, _cold_flags = _config_seen(cold.stdout)
    cold_config.pop("pid")
    with WarmWorker.start() as worker:
        runs = [worker.run(args, cwd=tmp_path, env=env, wall_s=120, output_kb=256) for _run in range(2)]
        excluded = worker.run(["-p", "no:cacheprovider", *args], cwd=tmp_path, env=env, wall_s=120, output_kb=256)
    seen = []
    for run in runs:
        assert run is not None and run.returncode == 0, run
        config, flags = _config_seen(run.output)
        assert flags == ["True", "True"], run.output  # the prepared configuration was used, and pytest's own is back
        seen.append(config.pop("pid"))
        assert config == cold_config
    assert seen[0] != seen[1]
    assert excluded is not None and excluded.returncode == 0, excluded
    config, flags = _config_seen(excluded.output)
    assert flags == ["False", "True"]  # pytest made its own configuration, without the cache plugin
    options, cold_options = config["options"], cold_config["options"]
    assert isinstance(options, dict) and isinstance(cold_options, dict)
    assert "cacheclear" not in options and "cacheclear" in cold_options  # the cache plugin's options were never added


def test_only_a_run_that_keeps_a_builtin_plugin_out_gets_a_configuration_of_its_own() -> None:
    assert excludes_a_plugin(["-q", "-p", "no:cacheprovider", "t.py"])
    assert excludes_a_plugin(["-pno:cacheprovider"])
    assert not excludes_a_plugin(["-p", "forgelab.judge.session_plugin", "--forgelab-job", "no:job.json"])
    assert not excludes_a_plugin(["-q", "-p"])


def test_a_plugin_name_no_distribution_has_is_not_looked_up_again_in_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The prepared configuration knows the installed pytest plugins' names (read once, in the worker): `-p NAME`
    for a name none of them has skips reading every distribution; a name one has is loaded as pytest loads it."""
    import importlib.metadata

    from _pytest.config import get_config

    config = get_config(None, None, prog=PROG)
    skip_absent_entry_points(config)
    assert "timeout" in pytest11_names()  # pytest-timeout's plugin, installed in this venv
    reads: list[int] = []
    real = importlib.metadata.distributions

    def distributions() -> object:  # pluggy asks for every distribution
        reads.append(1)
        return real()

    monkeypatch.setattr(importlib.metadata, "distributions", distributions)
    manager = config.pluginmanager
    assert manager.load_setuptools_entrypoints("pytest11", name="forgelab.judge.session_plugin") == 0
    assert manager.load_setuptools_entrypoints("pytest11", name="pytester") == 0
    assert reads == []
    assert not manager.has_plugin("timeout")
    assert manager.load_setuptools_entrypoints("pytest11", name="timeout") == 1
    assert reads and manager.has_plugin("timeout")


# A module that says, when it is imported, how long its process had been running (from the sandbox's own /proc)
AGE = """

# ======== when this process started (seconds since boot, as /proc counts) ========
import os as _os

with open("/proc/self/stat") as _stat:
    _started = int(_stat.read().rsplit(")", 1)[1].split()[19]) / _os.sysconf("SC_CLK_TCK")
raise RuntimeError(f"process started at {{_started:.2f}} s ({token})")
"""


def _started(outcome: CheckOutcome, token: str) -> float:
    """When the process that imported the module saved with ``token`` had started (seconds since boot)."""
    assert outcome.import_problem is not None, verdict(outcome)
    cause = outcome.import_problem.cause
    assert token in cause, cause  # the module saved last was imported, not an earlier one
    return float(cause.split("process started at ", 1)[1].split(" s", 1)[0])


def _now() -> float:
    """Seconds since boot, on the clock /proc/self/stat's start times count on."""
    with open("/proc/uptime", encoding="ascii") as uptime:
        return float(uptime.read().split()[0])


TICK = 0.011  # /proc's clock ticks are 1/100 s: a start time and the uptime read after it may differ by one


def _host_waiting(worker: WarmWorker) -> bool | None:
    """True once the worker's next-run process has its sandboxed host running — a Python process below it whose
    program is the host's script; not the bubblewrap that starts one, nor the forked copy of the worker that has not
    yet run bubblewrap (its command line is still the worker's: on a busy machine it lasts long enough to be seen,
    and the host then started after the test had read the clock); None before (for wait_until)."""
    for folder in (worker._base or Path("/nonexistent")).glob("standby-*"):
        for pid in warm_module._tree(int(folder.name.split("-", 1)[1])):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if os.path.basename(argv[0]).startswith(b"python") and any(arg.endswith(b"/_judge_host.py")
                                                                        for arg in argv[1:]):
                return True
    return None


def test_the_next_runs_host_is_started_before_the_save_and_imports_the_module_saved_then(
        bench: Workbench, warm: WarmWorker, reference: str) -> None:
    """After a run, the worker starts the next run's sandboxed host (same settings, limits and stage; its own code
    and scratch folders, nothing of the learner's in it): the module saved after that is the first the host imports.
    A host started for other settings is not used: that run starts its own, as a cold session does. Proven by when
    the importing process started, against when the module was saved — not by how long anything took."""
    import dataclasses

    stage = stage_01(bench)
    module = bench.workbook.root / MODULE
    module.write_text(reference, encoding="utf-8")
    assert verdict(bench.check(stage, write=False, warm=warm))["passed"] is True  # the next run's host starts now
    wait_until(lambda: _host_waiting(warm), timeout=120, what="the next run's host")
    token = uuid.uuid4().hex[:12]
    saved = _now()
    module.write_text(reference + AGE.format(token=token), encoding="utf-8")
    assert _started(bench.check(stage, write=False, warm=warm), token) <= saved + TICK  # it was waiting already
    before_cold = _now()
    assert _started(bench.check(stage, write=False), token) >= before_cold - TICK  # a cold session starts its own
    other = Workbench(bench.workbook, bench.course, dataclasses.replace(bench.settings, test_cpu_s=11))
    token = uuid.uuid4().hex[:12]
    module.write_text(reference + AGE.format(token=token), encoding="utf-8")
    asked = _now()
    assert _started(other.check(stage, write=False, warm=warm), token) >= asked - TICK  # the waiting host had other limits
    wait_until(lambda: _host_waiting(warm), timeout=120, what="the next run's host, for the other limits")
    asked = _now()
    assert _started(other.check(stage, write=False, warm=warm), token) <= asked + TICK  # this one was started for them
    module.write_text(reference, encoding="utf-8")
    assert verdict(bench.check(stage, write=False, warm=warm))["passed"] is True


def test_only_a_sandboxed_judge_session_gets_a_host_started_early(tmp_path: Path) -> None:
    job = {"isolation": {"sandboxed": True, "bwrap": "/usr/bin/bwrap", "reason": ""}, "settings": {"test_cpu_s": 10},
           "files": {"/run/tests/t.py": {"target": "learner", "canonical": "t.py"}},
           "targets": {"learner": {"code_dir": "/run/targets/learner", "stage": "01", "probe": []}},
           "report": "/run/session-report.json", "tests_root": "/run/tests"}
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job), encoding="utf-8")
    spec = host_spec(["-q", "--forgelab-job", str(path), "t.py"])
    assert spec is not None and spec.label == "learner" and spec.stage == "01" and spec.code_dir == "/run/targets/learner"
    assert host_spec(["-q", "t.py"]) is None  # not a judge session
    assert host_spec(["-q", "--forgelab-job"]) is None
    path.write_text(json.dumps({**job, "isolation": {"sandboxed": False, "bwrap": "", "reason": "no bwrap"}}),
                    encoding="utf-8")
    assert host_spec(["--forgelab-job", str(path)]) is None  # learner code not in a sandbox: started in the run
    path.write_text(json.dumps({**job, "settings": {"test_cpu_s": "10"}}), encoding="utf-8")
    assert host_spec(["--forgelab-job", str(path)]) is None  # not a job (its session says what is wrong with it)


def test_the_interface_is_built_once_while_the_starters_stay_the_same(warm: WarmWorker, tmp_path: Path) -> None:
    """Watch mode builds the course's interface package once; a starter that changes gets it built again."""
    forge = tmp_path / "starters" / "forge"
    forge.mkdir(parents=True)
    (forge / "__init__.py").write_text("", encoding="utf-8")
    (forge / "x.py").write_text("def f() -> int:\n    raise NotImplementedError\n", encoding="utf-8")
    first = warm.interface(tmp_path / "starters", ["forge/x.py"])
    assert "remotify" in (first / "forge" / "x.py").read_text(encoding="utf-8")
    assert warm.interface(tmp_path / "starters", ["forge/x.py"]) == first
    (forge / "x.py").write_text("def f() -> int:\n    raise NotImplementedError  # changed\n", encoding="utf-8")
    second = warm.interface(tmp_path / "starters", ["forge/x.py"])
    assert second != first and not first.exists()
    assert "# changed" in (second / "forge" / "x.py").read_text(encoding="utf-8")
    assert warm.interface(tmp_path / "starters", []) != second  # other stage modules: built for them


def test_watch_draws_the_verdict_before_it_keeps_what_check_keeps(warm: WarmWorker, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-check's verdict is on screen before the records check keeps for later commands are written (what
    ``status`` need not run again, the first failing test for ``hint``, the learning record); they are written
    all the same, as check writes them."""
    from forgelab.learner import state

    root = copy_workbook(tmp_path / "workbook").root
    own = Workbench(Workbook(root=root, workspace=root), load_course(root))
    screen = io.StringIO()
    watch = Watch(own, stage_01(own), out=screen, keys=Keys(io.StringIO()))
    watch.warm = warm
    on_screen_then: list[str] = []
    record = own.record

    def recording(outcome: CheckOutcome, target: str = "learner", **how: object) -> None:
        on_screen_then.append(screen.getvalue())
        record(outcome, target, **how)  # type: ignore[arg-type]

    monkeypatch.setattr(own, "record", recording)
    assert state.first_failing(own.workbook, "01") == (False, None)
    watch.check(frozenset({TESTS}), [])
    assert len(on_screen_then) == 1 and "verdict: " in on_screen_then[0]
    assert watch.outcome is not None and watch.outcome.path is not None and watch.outcome.path.is_file()
    assert state.first_failing(own.workbook, "01")[0]  # remembered after the verdict was shown


# A test file that uses pytest's own fixtures (of modules and of plugin objects), one of its own and one of a class:
# the fixtures pytest registers for a session, printed as one line, and how many scans of a plugin reached pytest.
FIXTURES_PROBE = """import pytest


@pytest.fixture
def mine(tmp_path):
    return tmp_path


class TestOwn:
    @pytest.fixture
    def inner(self):
        return 1

    def test_b(self, inner, capsys, monkeypatch, request, recwarn, caplog, tmp_path_factory, mine):
        assert inner == 1


def test_a(mine, capfd, pytestconfig, record_property, doctest_namespace):
    assert mine
"""
FIXTURES_RUN = """import importlib, json, sys
import _pytest.config, pytest
from _pytest import fixtures

for name in _pytest.config.default_plugins:
    try:
        importlib.import_module("_pytest." + name)
    except ImportError:
        pass
scans, original = [], fixtures.FixtureManager.parsefactories

def counted(self, *args, **kwargs):
    scans.append(1)
    return original(self, *args, **kwargs)

fixtures.FixtureManager.parsefactories = counted
if sys.argv[1] == "prescan":
    from forgelab.judge.pytest_private import prescan_fixtures
    prescan_fixtures()
seen = {}

class Snapshot:
    def pytest_collection_finish(self, session):
        manager = session._fixturemanager
        for store in ("_arg2node2fixturedefs", "_arg2nodeid2fixturedefs"):
            for name, where in getattr(manager, store).items():
                for key, definitions in where.items():
                    seen.setdefault(name, []).extend(
                        [store, getattr(key, "nodeid", key), definition.func.__module__, definition.func.__qualname__,
                         str(definition.scope), repr(definition.params)] for definition in definitions)

code = pytest.main(["-q", "-p", "no:cacheprovider", "--basetemp", sys.argv[3], sys.argv[2]], plugins=[Snapshot()])
print("FIXTURES", json.dumps({"code": int(code), "scans": len(scans), "seen": seen}, sort_keys=True))
"""


def _fixtures_seen(tmp_path: Path, how: str) -> dict[str, object]:
    import subprocess
    import sys

    test = tmp_path / "test_fixtures.py"
    test.write_text(FIXTURES_PROBE, encoding="utf-8")
    (tmp_path / "run.py").write_text(FIXTURES_RUN, encoding="utf-8")
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1", "PATH": os.environ.get("PATH", "")}
    # The probe's fixture asks for tmp_path: without a --basetemp of its own the child's pytest would make a numbered
    # folder in the suite's shared temporary root and, at its exit, delete the older ones there (every earlier
    # suite's), which under load took minutes. Its own basetemp, inside this test's tmp_path, is removed by nobody else.
    basetemp = tmp_path / f"basetemp-{how}"
    done = subprocess.run([sys.executable, str(tmp_path / "run.py"), how, str(test), str(basetemp)], cwd=tmp_path,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300, check=False)
    assert basetemp.is_dir(), done.stdout + done.stderr
    line = next((line for line in done.stdout.splitlines() if line.startswith("FIXTURES ")), None)
    assert line is not None, done.stdout + done.stderr
    seen: dict[str, object] = json.loads(line[9:])
    return seen


def test_pytest_registers_the_same_fixtures_when_its_own_were_looked_for_in_the_worker(tmp_path: Path) -> None:
    """The worker looks once for the fixtures in pytest's own modules and classes; a run's session then scans only
    where those are (most plugins not at all) and registers exactly the fixtures pytest's full scan registers —
    the same names, functions, scopes and places, in the same order — its test file's own included."""
    plain = _fixtures_seen(tmp_path, "plain")
    prescanned = _fixtures_seen(tmp_path, "prescan")
    assert plain["code"] == prescanned["code"] == 0, (plain, prescanned)
    seen = plain["seen"]
    assert isinstance(seen, dict) and {"capsys", "monkeypatch", "tmp_path", "caplog", "mine", "inner"} <= set(seen)
    assert prescanned["seen"] == seen
    assert isinstance(plain["scans"], int) and isinstance(prescanned["scans"], int)
    assert prescanned["scans"] < plain["scans"] / 2, (prescanned["scans"], plain["scans"])  # most were not scanned


def test_a_watch_run_imports_pytests_rewritten_bytecode_written_beside_its_copy_of_the_tests(
        bench: Workbench, warm: WarmWorker, reference: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """In watch mode the judge writes pytest's assert-rewritten bytecode of the course's test files beside the run's
    copies (forgelab.judge.bytecode.rewritten_beside: rewritten once per process, then only written), and the forked
    session imports it instead of rewriting the file; the verdict is the cold check's. Shown with bytecode that holds
    one test more than its source, under that source's hash: the warm run collects it, so it ran that bytecode."""
    import importlib.util

    from _pytest.assertion import rewrite

    from forgelab.judge import bytecode

    (bench.workbook.root / MODULE).write_text(reference, encoding="utf-8")
    stage = stage_01(bench)
    kept = bench.workbook.state_dir / "cache" / "rewritten"  # what an earlier process kept (bytecode.rewritten_beside)
    shutil.rmtree(kept, ignore_errors=True)
    monkeypatch.setattr(bytecode, "_REWRITTEN", {})
    rewrites: list[Path] = []
    pytests = bytecode._rewrite

    def counted(path: Path) -> tuple[str, bytes]:
        rewrites.append(path)
        return pytests(path)

    monkeypatch.setattr(bytecode, "_rewrite", counted)
    cold = bench.check(stage, write=False)
    assert rewrites == []  # a cold check writes none
    hot = [bench.check(stage, write=False, warm=warm) for _ in range(2)]
    assert [verdict(outcome) for outcome in hot] == [verdict(cold)] * 2
    assert len(rewrites) == 1 and rewrites[0].name == Path(stage.test_file).name  # once per process

    def more(path: Path) -> tuple[str, bytes]:
        source = path.read_bytes()
        longer = path.with_name("longer_" + path.name)
        longer.write_bytes(source + b"\n\ndef test_only_in_the_bytecode():\n    assert True\n")
        _digest, code = rewrite._rewrite_test(longer, None)  # type: ignore[arg-type]
        buffer = io.BytesIO()
        rewrite._write_pyc_fp(buffer, importlib.util.source_hash(source), code)
        return rewrite.PYC_TAIL, buffer.getvalue()

    assert len(list(kept.iterdir())) == 1  # kept for the next process, which would not rewrite it
    shutil.rmtree(kept)
    monkeypatch.setattr(bytecode, "_REWRITTEN", {})
    monkeypatch.setattr(bytecode, "_rewrite", more)
    marked = bench.check(stage, write=False, warm=warm)
    assert marked.report is not None and cold.report is not None
    assert [row.name for row in marked.report.rows if row.name.endswith("test_only_in_the_bytecode")], \
        [row.name for row in marked.report.rows]
    assert not [row.name for row in cold.report.rows if row.name.endswith("test_only_in_the_bytecode")]


def test_the_saved_code_reaches_the_waiting_hosts_folder_whole(tmp_path: Path) -> None:
    """The run's copy of the learner's code is placed in the waiting host's folder (hard links on one file system):
    every file and folder, the host's own files left as they are; removing the run's copy leaves the host's."""
    from forgelab.judge.warm import _copy_code

    run = tmp_path / "run"
    (run / "forge" / "project" / "prompts").mkdir(parents=True)
    (run / "forge" / "instructions.py").write_text("RANK = 1\n", encoding="utf-8")
    (run / "forge" / "project" / "prompts" / "a.md").write_text("prompt\n", encoding="utf-8")
    (run / "_judge_host.py").write_text("the run's host file\n", encoding="utf-8")
    host = tmp_path / "host"
    (host / "forge").mkdir(parents=True)
    (host / "_judge_host.py").write_text("the waiting host's own\n", encoding="utf-8")
    _copy_code(run, host)
    assert (host / "forge" / "instructions.py").read_text(encoding="utf-8") == "RANK = 1\n"
    assert (host / "forge" / "project" / "prompts" / "a.md").read_text(encoding="utf-8") == "prompt\n"
    assert (host / "_judge_host.py").read_text(encoding="utf-8") == "the waiting host's own\n"
    linked = (host / "forge" / "instructions.py").stat()
    assert linked.st_ino == (run / "forge" / "instructions.py").stat().st_ino and linked.st_nlink == 2
    import shutil

    shutil.rmtree(run)
    assert (host / "forge" / "instructions.py").read_text(encoding="utf-8") == "RANK = 1\n"
