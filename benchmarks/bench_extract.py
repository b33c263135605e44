"""Benchmark: requirement-extractor throughput on the mock model (chapter project).

Two numbers, against the solution target:
* in-process throughput: every sample request of the three scenario packs, extracted again and again
  with ``MockModel`` (pack loading excluded), split into build_prompt / model / read_output time;
* the wall time of one ``forgelab extract ... --json`` command (subprocess, target materialized),
  which is what a person waits for.
This is a measurement, not a test: nothing here asserts a limit.

    .venv/bin/python benchmarks/bench_extract.py [--rounds 20] [--runs 5]
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

INNER = r"""
import json, sys, time
from forge.extractor import build_prompt, read_output
from forge.project.models import MockModel
from forge.project.scenarios import SCENARIOS, load_scenario

rounds = int(sys.argv[1])
packs = [load_scenario(name) for name in SCENARIOS]
work = [(pack, request.text) for pack in packs for request in pack.requests]
model = MockModel()
spent = {"build_prompt": 0.0, "model": 0.0, "read_output": 0.0}
started = time.perf_counter()
for _ in range(rounds):
    for pack, text in work:
        t0 = time.perf_counter()
        prepared = build_prompt(pack, text)
        t1 = time.perf_counter()
        output = model.complete(prepared.prompt)
        t2 = time.perf_counter()
        read_output(prepared, output, model.model_id)
        t3 = time.perf_counter()
        spent["build_prompt"] += t1 - t0
        spent["model"] += t2 - t1
        spent["read_output"] += t3 - t2
total = time.perf_counter() - started
print(json.dumps({"count": rounds * len(work), "seconds": total, "spent": spent}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="passes over the 11 sample requests")
    parser.add_argument("--runs", type=int, default=5, help="timed `forgelab extract` commands")
    args = parser.parse_args()
    forgelab = [sys.executable, "-m", "forgelab.cli"]
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([*forgelab, "materialize", "solution", "--into", f"{scratch}/target"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        env = {**os.environ, "PYTHONPATH": f"{scratch}/target", "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run([sys.executable, "-P", "-c", INNER, str(args.rounds)], cwd=scratch, env=env,
                              capture_output=True, text=True, check=True)
        inner = json.loads(done.stdout)
        command = [*forgelab, "extract", "--scenario", "software", "为前端仓库增加功能、修改代码并补测试", "--json",
                   "--target", "solution"]
        walls = []
        for _ in range(args.runs + 1):
            started = time.perf_counter()
            subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env={**os.environ,
                           "FORGELAB_WORKSPACE": f"{scratch}/workspace"})
            walls.append(time.perf_counter() - started)
        walls = walls[1:]  # the first run warms the file cache
    count, seconds = inner["count"], inner["seconds"]
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, solution target, MockModel")
    print(f"in-process: {count} extractions in {seconds:.3f} s = {count / seconds:,.0f} extractions/s "
          f"({1000 * seconds / count:.2f} ms each)")
    for step, spent in inner["spent"].items():
        print(f"  {step:<13} {1000 * spent / count:6.3f} ms per extraction ({100 * spent / seconds:4.1f}%)")
    print(f"forgelab extract --json (subprocess, {args.runs} runs): median {statistics.median(walls):.3f} s, "
          f"min {min(walls):.3f} s, max {max(walls):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
