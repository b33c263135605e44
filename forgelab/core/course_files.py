"""The course's TOML files as Pydantic models: ``course.toml``, ``stage.toml``, ``fault.toml``, ``mutants.toml``
and ``glossary.toml``.

Every table forbids keys it does not declare, so a typo fails loading (and ``forgelab build --check``) with
the file, the table, the key and the nearest valid key::

    course/stages/01-instruction-hierarchy/stage.toml [text.en]: unknown key 'hnits' — did you mean 'hints'?

:func:`read` parses and validates one file (:func:`parse` the bytes already read from one); :func:`validate` checks
an already parsed table (the stage texts of another edition are checked after the English keys they lack are filled
in). Both raise :class:`RegistryError`, one line per problem. :mod:`forgelab.core.registry` turns the models into stages.
"""

from __future__ import annotations

import difflib
import tomllib
import types
from pathlib import Path
from typing import Any, Literal, Self, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from forgelab.core.errors import CourseFileError as CourseFileError
from forgelab.core.errors import RegistryError as RegistryError
from forgelab.core.i18n import _

SCHEMA = 1
SOURCE_FACT_KINDS = ("code", "constant", "name")


class Table(BaseModel):
    """One TOML table: only the declared keys, each of its declared type (no coercion), text stripped."""

    model_config = ConfigDict(extra="forbid", strict=True, str_strip_whitespace=True, frozen=True,
                              populate_by_name=True)


# ---------------------------------------------------------------- course.toml
class ScenarioText(Table):
    name: str
    input: str


class CourseFile(Table):
    schema_: Literal[1] = Field(alias="schema")
    name: str
    module_id: str
    default_language: str = "en"
    languages: list[str]
    curriculum: list[str] = []  # the curriculum files the stages' [[source_facts]] cite
    text: dict[str, dict[str, str]]  # language → key → text
    scenarios: dict[str, dict[str, ScenarioText]]  # scenario id → language → its name and input


# ---------------------------------------------------------------- stage.toml
class FaultTable(Table):
    target_test: str
    symptom: str


class TransferTable(Table):
    scenario: str
    known_wrong: list[str] = []  # mutants of mutants.toml a transfer test must fail on


class EquivalentEntry(Table):
    where: str
    why: str

    @model_validator(mode="before")
    @classmethod
    def _exact_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict) or set(data) != {"where", "why"}:
            raise ValueError("each entry must be a table with exactly the keys 'where' and 'why'")
        return data

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if not self.where or not self.why:
            raise ValueError("'where' and 'why' must not be empty")
        return self


class MutationTable(Table):
    equivalent: list[EquivalentEntry]

    @model_validator(mode="after")
    def _each_once(self) -> Self:
        names = [item.where for item in self.equivalent]
        twice = sorted(name for name in names if names.count(name) > 1)
        if twice:
            raise ValueError(f"{twice[0]!r} is listed twice in equivalent: keep one entry")
        return self


class SourceFactEntry(Table):
    source: str
    section: str
    code: str | None = None
    constant: str | None = None
    name: str | None = None
    value: Any = None
    says: str = ""

    @property
    def kind(self) -> str:
        return next(kind for kind in SOURCE_FACT_KINDS if getattr(self, kind) is not None)

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        kinds = [kind for kind in SOURCE_FACT_KINDS if getattr(self, kind) is not None]
        if len(kinds) != 1:
            raise ValueError(f"give exactly one of {', '.join(SOURCE_FACT_KINDS)} (got {len(kinds)})")
        if self.constant is not None and self.value is None:
            raise ValueError("a constant needs its 'value'")
        if self.code is not None and self.value is not None:
            raise ValueError("'value' goes with 'constant' (or, for a default, with 'name'), not with 'code'")
        if not self.section or not getattr(self, kinds[0]):
            raise ValueError(f"'section' and {kinds[0]!r} must not be empty")
        return self


class StageFile(Table):
    """``stage.toml`` apart from its texts, which :class:`StageTexts` checks one edition at a time."""

    schema_: Literal[1] = Field(alias="schema")
    number: str
    slug: str
    module: str
    scenario: str
    builds_on: list[str]
    required_tests: list[str]
    fault: FaultTable
    transfer: TransferTable
    mutation: MutationTable | None = None
    source_facts: list[SourceFactEntry] = []
    # test name → the rungs of [text.*] hints (1 = the first) that address it; the registry checks the names and
    # the numbers against required_tests and the ladders (forgelab.core.registry.check_hint_rungs)
    hint_rungs: dict[str, list[int]] = {}
    text: dict[str, dict[str, Any]]  # free-form until merged: language → that edition's [text.<language>] table

    @model_validator(mode="before")
    @classmethod
    def _no_derived_paths(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        for table, key in ((data, "test_file"), (data.get("transfer"), "test_file"), (data.get("fault"), "fault_file")):
            if isinstance(table, dict) and key in table:
                raise ValueError(f"{key!r} is derived from the stage's number, slug and module — remove it")
        return data

    @model_validator(mode="after")
    def _tests(self) -> Self:
        if not self.required_tests or len(set(self.required_tests)) != len(self.required_tests):
            raise ValueError("required_tests must be a non-empty list without duplicates")
        if self.fault.target_test not in self.required_tests:
            raise ValueError(f"fault target_test {self.fault.target_test!r} is not in required_tests")
        if "en" not in self.text:
            raise ValueError("[text.en] is required")
        return self


class PredictionText(Table):
    question: str
    options: list[str]
    answer: int
    rationale: str

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> Self:
        if not 0 <= self.answer < len(self.options):
            raise ValueError(f"answer {self.answer} is not an index of options (0..{len(self.options) - 1})")
        return self


class FaultText(Table):
    story: str
    diagnosis: list[str]
    fix_principle: str


class TransferText(Table):
    scenario: str
    changed_condition: str
    task: str
    criteria: list[str]


class DesignText(Table):
    question: str
    rubric: list[str]


class DocstringsText(Table):
    """The starters' docstrings in another edition (``forgelab release --lang`` ships them)."""

    starter: str
    functions: dict[str, str] = {}  # function, class (or Class.method) → its docstring
    comments: dict[str, str] = {}  # a comment's English words (after '#', stripped) → its words in this edition
    transfer: str


class StageTexts(Table):
    """One edition's ``[text.<language>]`` of a stage."""

    title: str
    capability: str
    problem_title: str
    problem: str
    what_it_is: str
    what_it_is_not: str
    relations: str
    boundary_decision: str
    demo_goal: str
    exercise: str
    steps: list[str]
    hints: list[str]
    done_when: list[str]
    mastery: list[str]
    prediction: PredictionText
    fault: FaultText
    transfer: TransferText
    design: DesignText
    from_the_sources: str = ""  # what the stage takes from the curriculum and where it departs from it
    docstrings: DocstringsText | None = None


# ---------------------------------------------------------------- docstrings.toml
class FileDocstrings(Table):
    """Another edition's words for one finished file of ``forge/`` (not a stage module): its module docstring,
    the docstrings of its functions, classes and methods, and its comments (English words → translation)."""

    module: str = ""
    functions: dict[str, str] = {}
    comments: dict[str, str] = {}


class DocstringsFile(Table):
    """``course/docstrings.toml``: the finished files of ``forge/`` in another edition (``forgelab release --lang``
    ships them); the stage modules' words are in each ``stage.toml``'s ``[text.<lang>.docstrings]``."""

    schema_: Literal[1] = Field(alias="schema")
    text: dict[str, dict[str, FileDocstrings]]  # language → path under the workbook (forge/…) → its words


# ---------------------------------------------------------------- fault.toml, mutants.toml, glossary.toml
class Edit(Table):
    """One find/replace edit of a reference module; ``find`` occurs exactly once at its turn."""

    model_config = ConfigDict(str_strip_whitespace=False)  # the edits are exact text
    find: str
    replace: str


class DiagnosisTable(Table):
    defect: str  # the id of the true choice
    choice: list[dict[str, str]]  # id and one text per language (checked by forgelab.verdicts.diagnosis)
    confirm: dict[str, str]  # the sealed last step, one text per language


class FaultFile(Table):
    patch: list[Edit] = []
    diagnosis: DiagnosisTable | None = None


class Mutant(Edit):
    name: str


class MutantsFile(Table):
    mutant: list[Mutant] = []


class Term(Table):
    id: str
    en: str
    zh: str
    meaning: str
    wrong: list[str] = []  # Chinese renderings the course does not use (forgelab.authoring.terminology)

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        empty = [key for key in ("id", "en", "zh", "meaning") if not getattr(self, key)]
        if empty:
            raise ValueError(f"term {self.id or '?'!r} has no {empty[0]}")
        if not all(self.wrong) or self.zh in self.wrong:
            raise ValueError(f"term {self.id!r}: wrong = … lists an empty word or the term's own rendering {self.zh!r}")
        return self


class GlossaryFile(Table):
    schema_: Literal[1] = Field(alias="schema")
    names: list[str] = []  # proper names written in English in both editions ("Forge Workbook")
    term: list[Term]


# ---------------------------------------------------------------- reading, and errors people can act on
Model = TypeVar("Model", bound=BaseModel)


def read(path: Path, model: type[Model]) -> Model:
    """Parse and validate one TOML file; :class:`RegistryError` names the file, the table and the key."""
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        raise CourseFileError(_("missing course source {path}").format(path=path)) from None
    return parse(path, content, model)


def parse(path: Path, content: bytes, model: type[Model]) -> Model:
    """:func:`read` of the bytes ``content`` already read from ``path`` (the registry reads each file once: the bytes it
    validates are the bytes its cache is keyed by)."""
    try:
        data = tomllib.loads(content.decode())  # what tomllib.load does with a file's bytes
    except tomllib.TOMLDecodeError as error:
        raise CourseFileError(_("{path}: not valid TOML ({error})").format(path=path, error=error)) from None
    return validate(data, model, path)


def validate(data: Any, model: type[Model], path: Path, within: tuple[str | int, ...] = ()) -> Model:
    """Validate ``data`` (the table at ``within`` in ``path``) as ``model``."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        lines = [_explain(path, model, within, detail) for detail in error.errors()]
        raise CourseFileError("\n".join(dict.fromkeys(lines))) from None


def _explain(path: Path, model: type[BaseModel], within: tuple[str | int, ...], detail: ErrorDetails) -> str:
    loc = (*within, *detail["loc"])
    inner = detail["loc"]
    kind = detail["type"]
    if kind == "missing":
        return _("{where}: missing key {key!r}").format(where=path.as_posix() + _table(loc[:-1]), key=loc[-1])
    if kind == "extra_forbidden":
        valid = _keys(model, inner[:-1])
        close = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.6)
        advice = _("did you mean {key!r}?").format(key=close[0]) if close else \
            _("expected one of {keys}").format(keys=_(", ").join(sorted(valid)))
        return _("{where}: unknown key {key!r} — {advice}").format(where=path.as_posix() + _table(loc[:-1]),
                                                                   key=loc[-1], advice=advice)
    if kind == "value_error":
        return f"{path.as_posix()}{_table(loc)}: {detail['ctx']['error']}"
    if kind == "literal_error" and loc[-1] == "schema":
        return _("{where}: schema {schema!r} is not supported (expected {expected})").format(
            where=path.as_posix(), schema=detail["input"], expected=SCHEMA)
    shown = type(detail["input"]).__name__
    return _("{where}: {key!r} has the wrong type ({shown}): {problem}").format(
        where=path.as_posix() + _table(loc[:-1]), key=loc[-1], shown=shown, problem=detail["msg"].lower())


def _table(loc: tuple[str | int, ...]) -> str:
    """The TOML header of the table at ``loc``: ``[text.en]``, ``[[source_facts]] #2``; empty at the top."""
    header, names = "", list[str]()
    for part in loc:
        if isinstance(part, int):
            header, names = f"{header} [[{'.'.join(names)}]] #{part + 1}", []
        else:
            names.append(part)
    return f"{header} [{'.'.join(names)}]" if names else header


def _keys(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """The keys the table at ``loc`` (inside ``model``) may hold."""
    annotation: Any = model
    for part in loc:
        annotation = _inner(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = next(f for name, f in annotation.model_fields.items() if (f.alias or name) == part)
            annotation = field.annotation
        elif get_origin(annotation) in (list, dict):
            annotation = get_args(annotation)[-1]
    annotation = _inner(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [field.alias or name for name, field in annotation.model_fields.items()]
    return []


def _inner(annotation: Any) -> Any:
    """``X`` of ``X | None``."""
    if get_origin(annotation) in (Union, types.UnionType):
        return next(arg for arg in get_args(annotation) if arg is not type(None))
    return annotation
