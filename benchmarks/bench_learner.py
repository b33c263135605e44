"""Benchmark: every speed figure of the learner's and the grader's paths, side by side in one run, in the state a
learner is in at the end of stage 01.

The learner bundle is released from the committed course (`forgelab release`) and unzipped into a new folder;
`make lab` runs there until it prints JupyterLab's URL (timed; the server is stopped then — it also made the
bundle's own virtual environment, which every later row uses). Then stage 01 is finished there as a learner
finishes it, with the bundle's own `forgelab`: the reference module saved into `forge/`, the fault lab opened,
diagnosed, repaired, and its regression test written (the course's example), the transfer test written (the
course's reference test), the design answer saved, and `forgelab check 01` accepted. In that workbook, in turn:

* watch mode: `forgelab watch 01` in a pseudo-terminal, the module saved ``--saves`` times (a comment changed each
  time), ``--gap`` seconds after the previous screen; from the save to the stage tests' verdict on screen, and to
  the screen on which every part that re-ran is shown (the transfer judgement follows the verdict);
* the notebook's re-check on save: the test cell's toggle (:meth:`forgelab.learner.notebook.StageTools
  .recheck_on_save`) turned on in a process of the bundle's Python, as the notebook's kernel does; from the save to
  the table updated in the widget with the stage tests' verdict, and to the line saying every part that re-ran is
  judged (the next save waits for it);
* a cold `forgelab check 01` against a default `python -m pytest` of the same test files on the same `forge/`
  (the stage tests and the transfer test; with ``--import-mode=importlib``, as the two files share a name and the
  default import mode stops at collection without running a test), and against the sum of the default pytest runs of everything the check
  runs (the stage tests and the transfer test on `forge/`, the stage tests and the regression test in the lab, the
  transfer test on the known-wrong module, the regression test on the lab's broken module), ``--runs`` times,
  interleaved;
* the first `forgelab status` (nothing remembered by an earlier status or check) against one `forgelab check 01`,
  ``--runs`` times, interleaved.

Then, in a frozen copy of the course repository: full submissions built as a learner builds them (every stage:
modules, fault labs with their regression tests, transfer tests, design answers, evidence), one graded alone at
``--jobs 1`` against `forgelab check all --target solution` (``--runs`` times, interleaved), and a batch of
``--submissions`` graded at ``--jobs 2`` (full submissions per minute).

The machine's load average is printed before and after each part, with the CPU count: the figures are measured on
a shared machine and move with it; the ratios, measured side by side, move less. This is a measurement, not a test:
nothing here asserts a limit.

    .venv/bin/python benchmarks/bench_learner.py [--saves 20] [--runs 5] [--gap 1.0] [--submissions 4] [--only ...]
        [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "course"))

from bench_make_lab import to_url  # noqa: E402
from bench_watch import p95  # noqa: E402

STAGE = "01"
MODULE = "forge/instructions.py"
TESTS = "tests/stages/test_01_instruction_hierarchy.py"
TRANSFER = "transfer/test_01_instruction_hierarchy.py"
PARTS = ("make", "learner", "grading")
RATES: dict[str, float] = {}
TARGET_VERDICT_S = 0.150  # issue 32: the stage tests' verdict after a save, median, at a load of 2 or less

# the notebook's re-check toggle, driven in the bundle's Python as a kernel would drive it: the widget's value is
# observed, and each save's latency ends when the table of a re-check after that save is in it
RECHECK = r"""
import os, sys, threading, time
from pathlib import Path
import IPython.display
shown = []
IPython.display.display = lambda *items, **_: shown.extend(items)
from forgelab.learner.notebook import stage_tools
root, saves, gap = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
tools = stage_tools("01")
tools.recheck_on_save()
toggle, live = shown[-1].children
verdict, complete = threading.Event(), threading.Event()
def seen(change):
    value = change["new"]
    if "required tests:" not in value:
        return
    if "re-checked after saving" in value or "checked; every" in value:
        verdict.set()  # the stage tests' verdict is in the table (the slow parts may still be judged)
    if "the next save checks again" in value or "checked; every" in value:
        complete.set()  # every part that re-ran is judged
live.observe(seen, names="value")
toggle.value = True
assert complete.wait(600), live.value
module = root / "forge/instructions.py"
original = module.read_text(encoding="utf-8")
for index in range(saves):
    time.sleep(gap)
    verdict.clear()
    complete.clear()
    scratch = root / f"forge/.instructions.py.{index}"
    scratch.write_text(f"{original}\n# save {index}\n", encoding="utf-8")
    started = time.perf_counter()
    os.replace(scratch, module)
    assert verdict.wait(600), live.value
    first = time.perf_counter() - started
    assert complete.wait(600), live.value
    print(f"{first:.6f} {time.perf_counter() - started:.6f}", flush=True)
assert "13/13" in live.value or "passed" in live.value, live.value
toggle.value = False
"""


def add(results: list[tuple[str, list[float], str]], row: tuple[str, list[float], str]) -> None:
    """A measured row, printed at once (a long run shows what it has) and kept for the table at the end."""
    results.append(row)
    name, values, loads = row
    print(f"  {name}: median {statistics.median(values):.3f} s of {len(values)} (load average {loads or 'as above'})",
          flush=True)


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def learner_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGELAB_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env.update({"FORGE_LANG": "en", "FORGELAB_WIDTH": "200", "TERM": "xterm"})
    return env


def run(command: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...] = (0,)) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(command)} → {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done.stdout


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def end_of_stage(root: Path) -> None:
    """Stage 01 finished in the bundle at ``root`` as a learner finishes it, with the bundle's own forgelab."""
    from forgelab.core.registry import load_course
    from forgelab.verdicts.diagnosis import reference_answers

    stage = load_course(ROOT).stage(STAGE)
    forgelab, env = [str(root / ".venv/bin/forgelab")], learner_env(root)
    solutions = ROOT / "solutions"
    shutil.copyfile(solutions / MODULE, root / MODULE)
    run([*forgelab, "check", STAGE], root, env, ok=(0, 1))  # the tests pass: the lab opens after that
    run([*forgelab, "fault", "start", STAGE], root, env)
    test, function, defect = reference_answers(ROOT, stage)
    run([*forgelab, "fault", "diagnose", STAGE, "--test", test, "--function", function, "--defect", defect,
         "--because", "the broken copy does what the defect says and the failing test shows it"], root, env)
    shutil.copyfile(solutions / "forge" / stage.fault.fault_file.removeprefix("forge/"),
                    root / "labs" / stage.key / stage.fault.fault_file)
    shutil.copyfile(ROOT / stage.reference_regression_test, root / stage.regression_test)
    shutil.copyfile(ROOT / stage.reference_transfer, root / stage.transfer_file)
    run([*forgelab, "answer", STAGE, "--file", str(solutions / "answers" / f"{stage.key}.md")], root, env)
    out = run([*forgelab, "check", STAGE], root, env, ok=(0, 1))
    if "ACCEPTED" not in out or "NOT ACCEPTED" in out:
        raise SystemExit(f"stage 01 is not accepted at the end of the stage:\n{out}")


def watch_latencies(root: Path, saves: int, gap: float) -> tuple[list[float], list[float]]:
    """Save → the stage tests' verdict on screen, and save → the last part that re-ran on screen."""
    child = pexpect.spawn(str(root / ".venv/bin/forgelab"), ["watch", STAGE], cwd=str(root), env=learner_env(root),
                          encoding="utf-8", timeout=600, dimensions=(80, 200))
    child.expect("watching forge/instructions.py")  # the first, whole check is on screen
    original = (root / MODULE).read_text(encoding="utf-8")
    verdicts, whole = [], []
    try:
        for index in range(saves):
            time.sleep(gap)
            scratch = root / f"forge/.instructions.py.{index}"
            scratch.write_text(f"{original}\n# save {index}\n", encoding="utf-8")
            started = time.perf_counter()
            os.replace(scratch, root / MODULE)  # how editors save: a new file renamed over the old one
            child.expect("after saving forge/instructions.py")
            pending = "still judging:" in child.before  # this screen is followed by one with every part
            child.expect("watching forge/instructions.py")
            verdicts.append(time.perf_counter() - started)
            if pending:
                child.expect("after saving forge/instructions.py")
                child.expect("watching forge/instructions.py")
            whole.append(time.perf_counter() - started)
    finally:
        (root / MODULE).write_text(original, encoding="utf-8")
        child.send("q")
        child.expect(pexpect.EOF)
        child.close()
    return verdicts, whole


def recheck_latencies(root: Path, saves: int, gap: float) -> tuple[list[float], list[float]]:
    """Save → the stage tests' verdict in the table, and save → every part that re-ran judged (the next save waits)."""
    out = run([str(root / ".venv/bin/python"), "-c", RECHECK, str(root), str(saves), str(gap)], root,
              learner_env(root))
    pairs = [line.split() for line in out.splitlines() if line.strip()]
    return [float(first) for first, _whole in pairs], [float(whole) for _first, whole in pairs]


def learner_part(base: Path, args: argparse.Namespace, results: list[tuple[str, list[float], str]]) -> Path:
    from forgelab.core.registry import load_course

    stage = load_course(ROOT).stage(STAGE)
    root = base / "bundle" / "forge-workbook-lab"
    env = learner_env(root)
    forgelab = [str(root / ".venv/bin/forgelab")]
    print(f"finishing stage 01 in the bundle… (load average {load()})", flush=True)
    end_of_stage(root)
    before = load()
    verdicts, whole = watch_latencies(root, args.saves, args.gap)
    add(results, ("watch 01: save → stage tests' verdict on screen", verdicts, f"{before} → {load()}"))
    add(results, ("watch 01: save → every re-run part on screen", whole, ""))
    before = load()
    verdicts, whole = recheck_latencies(root, args.saves, args.gap)
    add(results, ("notebook re-check: save → table updated", verdicts, f"{before} → {load()}"))
    add(results, ("notebook re-check: save → every re-run part judged", whole, ""))
    # the cold check against default pytest runs of the same tests on the same code
    python = str(root / ".venv/bin/python")
    known_wrong, broken_lab = base / "known-wrong", base / "broken-lab"
    shutil.copytree(root / "forge", known_wrong / "forge", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(root / stage.fault_variant, known_wrong / stage.module)  # the known-wrong module, opened by the lab
    lab = root / "labs" / stage.key
    shutil.copytree(lab, broken_lab)
    shutil.copyfile(root / stage.fault_variant, broken_lab / stage.fault.fault_file)
    regression = f"labs/{stage.key}/{Path(stage.regression_test).name}"
    pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    # the stage and transfer test files share a name (test_01_instruction_hierarchy.py): pytest's default import mode
    # stops at collection with "import file mismatch" and runs no test, so this one run imports them as importlib does
    same_files = [([*pytest, "--import-mode=importlib", TESTS, TRANSFER], {**env, "PYTHONPATH": str(root)}, 0)]
    every_run = [*same_files,
                 ([*pytest, TESTS, regression], {**env, "PYTHONPATH": str(lab)}, 0),
                 ([*pytest, TRANSFER], {**env, "PYTHONPATH": str(known_wrong)}, -1),
                 ([*pytest, regression], {**env, "PYTHONPATH": str(broken_lab)}, -1)]  # -1: passing or failing
    check = [*forgelab, "check", STAGE]
    state = root / ".forgelab"
    timed(check, root, env)
    for command, its_env, code in every_run:  # the file cache warm for both; each run runs its tests, as expected
        out = run(command, root, its_env, ok=(code,) if code >= 0 else (0, 1))
        if " passed" not in out and " failed" not in out:
            raise SystemExit(f"{' '.join(command)} ran no test:\n{out}")
    before = load()
    checks, plain, plain_all, statuses, status_checks = [], [], [], [], []
    for _ in range(args.runs):  # interleaved, so that a change of load hits both alike
        checks.append(timed(check, root, env))
        plain.append(sum(timed(command, root, its_env) for command, its_env, _code in same_files))
        plain_all.append(sum(timed(command, root, its_env) for command, its_env, _code in every_run))
    add(results, ("check 01 (cold, a new process)", checks, f"{before} → {load()}"))
    add(results, ("python -m pytest: stage + transfer tests on forge/", plain, ""))
    add(results, ("python -m pytest: all the check runs (4 runs)", plain_all, ""))
    before = load()
    for _ in range(args.runs):
        shutil.rmtree(state / "state", ignore_errors=True)
        for remembered in state.glob("*.json"):
            if remembered.name != "course-cache.json":
                remembered.unlink()
        statuses.append(timed([*forgelab, "status"], root, env))
        status_checks.append(timed(check, root, env))
    add(results, ("first status (nothing remembered)", statuses, f"{before} → {load()}"))
    add(results, ("check 01 (beside the status runs)", status_checks, ""))
    return root


def grading_part(base: Path, args: argparse.Namespace, results: list[tuple[str, list[float], str]]) -> None:
    from bench_grading import build, grade
    from conftest import copy_workbook

    print(f"building {args.submissions} full submissions… (load average {load()})", flush=True)
    course = copy_workbook(base / "course").root
    submissions = build(base / "submissions", args.submissions)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGELAB_")}
    env.update(FORGELAB_ROOT=str(course), FORGELAB_WORKSPACE=str(base / "check-all-workspace"))
    check_all = [sys.executable, "-m", "forgelab.cli", "check", "all", "--target", "solution"]
    timed(check_all, course, env)
    before = load()
    one, alls = [], []
    for run_index in range(args.runs):
        wall, _cost, _points = grade(course, submissions[:1], 1, base / f"grade-one-{run_index}")
        one.append(wall)
        alls.append(timed(check_all, course, env))
    add(results, ("grade one full submission, --jobs 1", one, f"{before} → {load()}"))
    add(results, ("check all --target solution", alls, ""))
    before = load()
    wall, _cost, points = grade(course, submissions, 2, base / "grade-batch")
    add(results, (f"grade {len(submissions)} full submissions, --jobs 2 ({points})", [wall], f"{before} → {load()}"))
    RATES[f"full submissions per minute at --jobs 2 ({len(submissions)} graded together)"] = 60 * len(submissions) / wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--gap", type=float, default=1.0, help="seconds from a screen to the next save")
    parser.add_argument("--submissions", type=int, default=4, help="full submissions graded at --jobs 2")
    parser.add_argument("--keep", type=Path, help="work in this new folder and keep it (the bundle at the end of "
                        "stage 01 stays there for profiling) instead of a temporary folder")
    parser.add_argument("--only", choices=PARTS, action="append", help="run only these parts (make is needed by "
                        "learner: it installs the bundle)")
    args = parser.parse_args()
    parts = args.only or list(PARTS)
    results: list[tuple[str, list[float], str]] = []
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; load average (1, 5, 15 min) at the "
          f"start {load()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-learner-") as scratch:
        base = Path(scratch)
        if args.keep is not None:
            args.keep.mkdir(parents=True)
            base = args.keep.resolve()
        if "make" in parts or "learner" in parts:
            run([sys.executable, "-m", "forgelab.cli", "release", "--out", str(base / "release")], ROOT, os.environ)
            with zipfile.ZipFile(base / "release" / "forge-workbook-lab.zip") as archive:
                archive.extractall(base / "bundle")
            before = load()
            seconds = to_url(base / "bundle" / "forge-workbook-lab", None)
            add(results, ("make lab: unzipped bundle → URL (warm caches)", [seconds], f"{before} → {load()}"))
        if "learner" in parts:
            learner_part(base, args, results)
        if "grading" in parts:
            grading_part(base, args, results)
    print()
    print(f"{os.cpu_count()} CPUs; load average (1, 5, 15 min) at the end {load()}")
    print(f"{'what':<62} {'n':>3} {'median':>8} {'p95':>8} {'min':>8} {'max':>8}  load before → after")
    for name, values, loads in results:
        print(f"{name:<62} {len(values):>3} {statistics.median(values):>7.3f}s {p95(values):>7.3f}s "
              f"{min(values):>7.3f}s {max(values):>7.3f}s  {loads}")
    medians = {name: statistics.median(values) for name, values, _ in results}

    def ratio(a: str, b: str) -> float | None:
        return medians[a] / medians[b] if a in medians and b in medians else None

    for label in ("watch 01: save → stage tests' verdict on screen", "notebook re-check: save → table updated"):
        if label in medians:
            print(f"{label}: median {medians[label] * 1000:.0f} ms (target ≤ {TARGET_VERDICT_S * 1000:.0f} ms at a "
                  f"load of 2 or less)")
    for label, a, b, target in (
            ("default pytest (stage + transfer) / cold check", "python -m pytest: stage + transfer tests on forge/",
             "check 01 (cold, a new process)", "≥ 5×"),
            ("default pytest (all the check runs) / cold check", "python -m pytest: all the check runs (4 runs)",
             "check 01 (cold, a new process)", "≥ 5×"),
            ("first status / one check", "first status (nothing remembered)", "check 01 (beside the status runs)",
             "≤ 1×"),
            ("one submission graded / check all --target solution", "grade one full submission, --jobs 1",
             "check all --target solution", "≤ 2×")):
        value = ratio(a, b)
        if value is not None:
            print(f"ratio {label}: {value:.2f}× (target {target})")
    for label, value in RATES.items():
        print(f"{label}: {value:.2f} (target ≥ 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
