"""The judge's side of the boundary: start a learner process (a *host*), call into it, watch it.

A :class:`Host` runs one target's ``forge`` in the sandbox and answers calls. Everything that comes
back is data (:mod:`forgelab.judge.wire`): results are rebuilt with the course's own classes, a
learner's exception comes back as its type name, a capped message and the learner's own traceback
lines. The judge watches the host while it waits:

* CPU time used by the host's whole process tree during one test, against ``test_cpu_s`` — an
  endless loop is stopped whatever the load on the machine;
* wall-clock time waiting for the host's answers in one test, against the generous ``test_wall_s`` — for code
  that waits forever; the time the host spent ready to run but waiting for a CPU (a busy machine) is left out;
* output: more than ``output_kb`` printed stops the host (a flood is cut, not buffered).

A limit raises :class:`LimitExceeded`, a ``BaseException`` on purpose: neither the test's own
``except Exception`` nor Hypothesis may catch it, retry it, or turn it into a "flaky" verdict. The
host is then stopped; the next call starts a fresh one.

Frames from the host are read without ever blocking on one that is only half written
(:class:`FrameReader`), so a host that stops in the middle of a frame is still watched and stopped.
:meth:`Host.relay` forwards a frame written by another process (the learner's own tests, see
:mod:`forgelab.judge.relay`) under the same watch.
"""

from __future__ import annotations

import builtins
import contextvars
import enum
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from forgelab.core.i18n import _
from forgelab.judge import bytecode, wire
from forgelab.judge.outcomes import ImportKind, ImportProblem, Limit, ended_how
from forgelab.judge.printed import PrintedOutput
from forgelab.judge.sandbox import CODE_MOUNT, Isolation, bwrap_command, host_limits, plain_env, user_namespace
from forgelab.judge.settings import JudgeSettings
from forgelab.judge.watchdog import KeptTree, Watchdog, children, ended_by_cpu_rlimit

HOST_FILES = {"host.py": "_judge_host.py", "wire.py": "_judge_wire.py"}
_NOT_A_TRIP = ("import", "shape")  # the session's own set-up, not a test's use of the learner's code
_BUDGETED = ("call", "call_each", "call_handle", "get_handle", "import")  # requests that carry the test's CPU budget


class ArgumentChanges(enum.Enum):
    """What a test sees when the learner's code changed an argument in place (it always works on its own copy).

    * ``HIDDEN`` — nothing: the test's objects stay exactly as the test built them, so whatever it compares
      against after the call is its own (the trusted session, in every test not marked ``watch_arguments``);
    * ``SHOWN`` — the change, copied into the test's objects as in one process (see :func:`wire.apply_in_place`):
      a test marked ``watch_arguments`` (e.g. ``test_input_is_not_mutated``), and the learner's own tests.
    """

    HIDDEN = "hidden"
    SHOWN = "shown"


class TimeBudget:
    """Wall-clock seconds the learner's code may take in all (shared by the hosts of one run; thread-safe)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._spent = 0.0
        self._lock = threading.Lock()

    def spend(self, seconds: float) -> None:
        with self._lock:
            self._spent += max(0.0, seconds)

    @property
    def spent(self) -> float:
        with self._lock:
            return self._spent

    def remaining(self) -> float:
        return max(0.0, self.seconds - self.spent)

    @property
    def used_up(self) -> bool:
        return self.remaining() <= 0.0

    def message(self) -> str:
        return _("your code used up this submission's time budget of {seconds} s (every call it answered, added up: "
                 "look for sleep(), input() or a slow loop)").format(seconds=int(self.seconds))


class LimitExceeded(BaseException):
    """The learner's code hit a limit; the host was stopped. Deliberately not an ``Exception``."""

    def __init__(self, limit: Limit, message: str) -> None:
        super().__init__(message)
        self.limit = limit


class NotImplementedYet(BaseException):
    """The learner's code raised ``NotImplementedError``: the function is still the starter's stub.

    A ``BaseException`` on purpose: a test's ``except Exception`` must not swallow it, and Hypothesis
    must not spend seconds shrinking an input that any input would fail on.
    """


class BoundaryError(Exception):
    """A value could not cross the boundary (e.g. the learner returned an object that is not data)."""


class LearnerImportError(ImportError):
    """The learner's module could not be imported when one of its functions was called."""


class RemoteError(Exception):
    """Base of the stand-in classes for exception types the course does not define (e.g. pydantic's)."""


@functools.lru_cache(maxsize=1)
def _setpriv() -> str | None:
    return shutil.which("setpriv") if sys.platform.startswith("linux") else None


def dies_with_parent(command: list[str]) -> list[str]:
    """``command``, started so that it is killed (SIGKILL) when the thread that started it ends.

    util-linux's ``setpriv --pdeathsig KILL`` sets that in the child and then execs the command (same
    process), so no Python code runs between fork and exec (``preexec_fn`` is unsafe in a process with
    threads, which the judge is). Where ``setpriv`` is missing the command runs as it is: the judge still
    ends every process group it started (:func:`stop_tracked`), and a sandbox dies with its bubblewrap.
    """
    setpriv = _setpriv()
    return [setpriv, "--pdeathsig", "KILL", "--", *command] if setpriv else command


def host_argv(script: str) -> list[str]:
    """How a host process starts ``script``: Python without the ``site`` module (``-S``), and the folders ``site``
    would put on the path named by ``--path``; ``-P`` keeps the code folder off the path (the host puts it there).

    ``site`` runs every ``.pth`` file of the installed packages at start-up; one of them imports the editable
    install's finder. That was two thirds of a host's start (17 ms of CPU against 6 ms without ``site``), and a
    graded submission starts about 70 hosts. The host gets the same library folders, and ``exit``/``quit`` as
    ``site`` gives them (:func:`forgelab.judge.host.site_as_before`); an import line of a ``.pth`` file is not
    run: nothing of the learner's code needs forgelab's own editable install."""
    return [sys.executable, "-S", "-P", script, "--path", _library_path()]


@functools.lru_cache(maxsize=1)
def _library_path() -> str:
    import site  # the trusted side's own site: already imported

    folders: list[str] = []
    for folder in site.getsitepackages():
        if not os.path.isdir(folder):
            continue
        folders.append(folder)
        for pth in sorted(Path(folder).glob("*.pth")):
            try:
                lines = pth.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            for line in lines:
                entry = line.strip()
                if entry and not entry.startswith(("#", "import ", "import\t")):
                    path = os.path.join(folder, entry)
                    if os.path.isdir(path) and path not in folders:
                        folders.append(path)
    return os.pathsep.join(folders)


def install_host_files(code_dir: Path) -> None:
    """Copy the host script and its helpers next to a target's ``forge/``."""
    here = Path(__file__).resolve().parent
    for source, name in HOST_FILES.items():
        if name == "_judge_host.py":  # run as a script: Python compiles a script itself, every time
            (code_dir / name).write_bytes((here / source).read_bytes())
        else:  # imported: with its bytecode (see forgelab.judge.bytecode)
            bytecode.copy(here / source, code_dir / name)


# ---------------------------------------------------------------- time a busy machine adds


def _schedstat_wait_ns(path: str) -> int:
    try:
        with open(path, encoding="ascii") as handle:
            fields = handle.read().split()
        return int(fields[1]) if len(fields) > 1 else 0
    except (OSError, ValueError):
        return 0


def tree_queued_seconds(pid: int | None) -> float:
    """Seconds that ``pid``, everything below it and the calling thread spent *ready to run but waiting for a
    CPU* (the run-queue delay of /proc/…/schedstat; 0 where the kernel does not keep it).

    A busy machine adds this delay to every answer; it is the machine's, not the learner's, so the wall-clock
    limits subtract it: what is left is the time the code computed (bounded by the CPU limit) or waited.
    (A host reads the same sum through a :class:`RunQueueClock`, which keeps the files open.)
    """
    total = _schedstat_wait_ns("/proc/thread-self/schedstat")
    stack, seen = ([pid] if pid is not None else []), set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        total += _schedstat_wait_ns(f"/proc/{current}/schedstat")
        stack.extend(children(current))
    return total / 1e9


def _wait_ns(fd: int) -> int:
    """The run-queue delay (ns) in an open schedstat file, read anew (a /proc file is made again at each read)."""
    fields = os.pread(fd, 256, 0).split()
    return int(fields[1]) if len(fields) > 1 else 0


class _OwnSchedstat:
    """This thread's /proc/thread-self/schedstat, kept open for as long as the thread lives."""

    def __init__(self) -> None:
        try:
            self.fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.fd = -1

    def wait_ns(self) -> int:
        if self.fd < 0:
            return 0
        try:
            return _wait_ns(self.fd)
        except (OSError, ValueError):
            return 0

    def __del__(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_THREAD = threading.local()


def _own_wait_ns() -> int:
    own = getattr(_THREAD, "schedstat", None)
    if own is None:
        own = _THREAD.schedstat = _OwnSchedstat()
    return own.wait_ns()


class RunQueueClock:
    """:func:`tree_queued_seconds` of one process tree, for a caller that reads it at every call into the tree.

    The same sum (the calling thread, the tree's root and every process below it, found anew at each reading),
    read through /proc files kept open between readings (a :class:`~forgelab.judge.watchdog.KeptTree` of the
    processes' schedstat files): a handful of ``pread`` calls instead of opening, listing and closing a dozen files
    (the judge reads it twice per call into the learner's code, tens of thousands of times per graded submission).
    """

    def __init__(self) -> None:
        self._tree = KeptTree("schedstat", _wait_ns)

    def seconds(self, pid: int | None) -> float:
        return (_own_wait_ns() + self._tree.total(pid)) / 1e9

    def close(self) -> None:
        self._tree.close()


# ---------------------------------------------------------------- rebuilding what comes back


_SYNTHETIC: dict[tuple[str, str, type], type] = {}


def _builtin_exception(name: str) -> type[BaseException] | None:
    found = getattr(builtins, name, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _stand_in(module: str, qualname: str, bases: list[str]) -> type[BaseException]:
    base: type[BaseException] = Exception
    for name in bases:
        found = _builtin_exception(name)
        if found is not None and issubclass(found, Exception):
            base = found
            break
    safe = "".join(ch for ch in qualname.rsplit(".", 1)[-1] if ch.isalnum() or ch == "_") or "LearnerError"
    key = (module, safe, base)
    if key not in _SYNTHETIC:
        _SYNTHETIC[key] = type(safe, (RemoteError, base), {"__module__": module or "learner"})
    return _SYNTHETIC[key]


def rebuild_error(data: object, resolve: wire.Resolver, decode: Callable[[object], object]) -> BaseException:
    """An exception the learner's code raised, rebuilt from data (see :func:`wire.describe_exception`)."""
    if not isinstance(data, dict):
        return BoundaryError("the learner's process sent an error that is not readable")
    kind = str(data.get("kind", "exception"))
    message = wire.cap(str(data.get("message", "")), wire.MAX_MESSAGE_CHARS)
    module, qualname = str(data.get("module", "")), str(data.get("qualname", ""))
    bases = [str(b) for b in data.get("bases", []) if isinstance(b, str)] if isinstance(data.get("bases"), list) else []
    if kind == "boundary":
        error: BaseException = BoundaryError(message)
    elif kind == "import":
        error = LearnerImportError(f"{qualname}: {message}" if qualname else message)
    elif module == "builtins" and qualname == "MemoryError":
        return LimitExceeded(Limit.MEMORY, _("your code ran out of memory (the sandbox's memory limit)"))
    elif module == "builtins" and qualname == "NotImplementedError":
        error = NotImplementedYet(message or _("this function is not implemented yet — see the hints"))
    elif module == "builtins" and (found := _builtin_exception(qualname)) is not None and issubclass(found, Exception):
        error = _with_args(found, data, decode, message)
    elif wire.is_forge_module(module):
        error = _course_exception(data, resolve, decode, message) or _stand_in(module, qualname, bases)(message)
    else:
        error = _loaded_exception(module, qualname, message) or _stand_in(module, qualname, bases)(message)
    trace = str(data.get("traceback") or "")
    if trace:
        error.add_note(_("raised in the learner's code:") + "\n" + trace)
    return error


# An exception's frame from the host is wire data (forgelab.judge.wire) from the sandboxed side: free-form on purpose,
# each key read with a fallback, so that a frame the learner's process garbled becomes a stand-in, never a crash here.
def _with_args(cls: type[BaseException], data: dict[str, Any], decode: Callable[[object], object],
               message: str) -> BaseException:
    """``cls(*args)`` from the arguments that travelled as data (so KeyError('x') stays KeyError('x'))."""
    raw = data.get("args")
    if isinstance(raw, list):
        try:
            return cls(*(decode(item) for item in raw))
        except Exception:  # noqa: BLE001 - arguments that do not fit: the message still does
            pass
    return cls(message)


# Standard-library packages whose exceptions steer a test run instead of reporting an error: unittest's
# SkipTest is a skip to pytest, bdb's BdbQuit a debugger exit. Their names are only ever stand-ins here.
_STEERING_PACKAGES = frozenset({"unittest", "bdb", "pdb", "doctest"})


def _loaded_exception(module: str, qualname: str, message: str) -> BaseException | None:
    """The real class of a standard-library exception this process has already loaded (e.g. dataclasses'
    ``FrozenInstanceError``), when it can be built from a message. Nothing is imported for it.

    Only the standard library: the module and class names are whatever the learner's code claims, so a
    class that calls itself ``hypothesis.errors.UnsatisfiedAssumption`` or ``_pytest.outcomes.Skipped``
    must not become the real thing on the trusted side (it would throw away a failing example or skip
    a test). Anything else is rebuilt as a stand-in that is only an error.
    """
    package = module.split(".", 1)[0]
    if package not in sys.stdlib_module_names or package in _STEERING_PACKAGES:
        return None
    owner = sys.modules.get(module)
    found = getattr(owner, qualname, None) if owner is not None and "." not in qualname else None
    if not (isinstance(found, type) and issubclass(found, Exception)):
        return None
    try:
        return found(message)
    except Exception:  # noqa: BLE001 - needs more than a message (e.g. JSONDecodeError): use a stand-in
        return None


# free-form: an exception's frame from the sandboxed side, see _with_args
def _course_exception(data: dict[str, Any], resolve: wire.Resolver, decode: Callable[[object], object],
                      message: str) -> BaseException | None:
    try:
        cls = resolve(f"{data['module']}:{data['qualname']}")
    except (wire.WireError, KeyError, ImportError, AttributeError):
        return None
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        return None
    error = cls.__new__(cls)
    try:
        error.args = tuple(decode(item) for item in data.get("args", [])) or (message,)
        for pair in data.get("state", []):
            name, value = pair
            object.__setattr__(error, str(name), decode(value))
    except (wire.WireError, TypeError, ValueError):
        error.args = (message,)
    return error


apply_in_place = wire.apply_in_place  # mirror the learner's in-place change of an argument onto the test's object


# ---------------------------------------------------------------- the host process


PUBLIC_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def handle_allowed(value: object, test_roots: tuple[Path, ...]) -> bool:
    """May ``value`` be handed to the learner's code as a handle? Only code and objects of the test files."""
    if isinstance(value, (types.ModuleType, type)) or isinstance(value, (types.BuiltinFunctionType,
                                                                          types.BuiltinMethodType)):
        return False
    if isinstance(value, types.MethodType):
        return handle_allowed(value.__func__, test_roots) and handle_allowed(value.__self__, test_roots)
    if isinstance(value, types.FunctionType):
        return _in_tests(value.__code__.co_filename, test_roots)
    module = sys.modules.get(type(value).__module__)
    return module is not None and _in_tests(getattr(module, "__file__", None) or "", test_roots)


def _in_tests(filename: str, roots: tuple[Path, ...]) -> bool:
    if not filename or not roots:
        return False
    path = Path(filename).resolve()
    return any(root in path.parents for root in roots)


class RemoteObject:
    """An object that lives in the learner's process (e.g. a returned closure); using it is a call."""

    def __init__(self, host: Host, handle: int, name: str = "") -> None:
        self._host, self._handle, self._name = host, handle, name

    def __call__(self, *args: object, **kwargs: object) -> object:
        request: dict[str, object] = {"op": "call_handle", "handle": self._handle}
        if self._name:
            request["name"] = self._name
        return self._host.request(request, args, kwargs)

    def __getattr__(self, name: str) -> object:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._host.request({"op": "get_handle", "handle": self._handle, "name": name}, (), {})

    def __repr__(self) -> str:
        return f"<object from the learner's code, handle {self._handle}>"


class FrameReader:
    """Frames (see :mod:`forgelab.judge.wire`) from a process that may be hostile, read in pieces.

    :meth:`fill` reads what the pipe holds right now (call it when ``select`` says it is readable);
    :meth:`next` returns a complete frame once one has arrived. A writer that stops in the middle of a
    frame therefore never blocks the reader, who keeps watching its limits.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray()

    def fill(self) -> None:
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            raise wire.ChannelClosed("the other side closed the channel")
        self._buffer += chunk
        if len(self._buffer) >= 4 and int.from_bytes(self._buffer[:4], "big") > wire.MAX_FRAME_BYTES:
            raise wire.FrameTooLarge(f"a message larger than the {wire.MAX_FRAME_BYTES}-byte limit")

    def next(self) -> dict[str, object] | None:
        if len(self._buffer) < 4:
            return None
        size = int.from_bytes(self._buffer[:4], "big")
        if size > wire.MAX_FRAME_BYTES:
            raise wire.FrameTooLarge(f"a message of {size} bytes is larger than the {wire.MAX_FRAME_BYTES}-byte limit")
        if len(self._buffer) < 4 + size:
            return None
        body = bytes(self._buffer[4:4 + size])
        del self._buffer[:4 + size]
        return wire.loads(body)


class Host:
    """One sandboxed (or plain) learner process serving calls for one target."""

    def __init__(self, label: str, code_dir: Path, settings: JudgeSettings, isolation: Isolation,
                 resolve: wire.Resolver, stage: str = "") -> None:
        self.label, self.code_dir, self.settings, self.isolation = label, code_dir, settings, isolation
        self.stage = stage
        self._resolve = resolve
        self._process: subprocess.Popen[bytes] | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._to_host = self._from_host = -1
        self._reader: FrameReader | None = None
        self._handles: dict[int, object] = {}
        self._handle_ids: dict[int, int] = {}
        self._printed = PrintedOutput(settings.output_kb * 1024)  # the current process's, new at every spawn
        # CPU from begin_test on, against its budget; output; wall clock (see _over_wall, which words it)
        self._watchdog = Watchdog(cpu_s=settings.test_cpu_s, cpu_start=None, wall_over=self._over_wall,
                                  flooded=lambda: self._printed.flooded)
        self._wall_message = ""
        self._pending_budget: int | None = None
        self._same_shape: dict[str, bool] = {}  # class path → the learner's class builds like the course's
        self.test_roots: tuple[Path, ...] = ()  # where the course's test files live (see handle_allowed)
        self._test_waited = 0.0  # seconds this test waited for the learner's answers, run-queue delay taken out
        self._relay_deadline: float | None = None  # a relayed run's own end (time.monotonic()), if it has one
        self._closed_reason: Limit | None = None
        self.argument_changes = ArgumentChanges.SHOWN  # what the test sees of its arguments after a call
        self.time_budget: TimeBudget | None = None  # shared with the other hosts of this run, if it has one
        self._exchange_started = 0.0
        self._exchange_queued = 0.0
        self._queue_clock = RunQueueClock()  # the run-queue delay of this host's process tree (see _queued)
        self._asked: list[str] | None = None  # the modules an import was asked for before the handshake (ask_import)
        self._asked_stop: LimitExceeded | None = None  # the process had ended when that import was asked
        self.trips = 0  # exchanges with the learner's process for the tests' calls (see HostPool.take_trips)

    # ------------------------------------------------------------ life cycle

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, modules: list[str]) -> ImportProblem | None:
        """Start the process and import ``modules`` (dotted); the first import problem, if any."""
        self.spawn()
        return self.handshake(modules)

    def spawn(self) -> None:
        """Start the process without waiting for it (see :meth:`handshake`)."""
        self.close()
        self._scratch = tempfile.TemporaryDirectory(prefix="forgelab-host-")
        scratch = Path(self._scratch.name)  # the working folder outside the sandbox (inside: a private tmpfs)
        to_host_r, to_host_w = os.pipe()
        from_host_r, from_host_w = os.pipe()
        limits = json.dumps(host_limits(self.settings.host_limits(), self.isolation))
        with user_namespace() if self.isolation.sandboxed else nullcontext() as userns:
            if self.isolation.sandboxed:
                script = f"{CODE_MOUNT}/_judge_host.py"
                argv = [*host_argv(script), "--in", str(to_host_r), "--out", str(from_host_w),
                        "--limits", limits, "serve"]
                command = bwrap_command(self.isolation.bwrap, self.code_dir, argv, userns=userns)
                env = None
            else:
                command = [*host_argv(str(self.code_dir / "_judge_host.py")), "--in",
                           str(to_host_r), "--out", str(from_host_w), "--limits", limits, "serve"]
                env = plain_env(scratch)
            passed = (to_host_r, from_host_w) if userns is None else (to_host_r, from_host_w, userns)
            self._process = subprocess.Popen(dies_with_parent(command), cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=passed,
                                             start_new_session=True)
        self._watchdog.process = self._process
        os.close(to_host_r)
        os.close(from_host_w)
        self._to_host, self._from_host = to_host_w, from_host_r
        os.set_blocking(to_host_w, False)  # a host that stops reading must not block the judge: see _send
        self._reader = FrameReader(from_host_r)
        self._printed = PrintedOutput(self.settings.output_kb * 1024)
        self._closed_reason = None
        for stream in (self._process.stdout, self._process.stderr):
            assert stream is not None
            self._printed.read(os.dup(stream.fileno()))  # its own copy: close() may close the process's streams

    @property
    def import_asked(self) -> bool:
        """An import was asked for (:meth:`ask_import`) whose answer no handshake has read yet: even if the process
        has ended since, the handshake reads what it said before it ended and tells why."""
        return self._asked is not None

    def ask_import(self, modules: list[str]) -> None:
        """Send the handshake's request now, without waiting: the started process imports ``modules`` while this one
        goes on, and :meth:`handshake` then reads its answer. The import is counted and limited exactly as in a
        handshake that sends it itself (its CPU from now, its wall-clock time from the request to the answer)."""
        if self._asked is not None or not self.alive:
            return
        self.begin_test(cpu_s=self.settings.import_cpu_s)
        self._asked = list(modules)
        data = self._opening({"op": "import", "modules": self._asked})
        try:
            self._send(data)
        except LimitExceeded as stop:  # the handshake says so
            self._asked_stop = stop
            self._closing()

    def _answer_asked(self) -> dict[str, object]:
        """The answer to the import :meth:`ask_import` sent."""
        self._asked = None
        stop, self._asked_stop = self._asked_stop, None
        if stop is not None:
            raise stop
        try:
            return self._wait()
        finally:
            self._closing()

    def handshake(self, modules: list[str]) -> ImportProblem | None:
        """Wait until the started process is ready and has imported ``modules``; the first import problem."""
        try:
            if self._asked is not None and self._asked == list(modules):
                reply = self._answer_asked()
            else:
                self.begin_test(cpu_s=self.settings.import_cpu_s)
                reply = self._exchange({"op": "import", "modules": modules})
        except LimitExceeded as stop:
            words = {Limit.CPU: _("it used {seconds} s of CPU time without finishing").format(
                         seconds=self.settings.import_cpu_s),
                     Limit.WALL: _("it did not finish within {seconds} s").format(seconds=self.settings.test_wall_s),
                     Limit.MEMORY: _("it ran out of memory"), Limit.OUTPUT: _("it printed too much"),
                     Limit.CRASH: _("the process ended while importing")}[stop.limit]
            return ImportProblem(modules[0].replace(".", "/") + ".py" if modules else "forge", ImportKind.LIMIT,
                                 words, stage=self.stage)
        except (wire.WireError, wire.ChannelClosed, OSError) as error:
            return ImportProblem(modules[0].replace(".", "/") + ".py" if modules else "forge", ImportKind.IMPORT,
                                 f"the learner's process stopped while importing ({error})", error_type="crash",
                                 stage=self.stage)
        for problem in wire.items_of(reply, "problems"):
            if isinstance(problem, dict):
                return _import_problem(problem, self.stage)
        return None

    def close(self) -> None:
        process, self._process = self._process, None
        self._watchdog.process = None
        if process is not None:
            if process.poll() is None:
                try:
                    os.write(self._to_host, wire.dumps({"op": "shutdown"}))
                except OSError:
                    pass
            _kill_group(process)
        for fd in (self._to_host, self._from_host):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._to_host = self._from_host = -1
        self._reader = None
        self._asked, self._asked_stop = None, None
        self._queue_clock.close()
        self._watchdog.release()
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def take_output(self) -> str:
        """What the process printed since the last call (up to the output limit)."""
        return self._printed.take()

    # ------------------------------------------------------------ building instances locally

    def known_to_build_like(self, path: str) -> bool:
        """True when :meth:`builds_like` has already answered True for ``path``: no need to reach the process."""
        return self._same_shape.get(path, False)

    def builds_like(self, path: str, ours: dict[str, object]) -> bool:
        """True when the learner's class at ``path`` has the shape ``ours`` of the course's class (a plain
        dataclass with the same fields, defaults and flags): then the judge builds instances itself."""
        if path not in self._same_shape:
            if ours.get("kind") != "dataclass":
                self._same_shape[path] = False
            else:
                reply = self._exchange({"op": "shape", "classes": [path]})
                shapes = wire.items_of(reply, "shapes")
                self._same_shape[path] = bool(shapes) and shapes[0] == ours
        return self._same_shape[path]

    # ------------------------------------------------------------ per test

    def begin_test(self, cpu_s: int | None = None) -> None:
        budget = self.settings.test_cpu_s if cpu_s is None else cpu_s
        self._watchdog.count_cpu_from_now(budget)
        self._test_waited = 0.0
        self._relay_deadline = None
        self._pending_budget = budget  # travels with the next request: the host resets its own CPU limit

    # ------------------------------------------------------------ calls

    def register(self, value: object) -> int:
        """A handle for an object of the test that is not data (a fake model, a callback).

        Only the test's own functions, lambdas, bound methods and instances of classes the test file
        defines can be handed out: never a module, a class, a built-in, or anything of the judge or of
        the standard library, so the learner's code can reach nothing but what the test gave it.
        """
        if not handle_allowed(value, self.test_roots):
            raise wire.WireError(f"a {type(value).__name__} object cannot be handed to the learner's code: pass data, "
                                 "a function of the test, or an object of a class the test defines")
        key = id(value)
        if key not in self._handle_ids:
            number = len(self._handles) + 1
            self._handles[number] = value
            self._handle_ids[key] = number
        return self._handle_ids[key]

    def _decoder(self, arguments: tuple[object, ...] = ()) -> wire.Decoder:
        return wire.Decoder(self._resolve, stub=lambda number: RemoteObject(self, number), arguments=arguments,
                            own=self._own)

    def _own(self, number: int) -> object:
        if number not in self._handles:
            raise wire.WireError(f"no object with handle {number} was handed out")
        return self._handles[number]

    def _returning(self, value: object) -> int | None:
        return value._handle if isinstance(value, RemoteObject) and value._host is self else None

    def _encoder(self) -> wire.Encoder:
        return wire.Encoder(handle=self.register, returning=self._returning)

    def request(self, request: dict[str, object], args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        """Send one call and wait for its answer, serving the learner's calls back into test objects."""
        if not self.alive:
            raise LimitExceeded(self._closed_reason or Limit.CRASH, "the learner's process is not running")
        encoder = self._encoder()
        try:
            message = {**request, "args": [encoder.encode(a) for a in args],
                       "kwargs": [[k, encoder.encode(v)] for k, v in kwargs.items()]}
        except wire.WireError as error:
            raise BoundaryError(f"the test's arguments cannot be sent to the learner's code: {error}") from None
        reply = self._exchange(message)
        while reply["op"] in ("callback", "getattr"):
            reply = self._serve_callback(reply)
        if reply["op"] not in ("return", "raise"):
            self._stop(Limit.CRASH)
            raise BoundaryError(f"the learner's process answered {str(reply['op'])[:40]!r} to a call")
        try:
            decoder = self._decoder(self._after_call(args, wire.items_of(reply, "mutated")))
            if reply["op"] == "return":
                return decoder.decode(reply.get("value"))
        except wire.WireError as problem:
            raise BoundaryError(f"the learner's result cannot be read back: {problem}") from None
        raised = rebuild_error(reply.get("error"), self._resolve, decoder.decode)
        if isinstance(raised, LimitExceeded):
            self._stop(raised.limit)
        raise raised

    def request_each(self, target: str, calls: list[tuple[tuple[object, ...], dict[str, object]]],
                     errors: bool = False) -> list[tuple[bool, object]]:
        """Call the learner's ``target`` once per ``(args, kwargs)`` of ``calls`` in one exchange (or a few: an
        answer holds about a megabyte, the rest is asked for again); ``(True, result)`` or ``(False, exception)``
        per call, in order. Each call works on copies of its arguments and its result is rebuilt as data, as in a
        test that does not watch its arguments. Without ``errors`` the first exception is raised, and the calls
        after it are not run, as in a loop; with it, an :class:`Exception` a call raised is returned in its place
        and the calls go on. A limit, a stub (:class:`NotImplementedYet`) or the process ending is always raised."""
        if not self.alive:
            raise LimitExceeded(self._closed_reason or Limit.CRASH, "the learner's process is not running")
        encoder = self._encoder()
        try:
            encoded = [[[encoder.encode(a) for a in args], [[k, encoder.encode(v)] for k, v in kwargs.items()]]
                       for args, kwargs in calls]
        except wire.WireError as error:
            raise BoundaryError(f"the test's arguments cannot be sent to the learner's code: {error}") from None
        outcomes: list[tuple[bool, object]] = []
        while len(outcomes) < len(encoded):
            rest = encoded[len(outcomes):]
            reply = self._exchange({"op": "call_each", "target": target, "errors": errors, "calls": rest})
            while reply["op"] in ("callback", "getattr"):
                reply = self._serve_callback(reply)
            if reply["op"] == "raise":  # the target itself could not be reached
                raised = rebuild_error(reply.get("error"), self._resolve, self._decoder().decode)
                if isinstance(raised, LimitExceeded):
                    self._stop(raised.limit)
                raise raised
            answers = wire.items_of(reply, "each")
            if reply["op"] != "each" or not answers or len(answers) > len(rest):
                self._stop(Limit.CRASH)
                raise BoundaryError(f"the learner's process answered {str(reply['op'])[:40]!r} to calls")
            for answer in answers:
                ok, value = self._each_outcome(answer)
                if isinstance(value, BaseException) and not ok and (not errors or not isinstance(value, Exception)):
                    raise value
                outcomes.append((ok, value))
        return outcomes

    def _each_outcome(self, answer: object) -> tuple[bool, object]:
        decoder = self._decoder()
        if isinstance(answer, dict) and "value" in answer:
            try:
                return True, decoder.decode(answer["value"])
            except wire.WireError as problem:
                return False, BoundaryError(f"the learner's result cannot be read back: {problem}")
        raised = rebuild_error(answer.get("error") if isinstance(answer, dict) else None, self._resolve, decoder.decode)
        if isinstance(raised, LimitExceeded):
            self._stop(raised.limit)
        return False, raised

    def _after_call(self, args: tuple[object, ...], mutated: list[object]) -> tuple[object, ...]:
        """The arguments as the learner's code left them, for a result that refers to one (``$arg``).

        The learner's function got copies made on its own side; what it changed in them comes back as
        ``[index, new value]``. Where :attr:`argument_changes` is :attr:`ArgumentChanges.HIDDEN` the test's
        objects stay as the test built them and a changed argument that the result refers to is a new
        object; where it is ``SHOWN`` the change is copied into the test's argument (:func:`wire.apply_in_place`).
        """
        decoder = self._decoder(args)
        after = list(args)
        for pair in mutated:
            if not (isinstance(pair, list) and len(pair) == 2 and type(pair[0]) is int and 0 <= pair[0] < len(args)):
                continue
            index, changed = pair[0], decoder.decode(pair[1])
            if self.argument_changes is ArgumentChanges.HIDDEN:
                after[index] = changed
            else:
                apply_in_place(args[index], changed)
        return tuple(after)

    def _serve_callback(self, message: dict[str, object]) -> dict[str, object]:
        """The learner's code called an object of the test; run it here and send the answer back."""
        op = message["op"]
        args: tuple[object, ...] = ()
        before: dict[int, str | None] = {}
        try:
            target: Any = self._own(wire.number_of(message, "handle"))
            decoder = self._decoder()
            args = tuple(decoder.decode(a) for a in wire.items_of(message, "args"))
            kwargs = {name: decoder.decode(v) for name, v in wire.pairs_of(message, "kwargs")}
            if op == "getattr":
                name = str(message["name"])
                if not PUBLIC_NAME.match(name):
                    raise AttributeError(f"{name!r}: the learner's code may read only public attributes of a test object")
                result = getattr(target, name)
            else:
                before = {i: wire.snapshot(a) for i, a in enumerate(args) if wire.mutable_argument(a)}
                result = target(*args, **kwargs)
            frame = {"op": "return", "value": self._encoder().encode(result), "mutated": self._changed(args, before)}
        except LimitExceeded:
            raise
        except BaseException as error:  # noqa: BLE001 - the test's own code raised: tell the learner's code
            frame = {"op": "raise", "error": wire.describe_exception(error, self._encoder()),
                     "mutated": self._changed(args, before)}
        return self._exchange(frame)

    def _changed(self, args: tuple[object, ...], before: dict[int, str | None]) -> list[object]:
        """The arguments the test's callback changed in place, as ``[index, new value]`` for the learner's side
        (copy-restore: the learner's code sees the change on its own objects, as in one process)."""
        changed: list[object] = []
        for index, state in before.items():
            if state is not None and wire.snapshot(args[index]) != state:
                try:
                    changed.append([index, self._encoder().encode(args[index])])
                except wire.WireError:
                    continue
        return changed

    def relay(self, message: dict[str, object], deadline: float | None = None) -> dict[str, object]:
        """Forward a frame that another process wrote and return the host's next frame, watched like a call.

        ``deadline`` (``time.monotonic()``) ends the wait earlier than the per-test wall-clock limit.
        """
        if not self.alive:
            raise LimitExceeded(self._closed_reason or Limit.CRASH, _("the learner's process is not running"))
        if deadline is not None:
            self._relay_deadline = deadline
        return self._exchange(message)

    def _exchange(self, message: dict[str, object]) -> dict[str, object]:
        if message.get("op") not in _NOT_A_TRIP:
            self.trips += 1
        data = self._opening(message)
        try:
            self._send(data)
            return self._wait()
        finally:
            self._closing()

    def _opening(self, message: dict[str, object]) -> bytes:
        """The frame of a request, its time counted from now (see :meth:`_closing`)."""
        if self._pending_budget is not None and message.get("op") in _BUDGETED:
            message = {**message, "cpu_s": self._pending_budget}
            self._pending_budget = None
        data = wire.dumps(message)
        self._exchange_queued = self._queued()
        self._exchange_started = time.monotonic()
        return data

    def _closing(self) -> None:
        """The time the learner's process took to answer is the learner's; a busy machine's delay is not."""
        spent = max(0.0, time.monotonic() - self._exchange_started - (self._queued() - self._exchange_queued))
        self._test_waited += spent
        if self.time_budget is not None:
            self.time_budget.spend(spent)

    def _queued(self) -> float:
        return self._queue_clock.seconds(self._process.pid if self._process is not None else None)

    def release_files(self) -> None:
        """Close the /proc files kept open between calls (the host is idle for now: they are opened again at need)."""
        self._queue_clock.close()
        self._watchdog.release()

    def _waited_now(self, now: float) -> float:
        """Seconds of the current answer so far, without the run-queue delay (read only when it matters)."""
        return max(0.0, now - self._exchange_started - (self._queued() - self._exchange_queued))

    def _send(self, data: bytes) -> None:
        """Write a whole frame; while the host does not read it, keep watching it (it may be looping)."""
        view = memoryview(data)
        self._watchdog.begin_wait()
        while view:
            try:
                view = view[os.write(self._to_host, view):]
                continue
            except BlockingIOError:
                pass
            except OSError:
                raise self._died() from None
            self._watchdog.wait(write=self._to_host)
            self._watch()

    def _wait(self) -> dict[str, object]:
        self._watchdog.begin_wait()
        while True:
            reader = self._reader
            if reader is None:
                raise self._died()
            try:
                frame = reader.next()
                # a host that has ended may have written its answer just after the select timed out: read it first
                if frame is None and self._watchdog.readable(self._from_host):
                    reader.fill()
                    frame = reader.next()
                if frame is not None:
                    # over the output limit is over it, however soon the answer came (see PrintedOutput)
                    self._printed.settle()
                    if self._printed.flooded:
                        self._stop(Limit.OUTPUT)
                        raise LimitExceeded(Limit.OUTPUT, self._flood_words())
                    return frame
            except wire.FrameTooLarge:
                self._stop(Limit.OUTPUT)
                raise LimitExceeded(Limit.OUTPUT, _("your code returned a value too large to read back")) from None
            except (wire.ChannelClosed, OSError):
                raise self._died() from None
            except wire.WireError as error:
                self._stop(Limit.CRASH)
                raise BoundaryError(f"the learner's process sent something unreadable: {error}") from None
            self._watch()

    def _watch(self) -> None:
        """Raise :class:`LimitExceeded` (and stop the host) when it is over a limit or has ended."""
        limit = self._watchdog.over()
        if limit is not None:
            words = self._wall_message if limit is Limit.WALL else self._over_cpu() if limit is Limit.CPU else \
                self._flood_words()
            self._stop(limit)
            raise LimitExceeded(limit, words)
        if self._watchdog.ended:
            raise self._died()

    def _over_wall(self, now: float) -> bool:
        """Past the run's time budget, a relayed run's deadline, or this test's wall-clock limit; the words in
        :attr:`_wall_message`. The run-queue delay of a busy machine is left out, read only past a limit."""
        budget = self.time_budget
        raw = now - self._exchange_started
        if budget is not None and raw > budget.remaining() and self._waited_now(now) > budget.remaining():
            self._wall_message = budget.message()
            return True
        limit = self.settings.test_wall_s
        if (self._relay_deadline is not None and now > self._relay_deadline) \
                or (self._test_waited + raw > limit and self._test_waited + self._waited_now(now) > limit):
            self._wall_message = _("your code did not answer within {seconds} s (it waits or sleeps: look for input(), "
                                   "sleep() or a blocking read)").format(seconds=limit)
            return True
        return False

    def _flood_words(self) -> str:
        """The one cause of an output-limit stop, whenever it was seen (while waiting, at the answer, at the end)."""
        return _("your code printed more than {kb} KB; it was stopped (look for a print inside a loop)").format(
            kb=self.settings.output_kb)

    def _over_cpu(self) -> str:
        """The one cause of a CPU-limit stop, whoever noticed it first (this watch or the process's own rlimit):
        which of the two is first depends on the machine's load, and the verdict must not."""
        return _("your code used more than {seconds} s of CPU time in this test: look for a loop that never ends").format(
            seconds=int(self._watchdog.cpu_s))

    def _died(self) -> LimitExceeded:
        process = self._process
        code = process.poll() if process is not None else None
        if process is not None and code is None:
            try:
                code = process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        self._printed.settle()  # what it printed before it ended is counted before the cause is named
        if self._printed.flooded:
            limit, text = Limit.OUTPUT, self._flood_words()
        elif ended_by_cpu_rlimit(code):
            limit, text = Limit.CPU, self._over_cpu()  # its own hard limit struck before the watch saw it: same words
        else:
            limit, text = Limit.CRASH, _("your code's process ended in the middle of a call ({how}): look for "
                                         "os._exit(), sys.exit() at import, a signal, or a crash in native code").format(
                how=ended_how(code))
        self._stop(limit)
        return LimitExceeded(limit, text)

    def _stop(self, reason: Limit) -> None:
        self._closed_reason = reason
        self.close()


def _import_problem(data: dict[str, object], stage: str) -> ImportProblem:
    kind_text = str(data.get("kind", "import"))
    kind = ImportKind(kind_text) if kind_text in ImportKind.__members__.values() else ImportKind.IMPORT
    module = str(data.get("module", "forge")).replace(".", "/") + ".py"
    line = data.get("line")
    return ImportProblem(module, kind, wire.cap(str(data.get("message", "")), 300), wire.cap(str(data.get("file", "")), 200),
                         line if isinstance(line, int) else 0, wire.cap(str(data.get("type", "")), 80), stage)


_LIVE: set[subprocess.Popen[bytes]] = set()  # the session runs and testers of this process still running
_LIVE_LOCK = threading.Lock()


class RunProcesses:
    """The processes one judge run started (its sessions, testers): :meth:`stop` ends them, and only them.

    ``forgelab grade --jobs N`` judges N submissions on threads of one process: a run that fails, or a check that is
    abandoned, must not end another submission's processes (its tests would then be blamed for a stop they did not
    cause). Once stopped, a process the run starts later (a thread that was about to start its tester) is ended as
    soon as it is tracked, so a stopped run cannot go on for the length of its tests.

    Runs nest: a run made ``within`` another (one judge run of a submission being graded) is stopped with it, and
    one made within a stopped run is stopped at once (Ctrl-C in ``forgelab grade`` stops each submission's runs).
    """

    def __init__(self, within: RunProcesses | None = None) -> None:
        self._live: set[subprocess.Popen[bytes]] = set()
        self._inner: list[RunProcesses] = []
        self._lock = threading.Lock()
        self.stopped = False
        if within is not None:
            within._nest(self)

    def _nest(self, inner: RunProcesses) -> None:
        with self._lock:
            if not self.stopped:
                self._inner.append(inner)
                return
        inner.stop()

    def add(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            if not self.stopped:
                self._live.add(process)
                return
        _kill_group(process)

    def discard(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._live.discard(process)

    def stop(self) -> None:
        with self._lock:
            self.stopped = True
            live, self._live = list(self._live), set()
            inner, self._inner = self._inner, []
        for process in live:
            _kill_group(process)
        for run in inner:
            run.stop()


_RUN: contextvars.ContextVar[RunProcesses | None] = contextvars.ContextVar("forgelab_judge_run", default=None)
_OWNER: dict[subprocess.Popen[bytes], RunProcesses] = {}  # a tracked process → the run that started (or took) it


def running_as(run: RunProcesses) -> contextvars.Token[RunProcesses | None]:
    """Processes tracked from now on in this context (and in threads started with a copy of it) belong to ``run``."""
    return _RUN.set(run)


def current_run() -> RunProcesses | None:
    """The run this context runs as (:func:`running_as`), if any."""
    return _RUN.get()


def stop_running_as(token: contextvars.Token[RunProcesses | None]) -> None:
    """This context no longer runs as the run :func:`running_as` made it run as."""
    _RUN.reset(token)


def track(process: subprocess.Popen[bytes]) -> None:
    """Remember a started process group, so that :func:`stop_tracked` can end it (Ctrl-C, an error), and so can the
    run it belongs to (:class:`RunProcesses`, the one this context runs as)."""
    with _LIVE_LOCK:
        _LIVE.add(process)
    adopt(process)


def adopt(process: subprocess.Popen[bytes]) -> None:
    """``process`` (tracked already, started before its run: a session started early) belongs to this context's run."""
    run = _RUN.get()
    if run is not None:
        with _LIVE_LOCK:
            _OWNER[process] = run
        run.add(process)


def untrack(process: subprocess.Popen[bytes]) -> None:
    with _LIVE_LOCK:
        _LIVE.discard(process)
        run = _OWNER.pop(process, None)
    if run is not None:
        run.discard(process)


def stop_tracked() -> None:
    """Kill every tracked process group of this process that is still running (Ctrl-C: every run ends)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        _kill_group(process)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.kill()
    except ProcessLookupError:
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass
