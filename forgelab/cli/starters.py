"""``forgelab starter NN``: bring back the shipped starter of a stage (after a backup of what is there).

Also home of :func:`confirm`, the one way forgelab asks before overwriting a learner's files
(``forgelab restore`` uses it too): ``--yes`` answers for scripts, and without a terminal to ask in
the command refuses and names the flag.
"""

from __future__ import annotations

import argparse
import sys

from forgelab.core.display import fail
from forgelab.core.i18n import N_, _, ngettext
from forgelab.core import starters
from forgelab.cli.context import open_workbook

STATE_WORDS = {
    "missing": N_("missing now: it would be created"),
    "changed": N_("differs from the starter (your work): it would be replaced, a backup keeping it"),
    "pristine": N_("already the starter: left as it is"),
}


def confirm(question: str, *, yes: bool, command: str) -> int | None:
    """None to go on; otherwise the exit status to stop with (refused, or declined)."""
    if yes:
        return None
    if not sys.stdin.isatty():
        return fail(_("`{command}` asks before it overwrites anything, and there is no terminal to ask in "
                      "(stdin is not a terminal); nothing was changed").format(command=command),
                    _("run `{command} --yes` to confirm without a question").format(command=command))
    try:
        answer = input(_("{question} [y/N] ").format(question=question))
    except EOFError:
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return None
    print(_("cancelled: nothing was changed"))
    return 1


def cmd_starter(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.learner import starter

    workbook, course = open_workbook()
    stage = course.stage(args.stage)
    module, transfer = (True, True) if args.all else (False, True) if args.transfer else (True, False)
    command = f"forgelab starter {stage.number}" + (" --all" if args.all else " --transfer" if args.transfer else "")
    try:
        chosen = starter.plan(workbook, stage, module=module, transfer=transfer)
    except starters.StarterError as error:
        return fail(str(error))
    source = _("the bundle's course/starters/") if starters.pristine_starters_dir(workbook.root) else "git HEAD"
    print(_("stage {number} · {title}: the shipped starter (from {source})").format(
        number=stage.number, title=stage.text().title, source=source))
    for item in chosen.files:
        print(_("  {path}: {state}").format(path=item.relative, state=_(STATE_WORDS[item.state])))
    if not chosen.to_write:
        print(_("nothing to do: every file already is the shipped starter"))
        return 0
    replaced = [item for item in chosen.to_write if item.state == "changed"]
    question = (ngettext("replace {count} file with the starter (a timestamped backup is taken first)?",
                         "replace {count} files with the starter (a timestamped backup is taken first)?",
                         len(replaced)).format(count=len(replaced))
                if replaced else _("write the starter?"))
    stop = confirm(question, yes=args.yes, command=command)
    if stop is not None:
        return stop
    try:
        backup = starter.apply(workbook, chosen)
    except OSError as error:
        return fail(_("cannot write the starter ({cause})").format(cause=error.strerror or error),
                    _("check the folder's permissions"))
    for item in chosen.to_write:
        print(_("  restored {path}").format(path=item.relative))
    if backup is not None:
        print(_("backup of what was there: {name}").format(name=backup.name))
        print(_("undo with: forgelab backup restore {name}").format(name=backup.name))
    print(_("next: {step}").format(step=_("`forgelab check {number}`").format(number=stage.number)))
    return 0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    starter = sub.add_parser("starter", help=_("bring back the shipped starter of a stage (a backup of what is there "
                                               "first)"))
    starter.add_argument("stage", help=_("stage number, e.g. 01"))
    which = starter.add_mutually_exclusive_group()
    which.add_argument("--transfer", action="store_true", help=_("the transfer test starter instead of the module"))
    which.add_argument("--all", action="store_true", help=_("both the module and the transfer test starter"))
    starter.add_argument("--yes", action="store_true", help=_("do not ask before overwriting (for scripts)"))
    starter.set_defaults(handler=cmd_starter)
