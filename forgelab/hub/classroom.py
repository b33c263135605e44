"""The instructor's side of a class on the hub: collect, publish what the grader wrote, and export grades.

``collect`` downloads the latest on-time submission of every learner into a folder laid out the way
``forgelab grade`` reads it (``DIR/NAME.zip``, the learner's hub name as the submission's id) and writes
``DIR/collected.json`` (:class:`Collected`), which maps each zip back to its learner and receipt. Every download is
checked against the digest on its receipt. ``publish`` reads the grader's ``totals.csv`` and feedback pages for those
submissions and hands each learner's page and total to the service. The exports write the grade-import layouts the
LMSs document:

* Canvas (Grades → Import): the columns ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then one
  column per assignment; a ``Points Possible`` row under the header gives the assignment's maximum. The hub's user
  name goes in ``SIS Login ID`` (map the hub's accounts to your institution's logins).
* Moodle (Grades → Import → CSV file): a header row, one column that identifies the user (``Username`` here, mapped to
  ``username`` on the import page) and one column per grade item, a number per learner.
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

from forgelab.core.i18n import _
from forgelab.core.submission import safe_name
from forgelab.grading.feedback import page_names
from forgelab.grading.gradebook import TOTALS_NAME
from forgelab.hub.client import Client
from forgelab.hub.models import Feedback, FeedbackUpload, Message, Receipt

MANIFEST = "collected.json"
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


class ClassError(RuntimeError):
    """Something the instructor must fix: what is wrong and what to do, in the message."""


class Collected(Message):
    stage: str
    submissions: dict[str, Receipt]  # submission id (the zip's stem) → the receipt it came with
    late_only: list[str]


def collect(client: Client, stage: str, into: Path) -> Collected:
    """Download the latest on-time submission of every learner into ``into`` (see the module docstring)."""
    collection = client.collect(stage)
    into.mkdir(parents=True, exist_ok=True)
    kept: dict[str, Receipt] = {}
    for receipt in collection.submissions:
        sid = safe_name(receipt.learner)
        if sid in kept:
            raise ClassError(_("the hub names {first} and {second} would both be saved as {name}.zip: rename one of the "
                               "accounts").format(first=kept[sid].learner, second=receipt.learner, name=sid))
        data = client.download(receipt.id)
        if hashlib.sha256(data).hexdigest() != receipt.sha256:
            raise ClassError(_("submission {number} of {name} arrived with a different digest than its receipt: "
                               "collect again").format(number=receipt.id, name=receipt.learner))
        (into / f"{sid}.zip").write_bytes(data)
        kept[sid] = receipt
    manifest = Collected(stage=stage, submissions=kept, late_only=collection.late_only)
    (into / MANIFEST).write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    return manifest


def read_manifest(folder: Path) -> Collected:
    path = folder / MANIFEST
    if not path.is_file():
        raise ClassError(_("{path} is missing: this folder was not written by `forgelab class collect`").format(
            path=path))
    return Collected.model_validate_json(path.read_text(encoding="utf-8"))


def graded_totals(grading_out: Path) -> dict[str, tuple[float, float]]:
    """``totals.csv`` of a grading run: submission id → (points, max points)."""
    path = grading_out / TOTALS_NAME
    if not path.is_file():
        raise ClassError(_("{path} is missing: grade the collected submissions first (`forgelab class grade`)").format(
            path=path))
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["submission"]: (float(row["points"]), float(row["max_points"])) for row in csv.DictReader(handle)}


def publish(client: Client, manifest: Collected, grading_out: Path) -> list[Feedback]:
    """Give every collected learner their feedback page and total (as graded in ``grading_out``)."""
    totals = graded_totals(grading_out)
    pages = page_names(sorted(manifest.submissions))
    published = []
    for sid, receipt in sorted(manifest.submissions.items()):
        if sid not in totals:
            raise ClassError(_("{name} was collected but is not in {path}: grade the collected folder again").format(
                name=receipt.learner, path=grading_out / TOTALS_NAME))
        page = grading_out / "feedback" / pages[sid]
        points, top = totals[sid]
        upload = FeedbackUpload(points=points, max_points=top, html=page.read_text(encoding="utf-8"),
                                submission_id=receipt.id)
        published.append(client.publish(receipt.learner, upload))
    return published


def canvas_csv(totals: list[Feedback], assignment: str) -> str:
    top = max((f.max_points for f in totals), default=0.0)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*CANVAS_COLUMNS, assignment])
    writer.writerow(["Points Possible", "", "", "", "", _number(top)])
    for feedback in totals:
        writer.writerow([feedback.learner, "", "", feedback.learner, "", _number(feedback.points)])
    return buffer.getvalue()


def moodle_csv(totals: list[Feedback], item: str) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["Username", item])
    for feedback in totals:
        writer.writerow([feedback.learner, _number(feedback.points)])
    return buffer.getvalue()


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"
