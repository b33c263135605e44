"""Learner commands: status, watch, hint, fault, restore, backup, answer."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from forgelab.cli.context import add_judge_flags, judge_settings, open_workbook
from forgelab.core.display import fail, table, wrap
from forgelab.core.i18n import N_, _, active, ngettext

if TYPE_CHECKING:
    from forgelab.core.registry import Stage
    from forgelab.learner.workbench import Message, Workbench


# ---------------------------------------------------------------- status
def cmd_status(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.learner.status import collect_status

    workbook, course = open_workbook()
    report = collect_status(workbook, course, judge_settings(args), force=bool(getattr(args, "rerun", False)))
    print(wrap(_("Forge Workbook — {title}  (workbook: {root})").format(title=course.text("title"), root=workbook.root),
               indent=2))
    if report.problem:
        print(wrap(_("warning: {problem}").format(problem=report.problem), indent=2))
    print()
    print(table([_("stage"), _("title"), _("tests"), _("fault lab"), _("transfer"), _("design"), _("evidence")],
                report.rows))
    print()
    for line in report.notes:
        print(wrap(line, indent=2))
    print(wrap(_("next: {step}").format(step=report.next_step), indent=2))
    return 0


# ---------------------------------------------------------------- watch
def cmd_watch(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.learner.watch import Watch, first_open_stage
    from forgelab.learner.workbench import Workbench

    bench = Workbench.locate(judge_settings(args))
    stage = bench.course.stage(args.stage) if args.stage else first_open_stage(bench)
    if stage is None:
        print(wrap(_("every stage is accepted: nothing to watch. `forgelab watch NN` watches one stage anyway; "
                     "`forgelab page` opens the course page to self-check your evidence")))
        return 0
    return Watch(bench, stage, target=args.target).loop()


# ---------------------------------------------------------------- hint
def cmd_hint(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.learner.workbench import Workbench

    bench = Workbench.locate()
    print(bench.hint(bench.course.stage(args.stage), reset=args.reset).text())
    return 0


# ---------------------------------------------------------------- fault lab
def cmd_fault(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.learner import faultlab
    from forgelab.verdicts.diagnosis import DiagnosisError
    from forgelab.learner.workbench import Workbench

    bench = Workbench.locate(judge_settings(args))
    stage = bench.course.stage(args.stage)
    actions: dict[str, Callable[[Stage], Message]] = {
        "start": bench.fault_start, "check": bench.fault_check, "diff": bench.fault_diff, "reset": bench.fault_reset,
        "hint": lambda chosen: bench.fault_hint(chosen, reset=args.reset),
        "diagnose": lambda chosen: _diagnose(bench, chosen, args)}
    if args.reset and args.action != "hint":
        return fail(_("--reset belongs to `forgelab fault hint {number}` (it hides the revealed hints)").format(
                    number=stage.number),
                    _("to put the broken module back, run `forgelab fault reset {number}`").format(number=stage.number))
    answers = [flag for flag in ("test", "function", "defect", "because") if getattr(args, flag)]
    if answers and args.action != "diagnose":
        return fail(_("--{flag} belongs to `forgelab fault diagnose {number}`").format(flag=answers[0], number=stage.number),
                    _("drop it"))
    try:
        message = actions[args.action](stage)
    except (faultlab.FaultLabError, DiagnosisError) as error:
        return fail(str(error))
    except _NoTerminal as stop:
        return stop.status
    print(message.text())
    return 0 if message.ok else 1


class _NoTerminal(Exception):
    """``fault diagnose`` needed to ask, and there is no terminal: the status to stop with."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _diagnose(bench: Workbench, stage: Stage, args: argparse.Namespace) -> Message:
    """``forgelab fault diagnose NN``: the three questions and a sentence — asked in a terminal, or given as flags."""
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.learner import faultlab

    number = stage.number
    if not (faultlab.lab_path(bench.workbook, stage) / stage.fault.fault_file).is_file():
        return bench.fault_diagnose(stage, "", "", "", "")  # explains that the lab must be started first
    key = bench.diagnosis_questions(stage)
    questions = [
        ("test", _("Which test shows the defect? (a stage test that fails on the broken copy; `forgelab fault check "
                   "{number}` names one)").format(number=number), list(key.test.choices)),
        ("function", _("In which function of {module} does the defect lie?").format(module=stage.module),
         [f"{name}()" for name in key.function.choices]),
        ("defect", _("What is the defect?"), [choice.text.get(active()) or choice.text["en"] for choice in key.defect.choices]),
    ]
    given = {name: getattr(args, name) for name in ("test", "function", "defect")}
    because = args.because
    if not all(given.values()) or not because:
        if not sys.stdin.isatty():
            for index, (_name, question, choices) in enumerate(questions, 1):
                print(f"{index}. {question}")
                for number_of_choice, choice in enumerate(choices, 1):
                    print(wrap(f"   {number_of_choice:>2}. {choice}", indent=4))
            raise _NoTerminal(fail(_("`forgelab fault diagnose {number}` asks these questions, and there is no terminal "
                                     "to ask in").format(number=number),
                                   _("give the answers (a choice's number or name) and a sentence: `forgelab fault "
                                     "diagnose {number} --test N --function N --defect N --because \"…\"`").format(
                                       number=number)))
        print(_("Fault lab {number}: state your diagnosis before you repair the lab.").format(number=number))
        for name, question, choices in questions:
            if given[name]:
                continue
            print()
            print(wrap(question))
            for index, choice in enumerate(choices, 1):
                print(wrap(f"  {index:>2}. {choice}", indent=4))
            given[name] = _ask(_("your choice (1–{count}): ").format(count=len(choices)))
        if not because:
            print()
            print(wrap(_("In your own words: what is wrong, and how does the failing test show it? ").strip()))
            because = _ask("> ")
    ids = {"defect": [choice.id for choice in key.defect.choices]}
    defect = given["defect"]
    if defect.isdigit() and 1 <= int(defect) <= len(ids["defect"]):
        defect = ids["defect"][int(defect) - 1]
    return bench.fault_diagnose(stage, given["test"], given["function"].removesuffix("()"), defect, because)


def _ask(prompt: str) -> str:
    try:
        return input(prompt).strip()
    except EOFError:
        return ""


# ---------------------------------------------------------------- restore and backups
RESTORE_STATES = {
    "missing": N_("missing now: it would be created"),
    "starter": N_("still the untouched starter: it would be replaced"),
    "own work": N_("holds your own work (differs from the starter): it would be replaced, a backup keeping it"),
    "changed": N_("differs from the reference: it would be replaced, a backup keeping it"),
    "reference": N_("already the reference: left as it is"),
}


def cmd_restore(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.core.checkpoint import Pack, PackError, read_pack
    from forgelab.cli.starters import confirm
    from forgelab.learner.restore import apply_restore, plan_restore
    from forgelab.core.targets import TargetError

    workbook, course = open_workbook()
    stage = course.stage(args.stage)
    pack: Pack | None = None
    if args.source:
        try:
            pack = read_pack(Path(args.source).expanduser(), course)
        except PackError as error:
            return fail(_("cannot restore from this checkpoint pack: {error}").format(error=error),
                        _("nothing was changed; `forgelab starter NN` brings back a shipped starter if a module is "
                          "wrecked"))
    try:
        chosen = plan_restore(workbook, course, stage, pack)
    except TargetError as error:
        return fail(str(error), _("`forgelab status` shows where each stage stands"))
    if not chosen.items:
        print(_("stage {number} is the first stage: there is nothing before it to restore").format(number=stage.number))
        return 0
    if pack is not None:
        print(_("forgelab restore {number} would lay the reference modules of the stages before {number} into forge/ "
                "from {source} (checkpoint {checkpoint}):").format(number=stage.number, source=chosen.source,
                                                              checkpoint=pack.checkpoint))
    else:
        print(_("forgelab restore {number} would lay the reference modules of the stages before {number} into "
                "forge/:").format(number=stage.number))
    for item in chosen.items:
        print(_("  {path}: {state}").format(path=item.module, state=_(RESTORE_STATES[item.state])))
    if not chosen.to_write:
        print(_("nothing to do: every module already is the reference"))
        return 0
    own = [item.module for item in chosen.items if item.holds_own_work]
    if own:
        print(_("your own work in {modules} would be replaced; a backup would keep it").format(modules=", ".join(own)))
    elif not chosen.starter_known:
        print(_("(the shipped starters could not be read, so own work cannot be told from the starter)"))
    count = len(chosen.overwritten)
    question = (ngettext("overwrite {count} file in forge/ (a timestamped backup is taken first)?",
                         "overwrite {count} files in forge/ (a timestamped backup is taken first)?", count).format(
                    count=count)
                if count else _("write the reference modules into forge/?"))
    command = f"forgelab restore {stage.number}" + (f" --from {args.source}" if args.source else "")
    stop = confirm(question, yes=args.yes, command=command)
    if stop is not None:
        return stop
    backup = apply_restore(workbook, chosen)
    if backup is not None:
        print(_("backup of your forge/ saved as {name}").format(name=backup.name))
    for item in chosen.to_write:
        print(_("  laid reference {module}").format(module=item.module))
    if backup is not None:
        print(_("undo with: forgelab backup restore {name}").format(name=backup.name))
    return 0


def _backup_summary(files: list[str]) -> str:
    """``forge/ (21 files), transfer/test_01_….py``: a whole-forge copy in one item, other files by name."""
    forge = [name for name in files if name.startswith("forge/")]
    others = [name for name in files if not name.startswith("forge/")]
    whole = [ngettext("forge/ ({count} file)", "forge/ ({count} files)", len(forge)).format(count=len(forge))
             ] if len(forge) > 1 else forge
    return ", ".join(whole + others) or _("(empty)")


def cmd_backup(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.learner import backups
    from forgelab.cli.starters import confirm

    workbook, _course = open_workbook()
    try:
        if args.action == "list":
            if args.yes:
                return fail(_("--yes belongs to `forgelab backup restore NAME`"), _("drop it"))
            items = backups.listing(workbook)
            if not items:
                print(_("no backups yet: forgelab takes one before every write into your files"))
                return 0
            print(table([_("backup"), _("files")], [(b.name, _backup_summary(b.files)) for b in items]))
            print(_("undo a change with: forgelab backup restore NAME (any backup above)"))
            return 0
        if not args.name:
            return fail(_("backup restore needs a name"), _("see `forgelab backup list`"))
        chosen = backups.plan_restore(workbook, args.name)
        print(_("forgelab backup restore {name} would put back {files}:").format(
            name=chosen.backup.name, files=_backup_summary(chosen.backup.files)))
        for relative in chosen.changed:
            print(_("  {path}: differs now: it would be replaced (what is there now is backed up first)").format(
                path=relative))
        for relative in chosen.missing:
            print(_("  {path}: missing now: it would be brought back").format(path=relative))
        for relative in chosen.extra:
            print(_("  {path}: added since the backup: it would be removed (backed up first)").format(path=relative))
        if chosen.same:
            print(ngettext("  {count} file is already as in the backup", "  {count} files are already as in the backup",
                           len(chosen.same)).format(count=len(chosen.same)))
        if not chosen.to_write and not chosen.extra:
            print(_("nothing to do: every file already is as in the backup"))
            return 0
        if chosen.overwrites:
            count = len(chosen.overwrites)
            question = ngettext("change {count} file (what is there now is backed up first)?",
                                "change {count} files (what is there now is backed up first)?", count).format(count=count)
            stop = confirm(question, yes=args.yes, command=f"forgelab backup restore {chosen.backup.name}")
            if stop is not None:
                return stop
        done, safety = backups.restore(workbook, args.name)
        print(_("restored from {name}: {files}").format(name=done.backup.name,
                                                        files=", ".join((*done.to_write, *done.extra))))
        if safety is not None:
            print(_("what was there before is kept as {safety} (undo with: forgelab backup restore {safety})").format(
                safety=safety.name))
        return 0
    except backups.BackupError as error:
        return fail(str(error), _("see `forgelab backup list`"))


# ---------------------------------------------------------------- the course page
def cmd_page(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.site.builder import SiteError
    from forgelab.site.local import ensure_page, open_in_browser, page_file

    workbook, course = open_workbook()
    stage = course.stage(args.stage) if args.stage else None
    try:
        built = ensure_page(workbook, course, rebuild=args.rebuild)
    except (SiteError, OSError) as error:
        return fail(_("cannot build the course page in page/ ({cause})").format(
            cause=getattr(error, "strerror", None) or error),
            _("check that the workbook folder is writable, then run `forgelab page` again"))
    path = page_file(workbook, course, active(), stage)
    if built:
        print(wrap(_("built the course page in page/ from this workbook's files")))
    print(wrap(_("course page: {path}").format(path=workbook.relative(path))))
    print(path.as_uri())
    if not args.print and open_in_browser(path.as_uri()):
        print(wrap(_("opened in your web browser; pick your verification.json on a stage's page to self-check it")))
    else:
        print(wrap(_("open that address in your web browser: the page works from the file itself, offline, and what "
                     "you pick is read there and never uploaded")))
    return 0


# ---------------------------------------------------------------- design answer
def cmd_answer(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.learner.answers import length_warning, save_answer

    workbook, course = open_workbook()
    stage = course.stage(args.stage)
    if args.file:
        try:
            text = Path(args.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            return fail(_("cannot read {file} ({cause})").format(file=args.file,
                                                                 cause=getattr(error, "strerror", None) or error),
                        _("save the answer as a UTF-8 text file and run `forgelab answer {number} --file FILE`").format(
                            number=stage.number))
    else:
        text = sys.stdin.read()
    if not text.strip():
        return fail(_("the answer is empty"),
                    _("write it in a file and run `forgelab answer {number} --file FILE`").format(number=stage.number))
    path, words = save_answer(workbook, stage, text)
    print(wrap(ngettext("design answer for stage {number} saved to {path} ({count} word)",
                        "design answer for stage {number} saved to {path} ({count} words)", words).format(
        number=stage.number, path=workbook.relative(path), count=words), indent=2))
    warning = length_warning(stage, words)
    if warning:
        print(wrap(_("warning: {problem}").format(problem=warning), indent=2))
    print(_("rubric — a strong answer covers:"))
    for point in stage.text().design.rubric:
        print(wrap(f"  - {point}", indent=2))
    return 0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    status = sub.add_parser("status", help=_("a table of every stage and the next step to take"))
    status.add_argument("--rerun", action="store_true",
                        help=_("run every stage again instead of remembering unchanged ones"))
    add_judge_flags(status)
    status.set_defaults(handler=cmd_status)

    watch = sub.add_parser("watch", help=_("check a stage again every time you save its module, transfer test, "
                                           "fault-lab copy or design answer (q quits, h shows the next hint)"))
    watch.add_argument("stage", nargs="?", help=_("stage number, e.g. 01 (default: the first stage not yet accepted)"))
    watch.add_argument("--target", default="learner", help=_("learner (default) or solution: whose files are watched"))
    add_judge_flags(watch)
    watch.set_defaults(handler=cmd_watch)

    hint = sub.add_parser("hint", help=_("reveal the next hint of a stage (remembers how many were shown)"))
    hint.add_argument("stage", help=_("stage number, e.g. 01"))
    hint.add_argument("--reset", action="store_true", help=_("hide the hints again"))
    hint.set_defaults(handler=cmd_hint)

    fault = sub.add_parser("fault", help=_("the fault lab in its own workspace: start, check, diagnose (say what is wrong "
                                           "before you repair it), diff, reset; hint reveals the story, each diagnosis "
                                           "step and the fix principle in turn"))
    fault.add_argument("action", choices=["start", "check", "diagnose", "diff", "reset", "hint"])
    fault.add_argument("stage", help=_("stage number, e.g. 01"))
    fault.add_argument("--reset", action="store_true", help=_("with `hint`: hide the revealed fault-lab hints again"))
    fault.add_argument("--test", help=_("with `diagnose`: the test that shows the defect (its number or name)"))
    fault.add_argument("--function", help=_("with `diagnose`: the function the defect lies in (its number or name)"))
    fault.add_argument("--defect", help=_("with `diagnose`: which defect it is (its number in the list)"))
    fault.add_argument("--because", help=_("with `diagnose`: what is wrong, in your own words"))
    add_judge_flags(fault)
    fault.set_defaults(handler=cmd_fault)

    restore = sub.add_parser("restore", help=_("lay the reference modules of all stages before NN into forge/ "
                                               "(lists what it overwrites, asks, backs up first)"))
    restore.add_argument("stage", help=_("stage number, e.g. 01"))
    restore.add_argument("--from", dest="source", metavar="FILE",
                         help=_("a checkpoint pack (forge-workbook-checkpoint-NN.zip) released by your instructor: "
                                "how the learner bundle, which has no reference modules, restores"))
    restore.add_argument("--yes", action="store_true", help=_("do not ask before overwriting (for scripts)"))
    restore.set_defaults(handler=cmd_restore)

    backup = sub.add_parser("backup", help=_("list or restore the backups forgelab takes before it writes into your "
                                             "files (forge/, transfer tests, fault labs, design answers)"))
    backup.add_argument("action", choices=["list", "restore"])
    backup.add_argument("name", nargs="?", help=_("the backup to restore (see `forgelab backup list`)"))
    backup.add_argument("--yes", action="store_true", help=_("do not ask before overwriting (for scripts)"))
    backup.set_defaults(handler=cmd_backup)

    page = sub.add_parser("page", help=_("open the course page that came with the workbook (page/): a stage's page "
                                         "self-checks its verification.json in your browser"))
    page.add_argument("stage", nargs="?", help=_("stage number, e.g. 01 (default: the index)"))
    page.add_argument("--print", action="store_true", help=_("only print the page's path and address, open nothing"))
    page.add_argument("--rebuild", action="store_true", help=_("build page/ again from the workbook's files first"))
    page.set_defaults(handler=cmd_page)

    answer = sub.add_parser("answer", help=_("save a stage's design answer with the evidence (from --file or stdin)"))
    answer.add_argument("stage", help=_("stage number, e.g. 01"))
    answer.add_argument("--file", help=_("a text or Markdown file with the answer"))
    answer.set_defaults(handler=cmd_answer)
