"""verification.json as a Pydantic model: how it is written and read everywhere, and its JSON Schema.

``forgelab check`` writes the file through :class:`Verification` (:func:`write`); status, watch, the notebooks and
grading read it back through it (:func:`read`), so a file of another shape — a list, a key of the wrong type, a lone
``"accepted": true``, not JSON at all — is :class:`Unreadable` ("unreadable: run check again"), never a traceback
and never "accepted".

``forgelab/data/verification.schema.json`` — what the course page's self-check and the tests validate a
learner's evidence with — is written by ``forgelab build`` from :class:`Verification` and never edited by hand;
``forgelab build --check`` reports it out of date when the model changed (:func:`schema_text`). The page validates
with the standalone code Ajv generates from it (``forgelab/site/assets/schema-check.js``, ``npm run schema-check``;
:func:`forgelab.site.builder.stale_schema_check` names one made from another schema). The generated schema keeps
to plain keywords (``type``, ``const``, ``enum``, ``pattern``, ``minimum``, ``minItems``, ``uniqueItems``,
``items``, ``required``, ``properties``, ``additionalProperties``, local ``$ref``), each of which the page puts
into words naming the field; an optional key is absent, never ``null``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from forgelab.core.evidence import SCHEMA_VERSION, integrity_holds, write_document

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "data" / "verification.schema.json"

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Count = Annotated[int, Field(ge=0)]
Outcome = Literal["passed", "failed", "error", "skipped", "timeout", "not_run"]


class Part(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class StageFacts(Part):
    number: Annotated[str, Field(pattern=r"^[0-9]{2}$")]
    slug: Annotated[str, Field(pattern=r"^[a-z0-9-]+$")]
    title: str
    module: str
    evidence_dir: str


class TargetFacts(Part):
    name: str
    kind: Literal["learner", "solution", "fault", "path"]


class GeneratedBy(Part):
    tool: Literal["forgelab"]
    tool_version: str
    course_version: str
    python: str
    pytest: str
    platform: str


class TestResult(Part):
    nodeid: str
    name: str
    outcome: Outcome
    cause: str
    duration_ms: Count


class Summary(Part):
    passed: Count
    failed: Count
    error: Count
    skipped: Count
    timeout: Count
    not_run: Count
    required_passed: Count
    required_total: Annotated[int, Field(ge=1)]


class Diagnosis(Part):
    """The learner's stated diagnosis of the lab's defect (forgelab fault diagnose NN), judged with the course's
    answer key: which test shows it, the function it lies in, which defect it is, and a sentence in their own
    words. Self-reported: a learning aid the learner's machine can forge, so it earns no points (the lab's regression
    test does)."""

    status: Literal["missing", "not_right", "right"]
    detail: str
    self_reported: Literal[True] | None = None
    test: str | None = None
    function: str | None = None
    defect: str | None = None
    defect_text: str | None = None
    explanation: str | None = None
    attempts: Annotated[int, Field(ge=1)] | None = None
    stated_after_fix: bool | None = None
    hints_shown: Count | None = None


class RegressionTest(Part):
    """The lab's regression test (labs/NN-slug/test_diagnosis.py), run on the lab's broken copy, where it must fail,
    and on the learner's repair, where it must pass: the diagnosis a judge can run, which earns the lab's diagnosis
    points in grading (run there on the course's reference instead of the repair)."""

    status: Literal["missing", "not_written", "pending", "passed", "failed", "error", "cannot_tell"]
    file: str
    detail: str
    on_fixed: Literal["passes", "fails"] | None = None
    on_broken: Literal["passes", "fails"] | None = None
    sha256: Sha256 | None = None


class FaultLab(Part):
    status: Literal["not_started", "broken", "fixed", "error"]
    target_test: str
    fault_file: str
    detail: str
    fixed_file_sha256: Sha256 | None = None
    diagnosis: Diagnosis
    regression_test: RegressionTest | None = None


class TransferTest(Part):
    name: str
    outcome: Outcome
    cause: str


class Transfer(Part):
    status: Literal["missing", "not_written", "passed", "failed", "error", "cannot_tell"]
    known_wrong: Literal["fails", "passes"] | None = None
    file: str
    detail: str
    sha256: Sha256 | None = None
    tests: list[TransferTest]


class DesignAnswer(Part):
    status: Literal["missing", "too_short", "present"]
    file: str
    words: Count
    detail: str
    sha256: Sha256 | None = None


class FileDigest(Part):
    path: str
    sha256: Annotated[Sha256 | None, WithJsonSchema({"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"})]


class Digests(Part):
    algorithm: Literal["sha256"]
    module: FileDigest
    tests: Annotated[list[FileDigest], Field(min_length=1)]


class Acceptance(Part):
    required_tests_passed: bool
    fault_lab_fixed: bool
    fault_lab_diagnosed: bool
    transfer_passed: bool
    design_answer_present: bool


class Integrity(Part):
    algorithm: Literal["sha256"]
    canonicalization: Literal["json-sorted-keys-compact-utf8"]
    digest: Sha256


class Verification(Part):
    """Written by `forgelab check NN` from real pytest results. A local self-check of the lab contract, not a
    certificate. integrity.digest is sha256 over the canonical JSON of the document without the `integrity`
    member: keys sorted, separators ',' and ':', UTF-8, non-ASCII characters unescaped. The document contains
    no floating-point numbers, so the canonical form is the same in Python and in a browser."""

    schema_version: Literal[2]
    kind: Literal["forge-workbook/stage-verification"]
    experiment_id: Annotated[str, Field(pattern=r"^prompt-context-output-[0-9]{2}-[a-z0-9-]+$")]
    stage: StageFacts
    target: TargetFacts
    generated_by: GeneratedBy
    checked_at: Annotated[str, Field(json_schema_extra={"format": "date-time"})]
    required_tests: Annotated[list[str], Field(min_length=1, json_schema_extra={"uniqueItems": True})]
    tests: list[TestResult]
    summary: Summary
    fault_lab: FaultLab
    transfer: Transfer
    design_answer: DesignAnswer
    digests: Digests
    acceptance: Acceptance
    accepted: bool
    problems: list[str]
    disclaimer: str
    integrity: Integrity


class _PlainSchema(GenerateJsonSchema):
    """JSON Schema the page's validator reads: an optional key is absent (not null), no titles or defaults."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def schema() -> dict[str, object]:
    """The schema of verification.json, generated from :class:`Verification`."""
    generated = Verification.model_json_schema(ref_template="#/$defs/{model}", schema_generator=_PlainSchema)
    generated.pop("title", None)
    for definition in generated.get("$defs", {}).values():
        definition.pop("title", None)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"forge-workbook/verification/{SCHEMA_VERSION}",
            "title": f"Forge Workbook stage verification (schema version {SCHEMA_VERSION})", **generated}


def schema_text() -> str:
    """The schema file's text as ``forgelab build`` writes it."""
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- reading and writing a file


class Unreadable(ValueError):
    """A verification.json that is not a document this model describes (not JSON, another shape, a key missing or
    of the wrong type): whoever reads it shows "unreadable: run check again", never a traceback and never
    "accepted". ``reason`` says what is wrong, for a log or a grader (in English: the words come from JSON and
    Pydantic)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def parse(text: str | bytes, path: Path) -> Verification:
    """``text`` as a :class:`Verification`, or :class:`Unreadable` saying why not."""
    try:
        return Verification.model_validate_json(text, strict=True)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the document"
        kind = "not JSON" if first["type"] == "json_invalid" else f"{where}: {first['msg']}"
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise Unreadable(path, kind + more) from None


def read(path: Path) -> Verification:
    """The verification.json at ``path`` through its model; :class:`Unreadable` for a file that cannot be read or is
    not such a document (a missing file is the caller's case: look with ``path.is_file()`` first)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise Unreadable(path, error.strerror or type(error).__name__) from None
    return parse(data, path)


def document(verification: Verification) -> dict[str, object]:
    """The JSON document of ``verification``, exactly the keys it was made with (an optional key not given stays
    absent): what is written, and what the integrity digest is computed over."""
    return verification.model_dump(mode="json", exclude_unset=True)


def intact(verification: Verification) -> bool:
    """Its integrity digest matches its content (nobody edited it after ``forgelab check`` wrote it)."""
    return integrity_holds(document(verification))


def write(path: Path, verification: Verification) -> None:
    """Write ``verification`` to ``path`` atomically, as ``forgelab check`` writes it."""
    write_document(path, document(verification))
