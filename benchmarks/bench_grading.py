"""Benchmark: `forgelab grade` throughput at --jobs 1 and --jobs 2, and what the sandbox costs.

Freezes a copy of the course (others may commit while it runs), builds one complete, correct
submission for every stage the way a learner would (modules, fault labs, transfer tests, design
answers, `forgelab check`), derives N submissions from it (every
second one with the subtle stage-01 mistake, so both verdicts are exercised), and grades all N with
``--jobs 1`` and then ``--jobs 2`` (``--runs`` times each, interleaved). It prints, side by side:
wall time, full submissions per minute, the ratio jobs2/jobs1 against the targets (at least 5 per
minute at ``--jobs 2``; ``--jobs 2`` at least 1.6 times ``--jobs 1``), the machine's load average,
and the cost split summed over all submissions from the gradebook's ``timings`` table: stage tests,
instructor checks, notebook cells, fault lab, transfer, and the rest of each submission's wall time
as overhead (starting sandboxes and the trusted test session, collecting, copying, judging items).
It also prints the CPU time per submission (load-independent) and whether every batch gave the
same grade rows.

The cost of the sandbox: one full submission is graded alone (``--jobs 1``), once in the sandbox and
once with ``--unsandboxed``, ``--runs`` times each, interleaved, and the two are printed side by side
(wall time, sampled CPU time, and whether both gave the same rows).

``--against REF`` compares two versions of the judge on the same batch, side by side in one run: a second frozen
copy of the course gets ``forgelab/`` as of the git revision REF, and the batch is graded ``--runs`` times by each
at ``--jobs 1``, interleaved; it prints the CPU time per submission by kind of process for both and whether their
grade rows are the same. The grade process and everything it writes for a run (hosts, testers, interface) come
from that copy; the trusted test session imports the installed forgelab in both, and it is the session that starts
the sandboxed learner processes, so a change to the session plugin or to how a host is started and called
(channel, sandbox, host, wire) is not compared: grade with a second installation of REF (its own worktree and
virtual environment) for those.

``--profile`` then grades one submission in this process and lists where its time goes: the
slowest tests and cells, the time per target, and what starting one sandboxed Python costs here.

``--check-counts NN [NN …]`` sizes the instructor checks' random cases instead (it grades nothing): for each of those
stages, each counted check (a test of ``instructor/checks/`` that draws as many random cases as a module-level
constant says) is run in a plain Python process against every known-wrong version of the stage's module — the fault
lab's variant and each mutant of ``mutants.toml`` applied to the reference — and the case at which each first fails
is printed (the fewest cases that fail, found by bisection: the cases come from one seeded generator, so a smaller
count draws a prefix of the same cases). The counts in ``instructor/checks/`` follow from these figures.

This is a measurement, not a test: nothing here asserts a limit. The machine is shared; the load
average is printed so that a reader can judge the numbers.

    .venv/bin/python benchmarks/bench_grading.py [--submissions 4] [--runs 1] [--profile] [--against REF]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "course"))

PHASES = (
    ("stage tests", "stage_tests_s"),
    ("instructor checks", "instructor_checks_s"),
    ("notebook cells (replayed demonstration)", "notebook_cells_s"),
    ("fault lab", "fault_lab_s"),
    ("transfer (reference and known-wrong)", "transfer_s"),
    ("wall less the phases (below 0: phases ran at once)", "overhead_s"),
)
TARGET_RATE, TARGET_RATIO = 5.0, 1.6


def build(folder: Path, count: int) -> list[Path]:
    from grading_fixtures import (SAME_RANK_FIND, SAME_RANK_LAST_WINS, break_module, build_correct, derive_handed_in,
                                  hand_in)
    from forgelab.core.registry import load_course

    stages = tuple(stage.number for stage in load_course(ROOT).stages)
    base = hand_in(build_correct(folder / "base", stages))
    made = []
    for index in range(count):
        learner = derive_handed_in(base, folder / f"learner-{index + 1:02d}")
        if index % 2:
            break_module(learner, SAME_RANK_FIND, SAME_RANK_LAST_WINS)
        made.append(learner)
    return made


def split(gradebook: Path) -> dict[str, float]:
    """Seconds per phase, summed over the submissions; overhead = wall time − the measured phases."""
    connection = sqlite3.connect(gradebook)
    totals: dict[str, float] = {key: 0.0 for _, key in PHASES}
    for phase, seconds in connection.execute("SELECT phase, SUM(seconds) FROM timings GROUP BY phase"):
        totals[phase] = float(seconds)
    connection.close()
    measured = sum(totals[key] for _, key in PHASES if key != "overhead_s")
    totals["overhead_s"] = totals.get("submission_wall_s", 0.0) - measured
    return totals


_TICKS = os.sysconf("SC_CLK_TCK")


def _kind(command: str) -> str:
    if "session.ini" in command:
        return "trusted test session (course tests, Hypothesis, comparisons)"
    if "_judge_tester.py" in command or ("_judge_host.py" in command and " pytest " in command):
        return "sandboxed testers (pytest on the learner's transfer tests)"
    if "_judge_host.py" in command:
        return "sandboxed learner processes (import, learner code, data)"
    if "forgelab.cli" in command:
        return "forgelab grade itself (copy, items, gradebook, pages)"
    return "other"


def run_sampled(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float,
                                                                             dict[str, float]]:
    """Run ``command`` and sample the CPU time of its whole process tree from /proc every 50 ms.

    ``getrusage(RUSAGE_CHILDREN)`` misses most of it: the sandboxed processes are reaped inside
    their PID namespace and, when the judge kills a sandbox, outside this process tree. Sampling sees
    them all; what a process uses after its last sample is missed (a few per cent).
    """
    seen: dict[tuple[int, str], tuple[str, float]] = {}
    stdout, stderr = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=stdout, stderr=stderr, text=True)
    while process.poll() is None:
        stack = [process.pid]
        while stack:
            pid = stack.pop()
            try:
                with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
                    stat = handle.read()
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    text = handle.read().replace(b"\0", b" ").decode(errors="replace")
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                        stack.extend(int(child) for child in handle.read().split())
            except (OSError, ValueError):
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            key = (pid, fields[19])  # a pid and its start time: one process
            used = (int(fields[11]) + int(fields[12])) / _TICKS
            earlier = seen.get(key)
            # the latest command line names the process: one sampled between its fork and its exec still showed
            # its parent's (the session or a tester counted as `forgelab grade` itself)
            kind = _kind(text) if text.strip() else earlier[0] if earlier else "other"
            seen[key] = (kind, max(used, earlier[1] if earlier else 0.0))
        time.sleep(0.05)
    wall = time.perf_counter() - started
    stdout.seek(0)
    stderr.seek(0)
    done = subprocess.CompletedProcess(command, process.returncode, stdout.read().decode(), stderr.read().decode())
    by_kind: dict[str, float] = {}
    for kind, used in seen.values():
        by_kind[kind] = by_kind.get(kind, 0.0) + used
    return done, wall, by_kind


def grade(course: Path, submissions: list[Path], jobs: int, out: Path, *extra: str,
          sampled: bool = True) -> tuple[float, dict[str, float], str]:
    """Grade the batch; (wall seconds, phases, points); phases["cpu_s"] is the sampled CPU time of the
    whole process tree, and phases["cpu:KIND"] its split by kind of process.

    ``sampled=False`` only times it: the sampler reads /proc for every process every 50 ms, and on 2 CPUs that
    reading takes CPU time the grading would otherwise have (a wall time to compare runs without it)."""
    command = [sys.executable, "-m", "forgelab.cli", "grade", *map(str, submissions), "--jobs", str(jobs),
               "--out", str(out), *extra]
    env = {**os.environ, "FORGELAB_ROOT": str(course)}
    if sampled:
        done, wall, by_kind = run_sampled(command, course, env)
    else:
        started = time.perf_counter()
        done = subprocess.run(command, cwd=course, env=env, capture_output=True, text=True, check=False)
        wall, by_kind = time.perf_counter() - started, {}
    if done.returncode != 0:
        raise SystemExit(f"forgelab grade failed:\n{done.stdout}\n{done.stderr}")
    connection = sqlite3.connect(out / "gradebook.sqlite")
    points = connection.execute("SELECT SUM(points), SUM(max_points) FROM grades").fetchone()
    connection.close()
    phases = split(out / "gradebook.sqlite")
    phases["cpu_s"] = sum(by_kind.values())
    phases.update({f"cpu:{kind}": seconds for kind, seconds in by_kind.items()})
    return wall, phases, f"{points[0]}/{points[1]} points"


def rows(gradebook: Path) -> list[tuple[object, ...]]:
    connection = sqlite3.connect(gradebook)
    try:
        return list(connection.execute("SELECT submission, stage, item, points, outcome FROM grades "
                                       "ORDER BY submission, stage, item_order"))
    finally:
        connection.close()


def course_state() -> str:
    """The commit graded against, and whether the working tree differs from it (others may be editing)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True)
    if head.returncode != 0:
        return "not a git checkout"
    return head.stdout.strip() + (" + uncommitted changes" if dirty.stdout.strip() else "")


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def profile(submission: Path, root: Path) -> None:
    """Grade one submission in this process and show where its time goes."""
    from forgelab.core import submission as submissions
    from forgelab.grading import grader, plan
    from forgelab.grading.rubric import parse_stages
    from forgelab.judge import core
    from forgelab.judge.sandbox import bwrap_command, isolation
    from forgelab.judge.settings import DEFAULT, SandboxMode
    from forgelab.core.paths import Workbook
    from forgelab.core.registry import load_course

    course = load_course(root)
    workbook = Workbook(root=root, workspace=root)
    stages = parse_stages(course, None)
    sub = submissions.discover([str(submission)])[0]
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as scratch:
        laid = plan.lay_out(sub, Path(scratch) / "submission")
        job = grader.grading_job(course, workbook, stages, laid, Path(scratch))
        started = time.perf_counter()
        report = core.run(job, DEFAULT)
        wall = time.perf_counter() - started
    print(f"\nprofile: one full submission in this process: {wall:.1f} s wall, {len(job.targets)} targets "
          f"(a sandboxed process each), {len(report.rows)} test rows, load average {load()}")
    per_target: dict[str, float] = {}
    for row in report.rows:
        per_target[row.target] = per_target.get(row.target, 0.0) + row.duration_ms / 1000
    print("  time inside tests, per target (the trusted session runs them one after another):")
    for label, seconds in sorted(per_target.items(), key=lambda item: -item[1])[:8]:
        print(f"    {label:<22} {seconds:6.2f} s")
    print(f"    {'all targets':<22} {sum(per_target.values()):6.2f} s of {wall:.1f} s wall")
    print("  slowest tests and cells:")
    for row in sorted(report.rows, key=lambda r: -r.duration_ms)[:10]:
        print(f"    {row.duration_ms / 1000:6.2f} s  {row.target:<16} {row.nodeid[:90]}")
    mode = isolation(SandboxMode.AUTO)
    if mode.sandboxed:
        with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as folder:
            command = bwrap_command(mode.bwrap, Path(folder), [sys.executable, "-s", "-P", "-c", "pass"])
            times = []
            for _ in range(5):
                begun = time.perf_counter()
                subprocess.run(command, cwd=folder, check=True, stdin=subprocess.DEVNULL)
                times.append(time.perf_counter() - begun)
        print(f"  starting one sandboxed Python (bwrap + interpreter, median of 5): {statistics.median(times):.2f} s; "
              f"this submission starts {len(job.targets)} of them, plus one trusted pytest session")


def sandbox_cost(course: Path, submission: Path, scratch: Path, runs: int) -> None:
    """One full submission graded alone, in the sandbox and with --unsandboxed, interleaved; side by side."""
    walls: dict[str, list[float]] = {"sandboxed": [], "unsandboxed": []}
    cpus: dict[str, list[float]] = {"sandboxed": [], "unsandboxed": []}
    found: dict[str, list[tuple[object, ...]]] = {}
    loads = [load()]
    for run in range(runs):
        for mode, extra in (("sandboxed", ()), ("unsandboxed", ("--unsandboxed",))):
            out = scratch / f"sandbox-{mode}-{run}"
            wall, cost, points = grade(course, [submission], 1, out, *extra)
            walls[mode].append(wall)
            cpus[mode].append(cost["cpu_s"])
            found.setdefault(mode, rows(out / "gradebook.sqlite"))
            loads.append(load())
            print(f"  sandbox cost, run {run + 1}, {mode}: {wall:.1f} s ({points}; load average {loads[-1]})", flush=True)
    inside, outside = statistics.median(walls["sandboxed"]), statistics.median(walls["unsandboxed"])
    cpu_in, cpu_out = statistics.median(cpus["sandboxed"]), statistics.median(cpus["unsandboxed"])
    print()
    print(f"the sandbox's cost: one full submission graded alone (--jobs 1), median of {runs} run(s), load average "
          f"{' → '.join(loads)}")
    print(f"{'':<46} {'sandboxed':>10} {'--unsandboxed':>14} {'ratio':>8}")
    print(f"{'wall time (s)':<46} {inside:>10.1f} {outside:>14.1f} {inside / outside:>8.2f}")
    print(f"{'CPU seconds (sampled, all processes)':<46} {cpu_in:>10.1f} {cpu_out:>14.1f} {cpu_in / cpu_out:>8.2f}")
    print("both modes gave the same grade rows" if found["sandboxed"] == found["unsandboxed"] else
          "WARNING: the two modes gave different grade rows")


def against(course: Path, submissions: list[Path], scratch: Path, ref: str, runs: int) -> None:
    """Grade the batch with forgelab as of ``ref`` and as it is now, interleaved; CPU by kind side by side."""
    other = scratch / "course-against"
    shutil.copytree(course, other, symlinks=True)
    shutil.rmtree(other / "forgelab")
    archive = subprocess.run(["git", "archive", "--format=tar", ref, "forgelab"], cwd=ROOT, capture_output=True,
                             check=True)
    subprocess.run(["tar", "-x", "-C", str(other)], input=archive.stdout, check=True)
    versions = {ref: other, "now": course}
    costs: dict[str, list[dict[str, float]]] = {name: [] for name in versions}
    found: dict[str, list[tuple[object, ...]]] = {}
    loads = [load()]
    for run in range(runs):
        for name, copy in versions.items():
            out = scratch / f"against-{name.replace('/', '-')}-{run}"
            wall, cost, points = grade(copy, submissions, 1, out)
            costs[name].append(cost)
            found.setdefault(name, rows(out / "gradebook.sqlite"))
            loads.append(load())
            print(f"  {ref} against now, run {run + 1}, {name}: {wall:.1f} s ({points}; load average {loads[-1]})",
                  flush=True)
    n = len(submissions)
    print()
    print(f"two versions of the judge, {n} submissions at --jobs 1, median of {runs} run(s), load average "
          f"{' → '.join(loads)}")
    print(f"{'CPU seconds per submission':<62} {ref[:12]:>12} {'now':>8} {'ratio':>7}")
    keys = sorted({key for cost in costs["now"] + costs[ref] for key in cost if key.startswith("cpu")},
                  key=lambda key: (key != "cpu_s", key))
    for key in keys:
        before = statistics.median(cost.get(key, 0.0) for cost in costs[ref]) / n
        now = statistics.median(cost.get(key, 0.0) for cost in costs["now"]) / n
        label = "all processes (sampled)" if key == "cpu_s" else key[4:]
        print(f"  {label:<60} {before:>12.2f} {now:>8.2f} {now / before if before else float('nan'):>7.2f}")
    print("both versions gave the same grade rows" if found[ref] == found["now"] else
          "WARNING: the two versions gave different grade rows")


_FIRST_FAILURE = r"""
import ast, importlib.util, json, sys
path = sys.argv[1]
spec = importlib.util.spec_from_file_location("checks_under_test", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
tree = ast.parse(open(path, encoding="utf-8").read())
counts = {node.targets[0].id for node in tree.body if isinstance(node, ast.Assign) and len(node.targets) == 1
          and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper()
          and isinstance(node.value, ast.Constant) and type(node.value.value) is int}
found = {}
for node in tree.body:
    if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_")):
        continue
    used = sorted({name.id for name in ast.walk(node) if isinstance(name, ast.Name) and name.id in counts})
    for count in used:
        full = getattr(module, count)
        def fails(n):
            setattr(module, count, n)
            try:
                getattr(module, node.name)()
            except BaseException:
                return True
            finally:
                setattr(module, count, full)
            return False
        if not fails(full):
            found[node.name] = [count, full, None]
            continue
        low, high = 0, full
        while low + 1 < high:
            middle = (low + high) // 2
            low, high = (low, middle) if fails(middle) else (middle, high)
        found[node.name] = [count, full, high]
print(json.dumps(found))
"""


def check_counts(stages: list[str]) -> None:
    """For each counted instructor check, the case at which each known-wrong version of its stage first fails."""
    from forgelab.core.paths import Workbook
    from forgelab.core.registry import load_course
    from forgelab.verdicts.mutants import apply, load_mutants

    course, workbook = load_course(ROOT), Workbook(ROOT, ROOT)
    for number in stages:
        stage = course.stage(number)
        check = next((ROOT / "instructor" / "checks").glob(f"test_{number}_*.py"))
        reference = (workbook.root / stage.solution_module).read_text(encoding="utf-8")
        versions = [("fault lab", (workbook.root / stage.failure_lab / stage.module).read_text(encoding="utf-8"))]
        versions += [(mutant.name, apply(reference, mutant, stage.solution_module)) for mutant in load_mutants(stage)]
        last: dict[str, tuple[int, str]] = {}
        for name, text in versions:
            with tempfile.TemporaryDirectory(prefix="check-counts-") as folder:
                shutil.copytree(workbook.solutions / "forge", Path(folder) / "forge")
                (Path(folder) / stage.module).write_text(text, encoding="utf-8")
                done = subprocess.run([sys.executable, "-c", _FIRST_FAILURE, str(check)], cwd=folder, text=True,
                                      env={**os.environ, "PYTHONPATH": folder}, capture_output=True, timeout=600)
            if done.returncode != 0:
                print(f"  {number} {name}: could not run ({done.stderr.strip().splitlines()[-1:]})")
                continue
            for test, (count, full, first) in json.loads(done.stdout.strip().splitlines()[-1]).items():
                print(f"  {number} {name:<48} {test:<64} {count}={full}: "
                      f"{'not caught' if first is None else f'fails at case {first}'}")
                if first is not None and first > last.get(f"{test} ({count}={full})", (0, ""))[0]:
                    last[f"{test} ({count}={full})"] = (first, name)
        for test, (first, name) in sorted(last.items()):
            print(f"stage {number}: {test}: the last known-wrong version to fail ({name}) fails at case {first}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=4, help="full submissions per batch (default 4)")
    parser.add_argument("--runs", type=int, default=1, help="batches per --jobs value, interleaved (default 1)")
    parser.add_argument("--profile", action="store_true", help="also profile one submission (in this process)")
    parser.add_argument("--against", metavar="REF", help="also grade the batch with forgelab as of git revision REF "
                        "and as it is now, interleaved, and print their CPU time side by side")
    parser.add_argument("--rows-out", type=Path, help="write the first batch's grade rows here (JSON), to compare "
                        "two versions of the judge on the same batch")
    parser.add_argument("--check-counts", nargs="+", metavar="NN", help="instead of grading: the case at which each "
                        "known-wrong version of these stages first fails each counted instructor check")
    args = parser.parse_args()
    if args.check_counts:
        check_counts(args.check_counts)
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    try:
        from conftest import copy_workbook

        print(f"building {args.submissions} full (10-stage) submissions… (load average {load()})", flush=True)
        # a frozen copy of the course grades every batch: others may commit to the repository meanwhile
        course = copy_workbook(scratch / "course").root
        submissions = build(scratch / "submissions", args.submissions)
        walls: dict[int, list[float]] = {1: [], 2: []}
        splits: dict[int, list[dict[str, float]]] = {1: [], 2: []}
        loads = [load()]
        graded: list[tuple[str, str, list[tuple[object, ...]]]] = []
        for run in range(args.runs):
            for jobs in (1, 2):
                out = scratch / f"out-{jobs}-{run}"
                state = course_state()
                wall, cost, points = grade(course, submissions, jobs, out)
                walls[jobs].append(wall)
                splits[jobs].append(cost)
                loads.append(load())
                graded.append((f"run {run + 1} --jobs {jobs}", state, rows(out / "gradebook.sqlite")))
                print(f"  run {run + 1}, --jobs {jobs}: {wall:.1f} s ({points}; load average {loads[-1]}; "
                      f"repository at {state})", flush=True)
        n = args.submissions
        wall1, wall2 = statistics.median(walls[1]), statistics.median(walls[2])
        rate1, rate2 = 60 * n / wall1, 60 * n / wall2
        print()
        print(f"{n} full submissions (10 stages each), median of {args.runs} run(s), Python "
              f"{sys.version.split()[0]}, {os.cpu_count()} CPUs; load average (1, 5, 15 min) before and after each "
              f"batch: {' → '.join(loads)}")
        print(f"{'':<46} {'--jobs 1':>10} {'--jobs 2':>10} {'2 / 1':>8}")
        print(f"{'wall time (s)':<46} {wall1:>10.1f} {wall2:>10.1f} {wall2 / wall1:>8.2f}")
        print(f"{'full submissions per minute':<46} {rate1:>10.2f} {rate2:>10.2f} {rate2 / rate1:>8.2f}")
        cpu1 = statistics.median(s["cpu_s"] for s in splits[1]) / n
        cpu2 = statistics.median(s["cpu_s"] for s in splits[2]) / n
        print(f"{'CPU seconds per submission (sampled, all processes)':<46} {cpu1:>10.1f} {cpu2:>10.1f}")
        print(f"{'CPUs the batch kept busy on average':<46} {cpu1 * n / wall1:>10.2f} {cpu2 * n / wall2:>10.2f}")
        ceiling = 60 * (os.cpu_count() or 1) / cpu2
        print(f"with the {os.cpu_count()} CPUs to itself and nothing else to wait for, this much CPU time allows "
              f"about {ceiling:.1f} full submissions per minute")
        print("CPU time by kind of process, seconds per submission (--jobs 1):")
        kinds = sorted({key for s in splits[1] for key in s if key.startswith("cpu:")})
        for key in sorted(kinds, key=lambda k: -statistics.median(s.get(k, 0.0) for s in splits[1])):
            seconds = statistics.median(s.get(key, 0.0) for s in splits[1]) / n
            print(f"  {key[4:]:<62} {seconds:>6.2f}   ({100 * seconds / cpu1:.0f}%)")
        met_rate = "met" if rate2 >= TARGET_RATE else f"MISSED by {TARGET_RATE - rate2:.2f} ({rate2 / TARGET_RATE:.0%} of it)"
        met_ratio = "met" if rate2 / rate1 >= TARGET_RATIO else \
            f"MISSED by {TARGET_RATIO - rate2 / rate1:.2f} ({rate2 / rate1 / TARGET_RATIO:.0%} of it)"
        print(f"target: >= {TARGET_RATE:.0f} per minute at --jobs 2: {met_rate}")
        print(f"target: --jobs 2 >= {TARGET_RATIO}x --jobs 1: {met_ratio}")
        print("cost split, seconds summed over the submissions (share of the --jobs 1 total):")
        total1 = sum(statistics.median(s[key] for s in splits[1]) for _, key in PHASES)
        for label, key in PHASES:
            one = statistics.median(s[key] for s in splits[1])
            two = statistics.median(s[key] for s in splits[2])
            print(f"  {label:<44} {one:>10.1f} {two:>10.1f}   ({100 * one / total1:.0f}%)")
        print("(at --jobs 2 each phase takes longer on 2 shared CPUs, but two submissions are graded at once)")
        first_name, first_state, first_rows = graded[0]
        if args.rows_out:
            args.rows_out.write_text(json.dumps(first_rows, indent=0), encoding="utf-8")
        differing = [(name, state, sorted(set(found) ^ set(first_rows))) for name, state, found in graded[1:]
                     if found != first_rows]
        if not differing:
            print(f"every batch gave the same {len(first_rows)} grade rows")
        for name, state, changed in differing:
            print(f"WARNING: {name} gave other rows than {first_name} from the same frozen course (repository at "
                  f"{state}, was {first_state}: forgelab itself may have changed), e.g.:")
            for row in changed[:6]:
                print(f"    {row}")
        sandbox_cost(course, submissions[0], scratch, args.runs)
        if args.against:
            against(course, submissions, scratch, args.against, args.runs)
        if args.profile:
            profile(submissions[0], course)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
