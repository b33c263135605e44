"""``forgelab starter NN``: bring back the shipped starter of a stage (after a backup of what is there).

Also home of :func:`confirm`, the one way forgelab asks before overwriting a learner's files
(``forgelab restore`` uses it too): ``--yes`` answers for scripts, and without a terminal to ask in
the command refuses and names the flag.
"""

from __future__ import annotations

import argparse
import sys

from forgelab.display import fail

STATE_WORDS = {
    "missing": "missing now: it will be created",
    "changed": "differs from the starter (your work): it will be replaced, a backup is kept",
    "pristine": "already the starter: left as it is",
}


def confirm(question: str, *, yes: bool, command: str) -> int | None:
    """None to go on; otherwise the exit status to stop with (refused, or declined)."""
    if yes:
        return None
    if not sys.stdin.isatty():
        return fail(f"`{command}` asks before it overwrites anything, and there is no terminal to ask in "
                    "(stdin is not a terminal); nothing was changed",
                    f"run `{command} --yes` to confirm without a question")
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return None
    print("cancelled: nothing was changed")
    return 1


def cmd_starter(args: argparse.Namespace) -> int:
    from forgelab import starters
    from forgelab.commands.context import open_workbook

    workbook, course = open_workbook()
    stage = course.stage(args.stage)
    module, transfer = (True, True) if args.all else (False, True) if args.transfer else (True, False)
    command = f"forgelab starter {stage.number}" + (" --all" if args.all else " --transfer" if args.transfer else "")
    try:
        chosen = starters.plan(workbook, stage, module=module, transfer=transfer)
    except starters.StarterError as error:
        return fail(str(error))
    source = "the bundle's course/starters/" if starters.pristine_starters_dir(workbook.root) else "git HEAD"
    print(f"stage {stage.number} · {stage.text().title}: the shipped starter (from {source})")
    for item in chosen.files:
        print(f"  {item.relative}: {STATE_WORDS[item.state]}")
    if not chosen.to_write:
        print("nothing to do: every file already is the shipped starter")
        return 0
    replaced = [item for item in chosen.to_write if item.state == "changed"]
    question = (f"replace {len(replaced)} file{'s' if len(replaced) != 1 else ''} with the starter "
                "(a timestamped backup is taken first)?" if replaced else "write the starter?")
    stop = confirm(question, yes=args.yes, command=command)
    if stop is not None:
        return stop
    try:
        backup = starters.apply(workbook, chosen)
    except OSError as error:
        return fail(f"cannot write the starter ({error.strerror or error})", "check the folder's permissions")
    for item in chosen.to_write:
        print(f"  restored {item.relative}")
    if backup is not None:
        print(f"backup of what was there: {backup.name}")
        print(f"undo with: forgelab backup restore {backup.name}")
    print(f"next: `forgelab check {stage.number}`")
    return 0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    starter = sub.add_parser("starter", help="bring back the shipped starter of a stage (a backup of what is there first)")
    starter.add_argument("stage", help="stage number, e.g. 01")
    which = starter.add_mutually_exclusive_group()
    which.add_argument("--transfer", action="store_true", help="the transfer test starter instead of the module")
    which.add_argument("--all", action="store_true", help="both the module and the transfer test starter")
    starter.add_argument("--yes", action="store_true", help="do not ask before overwriting (for scripts)")
    starter.set_defaults(handler=cmd_starter)
