"""The warm worker: the judge's trusted test session kept warm, a fresh forked process for every run.

A cold run of the course's tests starts a new Python, imports pytest, Hypothesis and the judge's session
plugin, and only then collects the stage's tests; on a busy machine that start-up is most of a verdict.
:class:`WarmWorker` starts one process that has imported all of that once (``python -P -m
forgelab.judge.warm``) and, for every run, forks a child that runs exactly the command line of the cold
session (:func:`forgelab.judge.core._course_session`): the same pytest arguments, the same environment, the
same working folder, then exits. Nothing of one run survives into the next: each run is a new process
forked from a worker that never ran a test, with its own session, its own random seed and its own folder.

The trust boundary is unchanged, because this process is the *trusted* side: it runs the course's tests,
never a line of the learner's code. Every call into learner code still goes through
:mod:`forgelab.judge.channel` to a host that the run starts afresh in the sandbox (bubblewrap, the same
resource limits set in that process before the learner's module is imported, its own private scratch
folder and ``/tmp``), exactly as in a cold run. So a warm verdict is a cold verdict, only sooner; the
tests in ``tests/course/test_warm_worker.py`` compare both on honest, wrong and hostile code.

One run at a time: :meth:`WarmWorker.run` returns None when the worker is busy or has died, and the judge
then runs the cold session as before. Protocol (JSON lines on the worker's standard input and output):
``{"args", "cwd", "env", "output"}`` in; ``{"pid": N}`` when the child started, ``{"pid": N, "code": C}``
when it ended. The worker ends when its standard input closes or the process that started it ends.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from forgelab.core.i18n import _
from forgelab.judge.channel import dies_with_parent

READY = "forgelab-warm-worker ready"
START_S = 60.0  # the longest the worker may take to import pytest and Hypothesis on a crowded machine
PR_SET_PDEATHSIG = 1


class WarmUnavailable(RuntimeError):
    """The warm worker could not start; the message says why in one line."""


@dataclass(frozen=True)
class WarmRun:
    """How one forked session ended: its exit code (None when it was stopped at the wall limit) and output."""

    returncode: int | None
    stopped: bool
    output: str
    seconds: float


def worker_env(base: dict[str, str]) -> dict[str, str]:
    """The worker's own environment: the cold session's fixed variables (every run sets the rest)."""
    env = {key: value for key, value in base.items()
           if not key.startswith(("PYTEST_", "COV_", "PYTHON", "FORGELAB_", "HYPOTHESIS"))}
    env.update({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
                "PYTHONIOENCODING": "utf-8"})
    return env


class WarmWorker:
    """One warm worker process (see the module's docstring); a context manager that ends it."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        self._lock = threading.Lock()
        self._child: int | None = None
        self._pending = bytearray()  # what the worker said beyond the last whole line

    @classmethod
    def start(cls, timeout_s: float = START_S) -> WarmWorker:
        """Start the worker and wait until it has imported everything; :class:`WarmUnavailable` if it cannot."""
        try:
            process = subprocess.Popen(dies_with_parent([sys.executable, "-P", "-m", "forgelab.judge.warm"]),
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env=worker_env(dict(os.environ)), start_new_session=True)
        except OSError as error:
            raise WarmUnavailable(_("the warm worker could not start ({cause})").format(cause=error)) from None
        worker = cls(process)
        line = worker._read_line(timeout_s)
        if line != READY:
            worker.close(keep_stderr=True)
            assert process.stderr is not None
            said = process.stderr.read().decode("utf-8", errors="replace").strip().splitlines()
            process.stderr.close()
            cause = (said or [line or "no answer"])[-1][:200]
            raise WarmUnavailable(_("the warm worker could not start ({cause})").format(cause=cause))
        return worker

    def __enter__(self) -> WarmWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def _read_line(self, timeout_s: float) -> str | None:
        """One line from the worker within ``timeout_s`` (None: it said nothing in time, or it has ended)."""
        stream = self._process.stdout
        assert stream is not None
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._pending:
            if not select.select([stream.fileno()], [], [], max(0.0, deadline - time.monotonic()))[0]:
                return None
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                return None
            self._pending += chunk
        line, _sep, rest = bytes(self._pending).partition(b"\n")
        self._pending = bytearray(rest)
        return line.decode("utf-8", errors="replace").strip()

    def run(self, args: list[str], *, cwd: Path, env: dict[str, str], wall_s: float,
            output_kb: int) -> WarmRun | None:
        """Run ``python -m pytest ARGS`` as a fresh child of the worker; None when the worker is busy or gone."""
        if not self.alive or not self._lock.acquire(blocking=False):
            return None
        try:
            return self._run(args, cwd, env, wall_s, output_kb)
        finally:
            self._lock.release()

    def _run(self, args: list[str], cwd: Path, env: dict[str, str], wall_s: float, output_kb: int) -> WarmRun | None:
        started = time.monotonic()
        output = cwd / "session-output.txt"
        scratch = cwd / "session-tmp"  # the session's TMPDIR (its hosts' folders): it goes with the run's folder,
        scratch.mkdir(exist_ok=True)   # even when the run is killed before it could remove them itself
        request = {"args": args, "cwd": str(cwd), "env": {**env, "TMPDIR": str(scratch)}, "output": str(output)}
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            stdin.flush()
        except OSError:
            return None
        first = self._read_line(START_S)
        if first is None:
            self.close()
            return None
        self._child = int(json.loads(first)["pid"])
        stopped = False
        try:
            while True:
                left = wall_s - (time.monotonic() - started)
                line = self._read_line(1.0 if stopped else max(0.0, min(left, 1.0)))
                if line is not None:
                    code: int | None = int(json.loads(line)["code"])
                    break
                if not self.alive:
                    code = None
                    break
                if left <= 0:  # past the wall limit: kill it (again, until the worker says it has ended)
                    stopped = True
                    self.stop_child()
        except BaseException:  # Ctrl-C while the run waits: the run and all it started end with it
            self.stop_child()
            raise
        finally:
            self._child = None
        try:
            with open(output, "rb") as handle:
                text = handle.read(output_kb * 1024).decode("utf-8", errors="replace")
        except OSError:
            text = ""
        return WarmRun(None if stopped else code, stopped, text, time.monotonic() - started)

    def stop_child(self) -> None:
        """Kill the run in progress, if one is, and everything it started (its own process group)."""
        child = self._child
        if child is not None:
            try:
                os.killpg(child, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def close(self, keep_stderr: bool = False) -> None:
        """End the run in progress and the worker (and so every process either started)."""
        self.stop_child()
        process = self._process
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (process.stdin, process.stdout, None if keep_stderr else process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


# ---------------------------------------------------------------- inside the worker


def _die_with_parent() -> None:
    """SIGKILL this process when its parent ends (Linux), so no forked run outlives the worker."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _preload() -> None:
    """What every run of the trusted session imports: pytest and its built-in plugins, Hypothesis, the judge."""
    import importlib

    import _pytest.config
    import hypothesis  # noqa: F401
    import hypothesis.strategies  # noqa: F401
    import pytest  # noqa: F401

    for name in _pytest.config.default_plugins:
        try:
            importlib.import_module(f"_pytest.{name}")
        except ImportError:
            pass
    import forgelab.judge.session_plugin  # noqa: F401  # lazy: imported in the worker only, to be warm


def _child(request: dict[str, Any], parent: int) -> None:
    """The forked run: become what the cold session's process is at its start, run pytest, exit."""
    try:
        os.setsid()  # its own process group: the judge stops it and all it started at once
        _die_with_parent()
        if os.getppid() != parent:
            os._exit(70)
        out = os.open(str(request["output"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        quiet = os.open(os.devnull, os.O_RDONLY)
        os.dup2(quiet, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(quiet)
        os.close(out)
        os.chdir(str(request["cwd"]))
        env = {str(key): str(value) for key, value in dict(request["env"]).items()}
        env.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(Path.cwd() / ".hypothesis"))  # a cold run's default
        os.environ.clear()
        os.environ.update(env)
        sys.path[:0] = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
        sys.argv = [sys.executable, *request["args"]]
        import random

        random.seed()  # a fresh process's own seed, not the worker's
        import pytest

        code = pytest.main(list(request["args"]))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(code))
    except BaseException:  # noqa: BLE001 - whatever happens, this child never returns into the worker's loop
        import traceback

        try:
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(70)


def main() -> None:
    _die_with_parent()
    _preload()
    parent = os.getpid()
    replies = sys.stdout.buffer
    replies.write((READY + "\n").encode())
    replies.flush()
    requests: IO[bytes] = sys.stdin.buffer
    for line in requests:
        if not line.strip():
            continue
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request, parent)
        replies.write(json.dumps({"pid": pid}).encode() + b"\n")
        replies.flush()
        _pid, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"pid": pid, "code": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
        replies.flush()


if __name__ == "__main__":
    main()
