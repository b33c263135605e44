"""Stage 08 — the chapter project: a requirement extractor.

Contract
    ``extract(pack, request, model, template=None, settings=STANDARD) -> Extraction`` turns one vague
    request into a strict ``TaskSpec`` plus an ``Audit`` of every decision. It is ``build_prompt``
    (steps 1–5), one model call (step 6) and ``read_output`` (steps 7–8); each step is done by the
    stage module that owns it, through that module's public functions only:

    1. resolve the pack's instructions by trust rank (01 ``explain``);
    2. choose context under the pack's token budget (02 ``explain_choice``);
    3. select few-shot examples for the scenario, the schema version and the request's tags
       (03 ``select_examples``) — in recovery mode, the pack's three fixed examples instead;
    4. mark each retrieved document as untrusted data: flag it (06 ``prepare_retrieved_context``)
       and put it in the prompt only as a data block (06 ``render_retrieved_block``);
    5. render the prompt template; its version id is ``prompt_version_id(template.text)`` (07);
    6. ``model.complete(prompt)``;
    7. bounded repair (05 ``repair_json_text`` / ``parse_json_object``). With ``settings.repair``
       off (recovery mode) no repair code runs at all: the answer is parsed exactly as written by
       ``forge.project.strict.parse_strict_object``, which rejects output that would need a repair
       and names it — so recovery mode works while stage 05 is unfinished;
    8. strict parse (04 ``TaskSpec.parse``), then the permission check: a spec may set
       ``write_allowed`` to true only when the accepted ``write`` instruction is ``allow``.

    A rejected output raises ``ExtractionError`` whose ``step`` says who caught it (``repair``,
    ``spec`` or ``permission``) and whose ``audit`` holds everything decided so far. A request that
    is empty or only whitespace is a ``ValueError``. The pack and the request are never modified,
    and the same inputs always give the same prompt, spec and audit.

Boundary decision
    Retrieved documents are never turned into instructions and never enter the prompt outside a
    data block; flags are recorded for people, not acted on. The model's answer is untrusted too:
    it is repaired only where stage 05 proves the repair harmless, parsed strictly, and it can never
    grant itself more write access than the accepted instructions give.

Your task: implement ``build_prompt`` (steps 1–5) and ``read_output`` (steps 7–8). Everything else
is given: the dataclasses, the two settings, ``extract`` on top of your two functions, and the
finished infrastructure in ``forge/project/`` (scenario packs, prompt template and renderers, token
estimate, models, and the strict parser of recovery mode). Use only the public functions of your
stage modules 01–07. If one of them is not finished yet: recovery mode (``RECOVERY``, ``forgelab
extract --recovery``) needs neither stage 03 nor stage 05, and ``forgelab restore 08 --from PACK``
lays the reference modules of 01–07 in from a checkpoint pack your instructor releases (after a
backup). Check your work with ``forgelab check 08``; ask for help with ``forgelab hint 08``; try it
with ``forgelab extract --scenario software "add a search box"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

from forge.context_selection import ContextCandidate, explain_choice
from forge.fewshot import Example, select_examples
from forge.injection import RetrievedDocument, prepare_retrieved_context, render_retrieved_block
from forge.instructions import Instruction, explain
from forge.output_repair import parse_json_object, repair_json_text
from forge.project.models import MockModel, Model
from forge.project.prompts import (PromptTemplate, load_template, render_context, render_examples,
                                   render_instructions, render_retrieved)
from forge.project.scenarios import SCENARIOS, ScenarioPack, load_scenario
from forge.project.schemas import FIXED_SCHEMA, render_schema, schema_fields
from forge.project.strict import parse_strict_object
from forge.project.tokens import estimate_tokens
from forge.prompt_regression import RegressionCase, prompt_version_id
from forge.task_spec import TaskSpec


@dataclass(frozen=True)
class Settings:
    """How one extraction runs. ``schema_version=None`` means: the pack's own version."""

    mode: str = "standard"
    schema_version: str | None = None
    example_limit: int = 2
    fixed_examples: bool = False  # True: the pack's recovery_examples, no selection
    repair: bool = True  # False: output that needs a repair is rejected


STANDARD = Settings()
# The chapter's minimal recovery point: one fixed schema, three fixed examples, no automatic repair.
# It calls no function of stage 03 (the examples are fixed) and none of stage 05 (nothing is repaired).
RECOVERY = Settings(mode="recovery", schema_version=FIXED_SCHEMA, example_limit=3, fixed_examples=True, repair=False)

CAUGHT_BY = {
    "repair": "stage 05 (bounded output repair)",
    "spec": "stage 04 (strict task specification)",
    "permission": "the permission check (stage 08)",
}


@dataclass(frozen=True)
class AcceptedInstruction:
    key: str
    value: str
    source: str


@dataclass(frozen=True)
class RejectedInstruction:
    source: str
    key: str
    value: str
    reason: str  # "lower_rank" or "same_rank_later"
    winner: str  # the source of the instruction that won the key


@dataclass(frozen=True)
class DocumentFlags:
    source: str
    flags: tuple[str, ...]


@dataclass(frozen=True)
class Audit:
    """Every decision of one extraction, in pipeline order. ``to_dict()`` is its JSON form."""

    scenario: str
    request: str
    mode: str
    schema_version: str
    accepted: tuple[AcceptedInstruction, ...]
    rejected: tuple[RejectedInstruction, ...]
    context_chosen: tuple[str, ...]
    context_dropped: tuple[str, ...]
    context_tokens: int
    context_budget: int
    examples: tuple[str, ...]
    injection: tuple[DocumentFlags, ...]
    prompt_version: str
    prompt_tokens: int
    model: str = ""
    repairs: tuple[str, ...] = ()
    output_tokens: int = 0

    def accepted_value(self, key: str) -> str | None:
        """The accepted value of an instruction key, or None when no instruction set it."""
        for item in self.accepted:
            if item.key == key:
                return item.value
        return None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Prepared:
    """The rendered prompt and the audit of steps 1–5."""

    prompt: str
    audit: Audit


@dataclass(frozen=True)
class Extraction:
    spec: TaskSpec
    audit: Audit
    prompt: str
    output: str


class ExtractionError(ValueError):
    """The model's output was rejected; ``step`` names who caught it, ``audit`` shows the run so far."""

    def __init__(self, step: str, reason: str, audit: Audit) -> None:
        super().__init__(f"{step}: {reason}")
        self.step = step
        self.reason = reason
        self.audit = audit


def build_prompt(pack: ScenarioPack, request: str, template: PromptTemplate | None = None,
                 settings: Settings = STANDARD) -> Prepared:
    """Steps 1–5: decide instructions, context, examples and data blocks, then render the prompt."""
    raise NotImplementedError("build_prompt() is not implemented yet — see hints 1–3 (forgelab hint 08)")


def read_output(prepared: Prepared, output: str, model_id: str, settings: Settings = STANDARD) -> Extraction:
    """Steps 7–8: bounded repair, strict parse, permission check."""
    raise NotImplementedError("read_output() is not implemented yet — see hints 4–6 (forgelab hint 08)")


def extract(pack: ScenarioPack, request: str, model: Model, template: PromptTemplate | None = None,
            settings: Settings = STANDARD) -> Extraction:
    """One request in, one checked task spec and its audit out (see the module contract)."""
    prepared = build_prompt(pack, request, template, settings)
    output = model.complete(prepared.prompt)
    return read_output(prepared, output, model.model_id, settings)


def regression_cases(settings: Settings = STANDARD) -> list[RegressionCase]:
    """Every pack's fixed regression cases as stage 07 cases (given: ``forgelab regress`` runs these).

    The payload names the scenario and the request; the required fields are those of the schema
    version the extraction will use; ``write_allowed`` is the permission the case must keep.
    """
    cases = []
    for name in SCENARIOS:
        pack = load_scenario(name)
        fields = frozenset(field.name for field in schema_fields(settings.schema_version or pack.schema_version))
        for case in pack.regression_cases:
            cases.append(RegressionCase(case.id, {"scenario": name, "request": case.request}, fields, case.write_allowed))
    return cases


def regression_invoke(template: PromptTemplate, model: Model | None = None,
                      settings: Settings = STANDARD) -> Callable[[dict[str, object]], dict[str, object]]:
    """An ``invoke`` for ``run_suite`` (given): extract one case with ``template`` and return the
    fields the model actually set, so that a field the prompt stopped asking for shows as missing."""
    answering = model or MockModel()

    def invoke(payload: dict[str, object]) -> dict[str, object]:
        pack = load_scenario(str(payload["scenario"]))
        result = extract(pack, str(payload["request"]), answering, template, settings)
        return result.spec.model_dump(mode="json", exclude_unset=True)

    return invoke
