"""Benchmark: what grading's similarity check costs for a class (forgelab.grading.similarity).

Takes the modules of the test class (``tests/course/similarity_fixtures.py``: ten learners, stages 01 and 02 —
honest solutions, copies and untouched starters) and repeats them to ``--submissions`` learners (each copy under
its own name, so the number of pairs grows as a real class's does: n(n-1)/2 per stage, plus n times the course's
own modules). It runs the comparison and writes the pages, ``--runs`` times, and prints the CPU time (what the
check costs, independent of load), the wall time, the number of pairs compared and flagged, and the machine's load
average before and after, so that a reader can judge the wall time. With ``--results`` it appends the lines to
``benchmarks/RESULTS.md``.

This is a measurement, not a test: nothing here asserts a limit.

    .venv/bin/python benchmarks/bench_similarity.py [--submissions 60] [--runs 3] [--results]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "course"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--results", action="store_true", help="append the figures to benchmarks/RESULTS.md")
    args = parser.parse_args()

    from similarity_fixtures import NAMES, STAGES, modules

    from forgelab.core.paths import Workbook
    from forgelab.core.registry import load_course
    from forgelab.grading import similarity
    from forgelab.grading.similarity import HandedModule, Status
    from forgelab.verdicts import jobs

    workbook = Workbook.locate(ROOT)
    course = load_course(ROOT)
    stages = [course.stage(number) for number in STAGES]
    starter = jobs.starters(workbook)
    written = modules(starter)
    handed: dict[str, list[HandedModule]] = {}
    for copy in range(-(-args.submissions // len(NAMES))):
        for name in NAMES:
            if len(handed) == args.submissions:
                break
            handed[f"{name}-{copy}"] = [
                HandedModule(stage.number, stage.module, Status.TEXT, "",
                             written[name].get(stage.module) or (starter / stage.module).read_text(encoding="utf-8"))
                for stage in stages]
    load_before = os.getloadavg()
    lines = []
    for run in range(1, args.runs + 1):
        cpu, wall = time.process_time(), time.perf_counter()
        comparison = similarity.compare(workbook, stages, handed, similarity.Thresholds())
        with tempfile.TemporaryDirectory() as out:
            pairs, _index = similarity.write_pages(course, Path(out), comparison, similarity.Thresholds(), "en")
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        lines.append(f"- run {run}: {len(handed)} submissions x {len(stages)} stages, {comparison.compared} pairs "
                     f"compared, {len(pairs)} flagged: {cpu:.2f} s CPU, {wall:.2f} s wall")
    load_after = os.getloadavg()
    state = (f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load average "
             f"{load_before[0]:.1f} before, {load_after[0]:.1f} after")
    print("\n".join([*lines, state]))
    if args.results:
        day = _dt.date.today().isoformat()
        with (ROOT / "benchmarks" / "RESULTS.md").open("a", encoding="utf-8") as handle:
            handle.write(f"\n## Similarity check ({day}, bench_similarity.py --submissions {args.submissions})\n\n"
                         + "\n".join(lines) + f"\n- {state}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
