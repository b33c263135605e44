"""Benchmark: issue 32's two grading targets, side by side in one run — one full correct submission graded at
``--jobs 1`` against ``forgelab check all --target solution`` (target: at most 2×), and full submissions per minute
at ``--jobs 2`` against ``--jobs 1`` (target: at least 5 per minute at ``--jobs 2`` on 2 CPUs).

The workbook state: a frozen copy of the course repository (others may commit while it runs); in it, a full correct
submission built as a learner builds it — every stage's reference module saved into ``forge/``, its fault lab
started, diagnosed, repaired and its regression test written (the course's example), its transfer test written (the
course's reference test), its design answer saved and ``forgelab check NN`` run — then handed in (no solutions, no
instructor material); ``--submissions`` copies of it make the batch (6 by default: an instructor grades a class in
one batch, and a batch pays once for ``grade``'s start, the similarity check and the pages, which a batch of two
weighs three times as much). ``check all --target solution`` runs in the
frozen course with a workspace of its own. The frozen copy's ``forgelab`` is compiled to bytecode first, as an
installed one is (both sides import it from there).

In turn, ``--runs`` times, interleaved so that a change of load hits both sides alike: the single submission graded
at ``--jobs 1`` and ``check all --target solution``; then the batch graded at ``--jobs 1`` and at ``--jobs 2``. Every
row says the load average (1, 5, 15 min) before and after it. These timed runs are only timed: nothing reads /proc
beside them. Where the time goes comes from runs of their own afterwards (one of the single submission, one of the
batch at each ``--jobs``): the CPU seconds of every process, sampled from /proc by kind every 50 ms
(:func:`bench_grading.run_sampled`; on 2 CPUs the sampler's own reading slows the run it watches, which is why the
timed rows are not sampled), and the judge's own timings of the single submission (the gradebook's ``timings``
table: stage tests, instructor checks, notebook cells, fault lab, transfer, and the wall time not in them). Every
batch's grade rows are compared with the first's.

``--built DIR`` keeps the built submissions in DIR (and reuses them when DIR has them): building takes minutes.

    .venv/bin/python benchmarks/bench_grade_speed.py [--runs 3] [--submissions 6] [--built DIR]

This is a measurement, not a test: nothing here asserts a limit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "course"))

from bench_grading import PHASES, course_state, grade, rows  # noqa: E402

TARGET_ONE, TARGET_RATE = 2.0, 5.0


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def built(folder: Path, count: int) -> tuple[Path, list[Path]]:
    """The frozen course and ``count`` full correct submissions (every stage), made once in ``folder``."""
    from conftest import copy_workbook
    from grading_fixtures import build_correct, derive_handed_in, hand_in
    from forgelab.core.registry import load_course

    course, base = folder / "course", folder / "base"
    if not (course / "course").is_dir():
        shutil.rmtree(course, ignore_errors=True)
        copy_workbook(course)
    # the copy's forgelab is this tree's (a kept copy may be older), compiled as an installed one is (the copy has no
    # bytecode, and where the shell sets PYTHONDONTWRITEBYTECODE every grade and check would compile it again)
    shutil.rmtree(course / "forgelab")
    shutil.copytree(ROOT / "forgelab", course / "forgelab", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(course / "forgelab")], check=True)
    if not (base / "forge").is_dir():
        shutil.rmtree(base, ignore_errors=True)
        hand_in(build_correct(base, tuple(stage.number for stage in load_course(ROOT).stages)))
    made = []
    for index in range(count):
        learner = folder / f"learner-{index + 1:02d}"
        if not (learner / "forge").is_dir():
            shutil.rmtree(learner, ignore_errors=True)
            derive_handed_in(base, learner)
        made.append(learner)
    return course, made


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} → {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs of each side (default 3)")
    parser.add_argument("--submissions", type=int, default=6,
                        help="full submissions per batch (default 6: a class is graded in one batch, and each batch "
                             "pays once for grade's start, the similarity check and the pages)")
    parser.add_argument("--built", type=Path, help="keep (and reuse) the frozen course and submissions here")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-grade-speed-"))
    try:
        folder = args.built or scratch / "built"
        folder.mkdir(parents=True, exist_ok=True)
        print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; repository at {course_state()}; "
              f"building the course copy and {args.submissions} full submissions… (load average {load()})", flush=True)
        course, submissions = built(folder, args.submissions)
        n = len(submissions)
        env = {k: v for k, v in os.environ.items() if not k.startswith("FORGELAB_")}
        env.update(FORGELAB_ROOT=str(course), FORGELAB_WORKSPACE=str(scratch / "check-all-workspace"))
        check_all = [sys.executable, "-m", "forgelab.cli", "check", "all", "--target", "solution"]
        print(f"warming the file cache: one check all, one grade… (load average {load()})", flush=True)
        timed(check_all, course, env)
        grade(course, submissions[:1], 1, scratch / "warm")
        one: list[float] = []
        alls: list[float] = []
        found: list[list[tuple[object, ...]]] = []
        loads_one = [load()]
        for run in range(args.runs):
            wall, _cost, points = grade(course, submissions[:1], 1, scratch / f"one-{run}", sampled=False)
            one.append(wall)
            found.append(rows(scratch / f"one-{run}" / "gradebook.sqlite"))
            alls.append(timed(check_all, course, env))
            loads_one.append(load())
            print(f"  run {run + 1}: one submission at --jobs 1 {wall:.1f} s ({points}), check all --target solution "
                  f"{alls[-1]:.1f} s (load average {loads_one[-1]})", flush=True)
        batch: dict[int, list[float]] = {1: [], 2: []}
        loads_batch = [load()]
        for run in range(args.runs):
            for jobs in (1, 2):
                out = scratch / f"batch-{jobs}-{run}"
                wall, _cost, points = grade(course, submissions, jobs, out, sampled=False)
                batch[jobs].append(wall)
                found.append(rows(out / "gradebook.sqlite"))
                loads_batch.append(load())
                print(f"  run {run + 1}: {n} submissions at --jobs {jobs} {wall:.1f} s ({points}; load average "
                      f"{loads_batch[-1]})", flush=True)
        print(f"where the time goes: one sampled run of each… (load average {load()})", flush=True)
        sampled_one, cost, _points = grade(course, submissions[:1], 1, scratch / "sampled-one")
        found.append(rows(scratch / "sampled-one" / "gradebook.sqlite"))
        batch_cost: dict[int, tuple[float, dict[str, float]]] = {}
        for jobs in (1, 2):
            wall, batch_sampled, _points = grade(course, submissions, jobs, scratch / f"sampled-{jobs}")
            found.append(rows(scratch / f"sampled-{jobs}" / "gradebook.sqlite"))
            batch_cost[jobs] = (wall, batch_sampled)
        one_s, all_s = statistics.median(one), statistics.median(alls)
        rate1, rate2 = (60 * n / statistics.median(batch[jobs]) for jobs in (1, 2))
        print()
        print(f"{os.cpu_count()} CPUs; repository at {course_state()}; workbook: a frozen copy of the course, "
              f"full correct submissions of all its stages (handed in), median of {args.runs} interleaved runs")
        print(f"| row | median | runs | load average (1, 5, 15 min) before → after each run |")
        print("|---|---|---|---|")
        print(f"| one full submission graded, `--jobs 1` | {one_s:.1f} s | {', '.join(f'{v:.1f}' for v in one)} | "
              f"{' → '.join(loads_one)} |")
        print(f"| `check all --target solution` | {all_s:.1f} s | {', '.join(f'{v:.1f}' for v in alls)} | (beside it) |")
        for jobs, rate in ((1, rate1), (2, rate2)):
            print(f"| {n} full submissions, `--jobs {jobs}` | {statistics.median(batch[jobs]):.1f} s "
                  f"({rate:.2f} per minute) | {', '.join(f'{v:.1f}' for v in batch[jobs])} | "
                  f"{' → '.join(loads_batch) if jobs == 1 else '(interleaved)'} |")
        print(f"ratio one submission / check all --target solution: {one_s / all_s:.2f}× (target ≤ {TARGET_ONE:.0f}×)")
        print(f"full submissions per minute: {rate1:.2f} at --jobs 1, {rate2:.2f} at --jobs 2 (ratio {rate2 / rate1:.2f}; "
              f"target ≥ {TARGET_RATE:.0f} at --jobs 2)")
        cpu = cost["cpu_s"]
        print(f"where the time goes (one submission, --jobs 1, a sampled run of its own: {sampled_one:.1f} s with the "
              f"sampler beside it): {cpu:.1f} CPU seconds sampled over every process, {cpu / sampled_one:.2f} CPUs busy "
              f"on average")
        for key in sorted((key for key in cost if key.startswith("cpu:")), key=lambda key: -cost[key]):
            print(f"  CPU {key[4:]:<64} {cost[key]:6.2f} s ({100 * cost[key] / cpu:.0f}%)")
        for label, key in PHASES:
            print(f"  judge's timings: {label:<50} {cost[key]:6.2f} s")
        for jobs in (1, 2):
            wall, spent_all = batch_cost[jobs]
            spent = spent_all["cpu_s"] / n
            print(f"  --jobs {jobs} (sampled run, {wall:.1f} s): {spent:.1f} CPU seconds per submission, "
                  f"{spent * n / wall:.2f} CPUs busy on average")
        # every submission is the same correct work: each one's rows (its id aside) must be the same in every run
        shapes = {tuple(row[1:] for row in graded if row[0] == sub) for graded in found for sub in {r[0] for r in graded}}
        print("every run gave every submission the same grade rows" if len(shapes) == 1 else
              "WARNING: the runs gave different grade rows")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
