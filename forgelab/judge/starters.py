"""How the judge starts its trusted test session: one interface, the cold start as the reference, two strategies.

Every run of the course's tests is one :class:`~forgelab.judge.messages.SessionRequest` — pytest's arguments, the
working folder, the environment — whose session writes one :class:`~forgelab.judge.messages.SessionReport`.
A :class:`SessionStarter` decides only *how the process that runs it comes to exist*:

* :class:`ColdStart` — the reference behaviour: a new Python, ``python -P -m pytest ARGS``, started now and held by
  the judge's watchdog (:func:`run_watched`). Every other strategy must give exactly its verdicts;
* :class:`WarmStart` — a child forked from the warm worker, which imported pytest and the judge's plugin once
  (:mod:`forgelab.judge.warm`; watch mode and the notebook's re-check);
* :class:`EarlyStart` — the process ``forgelab check NN`` started as the command began, which imported the same and
  waits for its one request (:mod:`forgelab.judge.early`).

A strategy answers None when it cannot run this request (the worker is busy or gone, no session was started early,
or the one started early has other interpreter-wide settings); :func:`start_session` then starts the cold one.
Whatever started it, the session is the same fresh process on the trusted side, given the same request, held to
the same limits by the same watchdog (:class:`forgelab.judge.watchdog.Watchdog`), and it reads the same
:class:`~forgelab.judge.messages.SessionJob`; ``tests/course/test_session_starters.py`` proves the verdicts equal.

To add a strategy: a class with a ``name`` and ``start(request, wall_s=...)`` that runs ``request`` as the cold start
would (same arguments, folder and environment; the process on the trusted side, new for this one run) and returns
its :class:`Watched` or None; then add it to that test's strategies.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from forgelab.judge import channel, early
from forgelab.judge.messages import SessionRequest
from forgelab.judge.outcomes import Limit
from forgelab.judge.watchdog import Watchdog

if TYPE_CHECKING:  # only watch mode starts a warm worker, and hands it in: a cold check never loads its module
    from forgelab.judge.warm import WarmWorker


@dataclass(frozen=True)
class Watched:
    """How a watched process ended: its exit code (None when a limit stopped it), the limit, its output, its time."""

    returncode: int | None
    limit: Limit | None
    output: str
    seconds: float


def run_watched(command: list[str], *, cwd: Path, env: dict[str, str] | None, cpu_s: float, wall_s: float,
                output_kb: int, pass_fds: tuple[int, ...] = ()) -> Watched:
    """Run a command in its own process group; stop it (and all it started) at the CPU, wall or output limit."""
    began = time.monotonic()
    return watch(early.start(command, cwd=cwd, env=env, output_kb=output_kb, pass_fds=pass_fds), began,
                 cpu_s=cpu_s, wall_s=wall_s)


def _exit_descriptor(pid: int) -> int | None:
    """A descriptor that becomes readable when process ``pid`` ends (Linux's pidfd), or None where there is none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def watch(running: early.Started, started: float, *, cpu_s: float, wall_s: float) -> Watched:
    """Wait for a started process (see :func:`run_watched`); its wall clock counts from ``started``."""
    process = running.process
    watchdog = Watchdog(process, cpu_s=cpu_s, wall_over=lambda now: now - started > wall_s,
                        flooded=lambda: running.output.flooded)
    limit: Limit | None = None
    ended = _exit_descriptor(process.pid)  # readable once the process has ended: no poll interval to sleep out
    try:
        while limit is None and not watchdog.ended:
            watchdog.wait(read=ended)
            limit = watchdog.over()
    finally:
        if ended is not None:
            os.close(ended)
    if limit is not None or process.poll() is None:
        try:
            os.killpg(process.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
    code = process.wait()
    channel.untrack(process)
    if running.reader is not None:
        running.reader.join(timeout=5)
    return Watched(None if limit else code, limit, running.output.take(), time.monotonic() - started)


# The session's own CPU is course code (Hypothesis, comparisons): every strategy bounds it by wall time only.
SESSION_CPU_S = math.inf


class SessionStarter(Protocol):
    """One way to start the trusted session of a :class:`SessionRequest` (see the module's docstring)."""

    @property
    def name(self) -> str:
        """A word for the strategy: ``cold``, ``warm``, ``early``."""
        ...

    def start(self, request: SessionRequest, *, wall_s: float) -> Watched | None:
        """Run the session to its end, held to ``wall_s`` seconds; None when this strategy cannot run it now."""
        ...


class ColdStart:
    """The reference: a new ``python -P -m pytest ARGS``, started now."""

    name = "cold"

    def start(self, request: SessionRequest, *, wall_s: float) -> Watched:
        return run_watched([sys.executable, "-P", "-m", "pytest", *request.args], cwd=Path(request.cwd),
                           env=request.env, cpu_s=SESSION_CPU_S, wall_s=wall_s, output_kb=early.SESSION_OUTPUT_KB)


class WarmStart:
    """A child forked from the warm worker (:meth:`forgelab.judge.warm.WarmWorker.run`); None when it is busy or gone."""

    name = "warm"

    def __init__(self, worker: WarmWorker) -> None:
        self.worker = worker

    def start(self, request: SessionRequest, *, wall_s: float) -> Watched | None:
        forked = self.worker.run(request.args, cwd=Path(request.cwd), env=request.env, cpu_s=SESSION_CPU_S,
                                 wall_s=wall_s, output_kb=early.SESSION_OUTPUT_KB)
        return None if forked is None else Watched(forked.returncode, forked.limit, forked.output, forked.seconds)


class EarlyStart:
    """The session this command started as it began (:func:`forgelab.judge.early.take`: the first run of the process
    gets it); None when there is none, or when its interpreter-wide settings are not the request's (it is closed)."""

    name = "early"

    def start(self, request: SessionRequest, *, wall_s: float) -> Watched | None:
        prestarted = early.take()
        if prestarted is None:
            return None
        if not prestarted.fits(request.env):
            prestarted.close()
            return None
        running, began = prestarted.hand_over(request)
        channel.adopt(running.process)  # started before the run: from now on it is this run's
        return watch(running, began, cpu_s=SESSION_CPU_S, wall_s=wall_s)


COLD = ColdStart()


def for_run(warm: WarmWorker | None) -> SessionStarter:
    """The strategy a run uses unless told otherwise: the warm worker's when it has one, else a session started
    early if this process started one."""
    return WarmStart(warm) if warm is not None else EarlyStart()


def start_session(request: SessionRequest, *, wall_s: float, strategy: SessionStarter | None) -> Watched:
    """The session of ``request`` run by ``strategy``, or by the cold start when the strategy cannot run it."""
    if strategy is not None:
        watched = strategy.start(request, wall_s=wall_s)
        if watched is not None:
            return watched
    return COLD.start(request, wall_s=wall_s)
