"""The ``forgelab`` command line. Startup stays light: commands import what they need lazily."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from forgelab.display import fail

Handler = Callable[[argparse.Namespace], int]


def _context():  # type: ignore[no-untyped-def]
    from forgelab.paths import Workbook
    from forgelab.registry import load_course

    workbook = Workbook.locate()
    return workbook, load_course(workbook.root)


def judge_settings(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The judge's settings from a command's flags (defaults otherwise)."""
    from forgelab.judge.settings import DEFAULT

    changes = {}
    if getattr(args, "cpu_limit", None):
        changes["test_cpu_s"] = int(args.cpu_limit)
    return DEFAULT.with_(**changes)


def add_judge_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cpu-limit", type=int, metavar="SECONDS",
                        help="CPU seconds your code may use in one test before it counts as an endless loop (default 10)")


def cmd_check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from forgelab.checker import run_check
    from forgelab.report import format_check
    from forgelab.targets import resolve_target

    workbook, course = _context()
    target = resolve_target(args.target, workbook, course)
    settings = judge_settings(args)
    if args.stage == "all":
        if args.out:
            return fail("--out names one file: use it with a single stage", "drop --out, or give a stage number")
        accepted = 0
        for stage in course.stages:
            outcome = run_check(course, workbook, stage, target, settings=settings)
            summary = outcome.document["summary"]
            verdict = "ACCEPTED" if outcome.accepted else "not accepted: " + "; ".join(outcome.document["problems"])
            print(f"{stage.number} {stage.text().title:<32} tests {summary['required_passed']:>2}/{summary['required_total']:<2} "
                  f"{verdict}", flush=True)
            accepted += outcome.accepted
        print(f"{accepted}/{len(course.stages)} stages accepted; details: forgelab check NN")
        return 0 if accepted == len(course.stages) else 1
    stage = course.stage(args.stage)
    outcome = run_check(course, workbook, stage, target, out=Path(args.out) if args.out else None, settings=settings)
    shown = workbook.relative(outcome.path) if outcome.path else None
    print(format_check(outcome, shown))
    return 0 if outcome.accepted else 1


def cmd_materialize(args: argparse.Namespace) -> int:
    from pathlib import Path

    from forgelab.targets import resolve_target

    workbook, course = _context()
    target = resolve_target(args.target, workbook, course)
    into = Path(args.into).resolve()
    if into == workbook.root.resolve():
        return fail("refusing to materialize into the workbook itself: that would overwrite your forge/",
                    "choose another folder, e.g. --into build/solution")
    written = target.materialize(into)
    count = sum(1 for p in written.rglob("*.py"))
    print(f"materialized target {target.name}: {count} modules in {written}")
    print(f"use it with: PYTHONPATH={into} python -c 'import forge'")
    return 0


COMMANDS: dict[str, tuple[str, Handler]] = {}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="forgelab",
        description="Forge Workbook tooling: check your stages, run fault labs, verify and build the course.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="run a stage's tests, print a result table and write verification.json")
    check.add_argument("stage", help="stage number, e.g. 01, or `all` for a one-line summary of every stage")
    check.add_argument("--target", default="learner", help="learner (default), solution, fault:NN or a workbook path")
    check.add_argument("--out", help="write verification.json here instead of the evidence folder")
    add_judge_flags(check)
    check.set_defaults(handler=cmd_check)

    materialize = sub.add_parser("materialize", help="write a target's forge/ package into a folder")
    materialize.add_argument("target", help="learner, solution, fault:NN or a workbook path")
    materialize.add_argument("--into", required=True, help="folder that receives forge/")
    materialize.set_defaults(handler=cmd_materialize)

    from forgelab import commands

    commands.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    from forgelab.paths import WorkbookNotFound
    from forgelab.registry import RegistryError
    from forgelab.targets import TargetError

    try:
        return int(args.handler(args) or 0)
    except (RegistryError, TargetError, WorkbookNotFound) as error:
        return fail(str(error), "run `forgelab status` to see the stages, or `forgelab --help`")
    except KeyboardInterrupt:
        return fail("interrupted")


if __name__ == "__main__":
    sys.exit(main())
