"""Learner commands: status, hint, fault, restore, backup, answer."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from forgelab.commands.context import add_judge_flags, open_workbook
from forgelab.display import fail, table


# ---------------------------------------------------------------- status
def cmd_status(args: argparse.Namespace) -> int:
    from forgelab.commands.context import judge_settings
    from forgelab.status import collect_status

    workbook, course = open_workbook()
    report = collect_status(workbook, course, judge_settings(args), force=bool(getattr(args, "rerun", False)))
    print(f"Forge Workbook — {course.text('title')}  (workbook: {workbook.root})")
    if report.problem:
        print(f"warning: {report.problem}")
    print()
    print(table(["stage", "title", "tests", "fault lab", "transfer", "design", "evidence"], report.rows))
    print()
    remembered = len(report.stages) - len(report.ran)
    if remembered:
        print(f"{remembered} stage(s) unchanged since their last run: their results are remembered "
              "(`forgelab status --rerun` runs every stage again)")
    print(f"next: {report.next_step}")
    return 0


# ---------------------------------------------------------------- hint
def cmd_hint(args: argparse.Namespace) -> int:
    from forgelab.workbench import Workbench

    bench = Workbench.locate()
    print(bench.hint(bench.course.stage(args.stage), reset=args.reset).text())
    return 0


# ---------------------------------------------------------------- fault lab
def cmd_fault(args: argparse.Namespace) -> int:
    from forgelab import faultlab
    from forgelab.commands.context import judge_settings
    from forgelab.workbench import Workbench

    bench = Workbench.locate(judge_settings(args))
    stage = bench.course.stage(args.stage)
    actions = {"start": bench.fault_start, "check": bench.fault_check, "diff": bench.fault_diff,
               "reset": bench.fault_reset, "hint": lambda chosen: bench.fault_hint(chosen, reset=args.reset)}
    if args.reset and args.action != "hint":
        return fail(f"--reset belongs to `forgelab fault hint {stage.number}` (it hides the revealed hints)",
                    f"to put the broken module back, run `forgelab fault reset {stage.number}`")
    try:
        message = actions[args.action](stage)
    except faultlab.FaultLabError as error:
        return fail(str(error))
    print(message.text())
    return 0 if message.ok else 1


# ---------------------------------------------------------------- restore and backups
RESTORE_STATES = {
    "missing": "missing now: it will be created",
    "starter": "still the untouched starter: it will be replaced",
    "own work": "holds your own work (differs from the starter): it will be replaced, a backup is kept",
    "changed": "differs from the reference: it will be replaced, a backup is kept",
    "reference": "already the reference: left as it is",
}


def cmd_restore(args: argparse.Namespace) -> int:
    from forgelab.checkpoint import Pack, PackError, read_pack
    from forgelab.commands.starters import confirm
    from forgelab.restore import apply_restore, plan_restore
    from forgelab.targets import TargetError

    workbook, course = open_workbook()
    stage = course.stage(args.stage)
    pack: Pack | None = None
    if args.source:
        try:
            pack = read_pack(Path(args.source).expanduser(), course)
        except PackError as error:
            return fail(f"cannot restore from this checkpoint pack: {error}", "nothing was changed; "
                        "`forgelab starter NN` brings back a shipped starter if a module is wrecked")
    try:
        chosen = plan_restore(workbook, course, stage, pack)
    except TargetError as error:
        return fail(str(error), "`forgelab status` shows where each stage stands")
    if not chosen.items:
        print(f"stage {stage.number} is the first stage: there is nothing before it to restore")
        return 0
    source = f" from {chosen.source} (checkpoint {pack.checkpoint})" if pack is not None else ""
    print(f"forgelab restore {stage.number} lays the reference modules of the stages before {stage.number} into "
          f"forge/{source}:")
    for item in chosen.items:
        print(f"  {item.module}: {RESTORE_STATES[item.state]}")
    if not chosen.to_write:
        print("nothing to do: every module already is the reference")
        return 0
    own = [item.module for item in chosen.items if item.holds_own_work]
    if own:
        print(f"your own work in {', '.join(own)} is replaced; the backup keeps it")
    elif not chosen.starter_known:
        print("(the shipped starters could not be read, so own work cannot be told from the starter)")
    count = len(chosen.overwritten)
    question = (f"overwrite {count} file{'s' if count != 1 else ''} in forge/ (a timestamped backup is taken first)?"
                if count else "write the reference modules into forge/?")
    command = f"forgelab restore {stage.number}" + (f" --from {args.source}" if args.source else "")
    stop = confirm(question, yes=args.yes, command=command)
    if stop is not None:
        return stop
    backup = apply_restore(workbook, chosen)
    if backup is not None:
        print(f"backup of your forge/ saved as {backup.name}")
    for item in chosen.to_write:
        print(f"  laid reference {item.module}")
    if backup is not None:
        print(f"undo with: forgelab backup restore {backup.name}")
    return 0


def _backup_summary(files: list[str]) -> str:
    """``forge/ (21 files), transfer/test_01_….py``: a whole-forge copy in one item, other files by name."""
    forge = [name for name in files if name.startswith("forge/")]
    others = [name for name in files if not name.startswith("forge/")]
    whole = [f"forge/ ({len(forge)} file{'s' if len(forge) != 1 else ''})"] if len(forge) > 1 else forge
    return ", ".join(whole + others) or "(empty)"


def cmd_backup(args: argparse.Namespace) -> int:
    from forgelab import backups
    from forgelab.starters import restore_transfer_files

    workbook, _ = open_workbook()
    try:
        if args.action == "list":
            items = backups.listing(workbook)
            if not items:
                print("no backups yet: forgelab takes one before every write into forge/")
                return 0
            print(table(["backup", "files"], [(b.name, _backup_summary(b.files)) for b in items]))
            print("undo a change with: forgelab backup restore NAME")
            return 0
        if not args.name:
            return fail("backup restore needs a name", "see `forgelab backup list`")
        chosen = backups.find(workbook, args.name)
        if (chosen.path / "forge").is_dir():
            restored, safety = backups.restore(workbook, args.name)
            print(f"forge/ restored from {restored.name}; what was there before is kept as {safety.name}")
        transfer, transfer_safety = restore_transfer_files(workbook, chosen)
        if transfer and transfer_safety is not None:
            print(f"{', '.join(transfer)} restored from {chosen.name}; what was there before is kept as {transfer_safety.name}")
        if not (chosen.path / "forge").is_dir() and not transfer:
            backups.restore(workbook, args.name)  # explains what kind of backup this is
        return 0
    except backups.BackupError as error:
        return fail(str(error))


# ---------------------------------------------------------------- design answer
def cmd_answer(args: argparse.Namespace) -> int:
    from forgelab.answers import length_warning, save_answer

    workbook, course = open_workbook()
    stage = course.stage(args.stage)
    if args.file:
        try:
            text = Path(args.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            return fail(f"cannot read {args.file} ({getattr(error, 'strerror', None) or error})",
                        f"save the answer as a UTF-8 text file and run `forgelab answer {stage.number} --file FILE`")
    else:
        text = sys.stdin.read()
    if not text.strip():
        return fail("the answer is empty", f"write it in a file and run `forgelab answer {stage.number} --file FILE`")
    path, words = save_answer(workbook, stage, text)
    print(f"design answer for stage {stage.number} saved to {workbook.relative(path)} ({words} words)")
    warning = length_warning(stage, words)
    if warning:
        print(f"warning: {warning}")
    print("rubric — a strong answer covers:")
    for point in stage.text().design_rubric:
        print(f"  - {point}")
    return 0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    status = sub.add_parser("status", help="a table of every stage and the next step to take")
    status.add_argument("--rerun", action="store_true", help="run every stage again instead of remembering unchanged ones")
    add_judge_flags(status)
    status.set_defaults(handler=cmd_status)

    hint = sub.add_parser("hint", help="reveal the next hint of a stage (remembers how many were shown)")
    hint.add_argument("stage")
    hint.add_argument("--reset", action="store_true", help="hide the hints again")
    hint.set_defaults(handler=cmd_hint)

    fault = sub.add_parser("fault", help="the fault lab in its own workspace: start, check, diff, reset; "
                                          "hint reveals the story, each diagnosis step and the fix principle in turn")
    fault.add_argument("action", choices=["start", "check", "diff", "reset", "hint"])
    fault.add_argument("stage")
    fault.add_argument("--reset", action="store_true", help="with `hint`: hide the revealed fault-lab hints again")
    add_judge_flags(fault)
    fault.set_defaults(handler=cmd_fault)

    restore = sub.add_parser("restore", help="lay the reference modules of all stages before NN into forge/ "
                                                "(lists what it overwrites, asks, backs up first)")
    restore.add_argument("stage")
    restore.add_argument("--from", dest="source", metavar="FILE",
                         help="a checkpoint pack (forge-workbook-checkpoint-NN.zip) released by your instructor: "
                              "how the learner bundle, which has no reference modules, restores")
    restore.add_argument("--yes", action="store_true", help="do not ask before overwriting (for scripts)")
    restore.set_defaults(handler=cmd_restore)

    backup = sub.add_parser("backup", help="list or restore backups of forge/ (and of transfer tests replaced by `starter`)")
    backup.add_argument("action", choices=["list", "restore"])
    backup.add_argument("name", nargs="?")
    backup.set_defaults(handler=cmd_backup)

    answer = sub.add_parser("answer", help="save a stage's design answer with the evidence (from --file or stdin)")
    answer.add_argument("stage")
    answer.add_argument("--file", help="a text or Markdown file with the answer")
    answer.set_defaults(handler=cmd_answer)
