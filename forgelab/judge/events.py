"""The events a learner's test run sends the judge (:mod:`forgelab.judge.learner_plugin`), as Pydantic models.

They are written by code the learner controls, so they are claims: each is read as exactly one of these shapes
(strict types, no unknown key, a node id of at most 500 characters) or dropped; long texts are cut, not refused.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError


def _cut(limit: int) -> AfterValidator:
    return AfterValidator(lambda text: text if len(text) <= limit else text[: limit - 1] + "…")


Cause = Annotated[str, _cut(300)]
Detail = Annotated[str, _cut(4000)]
NodeId = Annotated[str, Field(max_length=500)]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Started(_Event):
    event: Literal["start"]
    nodeid: NodeId


class Reported(_Event):
    event: Literal["report"]
    nodeid: NodeId
    when: Literal["setup", "call", "teardown"]
    outcome: Literal["passed", "skipped", "failed", "error"]
    cause: Cause = ""
    detail: Detail = ""
    duration_ms: Annotated[int, Field(ge=0, lt=10**9)] = 0


class CollectionFailed(_Event):
    event: Literal["collect_error"]
    nodeid: Cause = ""
    cause: Cause = ""
    detail: Detail = ""


class Finished(_Event):
    event: Literal["finish"]
    exitstatus: int


LearnerEvent = Annotated[Started | Reported | CollectionFailed | Finished, Field(discriminator="event")]
_READER: TypeAdapter[Started | Reported | CollectionFailed | Finished] = TypeAdapter(LearnerEvent)


def read(raw: object) -> Started | Reported | CollectionFailed | Finished | None:
    """The event ``raw`` claims to be, or None when it is none of them."""
    try:
        return _READER.validate_python(raw)
    except ValidationError:
        return None
