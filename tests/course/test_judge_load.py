"""A busy machine is not the learner's fault: the judge's wall-clock limits leave out the time the learner's
code spent ready to run but waiting for a CPU (the kernel's run-queue delay), and still stop code that waits.

Both tests make their own contention: the code under test and a busy loop share one CPU (sched_setaffinity),
so the delay is there on a quiet machine too, and more load elsewhere only adds to it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import wait_until

from forgelab.judge import channel, core, watchdog, wire
from forgelab.judge.core import TargetSpec
from forgelab.judge.outcomes import Limit
from forgelab.judge.sandbox import isolation
from forgelab.judge.settings import JudgeSettings, SandboxMode

BUSY = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"


@contextmanager
def _one_cpu() -> Iterator[int]:
    """This process (and what it starts meanwhile) on one CPU, beside a busy loop on the same CPU."""
    before = os.sched_getaffinity(0)
    cpu = min(before)
    hog = subprocess.Popen([sys.executable, "-c", BUSY, str(cpu)])
    os.sched_setaffinity(0, {cpu})
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, before)
        hog.kill()
        hog.wait()


def test_the_run_queue_delay_of_a_process_tree_is_counted() -> None:
    if not os.path.exists("/proc/self/schedstat"):
        pytest.skip("this kernel keeps no run-queue statistics (/proc/self/schedstat)")
    child = ("import os, subprocess, sys, time\n"
             f"cpu = int(sys.argv[1])\nos.sched_setaffinity(0, {{cpu}})\n"
             f"subprocess.Popen([sys.executable, '-c', {BUSY!r}, str(cpu)])\n"
             "end = time.monotonic() + 30\nwhile time.monotonic() < end:\n    pass\n")
    cpu = min(os.sched_getaffinity(0))
    tree = subprocess.Popen([sys.executable, "-c", child, str(cpu)])
    try:
        first = channel.tree_queued_seconds(tree.pid)
        # two loops on one CPU: each waits half the time
        wait_until(lambda: channel.tree_queued_seconds(tree.pid) - first >= 0.5, timeout=60,
                   what="the tree to have waited 0.5 s for a CPU")
    finally:
        subprocess.run(["pkill", "-KILL", "-P", str(tree.pid)], check=False)
        tree.kill()
        tree.wait()


def test_the_kept_open_clock_reads_the_same_tree_and_follows_it_as_it_changes() -> None:
    """A host reads the delay through a RunQueueClock (its /proc files kept open between calls): the same sum as
    tree_queued_seconds, including a child started after the first reading, and nothing breaks when one ends."""
    if not os.path.exists("/proc/self/schedstat"):
        pytest.skip("this kernel keeps no run-queue statistics (/proc/self/schedstat)")
    cpu = min(os.sched_getaffinity(0))
    # the parent only waits, on its standard input (it never waits for a CPU); the two children it starts when told
    # share one CPU
    parent = ("import subprocess, sys\nsys.stdin.readline()\n"
              f"loops = [subprocess.Popen([sys.executable, '-c', {BUSY!r}, sys.argv[1]]) for _ in range(2)]\n"
              "loops[0].wait()\nsys.stdin.read()\n")
    tree = subprocess.Popen([sys.executable, "-c", parent, str(cpu)], stdin=subprocess.PIPE)
    assert tree.stdin is not None
    clock = channel.RunQueueClock()
    try:
        first = clock.seconds(tree.pid)  # before the children exist
        tree.stdin.write(b"start the children\n")
        tree.stdin.flush()
        wait_until(lambda: len(watchdog.children(tree.pid)) >= 2, timeout=60, what="the two busy children")
        # only the new children waited for a CPU
        wait_until(lambda: clock.seconds(tree.pid) - first >= 0.5, timeout=60, what="0.5 s waited for a CPU")
        before, plain, after = clock.seconds(tree.pid), channel.tree_queued_seconds(tree.pid), clock.seconds(tree.pid)
        assert before <= plain <= after  # one sum, read two ways (it only grows)
        loops = watchdog.children(tree.pid)
        subprocess.run(["kill", "-KILL", str(loops[0])], check=False)
        wait_until(lambda: len(watchdog.children(tree.pid)) == 1, timeout=60, what="the killed child to be gone")
        assert clock.seconds(tree.pid) >= 0.0  # a process that ended is dropped, the rest still read
        assert clock.seconds(tree.pid) == pytest.approx(channel.tree_queued_seconds(tree.pid), abs=0.5)
    finally:
        clock.close()
        subprocess.run(["pkill", "-KILL", "-P", str(tree.pid)], check=False)
        tree.kill()
        tree.wait()
        tree.stdin.close()


LEARNER = '''
import time


def compute(seconds):
    """Burn this much CPU time (not wall time: on a shared CPU that takes longer)."""
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return "done"


def wait(seconds):
    time.sleep(seconds)
    return "woke"
'''


def _host(tmp_path: Path, settings: JudgeSettings) -> channel.Host:
    mode = isolation(SandboxMode.AUTO)
    if not mode.sandboxed:
        pytest.fail(f"bubblewrap cannot start on this machine ({mode.reason}): the judge needs it")
    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "__init__.py").write_text("", encoding="utf-8")
    (layer / "slow.py").write_text(LEARNER, encoding="utf-8")
    code_dir = core.materialize(TargetSpec("slow", (layer,)), tmp_path / "code")

    def refuse(path: str) -> object:
        raise wire.WireError(path)

    return channel.Host("slow", code_dir, settings, mode, refuse)


def test_an_answer_slowed_by_a_busy_cpu_is_not_a_wall_limit_but_waiting_is(tmp_path: Path) -> None:
    if not os.path.exists("/proc/self/schedstat"):
        pytest.skip("this kernel keeps no run-queue statistics (/proc/self/schedstat)")
    settings = JudgeSettings(test_wall_s=3, test_cpu_s=10)
    with _one_cpu():
        host = _host(tmp_path, settings)
        try:
            assert host.start(["forge.slow"]) is None
            host.begin_test()
            started = time.monotonic()
            # 2.5 s of CPU beside a busy loop on the same CPU: about 5 s on the wall clock, over the 3 s limit
            assert host.request({"op": "call", "target": "forge.slow:compute"}, (2.5,), {}) == "done"
            assert time.monotonic() - started > settings.test_wall_s  # the contention was real
            host.begin_test()
            with pytest.raises(channel.LimitExceeded) as stopped:
                host.request({"op": "call", "target": "forge.slow:wait"}, (30,), {})  # sleeping is waiting
            assert stopped.value.limit is Limit.WALL
            assert "did not answer within 3 s" in str(stopped.value)
        finally:
            host.close()


def _stopped_by_cpu(tmp_path: Path, settings: JudgeSettings) -> channel.LimitExceeded:
    tmp_path.mkdir()
    host = _host(tmp_path, settings)
    try:
        assert host.start(["forge.slow"]) is None
        host.begin_test()
        with pytest.raises(channel.LimitExceeded) as stopped:
            host.request({"op": "call", "target": "forge.slow:compute"}, (60,), {})
        return stopped.value
    finally:
        host.close()


def test_a_cpu_limit_reads_the_same_whoever_noticed_it_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An endless loop is stopped either by the judge's watch (it polls the tree's CPU time) or by the process's own
    hard limit (RLIMIT_CPU, a second later), whichever comes first — on a busy machine the watch can be late.
    The verdict, and its words, must not depend on which: a class graded twice got two texts for one loop."""
    settings = JudgeSettings(test_cpu_s=1, test_wall_s=120)
    watched = _stopped_by_cpu(tmp_path / "watched", settings)
    monkeypatch.setattr(watchdog, "CPU_POLL_S", 10_000.0)  # the watch never looks at CPU time: the rlimit strikes
    struck = _stopped_by_cpu(tmp_path / "struck", settings)
    assert watched.limit is struck.limit is Limit.CPU
    assert str(watched) == str(struck), (str(watched), str(struck))
    assert "more than 1 s of CPU time" in str(struck)
