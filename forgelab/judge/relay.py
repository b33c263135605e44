"""Running test files the learner wrote: two sandboxes, and the judge between them.

A learner's transfer test is learner code, and so is the ``forge`` it tests — but not the same
``forge`` in every run: the test is run once against the learner's ``forge`` and once with the stage's
known-wrong module laid over it, and it earns its points only by passing the first run and failing the
second. If the test and ``forge`` shared a process, ``forge`` could patch pytest, the test module or
builtins and make a failing test pass where it is not checked, and the test could look at which module
it was given (its source, ``__file__``, a traceback) instead of testing what it does. So they never
share one:

* the **tester** (:mod:`forgelab.judge.tester`) runs pytest on the one test file in a sandbox whose
  ``forge`` is the course's interface (:mod:`forgelab.judge.interface`); its folder is identical in
  every run of that file;
* the **host** (:mod:`forgelab.judge.host`) serves the target's ``forge`` in another sandbox, from one
  merged folder (the known-wrong module laid over the learner's files), so every path in it is the
  same in both runs;
* this module, in the judge's process, relays every frame between the two (they share no namespace,
  no pipe, no file) and owns the limits.

What the judge lets through, either way:

* from the tester: calls of what the interface offers (:func:`forgelab.judge.interface.offered`),
  public attributes of objects the host handed out, answers to the host's callbacks, and the events
  of its test run (a test starts, a report), which the judge keeps; anything else is answered with a
  boundary error and never reaches the host;
* from the host: results, exceptions without their traceback (the judge keeps it and adds it to the
  failure detail the learner reads, where the test cannot see it), and callbacks that read only public
  attributes of the test's objects.

The limits: the host's CPU time per test (``test_cpu_s``; the tester marks where each test starts),
its wall-clock time per call (``test_wall_s``) and its output (``output_kb``), as for the course's
tests; a host stopped at a limit makes that test a timeout with the limit named, and the next call
starts a fresh host; after ``max_limit_hits`` such tests the run stops. The tester gets
``learner_tests_cpu_s`` of CPU time, ``learner_tests_wall_s`` of wall-clock time for the whole run
(the host's waits included) and ``output_kb`` of output.

**Several files in one run.** A grading job may run a stage's transfer test and its lab's regression test, which
are judged against the same code, in one tester (:func:`run_files`): the interpreter, pytest and the interface
start once instead of once per file. Each file is still run as it would be alone, one after the other: its own
pytest session, a fresh host, and the limits above counted from the moment the tester says the file begins (its
``file`` event, accepted only for the next file in order), so a file that hits a limit spoils no other. A file the
run never reached (the tester was stopped, or ended, before it began) has no result here; the caller runs it alone.
The files, their order and the command line are the same in every run of them, so the tester still cannot tell
which code it is given.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from forgelab.core import i18n
from forgelab.core.i18n import _
from forgelab.judge import bytecode, channel, wire
from forgelab.judge.channel import PUBLIC_NAME, BoundaryError, FrameReader, Host, LimitExceeded, TimeBudget
from forgelab.judge.interface import Offered
from forgelab.judge.outcomes import Limit
from forgelab.judge.printed import PrintedOutput
from forgelab.judge.sandbox import CODE_MOUNT, Isolation, bwrap_command, host_limits, plain_env, user_namespace
from forgelab.judge.settings import JudgeSettings
from forgelab.judge.tester import LAUNCHER
from forgelab.judge.watchdog import POLL_S, Watchdog, ended_by_cpu_rlimit, readable_within

TESTER_INI = """# the learner's own tests, in the tester's sandbox: no plugin autoload, no cache, no conftest
[pytest]
python_files = test_*.py
python_functions = test_*
console_output_style = classic
addopts = -p no:cacheprovider --import-mode=importlib
"""
# what the tester needs of forgelab (nothing secret: it ships to learners); relative to the forgelab package
# (judge/messages.py only for remote.py's type annotations: the tester reads no job and never imports it)
TESTER_MODULES = ("__init__.py", "core/__init__.py", "core/i18n.py", "judge/__init__.py", "judge/bytecode.py",
                  "judge/pytest_private.py", "judge/channel.py", "judge/host.py", "judge/learner_plugin.py",
                  "judge/messages.py", "judge/outcomes.py", "judge/printed.py", "judge/remote.py", "judge/sandbox.py",
                  "judge/settings.py", "judge/tester.py", "judge/watchdog.py", "judge/wire.py")
MAX_EVENTS = 5000
MAX_TAKEN_LATE = 100  # events taken after a limit was found (see _Relay._said_before_the_limit)
TESTER_OPS = frozenset({"call", "call_handle", "get_handle", "setattr", "shape", "return", "raise"})
HOST_OPS = frozenset({"return", "raise", "callback", "getattr", "shapes"})

# ---------------------------------------------------------------- the tester's folder


def write_template(into: Path, interface: Path) -> Path:
    """The parts of a tester's folder that every test file shares: launcher, pytest configuration,
    the few forgelab modules the tester imports, and the course's interface ``forge/``."""
    into.mkdir(parents=True, exist_ok=True)
    (into / "_judge_tester.py").write_text(LAUNCHER, encoding="utf-8")
    (into / "_judge_pytest.ini").write_text(TESTER_INI, encoding="utf-8")
    package = Path(__file__).resolve().parent.parent
    for relative in TESTER_MODULES:  # with their bytecode (see forgelab.judge.bytecode)
        destination = into / "forgelab" / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        bytecode.copy(package / relative, destination)
    for catalog in sorted((package / "locale").glob("*/LC_MESSAGES/*.mo")):
        destination = into / "forgelab" / catalog.relative_to(package)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(catalog, destination)
    shutil.copytree(interface / "forge", into / "forge")  # the course's interface, with its bytecode
    return into


def tester_folder(template: Path, into: Path, files: Sequence[tuple[Path, str]], mounted: bool = False) -> Path:
    """A tester's folder for test files: the template and each ``(file, shown)`` at its workbook path ``shown``.

    The template's files are hard links where the file system allows (they are never written again, and the sandbox
    mounts the folder read-only), so a run does not copy the same hundred files once per test file. ``mounted`` (a
    sandboxed tester): the folder holds only the test files and, for each of the template's top-level entries, an
    empty file or folder of its name, which the sandbox binds the template's entry over (:func:`template_mounts`):
    nothing of the template is made or removed per test file, and the tester sees the same folder."""
    if mounted:
        shared = template_mounts(template)
        clash = {PurePosixPath(shown).parts[0] for _file, shown in files} & {name for _source, name in shared}
        if clash:
            raise ValueError(f"a test file's path begins with {sorted(clash)[0]!r}, a name of the tester's template")
        into.mkdir(parents=True)
        for source, name in shared:
            if source.is_dir() and not source.is_symlink():
                (into / name).mkdir()
            else:
                (into / name).touch()
    else:
        shutil.copytree(template, into, copy_function=_link)
    for test_file, shown in files:
        destination = into / shown
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.unlink(missing_ok=True)  # never written through a link into the template
        shutil.copyfile(test_file, destination)
    return into


def template_mounts(template: Path) -> list[tuple[Path, str]]:
    """What the sandbox binds over a ``mounted`` tester folder (:func:`tester_folder`): each top-level entry of the
    template, by its name."""
    return [(Path(entry.path), entry.name) for entry in sorted(os.scandir(template), key=lambda entry: entry.name)]


def _link(source: str, destination: str) -> None:
    try:
        os.link(source, destination)
    except OSError:  # another file system, or links not allowed: a copy
        shutil.copy2(source, destination)


def _waiting(reader: FrameReader | None) -> dict[str, object] | None:
    """The next whole frame ``reader`` has or its pipe holds now, without waiting; None if there is none (or it
    cannot be read)."""
    if reader is None:
        return None
    try:
        frame = reader.next()
        if frame is None and readable_within(reader.fd, 0):
            reader.fill()
            frame = reader.next()
        return frame
    except (wire.WireError, wire.ChannelClosed, OSError):
        return None


# ---------------------------------------------------------------- what one run saw


@dataclass(frozen=True)
class RelayRun:
    """One learner test file's run, as the judge saw it (events are the tester's claims)."""

    events: tuple[dict[str, object], ...]  # the tester's report, one event each (see learner_plugin)
    limits: dict[str, tuple[Limit, str]] = field(default_factory=dict)  # node id → the host limit it hit, in words
    traces: dict[str, str] = field(default_factory=dict)  # node id → where the learner's code last raised
    printed: dict[str, str] = field(default_factory=dict)  # node id → what the learner's code printed
    stopped: Limit | None = None  # a limit that stopped the tester itself
    stopped_in: str = ""  # the test the tester had marked when it was stopped
    gave_up: int = 0  # the run was stopped after this many tests hit limits
    output: str = ""  # what the tester printed (pytest's own lines), capped
    budget: str = ""  # the submission's time budget for its own tests stopped (or prevented) the run: why, in words
    ended: int | None = None  # how the tester ended by itself (its exit code; negative: a signal), if it was not stopped
    ended_seen: bool = False  # it ended by itself (``ended`` is None when its exit status could not be read)


def _boundary(message: str) -> dict[str, object]:
    return {"op": "raise", "error": {"kind": "boundary", "module": "", "qualname": "BoundaryError",
                                     "bases": ["ValueError"], "message": message}, "mutated": []}


class _Relay:
    def __init__(self, tester_dir: Path, shown: tuple[str, ...], host_dir: Path, settings: JudgeSettings,
                 isolation: Isolation, scratch: Path, offered: Offered, budget: TimeBudget | None = None,
                 template: Path | None = None) -> None:
        self.tester_dir, self.shown, self.settings, self.isolation = tester_dir, shown, settings, isolation
        self.template = template  # bound over the tester's folder (see tester_folder): a sandboxed tester only
        self.parts: list[RelayRun] = []  # the files before the current one (self.shown[len(self.parts)]), finished
        self.finished: int | None = None  # the current file's pytest session ended with this status (its claim)
        self.started = 0.0  # when the run began (the budget is spent when it ends)
        self.unreached = False  # the budget was used up as the tester began the current file: it is not run here
        self.scratch, self.offered = scratch, offered
        self.budget = budget  # shared by every run of the learner's own tests in this judge run
        self.budget_bound = False  # the budget, not learner_tests_wall_s, set this run's deadline
        self.host = Host("forge", host_dir, settings, isolation, _no_classes)
        self.current = ""
        self.fresh_test = True
        self.ready = False
        self.limits: dict[str, tuple[Limit, str]] = {}
        self.traces: dict[str, str] = {}
        self.printed: dict[str, str] = {}
        self.hits = 0
        self.stopped: Limit | None = None
        self.ended: int | None = None  # the tester's exit code when it ended by itself
        self.ended_seen = False
        self.deadline = 0.0
        self.looked = 0.0  # when the tester's limits were last looked at
        self.process: subprocess.Popen[bytes] | None = None
        self.watchdog = Watchdog(cpu_s=settings.learner_tests_cpu_s, wall_over=lambda now: now > self.deadline,
                                 flooded=lambda: self.tester_output.flooded)
        self.events: list[dict[str, object]] = []
        self.tester_output = PrintedOutput(settings.output_kb * 1024)  # what the tester prints (its stderr)

    # ------------------------------------------------------------ the whole run

    def run(self) -> list[RelayRun]:
        """One run per file the tester reached, in order (at least the first)."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.started = time.monotonic()
        if not self._allow(self.started):
            return [RelayRun((), stopped=Limit.WALL, budget=self.budget.message() if self.budget is not None else "")]
        try:
            last = self._run()
            return self.parts if self.unreached else [*self.parts, last]
        finally:
            if self.budget is not None:
                self.budget.spend(time.monotonic() - self.started)

    def _allow(self, now: float) -> bool:
        """The current file's wall-clock deadline from ``now``: ``learner_tests_wall_s``, or what is left of the
        budget if that is less; False when the budget is used up."""
        allowed = float(self.settings.learner_tests_wall_s)
        self.budget_bound = False
        if self.budget is not None:
            left = self.budget.remaining() - (now - self.started)  # this run's time is spent when it ends
            if self.budget.used_up or left <= 0:
                return False
            if left < allowed:
                allowed, self.budget_bound = left, True
        self.deadline = now + allowed
        return True

    def _run(self) -> RelayRun:
        self.host.spawn()  # the host starts while pytest starts in the tester
        to_tester_r, to_tester_w = os.pipe()
        from_tester_r, from_tester_w = os.pipe()
        drain: threading.Thread | None = None
        try:
            self.process = self.watchdog.process = self._start_tester(to_tester_r, from_tester_w)
            os.close(to_tester_r)
            os.close(from_tester_w)
            to_tester_r = from_tester_w = -1
            assert self.process.stderr is not None
            # the thread reads its own copy of the descriptor: stopping the tester closes the process's
            # stream, possibly while the thread still reads what the tester printed last
            drain = self.tester_output.read(os.dup(self.process.stderr.fileno()))
            os.set_blocking(to_tester_w, False)  # a tester that stops reading must not block the judge
            self._serve(FrameReader(from_tester_r), to_tester_w)
        finally:
            self._take_printed()
            self.host.close()
            if self.process is not None:
                channel._kill_group(self.process)
                channel.untrack(self.process)
            for fd in (to_tester_r, from_tester_w, to_tester_w, from_tester_r):
                if fd >= 0:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            if drain is not None:
                drain.join(timeout=10)
        return self._part(self.tester_output.take())

    def _part(self, output: str) -> RelayRun:
        """The current file's run as it stands."""
        return RelayRun(tuple(self.events), dict(self.limits), dict(self.traces), dict(self.printed), self.stopped,
                        self.current if self.stopped is not None else "",
                        self.hits if self.hits >= self.settings.max_limit_hits else 0,
                        output,
                        self.budget.message() if self.budget is not None and self.budget_bound
                        and self.stopped is Limit.WALL else "",
                        self.ended if self.stopped is None else None, self.ended_seen and self.stopped is None)

    def _next_file(self) -> None:
        """The tester begins the next file: the current one's run is over, and the next one starts afresh, as it
        would in a tester of its own — its events, a fresh host, its limits counted from now."""
        self.tester_output.settle()
        if self.tester_output.flooded:  # over the output limit within the file that just ended: it is stopped there
            self._stop_tester(Limit.OUTPUT)
            return
        self._take_printed()
        self.ended, self.ended_seen = self.finished, self.finished is not None  # its session's end, as it said
        self.parts.append(self._part(self.tester_output.restart()))
        self.events, self.limits, self.traces, self.printed = [], {}, {}, {}
        self.hits, self.current, self.fresh_test, self.finished = 0, "", True, None
        self.ended, self.ended_seen = None, False
        self.host.spawn()  # a fresh host, started as for a run of its own (spawn ends the last one)
        self.ready = False
        self.watchdog.count_cpu_from_now(self.settings.learner_tests_cpu_s)
        if not self._allow(time.monotonic()):
            self.unreached = True  # the budget is used up: this file and the rest are not run here
            self._stop_tester(Limit.WALL)

    def _start_tester(self, link_in: int, link_out: int) -> subprocess.Popen[bytes]:
        """The tester, with the link on its standard input and output: its command line, environment and
        descriptors are the same in every run of the file."""
        settings = self.settings
        # the process's own hard limit: every file's allowance (the watchdog holds each file to its own)
        cpu_total = settings.learner_tests_cpu_s * len(self.shown) + 5
        limits = json.dumps(host_limits({**settings.host_limits(), "cpu_total_s": cpu_total}, self.isolation))
        root = CODE_MOUNT if self.isolation.sandboxed else str(self.tester_dir)
        files = [argument for shown in self.shown for argument in ("--file", shown)]
        argv = [*channel.host_argv(f"{root}/_judge_tester.py"), "--limits", limits,
                "--language", settings.language, *files, "--", "-c", f"{root}/_judge_pytest.ini",
                f"--rootdir={root}", "--noconftest", "-q", "--color=no", "--tb=short"]
        with user_namespace() if self.isolation.sandboxed else nullcontext() as userns:
            if self.isolation.sandboxed:
                mounts = template_mounts(self.template) if self.template is not None else []
                command, env = bwrap_command(self.isolation.bwrap, self.tester_dir, argv, userns=userns,
                                             mounts=mounts), None
            else:
                command, env = argv, plain_env(self.scratch)
            process = subprocess.Popen(channel.dies_with_parent(command), cwd=self.scratch, env=env, stdin=link_in,
                                       stdout=link_out, stderr=subprocess.PIPE, start_new_session=True,
                                       pass_fds=() if userns is None else (userns,))
        channel.track(process)
        return process

    # ------------------------------------------------------------ relaying

    def _serve(self, reader: FrameReader, to_tester: int) -> None:
        while True:
            frame = self._from_tester(reader)
            if frame is None:
                return
            op = frame.get("op")
            if op == "event":
                self._event(frame.get("event"))
                continue
            refused = self._refused(frame)
            if refused is not None:
                reply: dict[str, object] | None = _boundary(refused)
            else:
                reply = self._to_host({key: value for key, value in frame.items() if key != "cpu_s"})
            if self.hits >= self.settings.max_limit_hits:
                return  # the rest of the file is not run (see gave_up)
            if reply is not None and not self._to_tester(to_tester, wire.dumps(reply)):
                return

    def _to_tester(self, fd: int, data: bytes) -> bool:
        """Write a whole frame to the tester, watching it while it does not read; False when it is gone."""
        view = memoryview(data)
        self.watchdog.begin_wait()
        while view:
            try:
                view = view[os.write(fd, view):]
                continue
            except BlockingIOError:
                pass
            except OSError:
                return False
            self.watchdog.wait(write=fd)
            if self._tester_limit() is not None:
                return False
            if self.watchdog.ended:
                self._tester_ended()
                return False
        return True

    def _from_tester(self, reader: FrameReader) -> dict[str, object] | None:
        """The tester's next frame, watching it meanwhile; None when it is done or was stopped."""
        process = self.process
        assert process is not None
        self.watchdog.begin_wait()
        while True:
            try:
                frame = reader.next()
                if frame is not None:
                    if time.monotonic() - self.looked > POLL_S and self._tester_limit(reader, frame) is not None:
                        return None  # a tester that never stops writing is still held to its limits
                    return frame
                # once it has ended, what it wrote before it ended is read before the run is over: the select may
                # have timed out just before its last frames (a test's result, the finish) arrived
                if self.watchdog.readable(reader.fd):
                    reader.fill()
                    continue
            except wire.ChannelClosed:
                process.poll()
                self._tester_ended()
                return None
            except (wire.WireError, OSError):
                self._stop_tester(Limit.CRASH)
                return None
            if self._tester_limit(reader) is not None:
                return None
            if self.watchdog.ended:
                self._tester_ended()
                return None

    def _tester_limit(self, reader: FrameReader | None = None, held: dict[str, object] | None = None) -> Limit | None:
        """Stop the tester if it is over a limit of its own (output, its deadline, CPU); which one. What it said
        before it went over and was not taken yet (``held``, then what ``reader`` has) is taken first."""
        self.looked = time.monotonic()
        limit = self.watchdog.over()
        if limit is not None:
            self._said_before_the_limit(reader, held)
            self._stop_tester(limit)
        return limit

    def _said_before_the_limit(self, reader: FrameReader | None, held: dict[str, object] | None) -> None:
        """Take the events of the current file the tester sent before it went over a limit, which this thread had
        not read when it looked (on a busy machine it may look late): above all a test's start, so that the row
        names the test that was stopped, as it does when the judge looks in time. The tester sends a test's start
        before the test runs, so it is there to read. A call ends the taking (the tester waits for its answer:
        nothing after it was sent), and so does the word that the next file begins (that file is not the one over
        the limit); at most :data:`MAX_TAKEN_LATE` frames."""
        for _ in range(MAX_TAKEN_LATE):
            frame, held = (held, None) if held is not None else (_waiting(reader), None)
            if frame is None or frame.get("op") != "event":
                return
            event = frame.get("event")
            if isinstance(event, dict) and event.get("event") == "file":
                return
            self._event(event)

    def _tester_ended(self) -> None:
        process = self.process
        assert process is not None
        try:
            code = process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        if ended_by_cpu_rlimit(code):
            self.stopped = Limit.CPU  # the tester's own hard CPU limit (its threads were not watched while it waited)
        if self.isolation.sandboxed and code is not None and 128 < code <= 128 + 64:
            code = 128 - code  # bubblewrap exits 128 + N when the process it runs was killed by signal N
        self.ended, self.ended_seen = code, True

    def _stop_tester(self, limit: Limit) -> None:
        self.stopped = limit
        if self.process is not None:
            channel._kill_group(self.process)

    def _event(self, event: object) -> None:
        if not isinstance(event, dict):
            return
        if event.get("event") == "file":  # the tester's own word that it begins the next file, taken only in order
            begins = len(self.parts) + 1
            if self.stopped is None and begins < len(self.shown) and event.get("path") == self.shown[begins]:
                self._next_file()
            return
        if event.get("event") == "finish" and type(event.get("exitstatus")) is int:
            self.finished = int(event["exitstatus"])
        if len(self.events) >= MAX_EVENTS:
            return
        self.events.append(event)
        if event.get("event") == "start":
            self._begin(str(event.get("nodeid", ""))[:500])

    def _begin(self, nodeid: str) -> None:
        self._take_printed()
        self.current = nodeid
        self.fresh_test = True

    def _take_printed(self) -> None:
        printed = self.host.take_output()
        if printed.strip() and self.current:
            self.printed[self.current] = (self.printed.get(self.current, "") + printed)[-4000:]

    def _refused(self, frame: dict[str, object]) -> str | None:
        """Why the judge does not relay this frame of the tester's, or None."""
        op = frame.get("op")
        if op not in TESTER_OPS:
            return f"the judge relays no request {str(op)[:40]!r} to the learner's code"
        if op == "call" and frame.get("target") not in self.offered.calls:
            return (f"{str(frame.get('target'))[:120]!r} is not a function or class of the course's forge: a test may "
                    "call only what the stage module's starter defines")
        if op in ("call_handle", "get_handle") and frame.get("name") not in (None, "") and not (
                isinstance(frame.get("name"), str) and PUBLIC_NAME.match(str(frame.get("name")))):
            return "a test may use only public attributes of an object from the learner's code"
        if op == "setattr":
            args = frame.get("args")
            if frame.get("target") not in self.offered.classes or not (
                    isinstance(args, list) and len(args) == 3 and isinstance(args[1], str) and PUBLIC_NAME.match(args[1])):
                return "a test may set only public fields of the course's classes"
        if op == "shape":
            classes = frame.get("classes")
            if not isinstance(classes, list) or not all(item in self.offered.classes for item in classes):
                return "a test may ask only about the course's classes"
        return None

    def _to_host(self, frame: dict[str, object]) -> dict[str, object] | None:
        """Forward one frame of the tester's; the host's answer for the tester, or None after telling it of a limit."""
        host = self.host
        try:
            if not self.ready or not host.alive:
                if self.ready:
                    host.spawn()  # a fresh host after a limit stopped the last one
                problem = host.handshake([])
                self.ready = True
                if problem is not None:
                    raise LimitExceeded(Limit.CRASH, problem.message)
                self.fresh_test = True
            if self.fresh_test:
                host.begin_test()
                self.fresh_test = False
            reply = host.relay(frame, deadline=self.deadline)
            while reply.get("op") == "getattr" and not (isinstance(reply.get("name"), str)
                                                         and PUBLIC_NAME.match(str(reply.get("name")))):
                reply = host.relay(_attribute_refused(str(reply.get("name"))[:80]), deadline=self.deadline)
        except LimitExceeded as stop:
            return self._hit(stop.limit, str(stop))
        except BoundaryError as unreadable:
            return self._hit(Limit.CRASH, str(unreadable))
        op = reply.get("op")
        if op not in HOST_OPS:
            host.close()
            return self._hit(Limit.CRASH, _("your code's process answered {op} to a call").format(op=repr(str(op)[:40])))
        error = reply.get("error")
        if op == "raise" and isinstance(error, dict):
            trace = error.pop("traceback", "")
            if isinstance(trace, str) and trace.strip() and self.current:
                self.traces[self.current] = wire.cap(trace, wire.MAX_TRACEBACK_CHARS)
            if error.get("module") == "builtins" and error.get("qualname") == "MemoryError":
                host.close()
                self._record(Limit.MEMORY, _("your code ran out of memory (the sandbox's memory limit)"))
        return reply

    def _record(self, limit: Limit, message: str) -> None:
        self.hits += 1
        if self.current and self.current not in self.limits:
            self.limits[self.current] = (limit, message)

    def _hit(self, limit: Limit, message: str) -> dict[str, object]:
        """The host was stopped at a limit during the current test: record it, and tell the tester."""
        self.host.close()
        self._record(limit, message)
        return {"op": "limit", "limit": str(limit), "message": message}


def _attribute_refused(name: str) -> dict[str, object]:
    message = f"{name!r}: the learner's code may read only public attributes of a test object"
    return {"op": "raise", "error": {"kind": "exception", "module": "builtins", "qualname": "AttributeError",
                                     "bases": ["AttributeError", "Exception", "BaseException"], "message": message,
                                     "args": [message]}}


def _no_classes(path: str) -> object:
    raise wire.WireError(f"the judge does not rebuild {path}: it only relays frames")


def run_files(tester_dir: Path, shown: Sequence[str], host_dir: Path, settings: JudgeSettings, isolation: Isolation,
              scratch: Path, offered: Offered, budget: TimeBudget | None = None,
              template: Path | None = None) -> list[RelayRun]:
    """Run the learner's test files ``shown`` (in ``tester_dir``), one after the other in one tester, against the
    ``forge`` in ``host_dir``: a run for each file the tester reached, in order (at least the first); a file past
    them was not run (see the module's docstring). ``template``: the folder a ``mounted`` tester folder was made
    from (:func:`tester_folder`), bound over it in the sandbox."""
    with i18n.speaking(settings.language):  # this may run in a worker thread, which starts in English
        return _Relay(tester_dir, tuple(shown), host_dir, settings, isolation, scratch, offered, budget,
                      template).run()
