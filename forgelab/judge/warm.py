"""The warm worker: the judge's trusted test session kept warm, a fresh forked process for every run.

A cold run of the course's tests starts a new Python, imports pytest, Hypothesis and the judge's session
plugin, and only then collects the stage's tests; on a busy machine that start-up is most of a verdict.
:class:`WarmWorker` starts one process that has imported all of that once (``python -P -m
forgelab.judge.warm``), begins pytest's configuration there once (:func:`prepare_config`: its built-in plugins
registered) and, for every run, forks a child that runs exactly the command line of the cold
session (:class:`forgelab.judge.starters.ColdStart`): the same pytest arguments, the same environment, the
same working folder, then exits. Nothing of one run survives into the next: each run is a new process
forked from a worker that never ran a test, with its own session, its own random seed and its own folder.

The trust boundary is unchanged, because this process is the *trusted* side: it runs the course's tests,
never a line of the learner's code. Every call into learner code still goes through
:mod:`forgelab.judge.channel` to a host that the run starts afresh in the sandbox (bubblewrap, the same
resource limits set in that process before the learner's module is imported, its own private scratch
folder and ``/tmp``), exactly as in a cold run. So a warm verdict is a cold verdict, only sooner; the
tests in ``tests/course/test_warm_worker.py`` compare both on honest, wrong and hostile code.

One thing is started before it is needed: once a run has ended (0.1 s later), the worker forks the next run's process,
which starts the sandboxed host that run will start first — the same settings, limits and stage, a new code
folder (the host's own files only: nothing of the learner's) and a new scratch folder — and waits (:func:`_standby`).
When the learner saves and the next run asks for that same host, the saved code is placed in the host's code
folder, the host is asked to import the module just saved (the handshake's own request, sent before the session
starts instead of at its first test; its limits count from there) and the session takes the host
(:func:`forgelab.judge.remote.hand_over`), whose handshake reads the answer. A run that asks for another host (other
settings, another stage) ends the waiting one unused and starts its own. So every verdict still has a fresh
sandboxed process that had run none of the learner's code before its import; it was only started sooner. The
worker has also looked once for the fixtures of pytest's own plugins (:func:`prescan_fixtures`), and the judge writes
pytest's own assert-rewritten bytecode of the course's test files beside the run's copies, rewritten once per watch
(:func:`forgelab.judge.bytecode.rewritten_beside`): a run uses both only where they are exactly what pytest would make
itself (pytest checks the bytecode against the source's hash as it imports the file).

One run at a time: :meth:`WarmWorker.run` returns None when the worker is busy or has died, and the judge
then runs the cold session as before. While a run goes on, the judge waits on it through its one watchdog
(:class:`forgelab.judge.watchdog.Watchdog`, watching the forked session's process tree by its pid): the output,
wall-clock and CPU limits strike exactly as they do for a cold session (:func:`forgelab.judge.starters.run_watched`).

Protocol: JSON lines on the worker's standard input and output, each one of the Pydantic models below (strict
types, no unknown key, told apart by ``kind``): :class:`Ready` once, then for every :class:`RunRequest` in,
:class:`Started` when the child started and :class:`Ended` when it ended — or :class:`Refused` when the request
was not a valid one (the worker then waits for the next). A message that is none of these is a
:class:`WarmProtocolError` naming the field and the line. The worker ends when its standard input closes or the
process that started it ends.
"""

from __future__ import annotations

import gc
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Annotated, Literal, TypeVar

from pydantic import Field, TypeAdapter, ValidationError

from forgelab.core.i18n import _
from forgelab.judge import messages
from forgelab.judge.channel import HOST_FILES, Host, dies_with_parent, install_host_files
from forgelab.judge.messages import SessionJob, SessionRequest
from forgelab.judge.outcomes import Limit
from forgelab.judge.pytest_private import import_builtin_plugins, prepare_config, use_prepared_config
from forgelab.judge.sandbox import Isolation
from forgelab.judge.settings import JudgeSettings
from forgelab.judge.watchdog import Watchdog, children, readable_within

MAX_LINE = 4 * 1024 * 1024  # no message of the protocol is near this long: a longer line is refused unread
START_S = 60.0  # the longest the worker may take to import pytest and Hypothesis on a crowded machine
PR_SET_PDEATHSIG = 1
STANDBY_AFTER_S = 0.1  # how long after a run the next run's host starts (see serve)


class WarmUnavailable(RuntimeError):
    """The warm worker could not start; the message says why in one line."""


class WarmProtocolError(WarmUnavailable):
    """A line of the worker's protocol that is not one of its messages; the message says which field and line."""


# ---------------------------------------------------------------- the protocol


_Message = messages.Message  # strict, no unknown field, frozen: as every message of the judge


Pid = Annotated[int, Field(gt=0)]


class Ready(_Message):
    """The worker has imported everything and waits for requests."""

    kind: Literal["ready"] = "ready"
    pid: Pid


class RunRequest(SessionRequest):
    """Run ``python -m pytest ARGS`` in ``cwd`` with exactly ``env`` (the judge's
    :class:`~forgelab.judge.messages.SessionRequest`, as every starter gets it), its output (stdout and stderr) to
    ``output``."""

    kind: Literal["run"] = "run"
    output: Annotated[str, Field(min_length=1)]


class Started(_Message):
    kind: Literal["started"] = "started"
    pid: Pid


class Ended(_Message):
    """The child ``pid`` ended: its exit code, or minus the signal that ended it."""

    kind: Literal["ended"] = "ended"
    pid: Pid
    code: int


class Refused(_Message):
    """The request was not a :class:`RunRequest`; ``error`` says why. Nothing was run."""

    kind: Literal["refused"] = "refused"
    error: str


Reply = Annotated[Ready | Started | Ended | Refused, Field(discriminator="kind")]
_REQUEST: TypeAdapter[RunRequest] = TypeAdapter(RunRequest)
_REPLY: TypeAdapter[Ready | Started | Ended | Refused] = TypeAdapter(Reply)
M = TypeVar("M", bound=_Message)


def encode(message: _Message) -> bytes:
    """One line of the protocol."""
    return message.model_dump_json().encode("utf-8") + b"\n"


def read_request(line: bytes) -> RunRequest:
    """The request ``line`` is, or :class:`WarmProtocolError` saying what is wrong with it."""
    try:
        return _REQUEST.validate_json(line, strict=True)
    except ValidationError as error:
        raise WarmProtocolError(f"malformed request to the warm worker ({messages.explain(error)}): "
                                f"{line[:160].decode('utf-8', errors='replace').strip()!r}") from None


def read_reply(line: bytes, expected: type[M]) -> M:
    """The reply ``line`` is, which must be an ``expected`` (a :class:`Refused` is raised as its error)."""
    try:
        reply = _REPLY.validate_json(line, strict=True)
    except ValidationError as error:
        raise WarmProtocolError(f"malformed reply from the warm worker ({messages.explain(error)}): "
                                f"{line[:160].decode('utf-8', errors='replace').strip()!r}") from None
    if isinstance(reply, Refused) and expected is not Refused:
        raise WarmProtocolError(f"the warm worker refused the request: {reply.error}")
    if not isinstance(reply, expected):
        raise WarmProtocolError(f"the warm worker said {reply.kind!r} where {expected.model_fields['kind'].default!r} "
                                "was due")
    return reply


@dataclass(frozen=True)
class WarmRun:
    """How one forked session ended: its exit code (None when a limit stopped it), the limit, and its output."""

    returncode: int | None
    limit: Limit | None
    output: str
    seconds: float

    @property
    def stopped(self) -> bool:
        return self.limit is not None


def worker_env(base: dict[str, str]) -> dict[str, str]:
    """The worker's own environment: the cold session's fixed variables (every run sets the rest)."""
    env = {key: value for key, value in base.items()
           if not key.startswith(("PYTEST_", "COV_", "PYTHON", "FORGELAB_", "HYPOTHESIS"))}
    env.update({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
                "PYTHONIOENCODING": "utf-8"})
    return env


class WarmWorker:
    """One warm worker process (see the module's docstring); a context manager that ends it."""

    def __init__(self, process: subprocess.Popen[bytes], base: Path | None = None) -> None:
        self._process = process
        self._base = base  # the worker's folder: the waiting hosts' code and scratch folders (see _standby)
        self._interface: tuple[tuple[object, ...], Path] | None = None  # the built interface and what it was built from
        self._lock = threading.Lock()
        self._child: int | None = None
        self._pending = bytearray()  # what the worker said beyond the last whole line

    @classmethod
    def start(cls, timeout_s: float = START_S) -> WarmWorker:
        """Start the worker and wait until it has imported everything; :class:`WarmUnavailable` if it cannot."""
        try:
            base = Path(tempfile.mkdtemp(prefix="forgelab-warm-"))
            process = subprocess.Popen(dies_with_parent([sys.executable, "-P", "-m", "forgelab.judge.warm",
                                                         "--standby", str(base)]),
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env=worker_env(dict(os.environ)), start_new_session=True)
        except OSError as error:
            shutil.rmtree(base, ignore_errors=True)
            raise WarmUnavailable(_("the warm worker could not start ({cause})").format(cause=error)) from None
        worker = cls(process, base)
        line = worker._read_line(timeout_s)
        problem = "no answer" if line is None else ""
        if line is not None:
            try:
                read_reply(line, Ready)
            except WarmProtocolError as error:
                problem = str(error)
        if problem:
            worker.close(keep_stderr=True)
            assert process.stderr is not None
            said = process.stderr.read().decode("utf-8", errors="replace").strip().splitlines()
            process.stderr.close()
            cause = (said or [problem])[-1][:200]
            raise WarmUnavailable(_("the warm worker could not start ({cause})").format(cause=cause))
        return worker

    def __enter__(self) -> WarmWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def _line(self) -> bytes | None:
        """A whole line the worker has already said, if there is one."""
        if b"\n" not in self._pending:
            return None
        line, _sep, rest = bytes(self._pending).partition(b"\n")
        self._pending = bytearray(rest)
        return line

    def _listen(self, watchdog: Watchdog) -> bool:
        """Wait (through the watchdog, at most :data:`POLL_S`) for what the worker says; False once it has ended."""
        stream = self._process.stdout
        assert stream is not None
        if watchdog.wait(read=stream.fileno()):
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                return False
            self._pending += chunk
            if len(self._pending) > MAX_LINE and b"\n" not in self._pending:
                raise WarmProtocolError(f"the warm worker said a line longer than {MAX_LINE} bytes")
        return True

    def _read_line(self, timeout_s: float) -> bytes | None:
        """One line from the worker within ``timeout_s`` (None: it said nothing in time, or it has ended)."""
        deadline = time.monotonic() + timeout_s
        watchdog = Watchdog(self._process, wall_over=lambda now: now > deadline)
        while (line := self._line()) is None:
            if watchdog.over() is not None or not self._listen(watchdog):
                return None
        return line

    def interface(self, starters: Path, stage_modules: list[str]) -> Path:
        """The course's interface package for a run (:func:`forgelab.judge.interface.build_interface`), built once
        for as long as the starters stay as they are (their names, sizes and modification times) and the stage
        modules are the same. It is the course's code, which only the trusted session imports (without writing
        bytecode) and the testers' folders copy: no run changes it, and no learner code can reach it."""
        from forgelab.judge.interface import build_interface  # lazy: the worker process itself never builds one

        key = (*stage_modules, *_files_of(starters / "forge"))
        if self._interface is not None and self._interface[0] == key and (self._interface[1] / "forge").is_dir():
            return self._interface[1]
        folder = Path(tempfile.mkdtemp(prefix="interface-", dir=self._base))
        try:
            build_interface(starters, stage_modules, folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        if self._interface is not None:
            shutil.rmtree(self._interface[1], ignore_errors=True)
        self._interface = (key, folder)
        return folder

    def run(self, args: list[str], *, cwd: Path, env: dict[str, str], wall_s: float,
            output_kb: int, cpu_s: float = math.inf) -> WarmRun | None:
        """Run ``python -m pytest ARGS`` as a fresh child of the worker; None when the worker is busy or gone.

        The child is held to the limits of :func:`forgelab.judge.starters.run_watched` by the same watchdog: ``wall_s``
        seconds, ``cpu_s`` CPU seconds for its whole process tree, ``output_kb`` KiB printed."""
        if not self.alive or not self._lock.acquire(blocking=False):
            return None
        try:
            return self._run(RunRequest(args=args, cwd=str(cwd), env=env, output=str(cwd / "session-output.txt")),
                             cwd, wall_s, output_kb, cpu_s)
        finally:
            self._lock.release()

    def _run(self, request: RunRequest, cwd: Path, wall_s: float, output_kb: int, cpu_s: float) -> WarmRun | None:
        started = time.monotonic()
        output = Path(request.output)
        scratch = cwd / "session-tmp"  # the session's TMPDIR (its hosts' folders): it goes with the run's folder,
        scratch.mkdir(exist_ok=True)   # even when the run is killed before it could remove them itself
        request = request.model_copy(update={"env": {**request.env, "TMPDIR": str(scratch)}})
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(encode(request))
            stdin.flush()
        except OSError:
            return None
        first = self._read_line(START_S)
        if first is None:
            self.close()
            return None
        try:
            self._child = read_reply(first, Started).pid
        except WarmProtocolError:
            self.close()
            raise
        cap = output_kb * 1024

        def flooded() -> bool:
            try:
                return output.stat().st_size > cap
            except OSError:
                return False

        watchdog = Watchdog(pid=self._child, gone=lambda: not self.alive, cpu_s=cpu_s,
                            wall_over=lambda now: now - started > wall_s, flooded=flooded)
        limit: Limit | None = None
        code: int | None = None
        try:
            watchdog.begin_wait()
            while (line := self._line()) is None:
                if limit is None:
                    limit = watchdog.over()
                if limit is not None:  # kill it (again, until the worker says it has ended)
                    self.stop_child()
                if not self._listen(watchdog):
                    break
            if line is not None:
                code = read_reply(line, Ended).code
        except BaseException:  # Ctrl-C while the run waits, a broken reply: the run and all it started end with it
            self.stop_child()
            raise
        finally:
            self._child = None
        try:
            with open(output, "rb") as handle:
                text = handle.read(cap).decode("utf-8", errors="replace")
        except OSError:
            text = ""
        return WarmRun(None if limit is not None else code, limit, text, time.monotonic() - started)

    def stop_child(self) -> None:
        """Kill the run in progress, if one is, and everything it started (its own process group)."""
        child = self._child
        if child is not None:
            tree = _tree(child)  # the hosts it started are in sessions of their own: each is killed by its pid too
            for pid, group in ((child, True), *((pid, False) for pid in tree)):
                try:
                    os.killpg(pid, signal.SIGKILL) if group else os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def close(self, keep_stderr: bool = False) -> None:
        """End the run in progress and the worker (and so every process either started)."""
        self.stop_child()
        process = self._process
        if process.poll() is None:
            for pid in _tree(process.pid):  # the next run's process and its host, waiting in sessions of their own
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if self._base is not None:
            shutil.rmtree(self._base, ignore_errors=True)
        if self._interface is not None:
            shutil.rmtree(self._interface[1], ignore_errors=True)
            self._interface = None
        for stream in (process.stdin, process.stdout, None if keep_stderr else process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


def _files_of(folder: Path) -> list[tuple[str, int, int]]:
    """Every file below ``folder`` but bytecode: its path, modification time (ns) and size."""
    found = []
    for path in sorted(folder.rglob("*")):
        if "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append((str(path), stat.st_mtime_ns, stat.st_size))
    return found


def _tree(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux; empty elsewhere)."""
    found: list[int] = []
    stack = children(pid)
    while stack:
        current = stack.pop()
        if current not in found:
            found.append(current)
            stack.extend(children(current))
    return found


# ---------------------------------------------------------------- inside the worker


def _die_with_parent() -> None:
    """SIGKILL this process when its parent ends (Linux), so no forked run outlives the worker."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def preload() -> None:
    """What every run of the trusted session imports: pytest and its built-in plugins, Hypothesis, the judge, and
    ``pdb``, which pytest's debugging plugin imports as every run is configured (not ``readline``: pytest's capture
    plugin imports it in the run on purpose, so that it attaches to the run's own standard streams)."""
    import hypothesis  # noqa: F401
    import hypothesis.strategies  # noqa: F401
    import pdb  # noqa: F401  # every run's configuration imports it (pytest's debugging plugin): 1 ms a run
    import pytest  # noqa: F401

    import_builtin_plugins()
    import forgelab.judge.session_plugin  # noqa: F401  # lazy: imported in the worker only, to be warm


def _child(request: RunRequest, parent: int, own_session: bool = False) -> None:
    """The forked run: become what the cold session's process is at its start, run pytest, exit."""
    try:
        if not own_session:
            os.setsid()  # its own process group: the judge stops it and all it started at once
        _die_with_parent()
        if os.getppid() != parent:
            os._exit(70)
        out = os.open(request.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        quiet = os.open(os.devnull, os.O_RDONLY)
        os.dup2(quiet, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(quiet)
        os.close(out)
        os.chdir(request.cwd)
        env = dict(request.env)
        env.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(Path.cwd() / ".hypothesis"))  # a cold run's default
        os.environ.clear()
        os.environ.update(env)
        tempfile.tempdir = None  # the run's own TMPDIR, never a folder the worker looked up before
        sys.path[:0] = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
        sys.argv = [sys.executable, *request.args]
        import random

        random.seed()  # a fresh process's own seed, not the worker's
        import pytest

        use_prepared_config()
        code = pytest.main(list(request.args))
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


# ---------------------------------------------------------------- the next run's host, started before the save


@dataclass(frozen=True)
class HostSpec:
    """The host a judge session starts first (its first test file's target), as its job describes it."""

    label: str
    stage: str
    settings: JudgeSettings  # the job's settings and isolation
    isolation: Isolation
    code_dir: str  # this run's copy of the target's code (not part of the key: every run has its own)
    probe: tuple[str, ...] = ()  # the modules its handshake imports first (not part of the key either)

    @property
    def key(self) -> tuple[str, str, JudgeSettings, Isolation]:
        return self.label, self.stage, self.settings, self.isolation


def host_spec(args: list[str]) -> HostSpec | None:
    """The first host the judge session ``args`` starts, read from its job file (a
    :class:`~forgelab.judge.messages.SessionJob`); None when ``args`` are not a judge session, or its learner code
    does not run in the sandbox (only a sandboxed host is started early). A job that is not one is not this
    function's to report: the session it belongs to says what is wrong with it."""
    try:
        job = messages.read(SessionJob, Path(args[args.index("--forgelab-job") + 1]))
    except (ValueError, IndexError, OSError):  # no job named, none there, or not a SessionJob (MessageError)
        return None
    first = next(iter(job.files.values()), None)
    if not job.isolation.sandboxed or first is None or first.target not in job.targets:
        return None
    target = job.targets[first.target]
    return HostSpec(first.target, target.stage, job.settings, job.isolation, target.code_dir, target.probe)


@dataclass(frozen=True)
class Standby:
    """A forked process waiting for the next run of ``spec`` (see :func:`_standby`); ``go`` is its pipe."""

    pid: int
    go: int
    spec: HostSpec


def _read_go(fd: int) -> bytes:
    line = bytearray()
    while b"\n" not in line and len(line) <= MAX_LINE:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        line += chunk
    return bytes(line)


def _copy_code(run_code: Path, code: Path) -> None:
    """The run's copy of the target's code into the waiting host's code folder (its host files are there already).

    Each file is a hard link to the run's copy where both folders are on one file system (one system call instead of
    opening, copying and closing two files, in a process whose every page it touches is copied from the worker's):
    the run's copy is the judge's own snapshot of the learner's files, written before the request and never written
    again (the run's folder is only removed, which leaves the link), and the host sees its code folder read-only."""
    for entry in sorted(run_code.iterdir()):
        if entry.name in HOST_FILES.values() or entry.name == "__pycache__":
            continue
        _place(entry, code / entry.name)


def _place(source: Path, destination: Path) -> None:
    if source.is_symlink():
        os.symlink(os.readlink(source), destination)
    elif source.is_dir():
        destination.mkdir(exist_ok=True)
        for entry in sorted(source.iterdir()):
            _place(entry, destination / entry.name)
    elif source.is_file():
        try:
            os.link(source, destination)
        except OSError:  # another file system, or a file there already: a copy, as before
            shutil.copyfile(source, destination)


def _standby(spec: HostSpec, parent: int, base: Path, go: int) -> None:
    """The next run's process, forked as soon as a run has ended: it starts the host that run will start first
    (sandboxed, the same settings, limits and stage, its own new code and scratch folders, nothing of the
    learner's imported), then waits for the run. When the run comes and starts that same host, the learner's
    code is copied into the host's code folder, the host is asked to import the learner's module (the handshake's own
    request, sent before the session starts rather than at its first test: the host imports while pytest starts, and
    the session's handshake reads the answer) and the session gets this host for its first
    (:func:`forgelab.judge.remote.hand_over`); else the host ends unused.
    Either way the process then becomes the run (:func:`_child`)."""
    try:
        os.setsid()
        _die_with_parent()
        if os.getppid() != parent:
            os._exit(70)
        quiet = os.open(os.devnull, os.O_RDWR)  # nothing may reach the worker's protocol streams
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        os.close(quiet)
        from forgelab.judge.remote import hand_over, resolve_course_class  # lazy: only a waiting run needs them

        folder = base / f"standby-{os.getpid()}"
        code, scratch = folder / "code", folder / "tmp"
        (code / "forge").mkdir(parents=True)  # there before the host starts: its folder's listing never changes
        scratch.mkdir()
        install_host_files(code)
        tempfile.tempdir = str(scratch)  # the host's own scratch folder
        host = Host(spec.label, code, spec.settings, spec.isolation, resolve_course_class, stage=spec.stage)
        host.spawn()
        line = _read_go(go)
        os.close(go)
        if not line.strip():  # not wanted: the worker ends or the next run is another one
            host.close()
            os._exit(0)
        request = read_request(line)
        now = host_spec(request.args)
        if now is not None and now.key == spec.key:
            _copy_code(Path(now.code_dir), code)
            host.ask_import(list(now.probe))  # it imports the module saved while the session starts
            hand_over(spec.label, host)
        else:
            host.close()
    except BaseException:  # noqa: BLE001 - never back into the worker's loop
        os._exit(70)
    _child(request, parent, own_session=True)


def _fork_standby(spec: HostSpec, parent: int, base: Path) -> Standby | None:
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:
        os.close(write)
        _standby(spec, parent, base, read)
    os.close(read)
    return Standby(pid, write, spec)


def _discard(standby: Standby, base: Path) -> None:
    """End a waiting process that will not be used (closing its pipe tells it so), its host, and its folder."""
    try:
        os.close(standby.go)
    except OSError:
        pass
    try:
        os.killpg(standby.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        os.waitpid(standby.pid, 0)
    except ChildProcessError:
        pass
    shutil.rmtree(base / f"standby-{standby.pid}", ignore_errors=True)


def _go(standby: Standby, line: bytes) -> bool:
    """Hand ``line`` (the run's request) to the waiting process; False when it is gone."""
    data = line if line.endswith(b"\n") else line + b"\n"
    try:
        while data:
            data = data[os.write(standby.go, data):]
        return True
    except OSError:
        return False
    finally:
        os.close(standby.go)


def serve(requests: IO[bytes], replies: IO[bytes], base: Path | None = None) -> None:
    """Answer every request line until ``requests`` closes (see the protocol in the module's docstring).

    With ``base`` (a folder of the worker's own), the host of the next run is started :data:`STANDBY_AFTER_S` after a
    run has ended (the judge shows its verdict meanwhile, on a machine whose CPUs that start would take), unless the
    next request came first, in a process waiting for that run (:func:`_standby`), in a folder of its own under
    ``base``."""
    parent = os.getpid()
    replies.write(encode(Ready(pid=parent)))
    replies.flush()
    standby: Standby | None = None
    due: HostSpec | None = None  # the host to start for the next run, once the verdict has been shown
    try:
        while True:
            if due is not None and base is not None:
                if not readable_within(requests.fileno(), STANDBY_AFTER_S):
                    standby = _fork_standby(due, parent, base)
                due = None
            line = requests.readline()
            if not line:
                break
            if not line.strip():
                continue
            try:
                request = read_request(line)
            except WarmProtocolError as error:
                replies.write(encode(Refused(error=str(error))))
                replies.flush()
                continue
            spec = host_spec(request.args) if base is not None else None
            waiting, standby = standby, None
            if waiting is not None and spec is not None and waiting.spec.key == spec.key and _go(waiting, line):
                pid = waiting.pid
            else:
                if waiting is not None and base is not None:
                    _discard(waiting, base)
                pid = os.fork()
                if pid == 0:
                    _child(request, parent)
            replies.write(encode(Started(pid=pid)))
            replies.flush()
            _pid, status = os.waitpid(pid, 0)
            replies.write(encode(Ended(pid=pid, code=os.waitstatus_to_exitcode(status))))
            replies.flush()
            if base is not None:
                shutil.rmtree(base / f"standby-{pid}", ignore_errors=True)
                due = spec
    finally:
        if standby is not None and base is not None:
            _discard(standby, base)


def main() -> None:
    _die_with_parent()
    preload()
    prepare_config()
    gc.collect()
    gc.freeze()  # what is imported now lives as long as the worker: no forked run's collections walk it again
    base = Path(sys.argv[sys.argv.index("--standby") + 1]) if "--standby" in sys.argv[1:-1] else None
    serve(sys.stdin.buffer, sys.stdout.buffer, base)


if __name__ == "__main__":
    main()
