"""The judge's one watchdog (forgelab/judge/watchdog.py): the order of its limits, its CPU reading, and that the
host's channel, the relay of the learner's own tests, the course's session and the session forked from the warm
worker all wait through it; no process of the judge is started with ``preexec_fn`` (unsafe in the judge, which runs threads)."""

from __future__ import annotations

import ast
import math
import signal
import subprocess
import sys

from conftest import ROOT, wait_until

from forgelab.judge.outcomes import Limit
from forgelab.judge.watchdog import Watchdog, ended_by_cpu_rlimit

JUDGE = ROOT / "forgelab" / "judge"


def test_output_comes_before_the_wall_clock_and_the_wall_clock_before_cpu() -> None:
    assert Watchdog(flooded=lambda: True, wall_over=lambda now: True).over() is Limit.OUTPUT
    assert Watchdog(wall_over=lambda now: True).over() is Limit.WALL
    assert Watchdog().over() is None


def test_a_busy_loop_is_over_its_cpu_seconds_and_a_sleeper_is_not() -> None:
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        loop, sleeping = Watchdog(busy, cpu_s=0.3), Watchdog(sleeper, cpu_s=0.3)
        loop.begin_wait()
        assert wait_until(lambda: loop.wait() or loop.over(), timeout=60, what="the busy loop's CPU limit") is Limit.CPU
        sleeping.begin_wait()
        assert sleeping.over() is None and not sleeping.ended
        sleeper.kill()
        sleeper.wait()
        assert sleeping.ended
    finally:
        for process in (busy, sleeper):
            process.kill()
            process.wait()


def test_cpu_counts_from_the_test_that_begins_and_not_before() -> None:
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        watchdog = Watchdog(busy, cpu_s=math.inf, cpu_start=None)
        assert watchdog.over() is None  # nothing counted before count_cpu_from_now
        wait_until(lambda: Watchdog(busy, cpu_s=0.2).over(), timeout=60, what="0.2 s of CPU")
        watchdog.count_cpu_from_now(60)
        watchdog.begin_wait()
        assert watchdog.over() is None  # what it used before this test is not this test's
    finally:
        busy.kill()
        busy.wait()


def test_the_process_own_cpu_limit_reads_as_the_same_limit() -> None:
    assert ended_by_cpu_rlimit(-signal.SIGXCPU) and ended_by_cpu_rlimit(128 + signal.SIGXCPU)
    assert not ended_by_cpu_rlimit(0) and not ended_by_cpu_rlimit(-signal.SIGKILL) and not ended_by_cpu_rlimit(None)


def test_the_judge_waits_on_processes_through_the_watchdog_and_never_uses_preexec_fn() -> None:
    for path in sorted(JUDGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword):
                assert node.arg != "preexec_fn", f"{path.name}: start-up work belongs in the child (or the sandbox)"
    for name in ("channel.py", "relay.py", "core.py", "warm.py"):  # the host's calls, the learner's own tests, the
        # session, and the session forked from the warm worker
        for node in ast.walk(ast.parse((JUDGE / name).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                called = f"{getattr(node.func.value, 'id', '')}.{node.func.attr}"
                assert called not in ("select.select", "time.sleep"), \
                    f"{name}:{node.lineno}: {called} — wait through forgelab.judge.watchdog.Watchdog.wait"


def test_a_process_that_is_not_our_child_is_watched_by_its_pid() -> None:
    """The warm worker's forked session is the worker's child, not the judge's: watched by pid, ended by gone()."""
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        watchdog = Watchdog(pid=busy.pid, gone=lambda: busy.poll() is not None, cpu_s=0.3)
        assert watchdog.pid == busy.pid and not watchdog.ended
        assert wait_until(lambda: watchdog.wait() or watchdog.over(), timeout=60, what="the CPU limit by pid") is Limit.CPU
    finally:
        busy.kill()
        busy.wait()
    assert watchdog.ended


def test_the_kept_open_reader_counts_the_same_tree_and_follows_it_as_it_changes() -> None:
    """The watchdog reads a tree's CPU seconds through TreeCpu (its /proc files kept open between readings): the same
    sum as tree_cpu_seconds, over a parent with several threads (its children are listed per thread) and a busy
    child it starts after the first reading; one child that ends is dropped, and a tree that is gone reads as none."""
    from forgelab.judge.watchdog import TreeCpu, children, tree_cpu_seconds

    parent = ("import subprocess, sys, threading, time\n"
              "[threading.Thread(target=time.sleep, args=(60,), daemon=True).start() for _ in range(3)]\n"
              "sys.stdin.readline()\n"  # its children start once the test has read the tree a first time
              "kids = [subprocess.Popen([sys.executable, '-c', 'while True: pass']),\n"
              "        subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])]\n"
              "kids[0].wait()\ntime.sleep(60)\n")
    tree = subprocess.Popen([sys.executable, "-c", parent], stdin=subprocess.PIPE)
    reader = TreeCpu()
    try:
        first = reader.seconds(tree.pid)
        assert first is not None and children(tree.pid) == []
        assert tree.stdin is not None
        tree.stdin.write(b"go\n")
        tree.stdin.close()
        wait_until(lambda: len(children(tree.pid)) == 2 or None, timeout=60, what="the parent's two children")
        wait_until(lambda: (reader.seconds(tree.pid) or 0.0) - first >= 0.3 or None, timeout=60,
                   what="the busy child's CPU seconds, counted in the tree")
        before, plain, after = reader.seconds(tree.pid), tree_cpu_seconds(tree.pid), reader.seconds(tree.pid)
        assert before is not None and plain is not None and after is not None
        assert before <= plain <= after  # one sum, read two ways (it only grows)
        busy = children(tree.pid)[0]
        subprocess.run(["kill", "-KILL", str(busy)], check=False)
        wait_until(lambda: len(children(tree.pid)) == 1 or None, timeout=60, what="the busy child to be gone")
        now, plain = reader.seconds(tree.pid), tree_cpu_seconds(tree.pid)
        assert now is not None and plain is not None and abs(now - plain) < 0.5  # the rest still read
    finally:
        subprocess.run(["pkill", "-KILL", "-P", str(tree.pid)], check=False)
        tree.kill()
        tree.wait()
    assert reader.seconds(tree.pid) == 0.0  # nothing of the tree is left to read, nor kept open
    reader.close()


def test_a_watchdog_given_another_process_or_none_closes_the_files_it_kept() -> None:
    """A host's watchdog is handed a new process at every start and None when the host is stopped: the /proc files it
    kept open for the last tree are closed then, not left open until the host object goes away."""
    import os

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        watched = Watchdog(sleeper, cpu_s=10)
        before = len(os.listdir("/proc/self/fd"))
        watched.count_cpu_from_now(10)  # reads the tree: its files are kept open
        assert len(os.listdir("/proc/self/fd")) > before
        watched.process = None  # the host was stopped
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        sleeper.kill()
        sleeper.wait()
