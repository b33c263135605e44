"""The trusted test session of a cold check, started before its job is known.

A cold ``forgelab check`` used to do its own work first — import its tools, read the course, probe the sandbox,
lay out the target's code and the course's interface package — and only then start the trusted session, a new
Python that imports pytest and the judge's plugin before it reads a single test. On two CPUs both can run at
once: :func:`start_session` starts that process as the command begins (``python -P -m forgelab.judge.early``);
it imports pytest, its built-in plugins and the judge's session plugin, then waits for one line on its standard
input — the :class:`~forgelab.judge.messages.SessionRequest` the cold start would run (the session's arguments,
working folder and environment) — and runs that one session in itself, then exits. It is one strategy of the
judge's session starter (:class:`forgelab.judge.starters.EarlyStart`).

It is the same fresh process a cold session is: started by this command, for this one verdict, never reused
(no daemon: a new check starts a new one), on the trusted side (it runs the course's tests, never the learner's
code, which still runs only in the sandboxed host the session starts), with the same interpreter-wide settings
(hash seed, no bytecode written, no plugin autoload — set when it starts, and a job that would need others is
run as a new process instead), the same ``sys.path`` (the interface package first), and held by the judge's
watchdog to the same limits from the moment it is given its job. A command that does not use it (``check
--why``, a refused target) closes its input and it exits without running anything.

``forgelab check NN`` starts it (and the sandbox's probe) from its entry point, before the command line loads
(:mod:`forgelab.cli.launch`): this module loads only what starting a process needs — the judge's channel (and all
it imports) loads after the process has started.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from forgelab.judge.printed import PrintedOutput

if TYPE_CHECKING:  # the messages' models load with the judge's core, after this process has started its session
    from forgelab.judge.messages import SessionRequest

# interpreter-wide: fixed when a session's Python starts, so the same for every session (cold or started early)
SESSION_CONSTANTS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
                     "PYTHONIOENCODING": "utf-8"}
SESSION_OUTPUT_KB = 4096


def session_env() -> dict[str, str]:
    """The trusted session's environment before its job adds to it: this process's, without anything that would
    change how Python, pytest or Hypothesis behave, plus :data:`SESSION_CONSTANTS`."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTEST_", "COV_", "PYTHON", "FORGELAB_", "HYPOTHESIS"))}
    env.update(SESSION_CONSTANTS)
    return env


class Started:
    """A child process in its own process group whose output (stdout and stderr together) is read as it comes,
    the first ``cap`` bytes kept and every byte counted (:class:`forgelab.judge.printed.PrintedOutput`)."""

    def __init__(self, process: subprocess.Popen[bytes], cap: int) -> None:
        self.process = process
        self.output = PrintedOutput(cap)
        self.reader: threading.Thread | None = None


def dies_with_parent(command: list[str]) -> list[str]:
    """:func:`forgelab.judge.channel.dies_with_parent`, the same command line, without loading the channel."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    return [setpriv, "--pdeathsig", "KILL", "--", *command] if setpriv else command


def start(command: list[str], *, cwd: Path, env: dict[str, str] | None, output_kb: int,
          pass_fds: tuple[int, ...] = (), stdin: int = subprocess.DEVNULL) -> Started:
    """Start ``command`` so that it dies with this thread (:func:`dies_with_parent`), in its own process group,
    tracked (:func:`forgelab.judge.channel.stop_tracked` ends it), its output read on a thread."""
    process = subprocess.Popen(dies_with_parent(command), cwd=cwd, env=env, stdin=stdin,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                               pass_fds=pass_fds)
    # lazy: the channel's imports load once the process runs (the first session starts before the command line loads)
    from forgelab.judge import channel

    channel.track(process)
    started = Started(process, output_kb * 1024)
    assert process.stdout is not None
    fd = os.dup(process.stdout.fileno())  # the reader's own copy: the process's stream may be closed first
    started.reader = started.output.read(fd)
    return started


class EarlySession:
    """One trusted session process, started now, given its job later (:meth:`hand_over`) or closed unused."""

    def __init__(self) -> None:
        self.env = session_env()
        self.handed = threading.Event()  # set once it has its job, or is closed unused
        self.started = start([sys.executable, "-P", "-m", "forgelab.judge.early"], cwd=Path.cwd(), env=self.env,
                             output_kb=SESSION_OUTPUT_KB, stdin=subprocess.PIPE)

    def fits(self, env: dict[str, str]) -> bool:
        """Can this process run a session whose environment is ``env``? Only when every variable read as Python
        starts is the same; the job's own (``PYTHONPATH``, Hypothesis's folder) are set before pytest starts."""
        def fixed(values: dict[str, str]) -> dict[str, str]:
            return {k: v for k, v in values.items() if k.startswith("PYTHON") and k != "PYTHONPATH"}

        return self.started.process.poll() is None and fixed(env) == fixed(self.env)

    def hand_over(self, request: SessionRequest) -> tuple[Started, float]:
        """Give the process its session; the process and the moment it was given it (``time.monotonic()``)."""
        line = request.model_dump_json() + "\n"
        stdin = self.started.process.stdin
        assert stdin is not None
        began = time.monotonic()
        try:
            stdin.write(line.encode("utf-8"))
            stdin.close()
        except OSError:  # it ended meanwhile: the judge sees it end, with its output, as any session that failed
            pass
        self.handed.set()
        return self.started, began

    def close(self) -> None:
        """Not used: its input closes, and it ends without running anything (killed if it does not)."""
        self.handed.set()
        process = self.started.process
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            try:
                os.killpg(process.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
        # lazy: loaded already (start tracked the process)
        from forgelab.judge import channel

        channel.untrack(process)


_PENDING: list[EarlySession] = []
_LOCK = threading.Lock()


def start_session() -> None:
    """Start the trusted session of this command's check now (see the module's docstring); the judge's next cold
    session takes it (:func:`take`). Where it cannot start, nothing changes: the judge starts its session later."""
    with _LOCK:
        if _PENDING:
            return
        try:
            _PENDING.append(EarlySession())
        except OSError:
            pass


def take() -> EarlySession | None:
    """The session started early, once (the first cold session of this process gets it), or None."""
    with _LOCK:
        return _PENDING.pop() if _PENDING else None


def handed_over_event() -> threading.Event:
    """An event set when the session started early is given its job or closed (already set when there is none)."""
    with _LOCK:
        if _PENDING:
            return _PENDING[0].handed
    done = threading.Event()
    done.set()
    return done


def discard() -> None:
    """Close a session started early that no check used, and wait for the sandbox's probe (the command ends)."""
    session = take()
    if session is not None:
        session.close()
    with _LOCK:
        probes, _PROBES[:] = list(_PROBES), []
    for probe in probes:
        probe.join()


_PROBES: list[threading.Thread] = []


def probe_sandbox() -> None:
    """Find out now, on a thread, whether bubblewrap works here (:func:`forgelab.judge.sandbox.isolation` asks it
    once per process and keeps the answer): the judge then finds the answer ready instead of waiting for it."""
    # lazy: the sandbox's module loads on the thread, beside the command's own imports
    def probe() -> None:
        from forgelab.judge import sandbox  # lazy: as above

        sandbox.probe_once()

    thread = threading.Thread(target=probe, name="forgelab-sandbox-probe", daemon=True)
    with _LOCK:
        if _PROBES:  # asked already (the command's entry point, then `check`): one probe is enough
            return
        _PROBES.append(thread)
    thread.start()


def _serve() -> int:
    """In the started process: import what every session imports, wait for the one job, run it as
    ``python -P -m pytest ARGS`` would, with its working folder, environment and path."""
    # lazy: what the session imports, while the command that started it still prepares the session's job
    import tempfile

    import pytest

    from forgelab.judge.pytest_private import import_builtin_plugins  # lazy: as above

    import_builtin_plugins()
    import forgelab.judge.session_plugin  # noqa: F401  # lazy: as above
    from forgelab.judge.messages import SessionRequest, parse  # lazy: as above

    line = sys.stdin.buffer.readline()
    if not line.strip():
        return 0  # closed unused
    request = parse(SessionRequest, line, "the request of the session started early")
    os.chdir(request.cwd)
    os.environ.clear()
    os.environ.update(request.env)
    tempfile.tempdir = None  # the job's TMPDIR, not one worked out before it came
    sys.path[:0] = [entry for entry in request.env.get("PYTHONPATH", "").split(os.pathsep) if entry]
    sys.argv = [sys.executable, *request.args]
    code = pytest.main(list(request.args))
    return int(code)


if __name__ == "__main__":
    status = _serve()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # the session wrote its report: no interpreter teardown on the way out
