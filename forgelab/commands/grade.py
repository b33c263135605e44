"""Instructor command: ``forgelab grade SUBMISSION... [--out DIR] [--jobs N] [--stages 01-07]``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from forgelab.display import fail, table


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be 1 or more")
    return value


def _shown(path: Path) -> str:
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else relative


def cmd_grade(args: argparse.Namespace) -> int:
    from forgelab.cli import _context
    from forgelab.grading.batch import grade_batch
    from forgelab.grading.gradebook import GradebookError
    from forgelab.grading.isolation import Limits, describe_network, network_mode
    from forgelab.grading.rubric import parse_stages
    from forgelab.grading.submission import SubmissionError, discover

    workbook, course = _context()
    if not workbook.has_solutions and not (workbook.root / "instructor").is_dir():
        print("note: this looks like a learner bundle (no solutions/, no instructor/): grading still works, "
              "without the instructor checks")
    from forgelab.registry import RegistryError

    try:
        stages = parse_stages(course, args.stages)
    except RegistryError as error:
        return fail(str(error), "give --stages as a range or a list of the course's stages, e.g. --stages 01-03")
    try:
        subs = discover(args.submissions)
    except SubmissionError as error:
        return fail(str(error), "fix or remove that path and run `forgelab grade` again")
    out = Path(args.out).expanduser().resolve() if args.out else (workbook.root / "build" / "grading")
    if out.exists() and not out.is_dir():
        return fail(f"--out {args.out} is a file, not a folder", "give a folder for the gradebook and the feedback pages")
    for sub in subs:
        if out == sub.path or sub.path in out.parents:
            return fail(f"--out {out} is inside the submission {sub.path}: grading never writes into a submission",
                        "choose an --out folder outside every submission")
    try:
        network = network_mode(args.network)
    except RuntimeError as error:
        return fail(str(error))
    limits = Limits(test_s=args.test_timeout, cell_s=args.cell_timeout, notebook_s=args.notebook_timeout,
                    submission_s=args.submission_timeout or 0)
    jobs = min(args.jobs, len(subs))
    print(f"grading {len(subs)} submission(s), stage(s) {', '.join(s.number for s in stages)}, "
          f"{jobs} at a time — {describe_network(network)}")
    print(f"limits: {limits.test_s} s per test, {limits.cell_s} s per notebook cell, {limits.notebook_s} s per notebook, "
          f"{limits.for_submission(len(stages))} s per submission", flush=True)
    try:
        result = grade_batch(course, stages, subs, out, jobs=jobs, limits=limits, network=network,
                             progress=lambda line: print(line, flush=True))
    except GradebookError as error:
        return fail(str(error))
    print()
    rows = []
    for graded in result.graded:
        review = sum(1 for item in graded.items if item.flag)
        rows.append((graded.submission.id, f"{graded.points}/{graded.max_points}", str(review) if review else "",
                     _shown(result.pages[graded.submission.id])))
    print(table(["submission", "points", "review", "feedback page"], rows))
    print()
    print(f"gradebook: {_shown(result.gradebook)} (SQLite; table grades), "
          f"{_shown(result.csv)}, {_shown(result.totals)}")
    flagged = sum(1 for g in result.graded for item in g.items if item.flag)
    if flagged:
        print(f"next: {flagged} item(s) are flagged for review — see the rows with flag=review in "
              f"{_shown(result.csv)}")
    else:
        print("next: read the gradebook, then send each learner their feedback page")
    return 0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    grade = sub.add_parser(
        "grade", help="grade learner submissions (folders or zips): stage tests, instructor checks, nbval, evidence",
        description="Grade each submission in its own process tree and temporary copy, write an SQLite gradebook, "
                    "CSV exports and one feedback page per learner. Submissions are never written.")
    grade.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="a learner's workbook folder or its zip")
    grade.add_argument("--out", help="folder for gradebook.sqlite, gradebook.csv, totals.csv and feedback/ "
                                     "(default: build/grading in the course)")
    grade.add_argument("--jobs", type=_positive, default=1, help="submissions graded in parallel (default 1)")
    grade.add_argument("--stages", help="stages to grade: 01-07, 01,03 or 02 (default: all)")
    grade.add_argument("--network", choices=("auto", "namespace", "guard"), default="auto",
                       help="how network access is blocked (default auto: a network namespace when available)")
    grade.add_argument("--test-timeout", type=_positive, default=10, help="seconds per test (default 10); an import gets at least 15")
    grade.add_argument("--cell-timeout", type=_positive, default=60, help="seconds per notebook cell (default 60)")
    grade.add_argument("--notebook-timeout", type=_positive, default=240, help="seconds per notebook (default 240)")
    grade.add_argument("--submission-timeout", type=_positive, default=None,
                       help="seconds per submission (default: derived from the other limits and the stage count)")
    grade.set_defaults(handler=cmd_grade)
