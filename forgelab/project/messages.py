"""The project driver's wire messages: the request ``forgelab extract``/``regress`` sends on the driver's stdin and the
answer it writes to its answer file (see :mod:`forgelab.project.driver`).

Both sides are forgelab, so a message that does not fit is forgelab's own fault (or the learner's code wrote into the
answer file): the parent names the file and the field and says to report it, never a traceback.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class _Prompted(_Strict):
    recovery: bool = False
    template_text: str | None = None  # None: the shipped extractor template
    template_name: str | None = None
    lang: str = "en"  # the parent's language: the driver answers in it


class ExtractRequest(_Prompted):
    """Run the extractor on one request of one scenario."""

    action: Literal["extract"] = "extract"
    scenario: str
    request: str
    model: Literal["mock", "replay", "openai"] = "mock"
    fault: str | None = None  # mock only: one output defect
    replay: str | None = None  # the JSONL recording --model replay answers from
    record: str | None = None  # append every model answer to this JSONL recording


class RegressRequest(_Prompted):
    """Run the fixed regression cases of every scenario with one prompt."""

    action: Literal["regress"] = "regress"


Request = Annotated[ExtractRequest | RegressRequest, Field(discriminator="action")]


class DriverError(_Strict):
    """Why the driver gave no result: ``kind`` says whose problem it is (see :mod:`forgelab.project.driver`)."""

    kind: Literal["usage", "invalid", "model", "rejected", "not_implemented", "crash"]
    message: str
    next: str = ""  # the next step, when the driver knows it
    step: str | None = None  # rejected: the extractor's step that refused the model's answer
    caught_by: str | None = None  # rejected: that step, in words
    where: str = ""  # not_implemented, crash: "forge/x.py, line N"


class Extraction(_Strict):
    # free-form: the learner's own TaskSpec (model_dump) and audit record (to_dict), shown by forge/project/report.py
    spec: dict[str, Any]  # free-form: see above
    audit: dict[str, Any]  # free-form: see above
    prompt: str
    output: str


class CaseResult(_Strict):
    id: str
    scenario: str
    problems: list[str]


class Regression(_Strict):
    cases: list[CaseResult]


class _Answer(_Strict):
    """``ok`` with a result, or not ``ok`` with the error (and what the learner's pipeline kept up to it)."""

    ok: bool
    error: DriverError | None = None
    audit: dict[str, Any] | None = None  # free-form: the learner's audit record (to_dict) when one was kept
    output: str | None = None  # the model's rejected answer
    prompt: str | None = None

    @model_validator(mode="after")
    def _one_of(self) -> Self:
        result = getattr(self, "result")
        if self.ok != (result is not None) or self.ok == (self.error is not None):
            raise ValueError("an answer holds a result when ok is true and an error when it is false")
        return self


class ExtractAnswer(_Answer):
    result: Extraction | None = None


class RegressAnswer(_Answer):
    result: Regression | None = None
