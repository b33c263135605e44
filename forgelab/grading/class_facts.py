"""What the class report needs from each graded submission beyond its grade rows.

Grading keeps, per submission and stage, two more kinds of record in the gradebook (tables ``tests``
and ``facts``), so that ``forgelab grade report`` can work from a graded folder — or from merged
shards — without the submissions:

* :class:`TestResult` — each course test of the stage (the required stage tests and the instructor
  checks) with its outcome as grading saw it and, for a stage test, its first difference (the same
  short cause the gradebook's reason lists). Instructor checks keep name and outcome only, as
  everywhere else.
* :class:`StageFacts` — the transfer test's verdict as grading judged it (typed: ``cannot_tell`` is a
  test that passes on the known-wrong code too), and what the submission's own evidence says about how
  the learner got there: the fault-lab diagnosis it handed in (``diagnosis.json``, :mod:`forgelab.verdicts.diagnosis`),
  judged again with the course's answer key — right or not, at which attempt it was first right, how many
  rungs of the fault lab's hint ladder were shown by then — and its learning record
  (:mod:`forgelab.core.learning`: stage-hint depth, the prediction-quiz answer, the first check and the first
  acceptance).

The evidence is the learner's own account, read as untrusted data: a part that does not fit the
course (a quiz option that does not exist, more hints than the stage has, an acceptance before the
first check) is left out and counted as unreadable, never trusted. Like the grade rows, none of it
holds a timestamp of grading, so grading the same submission again gives the same records.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from forgelab.core import learning
from forgelab.judge.outcomes import Outcome, RunReport, TestRow
from forgelab.core.registry import Course, Stage
from forgelab.grading.items import _cause, clean
from forgelab.grading.plan import check_files, sub_label
from forgelab.verdicts.diagnosis import judged_record
from forgelab.core import pyast

STAGE_TEST, INSTRUCTOR_CHECK = "stage_test", "instructor_check"
KINDS = (STAGE_TEST, INSTRUCTOR_CHECK)


@dataclass(frozen=True)
class TestResult:
    """One course test of one stage for one submission (no timestamps, no durations)."""

    submission: str
    stage: str
    kind: str  # STAGE_TEST or INSTRUCTOR_CHECK
    test: str
    outcome: str  # an Outcome value
    cause: str  # a stage test's first difference ("" when it passed, and for every instructor check)

    @property
    def passed(self) -> bool:
        return self.outcome == Outcome.PASSED


class StageFacts(BaseModel):
    """The report's facts about one submission's stage, stored as canonical JSON (see :func:`dump`)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    transfer: str  # the transfer part's status as graded: missing, not_written, passed, failed, error, cannot_tell
    diagnosis: Literal["right", "not_right", "missing"] | None = None  # judged with the course's key; None: not graded
    diagnosis_attempts: int | None = None
    diagnosis_first_right: int | None = None  # the attempt at which every answer was first right
    learning: Literal["recorded", "absent", "unreadable"] = "absent"
    hints_deepest: int | None = None
    hints_available: int | None = None
    fault_hints_deepest: int | None = None  # rungs of the fault-lab ladder shown when the diagnosis was stated
    prediction_choice: int | None = None
    prediction_correct: bool | None = None
    checks: int | None = None
    first_check_at: str | None = None
    accepted_at: str | None = None

    def dump(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    @classmethod
    def load(cls, text: str) -> StageFacts:
        return cls.model_validate_json(text)


# ---------------------------------------------------------------- tests


def instructor_check_names(course_root: Path, files: list[str]) -> list[str]:
    """The test functions of the stage's instructor check files, read as syntax (never imported here)."""
    names: set[str] = set()
    for relative in files:
        try:
            tree = pyast.parse((course_root / relative).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                names.add(node.name)
    return sorted(names)


def _verdict(rows: list[TestRow]) -> tuple[str, str]:
    """A test (all its parametrized rows) and its first difference: the cause of its first row that did not pass,
    as the gradebook's reason states it."""
    bad = [row for row in rows if row.outcome is not Outcome.PASSED]
    if not rows:
        return str(Outcome.NOT_RUN), "not found: did it run?"
    if not bad:
        return str(Outcome.PASSED), ""
    return str(bad[0].outcome), _cause(bad[0])


def test_results(course: Course, stage: Stage, submission: str, report: RunReport) -> list[TestResult]:
    """Every required test and instructor check of ``stage`` as grading saw it (label ``sub-NN``)."""
    label = sub_label(stage)
    problem = report.import_problems.get(label)
    found: list[TestResult] = []
    rows = report.in_file(label, stage.test_file)
    for name in stage.required_tests:
        if problem is not None:
            outcome, cause = str(Outcome.NOT_RUN), clean(problem.cause, course.root)
        else:
            outcome, cause = _verdict([row for row in rows if row.name == name])
        found.append(TestResult(submission, stage.number, STAGE_TEST, name, outcome, cause))
    files = check_files(course.root, stage)
    check_rows = [row for row in report.for_target(label) if row.file in files]
    for name in sorted(set(instructor_check_names(course.root, files)) | {row.name for row in check_rows}):
        if problem is not None:
            outcome = str(Outcome.NOT_RUN)
        else:
            outcome, _ignored = _verdict([row for row in check_rows if row.name == name])
        found.append(TestResult(submission, stage.number, INSTRUCTOR_CHECK, name, outcome, ""))
    return found


def unlaid_results(course: Course, stage: Stage, submission: str, reason: str) -> list[TestResult]:
    """A submission that cannot be laid out fails every test, for the one reason it has."""
    names = instructor_check_names(course.root, check_files(course.root, stage))
    return ([TestResult(submission, stage.number, STAGE_TEST, name, str(Outcome.ERROR), reason)
             for name in stage.required_tests]
            + [TestResult(submission, stage.number, INSTRUCTOR_CHECK, name, str(Outcome.ERROR), "") for name in names])


# ---------------------------------------------------------------- the submission's own account


def _diagnosis(course_root: Path, stage: Stage, home: Path) -> dict[str, object]:
    """The handed-in diagnosis, each answer judged again with the course's key (never taken from the record)."""
    record, right = judged_record(course_root, home, stage)
    if record is None:
        return {"diagnosis": "missing"}
    is_right = bool(right) and all(right.values())
    rungs = record.hints_shown if record.hints_shown <= ladder_length(stage) + 2 else None  # no more than it has
    first = record.first_right_at if is_right and record.first_right_at and record.first_right_at <= record.attempts \
        else None
    return {"diagnosis": "right" if is_right else "not_right", "diagnosis_attempts": min(record.attempts, 1000),
            "diagnosis_first_right": first, "fault_hints_deepest": rungs}


def _fits(stage: Stage, entry: learning.StageRecord) -> bool:
    """The record's numbers are possible for this stage of the course."""
    text = stage.text()
    if entry.hints and (entry.hints.available != len(text.hints) or entry.hints.deepest > entry.hints.available
                        or any(shown.rung > entry.hints.available or (shown.addressed and shown.failing_test is None)
                               for shown in entry.hints.shown)):
        return False
    if entry.prediction:
        options = len(text.prediction.options)
        if entry.prediction.options != options or entry.prediction.choice >= options \
                or entry.prediction.correct != (entry.prediction.choice == text.prediction.answer):
            return False
    if entry.checks and entry.checks.accepted_at and entry.checks.accepted_at < entry.checks.first_at:
        return False
    return True


def ladder_length(stage: Stage) -> int:
    """Rungs of the stage's fault-lab hint ladder: what you observe, each diagnosis step, the fix principle."""
    return len(stage.text().fault.diagnosis) + 2


def stage_facts(course_root: Path, stage: Stage, home: Path, transfer_status: str) -> StageFacts:
    """The facts of one stage: ``home`` is the submission's scratch copy (its ``evidence/``)."""
    found: dict[str, object] = {"transfer": transfer_status, **_diagnosis(course_root, stage, home)}
    record_file = home / "evidence" / learning.FILENAME
    if record_file.is_file() and not record_file.is_symlink():
        found.update(_learning(stage, record_file))
    return StageFacts.model_validate(found)


def _learning(stage: Stage, record_file: Path) -> dict[str, object]:
    try:
        record = learning.parse(record_file.read_bytes())
    except (OSError, learning.RecordError):
        return {"learning": "unreadable"}
    entry = record.stages.get(stage.number)
    if entry is None:
        return {}
    if not _fits(stage, entry):
        return {"learning": "unreadable"}
    found: dict[str, object] = {"learning": "recorded"}
    if entry.hints:
        found.update(hints_deepest=entry.hints.deepest, hints_available=entry.hints.available)
    if entry.prediction:
        found.update(prediction_choice=entry.prediction.choice, prediction_correct=entry.prediction.correct)
    if entry.checks:
        found.update(checks=entry.checks.count, first_check_at=entry.checks.first_at,
                     accepted_at=entry.checks.accepted_at)
    return found
