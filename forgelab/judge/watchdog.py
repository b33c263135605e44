"""The judge's one watchdog: a process tree it waits on, held to its output, wall-clock and CPU limits.

Every process the judge starts and waits for is watched the same way — the learner's host while a test waits
for its answer (:mod:`forgelab.judge.channel`), the tester that runs the learner's own tests
(:mod:`forgelab.judge.relay`), the course's test session (:func:`forgelab.judge.starters.run_watched`), and a session forked from the warm worker
(:mod:`forgelab.judge.warm`: not the judge's own child, so it is watched by its pid). The waiting
loop calls :meth:`Watchdog.wait` (until a descriptor is ready, at most :data:`POLL_S`) and then
:meth:`Watchdog.over`: the first limit broken — output, then wall clock, then CPU — or None. What each limit
means (a deadline, a budget shared by several hosts, the time waited without the machine's run-queue delay) is
the caller's predicate; the watchdog reads the process tree's CPU seconds from /proc (at most every
:data:`CPU_POLL_S`, and at the first look of every wait) and says which limit struck. The caller stops the
process and words the verdict.

No Python code runs in a child between fork and exec: the processes are started with ``setpriv --pdeathsig``
(:func:`forgelab.judge.channel.dies_with_parent`) and set their own resource limits when they start
(:mod:`forgelab.judge.host`, :mod:`forgelab.judge.sandbox`).
"""

from __future__ import annotations

import math
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable

from forgelab.judge.outcomes import Limit

POLL_S = 0.05  # the longest a waiting loop sleeps before it looks at the limits again
CPU_POLL_S = 0.25  # the least time between two readings of a process tree's CPU seconds

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def children(pid: int) -> list[int]:
    """The direct children of ``pid``, over all its threads (Linux; empty elsewhere)."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                found.extend(int(item) for item in handle.read().split())
    except (OSError, ValueError):
        pass
    return found


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds used by ``pid`` and everything below it (Linux); None where /proc is not there."""
    if not os.path.isdir("/proc"):
        return None
    total, stack, seen = 0, [pid], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(f"/proc/{current}/stat", encoding="ascii", errors="replace") as handle:
                text = handle.read()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        if len(fields) > 14:
            total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        stack.extend(children(current))
    return total / _TICKS


def _ticks(text: bytes) -> int:
    """user + system CPU ticks of a process and of its children it waited for, from its /proc stat line."""
    fields = text[text.rfind(b")") + 2:].split()
    return int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14]) if len(fields) > 14 else 0


class _KeptProcess:
    """The /proc files of one process that a :class:`KeptTree` reads — its per-process file (``stat`` or
    ``schedstat``), its task folder (whose link count says how many threads it has) and its main thread's children —
    kept open between readings. An open file of /proc stays bound to its process: once that process has ended,
    reading fails, never gives another's numbers."""

    def __init__(self, pid: int, own_file: str) -> None:
        self.pid, self.fds = pid, []
        try:
            for path, flags in ((f"/proc/{pid}/{own_file}", 0), (f"/proc/{pid}/task", os.O_DIRECTORY),
                                (f"/proc/{pid}/task/{pid}/children", 0)):
                self.fds.append(os.open(path, os.O_RDONLY | os.O_CLOEXEC | flags))
        except OSError:
            self.close()
            raise

    def children(self) -> list[int]:
        if os.fstat(self.fds[1]).st_nlink > 3:  # "." and ".." and more than one thread: each has its children
            return children(self.pid)
        return [int(item) for item in os.pread(self.fds[2], 65536, 0).split()]

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def __del__(self) -> None:
        self.close()


class KeptTree:
    """A sum over one process tree that is read again and again — the root and every process found below it anew at
    each reading — through /proc files kept open between readings: three system calls per single-threaded process
    instead of about nine (open, read and close its file, list its task folder, open, read and close each thread's
    children). ``own_file`` is the per-process file read, ``value`` turns its open descriptor into the process's
    share. The watchdog's CPU seconds (:class:`TreeCpu`, four readings a second of a session's ~30 processes) and a
    host's run-queue delay (:class:`forgelab.judge.channel.RunQueueClock`, two readings per call into the learner's
    code) are both this reader."""

    def __init__(self, own_file: str, value: Callable[[int], int]) -> None:
        self._own_file, self._value = own_file, value
        self._open: dict[int, _KeptProcess] = {}

    def total(self, pid: int | None) -> int:
        """The sum of ``value`` over ``pid`` and every process below it (0 for None)."""
        total, stack, seen = 0, ([pid] if pid is not None else []), set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            found = self._read(current)
            if found is not None:
                total += found[0]
                stack.extend(found[1])
        for gone in self._open.keys() - seen:  # files kept for processes no longer in the tree
            self._open.pop(gone).close()
        return total

    def _read(self, pid: int) -> tuple[int, list[int]] | None:
        for _attempt in range(2):  # a file kept open may belong to a process that ended: open the pid's afresh
            kept = self._open.get(pid)
            if kept is None:
                try:
                    kept = self._open[pid] = _KeptProcess(pid, self._own_file)
                except OSError:
                    return None
            try:
                return self._value(kept.fds[0]), kept.children()
            except (OSError, ValueError):
                self._open.pop(pid).close()
        return None

    def close(self) -> None:
        for kept in self._open.values():
            kept.close()
        self._open.clear()


class TreeCpu:
    """:func:`tree_cpu_seconds` for a watchdog that reads the same tree again and again: the same sum, read through a
    :class:`KeptTree` of the processes' stat lines."""

    def __init__(self) -> None:
        self._tree = KeptTree("stat", lambda fd: _ticks(os.pread(fd, 4096, 0)))

    def seconds(self, pid: int) -> float | None:
        return self._tree.total(pid) / _TICKS if _PROC else None

    def close(self) -> None:
        self._tree.close()


_PROC = os.path.isdir("/proc")


def _never(*_args: object) -> bool:
    return False


def ended_by_cpu_rlimit(code: int | None) -> bool:
    """True for the exit status of a process its own hard CPU limit ended (SIGXCPU): the same CPU verdict as the
    watchdog's, whichever of the two struck first (that moves with the machine's load; the verdict must not)."""
    return code in (-signal.SIGXCPU, 128 + signal.SIGXCPU)


class Watchdog:
    """Watches one process tree while the judge waits on it.

    ``flooded()`` says the output limit is broken and ``wall_over(now)`` the wall-clock one (``now`` is
    ``time.monotonic()``); the tree's CPU seconds count from ``cpu_start`` (:meth:`count_cpu_from_now`; 0: from
    the process's start), against ``cpu_s``. A process that is not the judge's own child is watched by ``pid``,
    with ``gone()`` saying when it has ended.
    """

    def __init__(self, process: subprocess.Popen[bytes] | None = None, *, pid: int | None = None,
                 gone: Callable[[], bool] | None = None, cpu_s: float = math.inf,
                 cpu_start: float | None = 0.0, wall_over: Callable[[float], bool] = _never,
                 flooded: Callable[[], bool] = _never) -> None:
        self._tree = TreeCpu()
        self._process = process
        self._pid = pid
        self._gone = gone
        self.cpu_s = cpu_s
        self.cpu_start = cpu_start  # None: CPU is not watched until count_cpu_from_now
        self.wall_over = wall_over
        self.flooded = flooded
        self._cpu_read = 0.0

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The process whose tree is watched; another one (or none: it was stopped) closes the files kept for the
        last one's tree."""
        return self._process

    @process.setter
    def process(self, process: subprocess.Popen[bytes] | None) -> None:
        if process is not self._process:
            self._tree.close()
        self._process = process

    @property
    def pid(self) -> int | None:
        """The process whose tree is watched: ``pid`` when given, else the (current) ``process``'s."""
        if self._pid is not None:
            return self._pid
        return self.process.pid if self.process is not None else None

    def count_cpu_from_now(self, cpu_s: float) -> None:
        """Hold the tree to ``cpu_s`` more CPU seconds from now (a new test on a running host)."""
        self.cpu_s = cpu_s
        self.cpu_start = self._tree.seconds(self.pid) if self.pid is not None else None

    def begin_wait(self) -> None:
        """A new wait begins: its first look reads the CPU seconds at once."""
        self._cpu_read = 0.0

    def wait(self, *, read: int | None = None, write: int | None = None) -> bool:
        """Until ``read`` is readable or ``write`` writable (True), or :data:`POLL_S` passed (False)."""
        ready = select.select([read] if read is not None else [], [write] if write is not None else [], [], POLL_S)
        return bool(ready[0] or ready[1])

    def readable(self, fd: int) -> bool:
        """:meth:`wait` for ``fd`` to read; also True once the process has ended with something still to read there
        (or the end of it): what a process wrote just before it ended is read, even when the wait timed out first."""
        return self.wait(read=fd) or (self.ended and readable_within(fd, 0))

    def over(self) -> Limit | None:
        """The first limit the tree is over now — output, wall clock, CPU — or None."""
        if self.flooded():
            return Limit.OUTPUT
        now = time.monotonic()
        if self.wall_over(now):
            return Limit.WALL
        if now - self._cpu_read >= CPU_POLL_S and self.pid is not None and self.cpu_start is not None:
            self._cpu_read = now
            used = self._tree.seconds(self.pid)
            if used is not None and used - self.cpu_start > self.cpu_s:
                return Limit.CPU
        return None

    def release(self) -> None:
        """Close the /proc files kept open between readings (opened again at the next one)."""
        self._tree.close()

    @property
    def ended(self) -> bool:
        if self._gone is not None:
            return self._gone()
        return self.process is not None and self.process.poll() is not None


def readable_within(fd: int, timeout_s: float) -> bool:
    """Whether ``fd`` has something to read (or has closed) within ``timeout_s``: the judge's one wait that watches
    no process tree (the warm worker between runs, waiting for the next request or the time to start a host)."""
    try:
        return bool(select.select([fd], [], [], timeout_s)[0])
    except (OSError, ValueError):
        return True
