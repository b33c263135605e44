"""Learner commands on the class's hub: ``forgelab submit [NN|all]`` and ``forgelab feedback``."""

from __future__ import annotations

import argparse
import webbrowser
from pathlib import Path

from forgelab.core.display import fail
from forgelab.core.i18n import _
from forgelab.core.paths import Workbook

def cmd_submit(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.hub.client import Connection, ServiceError
    from forgelab.hub.handin import HandInError, receipt_lines, submit

    workbook = Workbook.locate()
    stage = args.stage.lower()
    if stage != "all" and not (stage.isdigit() and len(stage) <= 2):
        return fail(_("{stage} is not a stage: give its number, e.g. 03, or all").format(stage=repr(args.stage)),
                    _("e.g. forgelab submit 03"))
    stage = stage if stage == "all" else stage.zfill(2)
    try:
        done = submit(workbook.root, stage, Connection.from_environment())
    except ServiceError as error:
        return fail(_("not submitted: {error}").format(error=error.message), error.next_step or None)
    except HandInError as error:
        return fail(error.message, error.next_step or None)
    for line in receipt_lines(done.receipt, workbook.relative(done.kept)):
        print(line)
    return 0


def cmd_feedback(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.hub.client import Client, Connection, ServiceError

    workbook = Workbook.locate()
    try:
        with Client(Connection.from_environment()) as client:
            feedback = client.feedback()
            page = client.feedback_page()
    except ServiceError as error:
        return fail(error.message, error.next_step or None)
    path = Path(args.out).expanduser() if args.out else workbook.root / ".forgelab" / "feedback.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(page)
    print(_("your feedback: {points} of {top} points (published {time})").format(
        points=f"{feedback.points:g}", top=f"{feedback.max_points:g}",
        time=feedback.published_at.strftime("%Y-%m-%d %H:%M UTC")))
    print(_("the page is saved in {path}: open it in JupyterLab's file browser (Open in New Browser Tab)").format(
        path=workbook.relative(path) if path.is_relative_to(workbook.root) else path))
    if args.open:
        webbrowser.open(path.resolve().as_uri())
    return 0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    submit = sub.add_parser("submit", help=_("hand in your workbook to the class's hub and get a receipt"),
                            description=_("Zip what grading reads from your workbook (forge/, transfer/, labs/, "
                                          "evidence/), send it to the course service of your hub, and keep the receipt "
                                          "(digest, time, contents) in .forgelab/receipts/. Every submission is kept; "
                                          "the instructor grades the latest on-time one."))
    submit.add_argument("stage", nargs="?", default="all", metavar="NN|all",
                        help=_("the stage you hand in for (default: all)"))
    submit.set_defaults(handler=cmd_submit)
    feedback = sub.add_parser("feedback", help=_("get your feedback page from the class's hub"))
    feedback.add_argument("--out", help=_("where to save the page (default: .forgelab/feedback.html)"))
    feedback.add_argument("--open", action="store_true", help=_("open it in a browser as well"))
    feedback.set_defaults(handler=cmd_feedback)
