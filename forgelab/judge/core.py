"""The judge: one execution core for every command that runs learner code.

A :class:`Job` names *targets* (implementations of ``forge``, as folders laid over each other),
*course tests* (files the course wrote: stage tests, instructor checks, reference transfer tests)
and *learner tests* (files the learner wrote: transfer tests). :func:`run` returns one typed
:class:`~forgelab.judge.outcomes.RunReport`:

* course tests run in one pytest process on the trusted side, with the course's interface
  ``forge`` (:mod:`forgelab.judge.remote`); every call into learner code crosses into that target's
  sandboxed host (:mod:`forgelab.judge.channel`) and comes back as data;
* learner tests are learner code from top to bottom, so they run inside the sandbox, against their
  own target, and their report is read as untrusted data with strict limits.

Nothing the learner wrote runs in the process that decides; nothing of the course that the learner
must not see (solutions, variants, instructor checks, this run's files) is visible in the sandbox.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from forgelab.judge import channel
from forgelab.judge.interface import build_interface
from forgelab.judge.outcomes import CollectError, ImportKind, ImportProblem, Limit, Outcome, RunReport, TestRow
from forgelab.judge.sandbox import CODE_MOUNT, Isolation, bwrap_command, isolation as decide_isolation, plain_env
from forgelab.judge.settings import JudgeSettings

SESSION_INI = """# the judge's trusted pytest session: no plugin autoload, no cache, no conftest
[pytest]
python_files = test_*.py
python_functions = test_*
console_output_style = classic
addopts = -p no:cacheprovider --import-mode=importlib
"""
LEARNER_INI = SESSION_INI.replace("the judge's trusted pytest session", "the learner's own tests, in the sandbox")
MAX_REPORT_BYTES = 8 * 1024 * 1024
MAX_LEARNER_EVENTS = 5000


@dataclass(frozen=True)
class TargetSpec:
    label: str
    layers: tuple[Path, ...]  # folders that each hold a forge package's files, laid over each other in order
    stage: str = ""
    probe: tuple[str, ...] = ()  # workbook module paths imported first, e.g. ("forge/instructions.py",)
    first_failure_ends: bool = False  # stop this target's tests at its first failure (a mutant needs only one)


@dataclass(frozen=True)
class CourseTests:
    target: str
    files: tuple[str, ...]  # paths relative to the course root


@dataclass(frozen=True)
class LearnerTests:
    target: str
    files: tuple[tuple[Path, str], ...]  # (file on disk, path shown and used in node ids, e.g. transfer/test_01_x.py)


@dataclass(frozen=True)
class Job:
    course_root: Path
    starters: Path  # a folder that holds the pristine starter package forge/
    stage_modules: tuple[str, ...]  # every stage module of the course, e.g. forge/instructions.py
    targets: tuple[TargetSpec, ...]
    course_tests: tuple[CourseTests, ...] = ()
    learner_tests: tuple[LearnerTests, ...] = ()
    cache_dir: Path | None = None  # a folder the trusted session may keep caches in (Hypothesis's character tables)
    sessions: int = 1  # course tests may be split over this many trusted sessions, whole targets each


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-") or "target"


def _copy_tree(source: Path, destination: Path) -> None:
    for path in sorted(source.rglob("*")):
        if "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo") or path.is_symlink():
            continue
        relative = path.relative_to(source)
        if path.is_dir():
            (destination / relative).mkdir(parents=True, exist_ok=True)
        elif path.is_file():
            (destination / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination / relative)


def materialize(target: TargetSpec, code_dir: Path) -> Path:
    """``code_dir/forge/`` from the target's layers, plus the host script; returns ``code_dir``."""
    forge = code_dir / "forge"
    forge.mkdir(parents=True, exist_ok=True)
    for layer in target.layers:
        if layer.is_dir():
            _copy_tree(layer, forge)
    channel.install_host_files(code_dir)
    (code_dir / "_judge_pytest.ini").write_text(LEARNER_INI, encoding="utf-8")
    return code_dir


def _dotted(module: str) -> str:
    return ".".join(Path(module).with_suffix("").parts)


# ---------------------------------------------------------------- a watched process


@dataclass(frozen=True)
class Watched:
    returncode: int | None
    limit: Limit | None
    output: str
    seconds: float


_LIVE: set[subprocess.Popen[bytes]] = set()
_LIVE_LOCK = threading.Lock()


def stop_everything() -> None:
    """Kill every process group this judge started that is still running (Ctrl-C, an error)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        try:
            os.killpg(process.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass


def run_watched(command: list[str], *, cwd: Path, env: dict[str, str] | None, cpu_s: float, wall_s: float,
                output_kb: int, pass_fds: tuple[int, ...] = ()) -> Watched:
    """Run a command in its own process group; stop it (and all it started) at the CPU, wall or output limit."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True, pass_fds=pass_fds,
                               preexec_fn=channel.die_with_parent)
    with _LIVE_LOCK:
        _LIVE.add(process)
    kept, cap = bytearray(), output_kb * 1024
    printed = [0]
    lock = threading.Lock()

    def drain() -> None:
        assert process.stdout is not None
        while chunk := os.read(process.stdout.fileno(), 65536):
            with lock:
                printed[0] += len(chunk)
                kept.extend(chunk[: max(0, cap - len(kept))])

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    limit: Limit | None = None
    while process.poll() is None:
        time.sleep(0.1)
        used = channel.tree_cpu_seconds(process.pid)
        if printed[0] > cap:
            limit = Limit.OUTPUT
        elif used is not None and used > cpu_s:
            limit = Limit.CPU
        elif time.monotonic() - started > wall_s:
            limit = Limit.WALL
        if limit is not None:
            break
    if limit is not None or process.poll() is None:
        try:
            os.killpg(process.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
    code = process.wait()
    with _LIVE_LOCK:
        _LIVE.discard(process)
    reader.join(timeout=5)
    return Watched(None if limit else code, limit, kept.decode("utf-8", errors="replace"), time.monotonic() - started)


# ---------------------------------------------------------------- course tests (trusted side)


def _course_session(job: Job, settings: JudgeSettings, isolation: Isolation, run_dir: Path,
                    code_dirs: dict[str, Path], interface: Path) -> RunReport:
    tests_dir = run_dir / "tests"
    files: dict[str, dict[str, str]] = {}
    arguments: list[str] = []
    for suite in job.course_tests:
        for relative in suite.files:
            source = job.course_root / relative
            if not source.is_file():
                continue
            copy = tests_dir / _safe(suite.target) / relative
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
            files[str(copy)] = {"target": suite.target, "canonical": relative}
            arguments.append(str(copy))
    if not arguments:
        return RunReport(())
    report_path = run_dir / "session-report.json"
    job_path = run_dir / "session-job.json"
    specs = {target.label: target for target in job.targets}
    job_path.write_text(json.dumps({
        "targets": {label: {"code_dir": str(path), "probe": [_dotted(m) for m in specs[label].probe],
                            "stage": specs[label].stage, "first_failure_ends": specs[label].first_failure_ends}
                    for label, path in code_dirs.items()},
        "files": files, "settings": settings.as_dict(), "report": str(report_path), "tests_root": str(tests_dir),
        "isolation": {"sandboxed": isolation.sandboxed, "bwrap": isolation.bwrap, "reason": isolation.reason},
    }), encoding="utf-8")
    ini = run_dir / "session.ini"
    ini.write_text(SESSION_INI, encoding="utf-8")
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTEST_", "COV_", "PYTHON", "FORGELAB_", "HYPOTHESIS"))}
    env.update({"PYTHONPATH": str(interface), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8"})
    if job.cache_dir is not None:  # Hypothesis builds its Unicode tables once and keeps them here (no example database)
        job.cache_dir.mkdir(parents=True, exist_ok=True)
        env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(job.cache_dir / "hypothesis")
    command = [sys.executable, "-P", "-m", "pytest", "-c", str(ini), f"--rootdir={tests_dir}", "--noconftest",
               "--continue-on-collection-errors", "-p", "forgelab.judge.session_plugin", "--forgelab-job", str(job_path),
               "-q", "--tb=native", "--color=no", *arguments]
    # the session's own CPU is course code (Hypothesis, comparisons): it is bounded by wall time only
    watched = run_watched(command, cwd=run_dir, env=env, cpu_s=float("inf"), wall_s=settings.session_wall_s,
                          output_kb=4096)
    if not report_path.is_file():
        tail = [line for line in watched.output.strip().splitlines() if line.strip()][-3:] or ["no output"]
        why = (f"the test session was stopped after {settings.session_wall_s} s" if watched.limit is Limit.WALL
               else f"the test session could not finish: {' | '.join(tail)[:400]}")
        return RunReport((), problem=why, sandbox=isolation.description)
    data = json.loads(report_path.read_text(encoding="utf-8"))
    rows = tuple(TestRow(row["nodeid"], row["target"], Outcome(row["outcome"]), row["cause"], row["detail"],
                         int(row["duration_ms"]), Limit(row["limit"]) if row.get("limit") else None, row.get("printed", ""),
                         bool(row.get("unfinished")))
                 for row in data["rows"])
    problems = {label: ImportProblem(p["module"], ImportKind(p["kind"]), p["message"], p["file"], int(p["line"]),
                                     p["error_type"], p.get("stage", "")) for label, p in data["import_problems"].items()}
    errors = tuple(CollectError(e["file"], e["target"], e["cause"], e["detail"]) for e in data["collect_errors"])
    return RunReport(rows, problems, errors, sandbox=isolation.description)


# ---------------------------------------------------------------- learner tests (in the sandbox)


def _learner_session(suite: LearnerTests, settings: JudgeSettings, isolation: Isolation, code_dir: Path,
                     scratch: Path) -> RunReport:
    shown: list[str] = []
    for source, relative in suite.files:
        destination = code_dir / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
        shown.append(relative)
    scratch.mkdir(parents=True, exist_ok=True)
    limits = json.dumps({**settings.host_limits(), "cpu_total_s": settings.learner_tests_cpu_s + 5})
    read_end, write_end = os.pipe()
    root = CODE_MOUNT if isolation.sandboxed else str(code_dir)
    argv = [sys.executable, "-s", "-P", f"{root}/_judge_host.py", "--limits", limits, "--report-fd", str(write_end),
            "pytest", "--", "-c", f"{root}/_judge_pytest.ini", f"--rootdir={root}", "--noconftest", "-q", "--color=no",
            "--tb=short", *[f"{root}/{name}" for name in shown]]
    if isolation.sandboxed:
        command, env = bwrap_command(isolation.bwrap, code_dir, argv), None
    else:
        command, env = argv, plain_env(scratch)
    collected = bytearray()

    def collect() -> None:
        while chunk := os.read(read_end, 65536):
            collected.extend(chunk[: max(0, MAX_REPORT_BYTES - len(collected))])

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    try:
        watched = run_watched(command, cwd=scratch, env=env, cpu_s=settings.learner_tests_cpu_s,
                              wall_s=settings.learner_tests_wall_s, output_kb=settings.output_kb, pass_fds=(write_end,))
    finally:
        os.close(write_end)
        reader.join(timeout=10)
        os.close(read_end)
    return _read_learner_report(suite.target, bytes(collected), shown, watched, isolation)


def _read_learner_report(label: str, raw: bytes, files: list[str], watched: Watched, isolation: Isolation) -> RunReport:
    """Events written by learner code: read with limits, every field checked, nothing else trusted."""
    events: list[dict[str, Any]] = []
    if raw:
        for line in raw.decode("utf-8", errors="replace").splitlines()[:MAX_LEARNER_EVENTS]:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and isinstance(event.get("event"), str):
                events.append(event)
    rows: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    errors: list[CollectError] = []
    running: str | None = None

    def text(value: object, limit: int = 2000) -> str:
        value = value if isinstance(value, str) else ""
        return value if len(value) <= limit else value[: limit - 1] + "…"

    def valid(nodeid: object) -> str | None:
        if not isinstance(nodeid, str) or len(nodeid) > 500:
            return None
        return nodeid if nodeid.split("::", 1)[0] in files else None

    for event in events:
        kind = event["event"]
        if kind == "start" and (nodeid := valid(event.get("nodeid"))):
            running = nodeid
            if nodeid not in rows:
                order.append(nodeid)
                rows[nodeid] = {"outcome": Outcome.PASSED, "cause": "", "detail": "", "duration": 0, "seen_call": False}
        elif kind == "report" and (nodeid := valid(event.get("nodeid"))) and nodeid in rows:
            row = rows[nodeid]
            outcome = event.get("outcome")
            duration = event.get("duration_ms")
            row["duration"] += duration if isinstance(duration, int) and 0 <= duration < 10**9 else 0
            if event.get("when") == "call":
                row["seen_call"] = True
            if outcome == "passed" or row["outcome"] in (Outcome.FAILED, Outcome.ERROR):
                if event.get("when") == "teardown" and running == nodeid:
                    running = None
                continue
            mapped = {"skipped": Outcome.SKIPPED, "failed": Outcome.FAILED, "error": Outcome.ERROR}.get(str(outcome))
            if mapped is not None:
                row.update(outcome=mapped, cause=text(event.get("cause"), 300), detail=text(event.get("detail"), 4000))
            if event.get("when") == "teardown":
                running = None
        elif kind == "collect_error":
            file = text(event.get("nodeid"), 300)
            errors.append(CollectError(file if file in files else (files[0] if files else file), label,
                                       text(event.get("cause"), 300), text(event.get("detail"), 4000)))
    problem = None
    if watched.limit is not None:
        words = {Limit.CPU: "used too much CPU time (a loop that never ends?)",
                 Limit.WALL: "did not finish in time", Limit.OUTPUT: "printed too much"}[watched.limit]
        if running and running in rows:
            rows[running].update(outcome=Outcome.TIMEOUT, cause=f"your test {words}; it was stopped", limit=watched.limit)
        problem = f"the run of your tests {words} and was stopped"
    elif not events:
        tail = [line for line in watched.output.strip().splitlines() if line.strip()][-2:] or ["no output"]
        problem = f"your tests could not be run: {' | '.join(tail)[:300]}"
    result = tuple(TestRow(nodeid, label, row["outcome"], row["cause"], row["detail"], int(row["duration"]),
                           row.get("limit")) for nodeid, row in ((n, rows[n]) for n in order))
    return RunReport(result, collect_errors=tuple(errors), sandbox=isolation.description,
                     target_problems={label: problem} if problem else {})


# ---------------------------------------------------------------- the whole job


def run(job: Job, settings: JudgeSettings, isolation: Isolation | None = None) -> RunReport:
    """Run every suite of ``job``; one report whose rows name their file, test and target."""
    isolation = isolation or decide_isolation(settings.sandbox)
    with tempfile.TemporaryDirectory(prefix="forgelab-judge-") as folder:
        run_dir = Path(folder)
        code_dirs: dict[str, Path] = {}
        for target in job.targets:
            code_dirs[target.label] = materialize(target, run_dir / "targets" / _safe(target.label))
        reports: list[RunReport] = []
        with ThreadPoolExecutor(max_workers=max(2, job.sessions)) as pool:
            futures = []
            if job.course_tests:
                interface = build_interface(job.starters, list(job.stage_modules), run_dir / "interface")
                for index, shard in enumerate(_shards(job)):
                    folder_of_shard = run_dir / f"session-{index}"
                    folder_of_shard.mkdir()
                    futures.append(pool.submit(_course_session, shard, settings, isolation, folder_of_shard,
                                               {t.label: code_dirs[t.label] for t in shard.targets}, interface))
            for index, suite in enumerate(job.learner_tests):
                own = materialize(next(t for t in job.targets if t.label == suite.target),
                                  run_dir / "learner" / f"{index:02d}-{_safe(suite.target)}")
                futures.append(pool.submit(_learner_session, suite, settings, isolation, own,
                                           run_dir / "learner-scratch" / f"{index:02d}"))
            try:
                reports = [future.result() for future in futures]
            except BaseException:  # Ctrl-C or a failure: nothing this run started may keep running
                stop_everything()
                raise
    return merge(reports, isolation.description)


def _shards(job: Job) -> list[Job]:
    """Split the course tests over ``job.sessions`` sessions; every target stays whole in one of them."""
    labels = [target.label for target in job.targets if any(s.target == target.label for s in job.course_tests)]
    count = max(1, min(job.sessions, len(labels)))
    weight = {label: sum(len(s.files) for s in job.course_tests if s.target == label) for label in labels}
    buckets: list[list[str]] = [[] for _ in range(count)]
    loads = [0] * count
    for label in sorted(labels, key=lambda item: (-weight[item], labels.index(item))):
        smallest = loads.index(min(loads))
        buckets[smallest].append(label)
        loads[smallest] += weight[label]
    shards = []
    for bucket in buckets:
        chosen = set(bucket)
        shards.append(replace(job, targets=tuple(t for t in job.targets if t.label in chosen),
                              course_tests=tuple(s for s in job.course_tests if s.target in chosen), learner_tests=()))
    return shards


def merge(reports: list[RunReport], sandbox: str = "") -> RunReport:
    rows: list[TestRow] = []
    problems: dict[str, ImportProblem] = {}
    errors: list[CollectError] = []
    run_problems = []
    target_problems: dict[str, str] = {}
    for report in reports:
        rows.extend(report.rows)
        problems.update(report.import_problems)
        errors.extend(report.collect_errors)
        target_problems.update(report.target_problems)
        if report.problem:
            run_problems.append(report.problem)
    return RunReport(tuple(rows), problems, tuple(errors), "; ".join(run_problems) or None,
                     sandbox or next((r.sandbox for r in reports if r.sandbox), ""), target_problems)
