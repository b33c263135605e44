"""The three scenario packs of the chapter project, loaded from ``forge/project/scenarios/*.json``.

A pack is everything one extraction needs besides the request and the model:

* ``instructions`` — system, developer and user instructions (stage 01 decides the conflicts);
* ``context``      — candidate material with its token cost, relevance and trust; exactly one item is
                     the required policy (stage 02 chooses under ``budget``);
* ``examples``     — a few-shot bank that also holds examples from other scenarios and from the other
                     schema version (stage 03 must filter them out); ``recovery_examples`` names the
                     three fixed examples that recovery mode always uses;
* ``retrieved``    — documents found by retrieval, at least one carrying an operational instruction
                     (stage 06 keeps them as data);
* ``requests``     — vague requests in English and Chinese, and ``regression_cases`` for stage 07.

The files are data a person may edit, so they cross into Python through Pydantic in strict mode:
unknown keys, wrong types and broken references are errors that name the file and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from forge.project.schemas import FIXED_SCHEMA, SCHEMAS
from forge.project.tokens import estimate_tokens

SCENARIOS: tuple[str, ...] = ("software", "office", "music")
PACK_DIR = Path(__file__).resolve().parent / "scenarios"
PACK_FORMAT = 1
RECOVERY_EXAMPLE_COUNT = 3


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class PackInstruction(_Strict):
    source: Literal["system", "developer", "user"]
    key: str
    value: str


class PackRequest(_Strict):
    id: str
    language: Literal["en", "zh"]
    text: str


class ContextItem(_Strict):
    id: str
    text: str
    relevance: float
    trust: float
    required: bool = False

    @property
    def tokens(self) -> int:
        """The token cost of this item: the estimate of its text."""
        return estimate_tokens(self.text)


class ShotExample(_Strict):
    id: str
    scenario: str
    schema_version: str
    tags: frozenset[str]
    request: str
    answer: dict[str, object]

    @model_validator(mode="after")
    def _answer_follows_its_schema(self) -> ShotExample:
        if self.schema_version not in SCHEMAS:
            raise ValueError(f"example {self.id!r}: unknown schema version {self.schema_version!r}")
        expected = [field.name for field in SCHEMAS[self.schema_version]]
        if sorted(self.answer) != sorted(expected):
            raise ValueError(f"example {self.id!r}: a {self.schema_version} answer has exactly the fields "
                             f"{', '.join(expected)}, got {', '.join(sorted(self.answer))}")
        return self


class PackDocument(_Strict):
    source: str
    text: str


class PackCase(_Strict):
    id: str
    request: str
    write_allowed: bool


class ScenarioPack(_Strict):
    format: int
    name: str
    title: str
    summary: str
    schema_version: str
    budget: int
    instructions: tuple[PackInstruction, ...]
    requests: tuple[PackRequest, ...]
    tag_keywords: dict[str, tuple[str, ...]]
    context: tuple[ContextItem, ...]
    examples: tuple[ShotExample, ...]
    recovery_examples: tuple[str, ...]
    retrieved: tuple[PackDocument, ...]
    regression_cases: tuple[PackCase, ...]

    @model_validator(mode="after")
    def _references_hold(self) -> ScenarioPack:
        if self.format != PACK_FORMAT:
            raise ValueError(f"format {self.format} is not supported (expected {PACK_FORMAT})")
        if self.schema_version not in SCHEMAS:
            raise ValueError(f"unknown schema_version {self.schema_version!r}")
        for label, ids in (("request", [r.id for r in self.requests]), ("context", [c.id for c in self.context]),
                           ("example", [e.id for e in self.examples]), ("case", [c.id for c in self.regression_cases])):
            repeated = sorted({item for item in ids if ids.count(item) > 1})
            if repeated:
                raise ValueError(f"{label} ids must be unique, repeated: {', '.join(repeated)}")
        if sum(item.required for item in self.context) != 1:
            raise ValueError("exactly one context item must be the required policy")
        by_id = {example.id: example for example in self.examples}
        if len(self.recovery_examples) != RECOVERY_EXAMPLE_COUNT:
            raise ValueError(f"recovery_examples must name exactly {RECOVERY_EXAMPLE_COUNT} examples")
        for example_id in self.recovery_examples:
            example = by_id.get(example_id)
            if example is None or example.scenario != self.name or example.schema_version != FIXED_SCHEMA:
                raise ValueError(f"recovery example {example_id!r} must be a {self.name} {FIXED_SCHEMA} example of this pack")
        if not self.retrieved or not self.requests or not self.regression_cases:
            raise ValueError("a pack needs retrieved documents, requests and regression cases")
        return self

    def example(self, example_id: str) -> ShotExample:
        """The bank example with this id (``KeyError`` if there is none)."""
        for example in self.examples:
            if example.id == example_id:
                return example
        raise KeyError(example_id)

    def tags_for(self, request: str) -> frozenset[str]:
        """The task tags of a request: every tag one of whose keywords occurs in it (case-folded)."""
        folded = request.casefold()
        return frozenset(tag for tag, words in self.tag_keywords.items()
                         if any(word.casefold() in folded for word in words))

    def request(self, request_id: str) -> str:
        """The text of one of the pack's sample requests."""
        for item in self.requests:
            if item.id == request_id:
                return item.text
        raise KeyError(request_id)


def load_pack_file(path: Path) -> ScenarioPack:
    """Read and validate one pack file; every problem is a ValueError that names the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"cannot read scenario pack {path.name}: {error.strerror}") from None
    try:
        return ScenarioPack.model_validate_json(text)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        message = first["msg"].removeprefix("Value error, ")
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise ValueError(f"scenario pack {path.name}: {where}: {message}{more}") from None


def load_scenario(name: str) -> ScenarioPack:
    """The pack of a scenario by name; an unknown name is a ValueError that lists the known ones."""
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}: expected one of {', '.join(sorted(SCENARIOS))}")
    pack = load_pack_file(PACK_DIR / f"{name}.json")
    if pack.name != name:
        raise ValueError(f"scenario pack {name}.json says its name is {pack.name!r}")
    return pack
