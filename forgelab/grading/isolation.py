"""How graded code is kept apart: environment, network, time limits and process trees.

What is enforced for every submission (and documented in the README):

* its own scratch folder (a copy; the submission is never written), which is also ``HOME``,
  ``TMPDIR``, the Jupyter runtime folder and the forgelab workspace of everything it runs;
* only its ``forge/`` on ``PYTHONPATH`` (plus our start-up rules), bytecode writing off, a fixed hash
  seed, and Hypothesis derandomized without an example database (same falsifying example every run);
* no network: proxy variables removed, a ``sitecustomize`` socket guard in every Python process,
  and — where the system allows unprivileged user namespaces and ``ip`` exists — a separate
  network namespace that only has loopback (``--network auto``, the default, uses it if it works);
* wall-clock limits: per test (pytest-timeout), per import probe (at least 15 s: a fresh interpreter
  on a busy machine), per notebook cell, per notebook
  (the whole nbval run, killed with its kernel) and per submission (the whole worker tree);
* its own process group: when a submission is done or over its limit, the group is killed.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from forgelab import runner

STARTUP_RULES = Path(__file__).resolve().parent / "startup_rules.py"
PROXY_VARIABLES = ("http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy", "socks_proxy")


@dataclass(frozen=True)
class Limits:
    test_s: int = 10  # one test (pytest-timeout)
    cell_s: int = 60  # one notebook cell
    notebook_s: int = 240  # one nbval run: kernel start and every graded cell of one notebook
    submission_s: int = 0  # the whole worker; 0 = derived from the others and the stage count

    @property
    def import_s(self) -> int:
        """One import probe: a fresh interpreter, so never less than 15 s on a busy machine."""
        return max(self.test_s, 15)

    def for_submission(self, stages: int) -> int:
        if self.submission_s:
            return self.submission_s
        per_stage = self.notebook_s + 9 * self.test_s + 3 * self.import_s + 60  # 9: incl. the known-wrong run
        return 60 + stages * per_stage


def write_startup_rules(folder: Path) -> Path:
    """``folder/sitecustomize.py`` = :mod:`forgelab.grading.startup_rules`; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(STARTUP_RULES.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def grading_env(scratch: Path, course_root: Path, limits: Limits, startup_dir: Path) -> dict[str, str]:
    """The environment of a grading worker and everything it starts."""
    env = {key: value for key, value in os.environ.items()
           if key.lower() not in PROXY_VARIABLES
           and not key.startswith(("FORGELAB_", "PYTEST_", "COV_", "JUPYTER_", "IPYTHON", "PYTHON"))}
    home, tmp = scratch / "home-dir", scratch / "tmp"
    for folder in (home, tmp):
        folder.mkdir(parents=True, exist_ok=True)
    env.update({
        "HOME": str(home), "TMPDIR": str(tmp), "JUPYTER_RUNTIME_DIR": str(home / "jupyter-runtime"),
        "JUPYTER_CONFIG_DIR": str(home / "jupyter-config"), "IPYTHONDIR": str(home / "ipython"),
        "MPLCONFIGDIR": str(home / "matplotlib"), "JUPYTER_PLATFORM_DIRS": "1",
        "FORGELAB_ROOT": str(course_root), "FORGELAB_WORKSPACE": str(scratch / "workspace"),
        "FORGELAB_EXTRA_PATH": str(startup_dir), "FORGELAB_NO_NETWORK": "1",
        "FORGELAB_TEST_TIMEOUT": str(limits.test_s), "FORGELAB_PROBE_TIMEOUT": str(limits.import_s),
        "FORGELAB_WIDTH": "110", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
        "PYTHONIOENCODING": "utf-8", "PIP_NO_INDEX": "1", "NO_PROXY": "*", "no_proxy": "*",
        "FORGELAB_HYPOTHESIS_DERANDOMIZE": "1", "HYPOTHESIS_STORAGE_DIRECTORY": str(scratch / "hypothesis"),
    })
    return env


# ---------------------------------------------------------------- network namespace


def _ip_command() -> str | None:
    return shutil.which("ip") or next((p for p in ("/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip") if os.access(p, os.X_OK)), None)


def namespace_prefix() -> list[str] | None:
    """The command prefix that runs a program in a new network namespace with loopback up."""
    unshare, ip = shutil.which("unshare"), _ip_command()
    if not unshare or not ip or not sys.platform.startswith("linux"):
        return None
    return [unshare, "--net", "--map-root-user", "sh", "-c", f'{ip} link set lo up && exec "$0" "$@"']


@functools.lru_cache(maxsize=1)
def namespace_works() -> bool:
    prefix = namespace_prefix()
    if prefix is None:
        return False
    try:
        done = subprocess.run([*prefix, sys.executable, "-c", "print('ok')"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip() == "ok"


def network_mode(requested: str) -> str:
    """``namespace`` or ``guard`` (the socket guard alone); ``auto`` picks namespace when it works."""
    if requested == "guard":
        return "guard"
    if namespace_works():
        return "namespace"
    if requested == "namespace":
        raise RuntimeError("a network namespace is not available here (needs `unshare --net --map-root-user` and `ip`): "
                           "use --network guard, or run the grader in a container without network")
    return "guard"


def describe_network(mode: str) -> str:
    if mode == "namespace":
        return "no network: separate network namespace (loopback only) + Python socket guard"
    return "no network: Python socket guard in every graded process (no network namespace available here)"


# ---------------------------------------------------------------- process trees


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1].isdigit():
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _reap(process: subprocess.Popen) -> None:  # type: ignore[type-arg]
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def kill_tree(process: subprocess.Popen) -> None:  # type: ignore[type-arg]
    """Kill a process and everything it started (children first are collected, then all killed)."""
    for pid in [*descendants(process.pid), process.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    _reap(process)


def kill_group(process: subprocess.Popen) -> None:  # type: ignore[type-arg]
    """Kill the process group that ``process`` leads, then wait for it."""
    runner.kill_group(process)
    _reap(process)


@dataclass(frozen=True)
class Finished:
    returncode: int | None  # None when the limit was reached
    stdout: str
    stderr: str
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def run_limited(command: list[str], *, cwd: Path, env: dict[str, str], limit_s: float) -> Finished:
    """Run ``command``; past ``limit_s`` kill it with every process it started."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True, encoding="utf-8", errors="replace")
    try:
        stdout, stderr = process.communicate(timeout=limit_s)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        kill_tree(process)
        stdout, stderr = process.communicate()
        code = None
    # anything it left behind (a kernel, a learner's daemon) stays in the worker's process group,
    # which the batch kills when the submission is done
    return Finished(code, stdout or "", stderr or "", time.monotonic() - started)
