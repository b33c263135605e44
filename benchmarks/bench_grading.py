"""Benchmark: `forgelab grade` throughput for full (10-stage) submissions at --jobs 1 and --jobs 2.

Builds one complete, correct submission for every stage the way a learner would (modules, fault
labs, transfer tests, design answers, `forgelab check`), derives N submissions from it (every
second one with the subtle stage-01 mistake, so both verdicts are exercised), and grades all N with
``--jobs 1`` and then ``--jobs 2`` (``--runs`` times each, interleaved). It prints, side by side:
wall time, full submissions per minute, the ratio jobs2/jobs1 against the targets (at least 5 per
minute at ``--jobs 2``; ``--jobs 2`` at least 1.6 times ``--jobs 1``), the machine's load average,
and the cost split summed over all submissions from the gradebook's ``timings`` table: stage tests,
instructor checks, notebook cells, fault lab, transfer, and the rest of each submission's wall time
as overhead (starting sandboxes and the trusted test session, collecting, copying, judging items).

``--profile`` then grades one submission in this process and lists where its time goes: the
slowest tests and cells, the time per target, and what starting one sandboxed Python costs here.

This is a measurement, not a test: nothing here asserts a limit. The machine is shared; the load
average is printed so that a reader can judge the numbers.

    .venv/bin/python benchmarks/bench_grading.py [--submissions 4] [--runs 1] [--profile]
"""

from __future__ import annotations

import argparse
import os
import resource
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
    ("transfer (own forge and known-wrong)", "transfer_s"),
    ("overhead (sandboxes, sessions, copy, items)", "overhead_s"),
)
TARGET_RATE, TARGET_RATIO = 5.0, 1.6


def build(folder: Path, count: int) -> list[Path]:
    from grading_fixtures import (SAME_RANK_FIND, SAME_RANK_LAST_WINS, break_module, build_correct, derive_handed_in,
                                  hand_in)
    from forgelab.registry import load_course

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


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def grade(submissions: list[Path], jobs: int, out: Path) -> tuple[float, dict[str, float], str]:
    """Grade the batch; (wall seconds, phases, points); phases["cpu_s"] is the CPU time of the whole
    process tree (every sandbox and test session is waited for, so it is counted)."""
    command = [sys.executable, "-m", "forgelab.cli", "grade", *map(str, submissions), "--jobs", str(jobs),
               "--out", str(out)]
    env = {**os.environ, "FORGELAB_ROOT": str(ROOT)}
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    if done.returncode != 0:
        raise SystemExit(f"forgelab grade failed:\n{done.stdout}\n{done.stderr}")
    connection = sqlite3.connect(out / "gradebook.sqlite")
    points = connection.execute("SELECT SUM(points), SUM(max_points) FROM grades").fetchone()
    connection.close()
    phases = split(out / "gradebook.sqlite")
    phases["cpu_s"] = cpu
    return wall, phases, f"{points[0]}/{points[1]} points"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def profile(submission: Path) -> None:
    """Grade one submission in this process and show where its time goes."""
    from forgelab.grading import grader, submission as submissions
    from forgelab.grading.rubric import parse_stages
    from forgelab.judge import core
    from forgelab.judge.sandbox import bwrap_command, isolation
    from forgelab.judge.settings import DEFAULT, SandboxMode
    from forgelab.paths import Workbook
    from forgelab.registry import load_course

    course = load_course(ROOT)
    workbook = Workbook(root=ROOT, workspace=ROOT)
    stages = parse_stages(course, None)
    sub = submissions.discover([str(submission)])[0]
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as scratch:
        laid = grader.lay_out(sub, Path(scratch) / "submission")
        job = grader.grading_job(course, workbook, stages, laid)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=4, help="full submissions per batch (default 4)")
    parser.add_argument("--runs", type=int, default=1, help="batches per --jobs value, interleaved (default 1)")
    parser.add_argument("--profile", action="store_true", help="also profile one submission (in this process)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    try:
        print(f"building {args.submissions} full (10-stage) submissions… (load average {load()})", flush=True)
        submissions = build(scratch / "submissions", args.submissions)
        walls: dict[int, list[float]] = {1: [], 2: []}
        splits: dict[int, list[dict[str, float]]] = {1: [], 2: []}
        loads = [load()]
        for run in range(args.runs):
            for jobs in (1, 2):
                wall, cost, points = grade(submissions, jobs, scratch / f"out-{jobs}-{run}")
                walls[jobs].append(wall)
                splits[jobs].append(cost)
                loads.append(load())
                print(f"  run {run + 1}, --jobs {jobs}: {wall:.1f} s ({points}; load average {loads[-1]})", flush=True)
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
        print(f"{'CPU seconds per submission (whole process tree)':<46} {cpu1:>10.1f} {cpu2:>10.1f}")
        print(f"{'share of a CPU the batch got (CPU / wall)':<46} {cpu1 * n / wall1:>10.2f} {cpu2 * n / wall2:>10.2f}")
        ceiling = 60 * (os.cpu_count() or 1) / cpu2
        print(f"if the grader had the {os.cpu_count()} CPUs to itself, CPU time alone would allow about "
              f"{ceiling:.1f} full submissions per minute")
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
        if args.profile:
            profile(submissions[0])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
