"""The ``forgelab`` command line. Startup stays light: commands import what they need lazily."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from forgelab.cli import language
from forgelab.cli.language import Parser, language_parent
from forgelab.cli.context import (add_judge_flags, add_unsandboxed_flag, judge_settings, open_workbook,
                                  sandbox_for_path_target)
from forgelab.core.display import GAP, columns, fail, load_tables, table_header, table_row, width, wrap
from forgelab.core.i18n import N_, _
from forgelab.core import i18n
from forgelab.core.paths import WorkbookNotFound, find_root, Workbook
from forgelab.core.registry import CourseFileError, RegistryError

Handler = Callable[[argparse.Namespace], int]


def cmd_check(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.judge import early

    one_stage = len(args.stage) == 1 and args.stage[0].isdigit() and not args.why
    if one_stage:  # its trusted session and the sandbox's probe start now, while the rest of the command prepares
        early.start_session()
        early.probe_sandbox()
    try:
        return _check(args, one_stage)
    finally:
        early.discard()


def _judge_now(args: argparse.Namespace, workbook: Workbook, course: Course) -> PendingRun | None:
    """``forgelab check NN`` for a target of this workbook: start judging now, with only the course's registry and
    the judge loaded; the rest of the command's tools load while the tests run (returns once they run)."""
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.core.targets import resolve_target
    from forgelab.learner.checkjob import start_check

    target = resolve_target(args.target, workbook, course)
    if target.kind == "path":  # someone else's code: the sandbox decision comes first (see _check)
        return None
    pending = start_check(course, workbook, course.select(args.stage)[0], target, judge_settings(args))
    pending.wait_until_started()
    return pending


def _check(args: argparse.Namespace, one_stage: bool) -> int:
    workbook, course = open_workbook()
    pending = _judge_now(args, workbook, course) if one_stage else None
    try:
        return _check_started(args, workbook, course, pending)
    except BaseException:  # Ctrl-C while the command loads its tools or waits: nothing the run started stays behind
        if pending is not None:
            pending.abandon()
        raise


def _check_started(args: argparse.Namespace, workbook: Workbook, course: Course, pending: PendingRun | None) -> int:
    """The rest of ``check`` once the judge's run (if any) is going on."""
    # lazy: start-up speed — loaded while the stage's tests run, when they run already
    from pathlib import Path

    from forgelab.learner.workbench import Workbench

    load_tables()
    bench = Workbench(workbook, course, judge_settings(args))
    target = bench.target(args.target)
    if target.kind == "path":  # someone else's code: the sandbox `grade` uses, or a refusal

        refused = sandbox_for_path_target(bench, args)
        if refused is not None:
            return refused
    if [word.lower() for word in args.stage] == ["all"]:
        if args.out or args.why:
            return fail(_("--out and --why are about one stage: use them with a stage number"),
                        _("drop them, or give a stage"))
        return _check_all(course, workbook, target, bench.settings)
    stages = course.select(args.stage)
    if len(stages) > 1:
        if args.out or args.why:
            return fail(_("--out and --why are about one stage: use them with a stage number"),
                        _("drop them, or give a stage"))
        return _check_several(bench, stages, args.target)
    stage = stages[0]
    if args.why:
        message = bench.why(stage, args.why, args.target)
        print(message.text())
        return 0 if message.ok else 1
    outcome = bench.check(stage, args.target, out=Path(args.out) if args.out else None, pending=pending)
    shown = workbook.relative(outcome.path) if outcome.path else None
    print(bench.check_message(outcome, shown).text())
    return 0 if outcome.accepted else 1


def _check_several(bench: Workbench, stages: list[Stage], target: str) -> int:
    """``forgelab check 01 02`` (or ``01-03``): each stage's whole result in turn, then one line for all of them."""
    accepted = []
    for index, stage in enumerate(stages):
        if index:
            print("\n" + "=" * 40 + "\n", flush=True)
        outcome = bench.check(stage, target)
        shown = bench.workbook.relative(outcome.path) if outcome.path else None
        print(bench.check_message(outcome, shown).text(), flush=True)
        if outcome.accepted:
            accepted.append(stage.number)
    print()
    print(_("{accepted}/{count} of the stages checked are accepted ({numbers})").format(
        accepted=len(accepted), count=len(stages), numbers=", ".join(stage.number for stage in stages)))
    return 0 if len(accepted) == len(stages) else 1


if TYPE_CHECKING:
    from forgelab.judge.settings import JudgeSettings
    from forgelab.core.paths import Workbook
    from forgelab.core.registry import Course, Stage
    from forgelab.core.targets import Target
    from forgelab.learner.workbench import Workbench
    from forgelab.learner.checkjob import PendingRun

# `check all`: one row per stage, in at most ALL_WIDTH display columns; the last column (the first open item)
# wraps onto more lines when it does not fit. One short word per part of the stage (in the active language).
ALL_WIDTH = 100
_PART_WORDS = {
    "fault_lab": {"fixed": N_("fixed"), "not_started": N_("to do"), "broken": N_("broken"), "error": N_("error")},
    "transfer": {"passed": N_("passed"), "not_written": N_("to do"), "missing": N_("missing"), "failed": N_("failed"),
                 "error": N_("error"), "cannot_tell": N_("weak")},
    "design_answer": {"present": N_("ok"), "missing": N_("to do"), "too_short": N_("short")},
}
_ALL_HEADERS = (N_("stage"), N_("tests"), N_("lab"), N_("transfer"), N_("answer"), N_("first open item"))


def _part_word(part: str, status: str) -> str:
    word = _PART_WORDS[part].get(status)
    return _(word) if word else status.replace("_", " ")


def _all_widths(course: Course, total: int) -> list[int]:
    """The columns of `check all`: each as wide as its widest word in this language; the stage title may wrap."""
    words: list[list[str]] = [[f"{s.number} {s.text().title}" for s in course.stages], ["00/00"],
                              list(_PART_WORDS["fault_lab"].values()), list(_PART_WORDS["transfer"].values()),
                              list(_PART_WORDS["design_answer"].values())]
    widths = [max([columns(_(name)), *(columns(_(word)) for word in extra)]) for name, extra in zip(_ALL_HEADERS, words)]
    widths[0] = min(widths[0], 28)
    last = max(16, total - sum(widths) - GAP * len(widths))
    return [*widths, last]


def _check_all(course: Course, workbook: Workbook, target: Target, settings: JudgeSettings) -> int:
    """Check every stage; print one row per stage as it finishes (its first open item wraps), then the next step."""
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.learner.workbench import Workbench

    bench = Workbench(workbook, course, settings)
    total = min(ALL_WIDTH, width())
    widths = _all_widths(course, total)
    print(table_header([_(name) for name in _ALL_HEADERS], widths, right=[1]), flush=True)
    accepted = 0
    first_open: tuple[Stage, str] | None = None
    for stage in course.stages:
        outcome = bench.check(stage, target.name)
        doc = outcome.document
        summary = doc["summary"]
        cells = [f"{stage.number} {stage.text().title}", f"{summary['required_passed']}/{summary['required_total']}",
                 _part_word("fault_lab", doc["fault_lab"]["status"]), _part_word("transfer", doc["transfer"]["status"]),
                 _part_word("design_answer", doc["design_answer"]["status"])]
        step = _("ACCEPTED") if outcome.accepted else bench.next_step(outcome)
        print(table_row([*cells, step], widths, right=[1]), flush=True)
        accepted += outcome.accepted
        if not outcome.accepted and first_open is None:
            first_open = (stage, step)
    count = len(course.stages)
    if first_open is None:
        print(wrap(_("{accepted}/{count} stages accepted. Next: pick each verification.json on the course page "
                     "(`forgelab page`).").format(accepted=accepted, count=count), total))
        return 0
    stage, step = first_open
    line = _("{accepted}/{count} stages accepted. Next: stage {number} — {step}; details: forgelab check {number}").format(
        accepted=accepted, count=count, number=stage.number, step=step)
    print(wrap(line, total))
    return 1


def cmd_materialize(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from pathlib import Path

    from forgelab.core.targets import resolve_target


    workbook, course = open_workbook()
    target = resolve_target(args.target, workbook, course)
    into = Path(args.into).resolve()
    if into == workbook.root.resolve():
        return fail(_("refusing to materialize into the workbook itself: that would overwrite your forge/"),
                    _("choose another folder, e.g. --into build/solution"))
    written = target.materialize(into)
    count = sum(1 for p in written.rglob("*.py"))
    print(_("materialized target {target}: {count} modules in {path}").format(target=target.name, count=count,
                                                                               path=written))
    print(_("use it with: {command}").format(command=f"PYTHONPATH={into} python -c 'import forge'"))
    return 0


# Each module has ``register(subparsers)``. Imports stay inside the handlers, so that
# `forgelab --help` and `forgelab check` do not pay for tools they do not use.
MODULES = ("learner", "classroom", "course", "site", "grade", "grade_report", "hub", "project", "starters", "i18n")  # `--help` order
LEARNER_MODULES = frozenset({"learner", "classroom", "project", "starters"})  # the others are the course repository's
# what the course repository offers beyond the learner's commands (this module adds `materialize` there itself)
INSTRUCTOR_COMMANDS = ("materialize", "new-stage", "build", "verify-course", "nbval", "site", "release", "grade",
                       "gradebook", "i18n", "grade-report", "hub", "class")
# two words typed as one command: `forgelab grade report OUT` is the parser `grade-report` (a submission folder that
# is really called `report` is graded as `forgelab grade ./report`)
COMPOUND = {("grade", "report"): "grade-report"}


def route(arguments: list[str]) -> list[str]:
    """``arguments`` with a compound command (:data:`COMPOUND`) joined into its parser's name."""
    words = [index for index, item in enumerate(arguments)
             if not item.startswith("-") and (index == 0 or arguments[index - 1] != "--lang")][:2]
    if len(words) == 2 and words[1] == words[0] + 1:
        joined = COMPOUND.get((arguments[words[0]], arguments[words[1]]))
        if joined:
            return [*arguments[:words[0]], joined, *arguments[words[1] + 1:]]
    return arguments


def register_commands(sub: "argparse._SubParsersAction[argparse.ArgumentParser]", *, learner_only: bool = False) -> None:
    for name in MODULES:
        if learner_only and name not in LEARNER_MODULES:
            continue
        try:
            module = importlib.import_module(f"forgelab.cli.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"forgelab.cli.{name}":
                raise
            continue
        module.register(sub)


def build_parser(learner_only: bool = False) -> argparse.ArgumentParser:
    """The command line; ``learner_only`` (an unzipped learner bundle) leaves out the course repository's tools."""
    parser = Parser(
        prog="forgelab",
        parents=[language_parent()],
        epilog=_("Every command also takes --lang en|zh (else FORGE_LANG, else the workbook's edition in "
                 "course/edition.toml, else your locale) for the language it speaks."),
        description=_("Forge Workbook: check your stages, work through the fault labs, open the course page and "
                      "self-check your evidence.") if learner_only else
        _("Forge Workbook tooling: check your stages, run fault labs, verify and build the course."),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help=_("run a stage's tests, print a result table and write verification.json"))
    check.add_argument("stage", nargs="+", help=_("stage number, e.g. 01; several (01 02) or a range (01-03); or `all` "
                                                  "for a one-row summary of every stage"))
    check.add_argument("--target", default="learner", help=_("learner (default), solution, fault:NN or a workbook path"))
    check.add_argument("--out", help=_("write verification.json here instead of the evidence folder"))
    check.add_argument("--why", metavar="TEST", help=_("show everything about one test: its source, the whole failure, "
                                                      "what your code printed (writes no evidence)"))
    add_judge_flags(check)
    add_unsandboxed_flag(check)
    check.set_defaults(handler=cmd_check)

    if not learner_only:
        materialize = sub.add_parser("materialize", help=_("write a target's forge/ package into a folder"))
        materialize.add_argument("target", help=_("learner, solution, fault:NN or a workbook path"))
        materialize.add_argument("--into", required=True, help=_("folder that receives forge/"))
        materialize.set_defaults(handler=cmd_materialize)

    register_commands(sub, learner_only=learner_only)
    return parser


def _editions(wanted: str | None) -> tuple[str, ...]:
    """The editions ``--lang`` asks a build for: one language, or every one for ``all`` (default: English)."""
    if wanted == "all":
        return i18n.LANGUAGES
    return (i18n.resolve(wanted, environ={}) if wanted else "en",)


def _workbook_edition() -> str | None:
    """The language of the workbook this command runs in, if its bundle names one (course/edition.toml)."""
    try:
        return i18n.workbook_edition(find_root())
    except WorkbookNotFound:
        return None


def _in_learner_bundle() -> bool:
    try:
        return Workbook.locate().is_learner_bundle
    except WorkbookNotFound:
        return False


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    wanted = language.wanted(arguments)
    # `release` and `site build` also read --lang as the edition(s) to build: en, zh or all
    speak = wanted if wanted in i18n.LANGUAGES else None  # `all`, or a value argparse will refuse in its own words
    try:
        language.speak(i18n.resolve(speak, edition=_workbook_edition()))
    except i18n.LanguageError as error:
        return fail(str(error), _("use --lang en or --lang zh (or set FORGE_LANG)"))
    learner_only = _in_learner_bundle()
    command = next((item for item in arguments if not item.startswith("-") and item not in (wanted,)), "")
    arguments = route(arguments)  # `grade report` is one command
    if learner_only:
        if command in INSTRUCTOR_COMMANDS:
            return fail(_("`forgelab {command}` is a tool of the course repository (for instructors and course authors); "
                          "this folder is the learner bundle").format(command=command),
                        _("`forgelab --help` lists your commands, and README.md explains them"))
    parser = build_parser(learner_only)
    args = parser.parse_args(arguments)
    args.editions = _editions(getattr(args, "lang", None))
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.core.targets import TargetError, remove_copies

    try:
        status = int(args.handler(args) or 0)
        sys.stdout.flush()
    except BrokenPipeError:
        return _reader_went_away()
    except CourseFileError as error:  # the course's own files: not the learner's work, and not a stage to choose
        return fail(str(error), _("this is a problem in the course's files, not in your work: if you did not edit "
                                  "course/, tell your instructor; course authors fix what is named above "
                                  "(`forgelab build --check` lists every such problem)"))
    except (RegistryError, TargetError, WorkbookNotFound) as error:
        return fail(str(error), _("run `forgelab status` to see the stages, or `forgelab --help`"))
    except KeyboardInterrupt:
        return fail(_("interrupted"))
    finally:
        remove_copies()
    if argv is None and args.handler is cmd_check:
        _end_now(status)
    return status


def _end_now(status: int) -> None:
    """The command has printed and cleaned up after itself (its judge's run folder, copies, the session started
    early): end the process without the interpreter's teardown of every module it loaded, a tenth of a second of
    a check. Only for ``forgelab check`` run as a command (``argv`` None), never when a caller embeds :func:`main`."""
    import os  # lazy: only this way out needs it

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        status = _reader_went_away()
    os._exit(status)


def _reader_went_away() -> int:
    """The output went into a pipe whose reader stopped reading (``forgelab check 01 | head``): stop quietly,
    as any command-line tool does — no traceback, and nothing more is written (or flushed at exit)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE, what the shell reports for a tool stopped by a closed pipe

