"""Fixtures for the course's own tests: a disposable copy of the workbook, the one CLI runner and the one wait helper.

* :func:`run_cli` / :func:`start_cli` run ``python -m forgelab.cli`` the way a person does (every test that spawns
  the command line goes through them, so its environment is decided in one place);
* :func:`wait_until` waits for a condition up to a deadline, and says what it waited for when it gives up;
  :func:`wait_for_http` is the one "until the server answers" loop; :class:`OutputLines` reads a child's output
  on a thread, so no read ever blocks past its deadline and the child never stalls on a full pipe.
"""

from __future__ import annotations

import atexit
import ctypes
import io
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

import pytest
from xdist_groups import keep_xdist_groups

# A suite started in the background (`cmd &` in a script, nohup) inherits an ignored SIGINT, and so does every command it
# starts: Python then never raises KeyboardInterrupt, and the tests that press Ctrl-C in a check saw it run to its end.
# Catching it here (as an interactive start does) gives the commands under test the default handling again.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parents[2]
# A command that runs longer than this is taken to hang: a guard, never a verdict on speed. It is far above the slowest
# command of the suite on a loaded 2-CPU machine (`build --check` took more than 120 s there), and below the per-test
# guard (pyproject.toml [tool.pytest.ini_options] timeout).
CLI_HANG_S = 600
COPY_IGNORE = shutil.ignore_patterns(".venv", ".git", "build", "labs", "evidence", ".forgelab", "__pycache__",
                                     "*.pyc", "test-artifacts", ".hypothesis", "node_modules")


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass(frozen=True)
class WorkbookCopy:
    root: Path

    def run(self, *args: str, env: dict[str, str] | None = None, timeout: int = CLI_HANG_S) -> CliResult:
        return run_cli(self.root, *args, env=env, timeout=timeout)

    def evidence(self, key: str) -> dict:
        path = self.root / "evidence" / "prompt-context-output" / key / "verification.json"
        return json.loads(path.read_text(encoding="utf-8"))

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path


def cli_env(root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGELAB_", "PYTEST_XDIST", "PYTEST_CURRENT"))}
    env["FORGELAB_ROOT"] = str(root)
    env["FORGELAB_WIDTH"] = "200"
    env.update(extra or {})
    return env


def bundle_env(root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a learner bundle's own forgelab run with this venv's python: nothing installed (its
    packages come from ``PYTHONPATH=root``), no display (no browser is ever started), no variables of ours."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FORGELAB_", "PYTEST_", "PYTHON", "DISPLAY", "WAYLAND", "BROWSER"))}
    env.update(PYTHONPATH=str(root), FORGELAB_ROOT=str(root), FORGELAB_WIDTH="200", **(extra or {}))
    return env


def cli_command(*args: str, python: str | Path = sys.executable) -> list[str]:
    """The argv of ``forgelab ARGS`` (for a runner of another kind, e.g. pexpect's terminal)."""
    return [str(python), "-m", "forgelab.cli", *args]


def run_cli(root: Path, *args: str, env: dict[str, str] | None = None, timeout: int = CLI_HANG_S, cwd: Path | None = None,
            bare_env: dict[str, str] | None = None, python: str | Path = sys.executable,
            input: str | None = None) -> CliResult:
    """``python -m forgelab.cli ARGS`` in ``cwd`` (default ``root``) for the workbook at ``root``.

    The environment is this process's without pytest's and forgelab's own variables, plus ``FORGELAB_ROOT``,
    ``FORGELAB_WIDTH=200`` and ``env``; ``bare_env`` replaces all of that with exactly what it holds (a person
    with a bare shell: only the variables given)."""
    done = subprocess.run(cli_command(*args, python=python), cwd=cwd or root,
                          env=cli_env(root, env) if bare_env is None else bare_env,
                          capture_output=True, text=True, timeout=timeout, input=input)
    return CliResult(done.returncode, done.stdout, done.stderr)


def start_cli(root: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
              bare_env: dict[str, str] | None = None, python: str | Path = sys.executable,
              **popen: Any) -> subprocess.Popen[str]:
    """The same command as :func:`run_cli`, left running (a server, a command to interrupt): the caller ends it."""
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    popen.setdefault("text", True)
    return subprocess.Popen(cli_command(*args, python=python), cwd=cwd or root,
                            env=cli_env(root, env) if bare_env is None else bare_env, **popen)


# ---------------------------------------------------------------- waiting

T = TypeVar("T")
POLL_S = 0.1  # how often a condition outside any browser is asked again (a server, a file, a process)


def wait_until(condition: Callable[[], T | None], *, timeout: float, what: str,
               gave_up: Callable[[], str | None] | None = None, every: float = POLL_S) -> T:
    """Ask ``condition`` until it returns something other than None/False, and return that.

    Fails after ``timeout`` seconds naming ``what`` was awaited; ``gave_up`` is asked too and ends the wait at
    once when it returns a reason (a server that exited will never answer). An exception from ``condition``
    counts as "not yet" and is named in the failure. Pages in a browser are never waited on with this:
    Playwright's ``expect`` waits for them."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            result = condition()
            if result is not None and result is not False:
                return result
        except Exception as error:  # noqa: BLE001 - "not yet", kept for the message
            last = error
        reason = gave_up() if gave_up is not None else None
        if reason is not None:
            raise AssertionError(f"gave up waiting for {what}: {reason}" + (f" (last error: {last!r})" if last else ""))
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:g} s for {what} in vain" + (f" (last error: {last!r})" if last else ""))
        time.sleep(every)


def processes_with_variable(marker: str) -> list[int]:
    """The processes whose environment holds ``marker`` (e.g. ``TMPDIR=/a/b``: a command given its own TMPDIR and all
    it started — a variable that starts with ``marker`` and a slash counts too: a session's TMPDIR inside it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if any(variable == marker.encode() or variable.startswith(marker.encode() + b"/")
                       for variable in (entry / "environ").read_bytes().split(b"\0")):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def exited(process: subprocess.Popen[Any]) -> Callable[[], str | None]:
    """A ``gave_up`` for :func:`wait_until`: the process has exited."""
    return lambda: None if process.poll() is None else f"the process exited with {process.returncode}"


def wait_for_http(url: str, *, timeout: float, process: subprocess.Popen[Any] | None = None) -> bytes:
    """The body of ``url`` once its server answers 2xx; fails after ``timeout`` s or as soon as ``process`` exits."""

    def answer() -> bytes:
        with urllib.request.urlopen(url, timeout=min(10.0, timeout)) as response:
            return bytes(response.read())

    return wait_until(answer, timeout=timeout, what=f"an answer from {url}",
                      gave_up=exited(process) if process is not None else None)


class OutputLines:
    """A child's text output, read line by line on a thread from the moment it starts.

    :meth:`wait_for` never blocks past its deadline (a child that prints nothing cannot hang the test), and the
    pipe keeps being drained for as long as the child lives, so a chatty server never stalls on a full pipe."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: list[str] = []
        self._changed = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self._lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def wait_for(self, pattern: str, *, timeout: float) -> re.Match[str]:
        """The first line matching ``pattern`` (seen already or still to come), within ``timeout`` seconds."""
        compiled, deadline, looked = re.compile(pattern), time.monotonic() + timeout, 0
        with self._changed:
            while True:
                for line in self._lines[looked:]:
                    if (found := compiled.search(line)) is not None:
                        return found
                looked = len(self._lines)
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    why = "the output ended" if self._closed else f"{timeout:g} s passed"
                    raise AssertionError(f"no line matched {pattern!r} ({why}); the last lines:\n{self.tail()}")
                self._changed.wait(left)

    def first(self, count: int, *, timeout: float) -> list[str]:
        """The first ``count`` lines, once they have been printed (within ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self._lines) < count:
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    why = "the output ended" if self._closed else f"{timeout:g} s passed"
                    raise AssertionError(f"fewer than {count} lines ({why}):\n{self.tail()}")
                self._changed.wait(left)
            return self._lines[:count]

    def tail(self, count: int = 20) -> str:
        with self._changed:
            return "".join(self._lines[-count:])

    def close(self, timeout: float = 10) -> None:
        """Wait for the end of the output (after the child has been stopped)."""
        self._thread.join(timeout)


_PRISTINE: list[Path] = []


def pristine_starters() -> Path:
    """``forge/`` and ``transfer/`` as committed (or, outside git, as they are), exported once per test process.

    The export lives in the session's temporary folder (see :func:`temporary_files_stay_in_tmp_path`) and is
    removed when the session (or, outside pytest, the process) ends."""
    if not _PRISTINE:
        folder = Path(tempfile.mkdtemp(prefix="forge-pristine-"))
        atexit.register(shutil.rmtree, folder, True)
        done = subprocess.run(["git", "archive", "--format=tar", "HEAD", "forge", "transfer"], cwd=ROOT,
                              capture_output=True, timeout=120, check=False)
        if done.returncode == 0:
            with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
                archive.extractall(folder, filter="data")
        else:
            for name in ("forge", "transfer"):
                shutil.copytree(ROOT / name, folder / name, ignore=COPY_IGNORE)
        _PRISTINE.append(folder)
    return _PRISTINE[0]


@pytest.fixture(scope="session", autouse=True)
def temporary_files_stay_in_tmp_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """No test leaves anything in the machine's temporary folder: every temporary file of the session — made
    by this process or by any command it starts (``TMPDIR``) — goes into a folder inside pytest's own base
    folder, and that folder must be empty again when the session ends (what a test keeps belongs in its
    ``tmp_path``). Leftovers fail the session's last test, naming them."""
    scratch = tmp_path_factory.getbasetemp() / "tmpdir"
    scratch.mkdir()
    saved = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = str(scratch)
    try:
        yield scratch
    finally:
        if saved[0] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[0]
        tempfile.tempdir = saved[1]
        while _PRISTINE:
            shutil.rmtree(_PRISTINE.pop(), ignore_errors=True)
    for thread in threading.enumerate():  # watch mode removes a run's folder after its verdict (judge.core.run)
        if thread.name == "forgelab-judge-cleanup":
            thread.join()
    left = sorted(scratch.iterdir())
    assert left == [], (f"the tests left temporary files behind (in TMPDIR={scratch}): "
                        + "; ".join(describe_leftover(path) for path in left))


def describe_leftover(path: Path, shown: int = 12) -> str:
    """A leftover of the session's temporary folder, told so that its maker can be found: its name, how many files it
    holds, when it was made and last changed, and its first entries two levels down (a judge run's folder names its
    targets there: ``targets/sub-01``, ``learner/00-transfer-01``, …)."""
    import time

    def clock(seconds: float) -> str:
        return time.strftime("%H:%M:%S", time.localtime(seconds))

    try:
        own = path.lstat()
        if not path.is_dir() or path.is_symlink():
            return f"{path.name} (a file of {own.st_size} bytes, last changed {clock(own.st_mtime)})"
        inside = sorted(path.rglob("*"))
        latest = max([own.st_mtime, *(entry.lstat().st_mtime for entry in inside)])
        entries = sorted({"/".join(entry.relative_to(path).parts[:2]) for entry in inside})
        more = f", … {len(entries) - shown} more" if len(entries) > shown else ""
        return (f"{path.name} ({sum(1 for entry in inside if not entry.is_dir())} files; made about "
                f"{clock(own.st_ctime)}, last changed {clock(latest)}; holds {', '.join(entries[:shown])}{more})")
    except OSError as error:  # it went while being described
        return f"{path.name} ({error.strerror})"


def copy_workbook(destination: Path) -> WorkbookCopy:
    """A copy of the course repository without git: it carries the pristine starters in course/starters/,
    as the learner bundle does, so the judge's course definitions never come from a test's broken forge/."""
    shutil.copytree(ROOT, destination, ignore=COPY_IGNORE)
    shutil.copytree(pristine_starters(), destination / "course" / "starters", dirs_exist_ok=True)
    return WorkbookCopy(destination)


def copy_with_reference_forge(destination: Path) -> WorkbookCopy:
    """:func:`copy_workbook` whose ``forge/`` (the learner's) holds the course's reference modules."""
    copy = copy_workbook(destination)
    for module in sorted((copy.root / "solutions" / "forge").glob("*.py")):
        shutil.copyfile(module, copy.root / "forge" / module.name)
    return copy


@pytest.fixture(autouse=True)
def the_tools_language_is_left_as_it_was() -> Iterator[None]:
    """A test leaves the language the tools speak in this process as it found it, or fails at its teardown: a test
    that made a Chinese notebook's stage tools in-process and kept their language (``i18n.use``) left the next tests
    of its xdist worker speaking Chinese. Switch for a while with ``i18n.speaking`` (or in a context of your own);
    the language is put back either way, so only the test that changed it fails."""
    from forgelab.core import i18n

    before = i18n.active()
    yield
    after = i18n.active()
    if after != before:
        i18n.use(before)
        pytest.fail(f"this test left the tools speaking {after!r} (it found them speaking {before!r}): switch the "
                    "language with i18n.speaking, or restore it", pytrace=False)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture
def workbook(tmp_path: Path) -> WorkbookCopy:
    """A fresh copy of the workbook (course material + starters + solutions) to change freely."""
    return copy_workbook(tmp_path / "workbook")


@pytest.fixture(scope="session")
def course():  # type: ignore[no-untyped-def]
    from forgelab.core.registry import load_course

    return load_course(ROOT)


@pytest.fixture(scope="session")
def verification_validator() -> Callable[[dict], None]:
    import jsonschema

    from forgelab.core.evidence import schema

    validator = jsonschema.Draft202012Validator(schema(), format_checker=jsonschema.FormatChecker())

    def validate(document: dict) -> None:
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
        assert not errors, "; ".join(f"{list(e.path)}: {e.message}" for e in errors)

    return validate


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test's xdist group reaches the scheduler (see xdist_groups.py: pytest 9.2 lost pytest-xdist's suffix)."""
    keep_xdist_groups(config, items)


def interrupt_a_thread_other_than_the_main_one(pid: int) -> None:
    """SIGINT to one thread of ``pid`` that is not its main thread (tgkill): Linux may hand Ctrl-C to any thread of a
    process, and Python raises KeyboardInterrupt only in the main one, at its next bytecode."""
    tgkill = {"x86_64": 234, "aarch64": 131}.get(platform.machine())
    if tgkill is None:
        pytest.skip(f"tgkill's syscall number on {platform.machine()} is not known here")
    libc = ctypes.CDLL(None, use_errno=True)
    for task in sorted(int(path.name) for path in Path(f"/proc/{pid}/task").iterdir()):
        if task != pid and libc.syscall(tgkill, pid, task, signal.SIGINT) == 0:
            return
    raise AssertionError(f"process {pid} has no thread besides its main one to take the signal")


def descendants(pid: int) -> dict[int, str]:
    """Every process below ``pid`` (host PIDs, sandboxed ones too), with its start time to tell a reused PID."""
    parents: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        parents.setdefault(int(fields[1]), []).append(int(entry))
        starts[int(entry)] = fields[19]
    found, stack = {}, list(parents.get(pid, []))
    while stack:
        current = stack.pop()
        found[current] = starts.get(current, "")
        stack.extend(parents.get(current, []))
    return found


def wchan(pid: int) -> str:
    """Where in the kernel ``pid`` waits ("hrtimer_nanosleep" while it sleeps, a pipe's read while it waits)."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def learner_code_sleeps_below(pid: int) -> bool:
    """A sandboxed host below ``pid`` is asleep in the learner's code (a host waiting for a call reads a pipe)."""
    return any("_judge_host" in command_line(child) and "nanosleep" in wchan(child) for child in descendants(pid))


def main_thread_waits(pid: int) -> bool:
    """The main thread of ``pid`` is blocked in a lock (a futex): it runs no bytecode until the lock is released."""
    return "futex" in wchan(pid)
