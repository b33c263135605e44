"""The ``forgelab`` command line. Startup stays light: commands import what they need lazily."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from forgelab.commands.context import add_judge_flags
from forgelab.display import fail

Handler = Callable[[argparse.Namespace], int]


def cmd_check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from forgelab.commands.context import judge_settings
    from forgelab.workbench import Workbench

    bench = Workbench.locate(judge_settings(args))
    workbook, course = bench.workbook, bench.course
    target = bench.target(args.target)
    if args.stage == "all":
        if args.out or args.why:
            return fail("--out and --why are about one stage: use them with a stage number", "drop them, or give a stage")
        return _check_all(course, workbook, target, bench.settings)
    stage = course.stage(args.stage)
    if args.why:
        message = bench.why(stage, args.why, args.target)
        print(message.text())
        return 0 if message.ok else 1
    outcome = bench.check(stage, args.target, out=Path(args.out) if args.out else None)
    shown = workbook.relative(outcome.path) if outcome.path else None
    print(bench.check_message(outcome, shown).text())
    return 0 if outcome.accepted else 1


if TYPE_CHECKING:
    from forgelab.judge.settings import JudgeSettings
    from forgelab.paths import Workbook
    from forgelab.registry import Course, Stage
    from forgelab.targets import Target

# `check all`: one line per stage, at most ALL_WIDTH columns. One short word per part of the stage.
ALL_WIDTH = 100
_PART_WORDS = {
    "fault_lab": {"fixed": "fixed", "not_started": "to do", "broken": "broken", "error": "error"},
    "transfer": {"passed": "passed", "not_written": "to do", "missing": "missing", "failed": "failed",
                 "error": "error", "cannot_tell": "weak"},
    "design_answer": {"present": "ok", "missing": "to do", "too_short": "short"},
}
_ALL_COLUMNS = (("stage", 28), ("tests", 5), ("lab", 6), ("transfer", 8), ("answer", 6))


def _part_word(part: str, status: str) -> str:
    return _PART_WORDS[part].get(status, status.replace("_", " ")[:8])


def _brief(text: str, room: int) -> str:
    """``text`` in ``room`` columns: first without its trailing explanation, then cut with "…"."""
    from forgelab.display import shorten

    text = " ".join(text.split())
    for mark in (" (", ", then ", "; ", ": "):
        if len(text) > room and mark in text:
            text = text[: text.index(mark)]
    return shorten(text, room)


def _all_line(cells: list[str], last: str, total: int) -> str:
    fixed = "  ".join(cell.ljust(width) if index != 1 else cell.rjust(width)
                      for index, (cell, (_, width)) in enumerate(zip(cells, _ALL_COLUMNS)))
    return f"{fixed}  {_brief(last, max(total - len(fixed) - 2, 12))}".rstrip()


def _check_all(course: Course, workbook: Workbook, target: Target, settings: JudgeSettings) -> int:
    """Check every stage; print one readable line per stage as it finishes, then the next step."""
    from forgelab.display import shorten, width
    from forgelab.workbench import Workbench

    bench = Workbench(workbook, course, settings)

    total = min(ALL_WIDTH, width())
    headers = [name for name, _ in _ALL_COLUMNS]
    print(_all_line(headers[:1] + [headers[1].rjust(_ALL_COLUMNS[1][1])] + headers[2:], "first open item", total))
    accepted = 0
    first_open: tuple[Stage, str] | None = None
    for stage in course.stages:
        outcome = bench.check(stage, target.name if target.kind != "path" else str(target.home))
        doc = outcome.document
        summary = doc["summary"]
        title = shorten(f"{stage.number} {stage.text().title}", _ALL_COLUMNS[0][1])
        cells = [title, f"{summary['required_passed']}/{summary['required_total']}",
                 _part_word("fault_lab", doc["fault_lab"]["status"]), _part_word("transfer", doc["transfer"]["status"]),
                 _part_word("design_answer", doc["design_answer"]["status"])]
        step = "ACCEPTED" if outcome.accepted else bench.next_step(outcome)
        print(_all_line(cells, step, total), flush=True)
        accepted += outcome.accepted
        if not outcome.accepted and first_open is None:
            first_open = (stage, step)
    count = len(course.stages)
    if first_open is None:
        print(shorten(f"{accepted}/{count} stages accepted. Next: pick each verification.json on the course page.", total))
        return 0
    stage, step = first_open
    head = f"{accepted}/{count} stages accepted. Next: stage {stage.number} — "
    tail = f"; details: forgelab check {stage.number}"
    line = head + _brief(step, max(total - len(head), 12))
    print(line + tail if len(line + tail) <= total else line)
    return 1


def cmd_materialize(args: argparse.Namespace) -> int:
    from pathlib import Path

    from forgelab.targets import resolve_target

    from forgelab.commands.context import open_workbook

    workbook, course = open_workbook()
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
        epilog="Every command also takes --lang en|zh (else FORGE_LANG, else your locale) for the language it speaks.",
        description="Forge Workbook tooling: check your stages, run fault labs, verify and build the course.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="run a stage's tests, print a result table and write verification.json")
    check.add_argument("stage", help="stage number, e.g. 01, or `all` for a one-line summary of every stage")
    check.add_argument("--target", default="learner", help="learner (default), solution, fault:NN or a workbook path")
    check.add_argument("--out", help="write verification.json here instead of the evidence folder")
    check.add_argument("--why", metavar="TEST", help="show everything about one test: its source, the whole failure, "
                                                    "what your code printed (writes no evidence)")
    add_judge_flags(check)
    check.set_defaults(handler=cmd_check)

    materialize = sub.add_parser("materialize", help="write a target's forge/ package into a folder")
    materialize.add_argument("target", help="learner, solution, fault:NN or a workbook path")
    materialize.add_argument("--into", required=True, help="folder that receives forge/")
    materialize.set_defaults(handler=cmd_materialize)

    from forgelab import commands

    commands.register(sub)
    return parser


def _language(argv: list[str]) -> tuple[list[str], str | None]:
    """Take ``--lang X`` / ``--lang=X`` out of the arguments wherever it stands (before or after the command)."""
    rest, chosen = [], None
    iterator = iter(argv)
    for item in iterator:
        if item == "--lang":
            chosen = next(iterator, None) or ""
        elif item.startswith("--lang="):
            chosen = item.split("=", 1)[1]
        else:
            rest.append(item)
    return rest, chosen


def main(argv: Sequence[str] | None = None) -> int:
    from forgelab import i18n

    arguments, wanted = _language(list(sys.argv[1:] if argv is None else argv))
    try:
        i18n.use(i18n.resolve(wanted))
    except i18n.LanguageError as error:
        return fail(str(error), "use --lang en or --lang zh (or set FORGE_LANG)")
    parser = build_parser()
    args = parser.parse_args(arguments)
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
