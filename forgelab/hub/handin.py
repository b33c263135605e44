"""Handing in from the learner's side of the hub: ``forgelab submit`` and the Submit button of every stage notebook.

:func:`submit` zips what grading reads from the workbook (:func:`forgelab.hub.client.pack`), sends it to the course
service and keeps the receipt in ``.forgelab/receipts/``; :func:`receipt_lines` says the receipt (digest, time,
contents) the same way in the terminal and in the notebook. :func:`hand_in` is the notebook's part (a stage
notebook's cell calls ``hand_in(lab)``; the hub's layer sits above the learner's tools, so the cell, not
:mod:`forgelab.learner.notebook`, imports it):

* in a server the hub started (``JUPYTERHUB_API_TOKEN`` and the service's address in the environment) a *Submit*
  button that hands in for the notebook's stage and shows the receipt, and a link to the learner's published
  feedback page when there is one (the service's page, opened through the hub's sign-in; ``forgelab feedback``
  saves the same page);
* anywhere else one line saying how to hand in instead. Nothing is sent until the button is pressed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from forgelab.core.files import LayoutError
from forgelab.core.i18n import _
from forgelab.core.text import esc, inline
from forgelab.hub.client import Client, Connection, ServiceError, pack
from forgelab.hub.models import Feedback, Receipt

if TYPE_CHECKING:
    from forgelab.learner.notebook import StageTools

RECEIPTS = Path(".forgelab") / "receipts"
SHOWN_FILES = 8  # a receipt lists this many files, then "…"


class HandInError(RuntimeError):
    """Not handed in: what is wrong (``message``) and what to do (``next_step``)."""

    def __init__(self, message: str, next_step: str = "") -> None:
        super().__init__(message)
        self.message, self.next_step = message, next_step


@dataclass(frozen=True)
class HandedIn:
    receipt: Receipt
    kept: Path  # the receipt's copy in the workbook


def submit(root: Path, stage: str, connection: Connection) -> HandedIn:
    """Hand in the workbook at ``root`` for ``stage`` (``NN`` or ``all``) and keep the receipt there."""
    try:
        data, files = pack(root)
    except LayoutError as error:
        raise HandInError(_("your workbook cannot be handed in: {error}").format(error=error),
                          _("remove the file it names (large or unusual files do not belong in forge/, transfer/, labs/ "
                            "or evidence/) and submit again")) from None
    if not any(name.startswith("forge/") for name in files):
        raise HandInError(_("your workbook has no forge/ folder to hand in"), _("run the command inside your workbook"))
    try:
        with Client(connection) as client:
            receipt = client.submit(data, stage)
    except ServiceError as error:
        raise HandInError(_("not submitted: {error}").format(error=error.message), error.next_step) from None
    folder = root / RECEIPTS
    folder.mkdir(parents=True, exist_ok=True)
    kept = folder / f"{receipt.received_at.strftime('%Y%m%dT%H%M%SZ')}-{receipt.id}.json"
    kept.write_text(receipt.model_dump_json(indent=2), encoding="utf-8")
    return HandedIn(receipt, kept)


def receipt_lines(receipt: Receipt, kept: str) -> list[str]:
    """The receipt in lines: what was handed in, when, its digest and contents, lateness, where it is kept."""
    files = ", ".join(receipt.files[:SHOWN_FILES]) + (" …" if len(receipt.files) > SHOWN_FILES else "")
    lines = [_("submitted: stage {stage}, submission {number}").format(stage=receipt.stage, number=receipt.id),
             _("received:  {time}").format(time=receipt.received_at.strftime("%Y-%m-%d %H:%M:%S UTC")),
             _("digest:    sha256 {digest}").format(digest=receipt.sha256),
             _("contents:  {count} file(s): {files}").format(count=len(receipt.files), files=files)]
    if receipt.late_for:
        lines.append(_("late for stage(s) {stages}: it is kept and marked late; your instructor grades the latest "
                       "on-time submission of a stage").format(stages=", ".join(receipt.late_for)))
    lines.append(_("receipt kept in {path}").format(path=kept))
    return lines


def on_hub(environ: dict[str, str] | None = None) -> Connection | None:
    """The course service's connection when this runs in a server the hub started, else None."""
    try:
        return Connection.from_environment(environ)
    except ServiceError:
        return None


def feedback_address(connection: Connection) -> str:
    """The learner's feedback page as the browser reaches it: the service's path on the hub's own address (the
    server's ``FORGELAB_COURSE_URL`` may be an address inside the hub's machine or cluster)."""
    return httpx.URL(connection.url).path + "feedback"


def published(connection: Connection) -> Feedback | None:
    """The learner's published feedback, or None before there is any. Raises :class:`ServiceError` otherwise."""
    try:
        with Client(connection, timeout=20.0) as client:
            return client.feedback()
    except ServiceError as error:
        if error.status == 404:
            return None
        raise


def hand_in(lab: StageTools) -> Any:
    """The notebook's Submit button and feedback link (see the module docstring)."""
    # lazy: ipywidgets loads only in a kernel that shows the tools, never with the command line
    import ipywidgets as widgets

    connection = on_hub()
    number = lab.stage.number
    if connection is None:
        return widgets.HTML(value=_paragraph(_(
            "Not on the class's hub, so nothing is sent from here: hand in your workbook the way your instructor asks "
            "(its forge/, transfer/, labs/ and evidence/ folders); on the hub this button submits it (terminal: "
            "`forgelab submit {number}`).").format(number=number)))
    button = widgets.Button(description=_("Submit stage {number}").format(number=number), button_style="primary",
                            icon="upload", layout=widgets.Layout(width="max-content", min_width="max-content"))
    shown = widgets.HTML(value="")
    link = widgets.HTML(value=_feedback_html(connection))

    def send(_event: Any) -> None:
        shown.value = _paragraph(_("submitting stage {number}…").format(number=number))
        try:
            done = submit(lab.workbook.root, number, connection)
        except HandInError as error:
            shown.value = _pre("\n".join(filter(None, [error.message, error.next_step])))
            return
        shown.value = _pre("\n".join(receipt_lines(done.receipt, lab.workbook.relative(done.kept))))
        link.value = _feedback_html(connection)

    button.on_click(lab._spoken(send))
    return widgets.VBox([button, shown, link])


def _feedback_html(connection: Connection) -> str:
    try:
        feedback = published(connection)
    except ServiceError as error:
        return _paragraph(_("your feedback cannot be looked up now: {error}").format(error=error.message))
    if feedback is None:
        return _paragraph(_("No feedback published for you yet: it appears here once your instructor has graded and "
                            "published (terminal: `forgelab feedback`)."))
    text = esc(_("Your feedback: {points} of {top} points (published {time})").format(
        points=f"{feedback.points:g}", top=f"{feedback.max_points:g}",
        time=feedback.published_at.strftime("%Y-%m-%d %H:%M UTC")))
    label = esc(_("open your feedback page"))
    return (f'<p style="line-height: 1.5">{text}: <a class="forgelab-feedback" href="{esc(feedback_address(connection))}" '
            f'target="_blank" rel="noopener">{label}</a></p>')


def _paragraph(text: str) -> str:
    """One line of the tools' text as HTML: escaped, with `code` rendered."""
    return f'<p style="line-height: 1.5">{inline(text)}</p>'


def _pre(text: str) -> str:
    return f'<pre style="white-space: pre-wrap; line-height: 1.4">{esc(text)}</pre>'
