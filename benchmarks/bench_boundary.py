"""Benchmark: what crossing the sandbox's boundary costs the judge of one full submission — the instructor checks that
call the learner's code once per random input against the same checks calling it through
``forgelab.judge.remote.each`` (many calls of one function in one exchange), side by side in one run.

The workbook state: two frozen copies of the course repository, the same but for ``instructor/checks/``: one holds
this tree's checks, the other the checks of ``--checks-from`` (default ``ccfacf7``, the last commit before ``each``).
Each side runs, as ``forgelab grade`` runs them for a submission, every stage's tests and instructor checks through
the judge against the course's reference solution (every stage, one trusted session). The sides alternate
``--runs`` times, so a change of load hits both alike. Reported per side: the exchanges with the learner's processes
(``TestRow.trips``: stage tests and checks apart), the judge run's wall time and the CPU time of every process it
started (sessions and sandboxed hosts), medians, and the load average (1, 5, 15 min) before and after each run. The
two sides' verdicts are compared: every test must have the same outcome on both.

    .venv/bin/python benchmarks/bench_boundary.py [--runs 3] [--checks-from REV] [--stages 02 09 ...]

This is a measurement, not a test: nothing here asserts a limit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "course"))

from bench_grading import course_state, run_sampled  # noqa: E402

from forgelab.core.paths import Workbook  # noqa: E402
from forgelab.core.registry import Stage, load_course  # noqa: E402
from forgelab.core.targets import resolve_target  # noqa: E402
from forgelab.grading.plan import check_files  # noqa: E402
from forgelab.judge import core  # noqa: E402
from forgelab.judge.core import CourseTests  # noqa: E402
from forgelab.judge.outcomes import RunReport  # noqa: E402
from forgelab.judge.settings import DEFAULT  # noqa: E402
from forgelab.verdicts import jobs  # noqa: E402

BEFORE = "ccfacf7"


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def frozen(folder: Path, checks_from: str | None) -> Path:
    """A copy of the course in ``folder``; with ``checks_from``, its instructor checks are those of that revision."""
    from conftest import copy_workbook

    copy_workbook(folder)
    if checks_from is not None:
        listed = subprocess.run(["git", "ls-tree", "--name-only", checks_from, "instructor/checks/"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.split()
        for old in (folder / "instructor" / "checks").glob("test_*.py"):
            old.unlink()
        for name in listed:
            shown = subprocess.run(["git", "show", f"{checks_from}:{name}"], cwd=ROOT, capture_output=True, check=True)
            (folder / name).write_bytes(shown.stdout)
    return folder


def judged(course_root: Path, numbers: list[str]) -> tuple[float, dict[str, object]]:
    """Every stage's tests and checks against the reference, as grading runs them, in a process of its own whose whole
    tree's CPU time is sampled from /proc (the sandboxed hosts are reaped out of reach of ``getrusage``): the CPU
    seconds, and what the run saw (its wall time, exchanges and outcomes)."""
    with tempfile.TemporaryDirectory(prefix="bench-boundary-run-") as scratch:
        out = Path(scratch) / "seen.json"
        done, _wall, by_kind = run_sampled([sys.executable, __file__, "--one", str(course_root), "--out", str(out),
                                            "--stages", *numbers], ROOT, dict(os.environ))
        if done.returncode != 0:
            raise SystemExit(f"the judge run failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return sum(by_kind.values()), json.loads(out.read_text(encoding="utf-8"))


def one_run(course_root: Path, numbers: list[str], out: Path) -> None:
    """The judge run itself (in the process :func:`judged` starts)."""
    course = load_course(course_root)
    workbook = Workbook(course_root, course_root)
    solution = resolve_target("solution", workbook, course)
    stages = [course.stage(number) for number in numbers]
    targets = [jobs.spec(solution, f"sub-{stage.number}", stage) for stage in stages]
    suites = [CourseTests(f"sub-{stage.number}", (stage.test_file, *check_files(course_root, stage))) for stage in stages]
    started = time.perf_counter()
    report = core.run(jobs.job(course, workbook, targets, suites), DEFAULT)
    wall = time.perf_counter() - started
    in_tests, in_checks = trips(report, course_root, stages)
    out.write_text(json.dumps({"wall": wall, "tests": in_tests, "checks": in_checks,
                               "outcomes": {row.nodeid: row.outcome.value for row in report.rows}}), encoding="utf-8")


def trips(report: RunReport, course_root: Path, stages: list[Stage]) -> tuple[int, int]:
    """(stage tests' exchanges, instructor checks' exchanges) of the run."""
    checks = {file for stage in stages for file in check_files(course_root, stage)}
    in_checks = sum(row.trips for row in report.rows if row.file in checks)
    return sum(row.trips for row in report.rows) - in_checks, in_checks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs of each side (default 3)")
    parser.add_argument("--checks-from", default=BEFORE, help=f"the revision of the other side's checks ({BEFORE})")
    parser.add_argument("--stages", nargs="*", help="stage numbers (default: every stage)")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # one judge run of this course copy (see judged)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    numbers = args.stages or [stage.number for stage in load_course(ROOT).stages]
    if args.one is not None:
        one_run(args.one, numbers, args.out)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-boundary-") as scratch:
        sides = {"one call per exchange": frozen(Path(scratch) / "loop", args.checks_from),
                 "each()": frozen(Path(scratch) / "each", None)}
        print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; repository at {course_state()}; "
              f"the other side's checks from {args.checks_from}; stages {' '.join(numbers)}", flush=True)
        print(f"warming the file cache: one run of each side… (load average {load()})", flush=True)
        for root in sides.values():
            judged(root, numbers)
        measured: dict[str, list[tuple[float, float, int, int]]] = {name: [] for name in sides}
        outcomes: dict[str, dict[str, str]] = {}
        for run in range(args.runs):
            for name, root in sides.items():
                before = load()
                cpu, seen = judged(root, numbers)
                wall, in_tests, in_checks = float(seen["wall"]), int(seen["tests"]), int(seen["checks"])  # type: ignore[arg-type]
                measured[name].append((wall, cpu, in_tests, in_checks))
                outcomes.setdefault(name, seen["outcomes"])  # type: ignore[arg-type]
                print(f"  run {run + 1}, {name}: {in_tests} + {in_checks} exchanges, {wall:.2f} s wall, {cpu:.2f} s CPU "
                      f"(load average {before} → {load()})", flush=True)
    print()
    print(f"{'side':<24}{'stage tests':>13}{'checks':>9}{'wall s':>9}{'CPU s':>8}   (medians of {args.runs} runs)")
    for name, values in measured.items():
        wall, cpu = statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)
        in_tests, in_checks = statistics.median(v[2] for v in values), statistics.median(v[3] for v in values)
        print(f"{name:<24}{in_tests:>13.0f}{in_checks:>9.0f}{wall:>9.2f}{cpu:>8.2f}")
    (slow, fast) = (measured[name] for name in sides)
    print(f"ratios (one call per exchange / each()): wall {statistics.median(v[0] for v in slow) / statistics.median(v[0] for v in fast):.2f}×, "
          f"CPU {statistics.median(v[1] for v in slow) / statistics.median(v[1] for v in fast):.2f}×")
    first, second = outcomes.values()
    differ = sorted(nodeid for nodeid in first.keys() | second.keys()
                    if first.get(nodeid) != second.get(nodeid) and "instructor/checks" not in nodeid)
    same_checks = sorted({n.split("::")[0] for n in first if "instructor/checks" in n}) == \
        sorted({n.split("::")[0] for n in second if "instructor/checks" in n})
    print(f"verdicts: stage tests {'the same on both sides' if not differ else 'DIFFER: ' + ', '.join(differ[:5])}; "
          f"checks: every one passed on both sides: "
          f"{all(v == 'passed' for v in first.values()) and all(v == 'passed' for v in second.values()) and same_checks}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
