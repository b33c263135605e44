"""The course service's wire messages and records: one Pydantic model for each, strict, nothing extra allowed.

A learner's name is the hub's user name; a stage is two digits (``01``) or ``all`` (a snapshot handed in for every
stage). Times are timezone-aware UTC. Every digest is a sha256 in hex.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

STAGE_PATTERN = r"^(\d{2}|all)$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("a time must say its time zone, e.g. 2026-12-24T18:00:00+00:00")
    return value


AwareTime = Annotated[datetime, AfterValidator(_aware)]
Stage = Annotated[str, Field(pattern=STAGE_PATTERN)]
Digest = Annotated[str, Field(pattern=SHA256_PATTERN)]
Learner = Annotated[str, Field(min_length=1, max_length=255)]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Receipt(Message):
    """What a learner is given for one submission, and what the service keeps of it."""

    id: int
    learner: Learner
    stage: Stage
    sha256: Digest  # of the zip as received (the file kept under that name)
    content_sha256: Digest  # grading's digest of the graded files (forgelab.core.submission.content_digest)
    size: int  # bytes of the zip
    received_at: AwareTime
    late_for: list[str]  # the stages whose deadline had passed when it arrived (empty: on time everywhere)
    files: list[str]  # what grading reads from it, e.g. "forge/instructions.py"

    @property
    def late(self) -> bool:
        return bool(self.late_for)


class SubmissionList(Message):
    learner: Learner
    submissions: list[Receipt]


class Deadline(Message):
    stage: Annotated[str, Field(pattern=r"^\d{2}$")]
    due: AwareTime


class Deadlines(Message):
    deadlines: list[Deadline]


class Collection(Message):
    """The latest on-time submission of every learner (for one stage, or for the last deadline)."""

    stage: Stage
    due: AwareTime | None
    submissions: list[Receipt]
    late_only: list[Learner]  # learners who handed in, but only after the deadline


class FeedbackUpload(Message):
    """An instructor publishes one learner's graded feedback page and total."""

    points: float
    max_points: float
    html: Annotated[str, Field(max_length=20 * 1024 * 1024)]
    submission_id: int | None = None  # the submission the page grades


class Feedback(Message):
    learner: Learner
    points: float
    max_points: float
    sha256: Digest  # of the page
    published_at: AwareTime
    submission_id: int | None


class Totals(Message):
    totals: list[Feedback]


class Identity(Message):
    name: Learner
    instructor: bool


class GradeRequest(Message):
    """An instructor starts a grade run (``POST api/grade``): the stages, as ``forgelab grade --stages`` takes them."""

    stages: str | None = None


class Refusal(Message):
    """Every refusal the service gives: what is wrong, and what to do."""

    status: int
    reason: str  # a stable code: unauthenticated, forbidden, too_large, malformed, not_found, …
    message: str
    next_step: str
