"""Run tests against a target in a pytest subprocess, quickly and safely.

* The target's folder goes first on ``PYTHONPATH``; nothing is written into it (no bytecode).
* Plugin autoload is off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``): only pytest-timeout and our
  reporting plugin are loaded, which saves seconds per run in a venv that has JupyterLab and nbval.
* Every test has a timeout, and the whole run a wall-clock limit, so an infinite loop is reported.
* Before pytest, an import probe loads the stage module alone, so a missing file, a syntax error,
  an exception or a hang at import time becomes one readable cause instead of a traceback wall.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

PER_TEST_TIMEOUT_S = int(os.environ.get("FORGELAB_TEST_TIMEOUT", "30"))
PROBE_TIMEOUT_S = int(os.environ.get("FORGELAB_PROBE_TIMEOUT", "20"))

_PROBE = r"""
import importlib, json, os, sys, traceback
name, base = sys.argv[1], os.path.realpath(sys.argv[2])
def where(tb):
    frames = [f for f in traceback.extract_tb(tb) if os.path.realpath(f.filename).startswith(base)]
    frame = frames[-1] if frames else (traceback.extract_tb(tb)[-1] if tb else None)
    return (frame.filename, frame.lineno) if frame else ("", 0)
try:
    importlib.import_module(name)
except SyntaxError as error:
    print(json.dumps({"kind": "syntax", "type": type(error).__name__, "message": str(error.msg),
                      "file": error.filename or "", "line": error.lineno or 0}))
except BaseException as error:
    file, line = where(error.__traceback__)
    kind = "missing" if isinstance(error, ModuleNotFoundError) and error.name in (name, "forge") else "import"
    print(json.dumps({"kind": kind, "type": type(error).__name__, "message": str(error).splitlines()[0] if str(error) else "",
                      "file": file, "line": line}))
else:
    print(json.dumps({"kind": "ok"}))
"""


@dataclass(frozen=True)
class TestResult:
    nodeid: str
    name: str
    outcome: str  # passed | failed | error | skipped | timeout | not_run
    cause: str
    duration_ms: int
    longrepr: str = ""


@dataclass(frozen=True)
class ImportProblem:
    kind: str  # missing | syntax | import | timeout
    cause: str  # one line a learner can act on


@dataclass(frozen=True)
class RunResult:
    tests: tuple[TestResult, ...]
    problem: str | None  # a run-level problem (collection error, crash, wall-clock limit)
    collect_errors: tuple[tuple[str, str], ...] = ()  # (file node id, one-line cause)

    def by_name(self) -> dict[str, list[TestResult]]:
        grouped: dict[str, list[TestResult]] = {}
        for result in self.tests:
            grouped.setdefault(result.name, []).append(result)
        return grouped

    def find(self, name: str) -> list[TestResult]:
        return self.by_name().get(name, [])


def base_env(import_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(import_dir), *filter(None, [os.environ.get("FORGELAB_EXTRA_PATH")])])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONHASHSEED"] = "0"
    env.pop("PYTHONSTARTUP", None)
    return env


def run_bounded(command: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a command in its own process group; on timeout the whole group is killed, not just its leader."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        process.communicate()
        raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def kill_group(process: subprocess.Popen) -> None:  # type: ignore[type-arg]
    """Kill the process group that ``process`` leads (it was started with a new session)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _display(path: str, import_dir: Path, shown_as: str) -> str:
    try:
        return f"{shown_as}/{Path(path).resolve().relative_to(import_dir.resolve()).as_posix()}"
    except ValueError:
        return path


def probe_import(import_dir: Path, module: str, shown_as: str = ".") -> ImportProblem | None:
    """Import ``module`` (``forge/x.py``) alone; ``None`` when it imports cleanly."""
    relative = Path(module)
    if not (import_dir / relative).is_file():
        return ImportProblem("missing", f"{module} does not exist: create it (the notebook and `forgelab hint` show how)")
    dotted = ".".join(relative.with_suffix("").parts)
    try:
        done = run_bounded([sys.executable, "-P", "-c", _PROBE, dotted, str(import_dir)],
                           env=base_env(import_dir), timeout=PROBE_TIMEOUT_S, cwd=import_dir)
    except subprocess.TimeoutExpired:
        return ImportProblem("timeout", f"importing {module} did not finish within {PROBE_TIMEOUT_S} s: "
                                        "look for a loop that runs at module level")
    lines = done.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1]) if lines else {"kind": "import", "type": "crash", "message": done.stderr[-200:]}
    except json.JSONDecodeError:
        report = {"kind": "import", "type": "crash", "message": lines[-1][:200]}
    if report["kind"] == "ok":
        return None
    where = ""
    if report.get("file"):
        where = f"{_display(report['file'], import_dir, shown_as.rstrip('/') or '.').removeprefix('./')}, line {report['line']}"
    if report["kind"] == "syntax":
        return ImportProblem("syntax", f"syntax error in {where}: {report['message']} — fix that line and run again")
    if report["kind"] == "missing":
        return ImportProblem("missing", f"cannot import {dotted}: {report['message']}")
    message = f"{report['type']}: {report['message']}".rstrip(": ")
    return ImportProblem("import", f"importing {module} raised {message}" + (f" ({where})" if where else "")
                         + " — fix the module so that it imports cleanly")


def run_pytest(import_dir: Path, rootdir: Path, selection: list[str], *,
               per_test_timeout: int = PER_TEST_TIMEOUT_S, expected: int = 1) -> RunResult:
    """Run ``selection`` (files or node ids, relative to ``rootdir`` or absolute) with pytest."""
    ini = resources.files("forgelab") / "data" / "pytest-check.ini"
    wall_limit = per_test_timeout * (max(expected, 1) + 2) + 30
    with tempfile.TemporaryDirectory(prefix="forgelab-run-") as scratch:
        report_path = Path(scratch) / "report.json"
        env = base_env(import_dir)
        env["FORGELAB_REPORT"] = str(report_path)
        command = [
            sys.executable, "-P", "-m", "pytest", "-c", str(ini), f"--rootdir={rootdir}", "--noconftest",
            "--continue-on-collection-errors",
            "-p", "pytest_timeout", "-p", "forgelab.pytest_plugin", f"--timeout={per_test_timeout}",
            "-q", "--tb=short", "--color=no", *selection,
        ]
        try:
            done = run_bounded(command, cwd=rootdir, env=env, timeout=wall_limit)
        except subprocess.TimeoutExpired:
            return RunResult((), f"the test run was stopped after {wall_limit} s — look for a loop that never ends")
        if not report_path.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            return RunResult((), f"pytest could not start: {tail[0]}")
        report = json.loads(report_path.read_text(encoding="utf-8"))
    tests = tuple(
        TestResult(row["nodeid"], row["name"], row["outcome"], row["cause"], row["duration_ms"], row["longrepr"])
        for row in report["tests"]
    )
    problem = None
    if report["collect_errors"]:
        first = report["collect_errors"][0]
        problem = f"could not collect {first['nodeid'] or 'the tests'}: {first['cause']}"
    errors = tuple((row["nodeid"], row["cause"]) for row in report["collect_errors"])
    return RunResult(tests, problem, errors)
