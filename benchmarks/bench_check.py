"""Benchmark: `forgelab check 01` against a default `python -m pytest` of the same tests.

Both run the stage 01 tests and the reference transfer test against the solution target, in the
same venv, N times each, interleaved. We report medians side by side and their ratio, and the machine's load
average before and after (the ratio moves with it). This is a measurement, not a test: nothing here asserts a
wall-clock limit.

    .venv/bin/python benchmarks/bench_check.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    forgelab = [sys.executable, "-m", "forgelab.cli"]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([*forgelab, "materialize", "solution", "--into", f"{scratch}/target"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        check_env = {**os.environ, "FORGELAB_WORKSPACE": f"{scratch}/workspace"}
        pytest_env = {**os.environ, "PYTHONPATH": f"{scratch}/target"}
        check_cmd = [*forgelab, "check", "01", "--target", "solution"]
        pytest_cmd = [sys.executable, "-m", "pytest", "-q", "tests/stages/test_01_instruction_hierarchy.py",
                      "solutions/transfer/test_01_instruction_hierarchy.py", "--import-mode=importlib"]
        timed(check_cmd, check_env), timed(pytest_cmd, pytest_env)  # warm the file cache
        checks, pytests = [], []
        for _ in range(args.runs):
            checks.append(timed(check_cmd, check_env))
            pytests.append(timed(pytest_cmd, pytest_env))
    load_after = os.getloadavg()
    check_median, pytest_median = statistics.median(checks), statistics.median(pytests)
    print(f"runs per command: {args.runs} (interleaved), Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after")
    print(f"{'command':<52} {'median':>8} {'min':>8} {'max':>8}")
    print(f"{'forgelab check 01 --target solution':<52} {check_median:>7.3f}s {min(checks):>7.3f}s {max(checks):>7.3f}s")
    print(f"{'python -m pytest (same tests, default plugins)':<52} {pytest_median:>7.3f}s {min(pytests):>7.3f}s {max(pytests):>7.3f}s")
    print(f"ratio: the default pytest run takes {pytest_median / check_median:.1f}x as long as forgelab check")
    return 0


if __name__ == "__main__":
    sys.exit(main())
