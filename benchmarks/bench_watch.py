"""Benchmark: save-to-verdict latency of `forgelab watch 01`, beside a cold `forgelab check 01` and a default
`python -m pytest` of the same tests, in one run.

A copy of the workbook gets stage 01's reference module in ``forge/`` (nothing else of the stage is done:
the transfer test is the starter, so only the stage tests run) and the bytecode of its ``forgelab/``, as ``make
install`` leaves a workbook. Then, side by side:

* watch: ``forgelab watch 01`` runs in a pseudo-terminal; the module is saved ``--saves`` times (its content
  changed by a comment each time), ``--gap`` seconds after the previous verdict was on screen (a person reads
  it and edits; 0 saves again at once), and each latency is measured from the save to the end of the redrawn
  verdict on screen;
* cold check: ``forgelab check 01`` as a new process, ``--runs`` times;
* default pytest: ``python -m pytest`` of the stage 01 tests against the same ``forge/`` (default plugins,
  no sandbox), ``--runs`` times;
* the warm worker's own share: the same stage check judged in this process ``--runs`` times with the warm
  worker (:mod:`forgelab.judge.warm`, as watch mode judges) and ``--runs`` times with a cold session (a new
  pytest process, as ``check`` judges), interleaved — the judge alone, without the command or the screen.

The machine's load average is printed before and after. This is a measurement, not a test: nothing here
asserts a wall-clock limit.

    .venv/bin/python benchmarks/bench_watch.py [--saves 20] [--runs 5] [--gap 1.0]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parents[1]
MODULE = "forge/instructions.py"
TESTS = "tests/stages/test_01_instruction_hierarchy.py"
IGNORE = shutil.ignore_patterns(".venv", ".git", "build", "labs", "evidence", ".forgelab", "__pycache__", "*.pyc",
                                "test-artifacts", ".hypothesis", "node_modules")


def workbook(folder: Path) -> Path:
    """A copy of the course with pristine starters (as the learner bundle carries them) and the stage 01
    reference module in forge/."""
    root = folder / "workbook"
    shutil.copytree(ROOT, root, ignore=IGNORE)
    archive = subprocess.run(["git", "archive", "--format=tar", "HEAD", "forge", "transfer"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as bundle:
        bundle.extractall(root / "course" / "starters", filter="data")
    shutil.copyfile(root / "solutions" / MODULE, root / MODULE)
    # the copy's own forgelab/ (what `python -m forgelab.cli` there imports) with its bytecode, as `make install`
    # compiles a workbook's (forgelab.cli.bytecode); without it every command compiled its tools from source
    # in a shell that sets PYTHONDONTWRITEBYTECODE
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "forgelab")], check=True,
                   stdout=subprocess.DEVNULL)
    return root


def env_for(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGELAB_")}
    env.update({"FORGELAB_ROOT": str(root), "FORGELAB_WIDTH": "200", "FORGE_LANG": "en", "TERM": "xterm"})
    return env


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def watch_latencies(root: Path, saves: int, gap: float) -> list[float]:
    child = pexpect.spawn(sys.executable, ["-m", "forgelab.cli", "watch", "01"], cwd=str(root), env=env_for(root),
                          encoding="utf-8", timeout=600, dimensions=(60, 200))
    child.expect("watching forge/instructions.py")  # the first, whole check is done
    original = (root / MODULE).read_text(encoding="utf-8")
    latencies = []
    try:
        for index in range(saves):
            time.sleep(gap)
            scratch = root / f"forge/.instructions.py.{index}"
            scratch.write_text(f"{original}\n# save {index}\n", encoding="utf-8")
            started = time.perf_counter()
            os.replace(scratch, root / MODULE)  # how editors save: a new file renamed over the old one
            child.expect("after saving forge/instructions.py")
            child.expect("watching forge/instructions.py")
            latencies.append(time.perf_counter() - started)
    finally:
        child.send("q")
        child.expect(pexpect.EOF)
        child.close()
    return latencies


def judge_in_process(root: Path, runs: int) -> tuple[list[float], list[float]]:
    """Stage 01 judged in this process: with the warm worker, and with a cold session (interleaved)."""
    from forgelab.core.paths import Workbook
    from forgelab.core.registry import load_course
    from forgelab.judge.warm import WarmWorker
    from forgelab.learner.workbench import Workbench

    bench = Workbench(Workbook(root=root, workspace=root), load_course(root))
    stage = next(stage for stage in bench.course.stages if stage.number == "01")
    warm_times, cold_times = [], []
    with WarmWorker.start() as worker:
        bench.check(stage, write=False, warm=worker)  # the first forked session: the file cache as watch has it
        for _ in range(runs):
            started = time.perf_counter()
            bench.check(stage, write=False, warm=worker)
            warm_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            bench.check(stage, write=False)
            cold_times.append(time.perf_counter() - started)
    return warm_times, cold_times


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--gap", type=float, default=1.0, help="seconds from a verdict on screen to the next save")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="forgelab-bench-watch-") as scratch:
        root = workbook(Path(scratch))
        env = env_for(root)
        check = [sys.executable, "-m", "forgelab.cli", "check", "01"]
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TESTS]
        pytest_env = {**env, "PYTHONPATH": str(root)}
        timed(check, root, env), timed(pytest, root, pytest_env)  # warm the file cache and the starters
        latencies = watch_latencies(root, args.saves, args.gap)
        checks, pytests = [], []
        for _ in range(args.runs):  # interleaved, so that a change of load hits both alike
            checks.append(timed(check, root, env))
            pytests.append(timed(pytest, root, pytest_env))
        os.environ["FORGELAB_ROOT"] = str(root)
        warm_judge, cold_judge = judge_in_process(root, args.runs)
    load_after = os.getloadavg()
    rows = [("forgelab watch 01: save → verdict on screen", latencies),
            ("forgelab check 01 (cold, a new process)", checks),
            ("python -m pytest (same tests, default plugins)", pytests),
            ("judge only, warm worker (as watch judges)", warm_judge),
            ("judge only, cold session (as check judges)", cold_judge)]
    print(f"stage 01, reference module; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; load average "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after; saves {args.gap:g} s after the previous verdict")
    print(f"{'what':<50} {'n':>3} {'median':>8} {'p95':>8} {'min':>8} {'max':>8}")
    for name, values in rows:
        print(f"{name:<50} {len(values):>3} {statistics.median(values):>7.3f}s {p95(values):>7.3f}s "
              f"{min(values):>7.3f}s {max(values):>7.3f}s")
    watch, cold, plain, warm_only, cold_only = (statistics.median(values) for _name, values in rows)
    print(f"ratios: default pytest / cold check = {plain / cold:.1f}x; cold check / watch re-check = {cold / watch:.1f}x; "
          f"judge only, cold session / warm worker = {cold_only / warm_only:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
