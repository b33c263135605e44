"""Benchmark: `forgelab grade` throughput at --jobs 1 and --jobs 2, and where the time goes.

Builds N learner submissions the way the grading tests do (half of them correct, half with the
subtle stage-01 mistake), grades them all with ``--jobs 1`` and then ``--jobs 2`` (``--runs``
times each, interleaved), and prints side by side: wall time, submissions per minute, and the
cost split summed over all submissions — kernel start, notebook cell execution, the rest of each
nbval run, the tests (stage tests, fault lab, transfer, instructor checks), and the worker's own
start and copy. The split comes from the gradebook's ``timings`` table. This is a measurement,
not a test: nothing here asserts a limit.

    .venv/bin/python benchmarks/bench_grading.py [--submissions 4] [--stages 01-03] [--runs 1]
"""

from __future__ import annotations

import argparse
import os
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
    ("kernel start", "kernel_start_s"),
    ("notebook execution (cells)", "notebook_execution_s"),
    ("nbval run, other (start-up, shutdown)", "nbval_other_s"),
    ("tests (stage, lab, transfer, instructor)", "tests_s"),
    ("worker start, copy, evidence", "worker_other_s"),
)


def build(folder: Path, count: int, stages: tuple[str, ...]) -> list[Path]:
    from grading_fixtures import SAME_RANK_FIND, SAME_RANK_LAST_WINS, break_module, build_correct, derive, hand_in

    base = build_correct(folder / "base", stages)
    made = []
    for index in range(count):
        copy = derive(base, folder / f"learner-{index + 1:02d}")
        if index % 2:
            break_module(copy, SAME_RANK_FIND, SAME_RANK_LAST_WINS)
        made.append(hand_in(copy))
    return made


def split(gradebook: Path) -> dict[str, float]:
    connection = sqlite3.connect(gradebook)
    totals: dict[str, float] = {}
    for phase, seconds in connection.execute("SELECT phase, SUM(seconds) FROM timings GROUP BY phase"):
        totals[phase] = float(seconds)
    connection.close()
    totals["nbval_other_s"] = totals.get("notebook_total_s", 0.0) - totals.get("kernel_start_s", 0.0) \
        - totals.get("notebook_execution_s", 0.0)
    totals["worker_other_s"] = totals.get("worker_wall_s", 0.0) - totals.get("tests_s", 0.0) \
        - totals.get("notebook_total_s", 0.0)
    return totals


def grade(submissions: list[Path], jobs: int, stages: str, out: Path) -> tuple[float, dict[str, float]]:
    command = [sys.executable, "-m", "forgelab.cli", "grade", *map(str, submissions), "--jobs", str(jobs),
               "--stages", stages, "--out", str(out)]
    env = {**os.environ, "FORGELAB_ROOT": str(ROOT)}
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"forgelab grade failed:\n{done.stdout}\n{done.stderr}")
    return wall, split(out / "gradebook.sqlite")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=4)
    parser.add_argument("--stages", default="01-03")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    from forgelab.grading.rubric import parse_stages
    from forgelab.registry import load_course

    stages = tuple(stage.number for stage in parse_stages(load_course(ROOT), args.stages))
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as scratch:
        folder = Path(scratch)
        print(f"building {args.submissions} submissions (stages {', '.join(stages)})…", flush=True)
        submissions = build(folder / "submissions", args.submissions, stages)
        walls: dict[int, list[float]] = {1: [], 2: []}
        splits: dict[int, list[dict[str, float]]] = {1: [], 2: []}
        for run in range(args.runs):
            for jobs in (1, 2):
                wall, cost = grade(submissions, jobs, args.stages, folder / f"out-{jobs}-{run}")
                walls[jobs].append(wall)
                splits[jobs].append(cost)
                print(f"  run {run + 1}, --jobs {jobs}: {wall:.1f} s", flush=True)
    n = args.submissions
    wall1, wall2 = statistics.median(walls[1]), statistics.median(walls[2])
    print()
    print(f"{n} submissions × stages {args.stages}, median of {args.runs} run(s), Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"{'':<44} {'--jobs 1':>10} {'--jobs 2':>10} {'ratio 2/1':>10}")
    print(f"{'wall time (s)':<44} {wall1:>10.1f} {wall2:>10.1f} {wall2 / wall1:>10.2f}")
    rate1, rate2 = 60 * n / wall1, 60 * n / wall2
    print(f"{'throughput (submissions per minute)':<44} {rate1:>10.2f} {rate2:>10.2f} {rate2 / rate1:>10.2f}")
    print("cost split, seconds summed over submissions (share of the --jobs 1 total):")
    total1 = sum(statistics.median(s[key] for s in splits[1]) for _, key in PHASES)
    for label, key in PHASES:
        one = statistics.median(s.get(key, 0.0) for s in splits[1])
        two = statistics.median(s.get(key, 0.0) for s in splits[2])
        ratio = f"{two / one:>10.2f}" if one > 0 else f"{'-':>10}"
        print(f"  {label:<42} {one:>10.1f} {two:>10.1f} {ratio}   ({100 * one / total1:.0f}%)")
    print("(with --jobs 2 each phase takes longer on a shared machine, but two submissions run at once)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
