"""The stage registry: one source per stage, read by every tool.

Each stage lives in ``course/stages/NN-slug/`` with ``stage.toml`` (facts and text keyed by language)
and ``demo.py`` (the worked demonstration cells). ``course/course.toml`` holds course-wide facts.
Nothing else restates these facts; notebooks, fault contracts and the page are generated from here.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from forgelab.core.i18n import _, active
from forgelab import __version__

SCHEMA = 1


class RegistryError(ValueError):
    """A stage source is malformed; the message names the file and the key."""


@dataclass(frozen=True)
class Prediction:
    question: str
    options: tuple[str, ...]
    answer: int
    rationale: str


@dataclass(frozen=True)
class StageText:
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
    steps: tuple[str, ...]
    hints: tuple[str, ...]
    done_when: tuple[str, ...]
    mastery: tuple[str, ...]
    prediction: Prediction
    fault_story: str
    fault_diagnosis: tuple[str, ...]
    fault_fix_principle: str
    transfer_scenario: str
    transfer_changed_condition: str
    transfer_task: str
    transfer_criteria: tuple[str, ...]
    design_question: str
    design_rubric: tuple[str, ...]
    # what the stage takes from the curriculum and where it departs from it, with the reason (optional)
    from_the_sources: str = ""
    docstrings: Docstrings | None = None  # another edition's words for the docstrings learners read in code


def edition_notebook(name: str, language: str) -> str:
    """Where one edition's copy of a notebook lives: English in ``notebooks/``, others in ``notebooks/<lang>/``."""
    return f"notebooks/{name}" if language == "en" else f"notebooks/{language}/{name}"


@dataclass(frozen=True)
class Docstrings:
    """The docstrings of the starter module and the transfer starter in one edition (English: the files).

    ``forgelab release --lang zh`` ships the starters with these in place of the English ones.
    """

    starter: str  # the module docstring of forge/<module>.py
    functions: dict[str, str]  # function (or Class.method) name → its docstring
    transfer: str  # the module docstring of transfer/test_NN_*.py


@dataclass(frozen=True)
class FaultContract:
    fault_file: str  # the stage's module: the lab holds a broken copy of it
    target_test: str
    symptom: str


SOURCE_FACT_KINDS = ("code", "constant", "name")


@dataclass(frozen=True)
class SourceFact:
    """One fact a stage takes from the curriculum, under the curriculum's own name (``[[source_facts]]``).

    ``source`` is a curriculum file listed in ``course.toml`` and ``section`` where in it the fact
    is. ``kind`` says how :mod:`forgelab.authoring.sourcefacts` finds ``name`` in the stage's module: ``code`` —
    a string the reference module uses (a reason code, a key, a tag); ``constant`` — a module-level
    name whose value is ``value`` (``NAME.field``: a keyword of the call that builds it); ``name`` — a
    function, class, ``function.parameter`` or ``Class.field`` (with ``value``: its default).
    ``says`` is the source's own term where the code spells the fact otherwise (a formula letter).
    """

    source: str
    section: str
    kind: str
    name: str
    value: object = None
    says: str = ""


@dataclass(frozen=True)
class EquivalentMutant:
    """A mutant of the reference module that no test can kill: no observable behaviour differs.

    ``where`` is the mutation tool's name for it (``benchmarks/mutation.py`` explains the format),
    ``why`` one line on why nothing observable changes. Listed in ``[mutation] equivalent``.
    """

    where: str
    why: str


@dataclass(frozen=True)
class Stage:
    """One stage. Its facts come from ``stage.toml``; every path follows from number, slug and module.

    The layout (all paths relative to the workbook root; those under ``labs/`` and ``evidence/`` to the
    workspace) is defined here and nowhere else: tools ask a stage for its paths, they never build them.
    """

    number: str
    slug: str
    module: str
    scenario: str
    builds_on: tuple[str, ...]
    required_tests: tuple[str, ...]
    fault: FaultContract
    transfer_scenario: str
    source_dir: Path
    texts: dict[str, StageText] = field(repr=False)
    module_id: str = "prompt-context-output"
    equivalent_mutants: tuple[EquivalentMutant, ...] = ()
    # known-wrong variants (mutant names in mutants.toml) a transfer test must fail on, besides the fault variant
    transfer_known_wrong: tuple[str, ...] = ()
    source_facts: tuple[SourceFact, ...] = ()
    # keys another edition lacks (shown in English there; `forgelab build --check` names them)
    untranslated: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- names
    @property
    def key(self) -> str:
        return f"{self.number}-{self.slug}"

    @property
    def experiment_id(self) -> str:
        return f"{self.module_id}-{self.key}"

    @property
    def _snake(self) -> str:
        return f"{self.number}_{self.slug.replace('-', '_')}"

    @property
    def fault_target_nodeid(self) -> str:
        return f"{self.test_file}::{self.fault.target_test}"

    # ---------------------------------------------------------------- what learners receive
    @property
    def test_file(self) -> str:
        return f"tests/stages/test_{self._snake}.py"

    @property
    def transfer_file(self) -> str:
        return f"transfer/test_{self._snake}.py"

    @property
    def notebook(self) -> str:
        """The English notebook (graded replays and nbval use it); :meth:`notebook_in` for an edition."""
        return f"notebooks/{self.key}.ipynb"

    def notebook_in(self, language: str) -> str:
        """``notebooks/NN-slug.ipynb`` in English, ``notebooks/<language>/NN-slug.ipynb`` in another edition."""
        return edition_notebook(f"{self.key}.ipynb", language)

    @property
    def failure_lab(self) -> str:
        return f"failure_labs/{self.key}"

    @property
    def fault_variant(self) -> str:
        """The broken module the fault lab starts from (generated from the reference by ``forgelab build``)."""
        return f"{self.failure_lab}/{self.module}"

    @property
    def fault_contract_file(self) -> str:
        return f"{self.failure_lab}/fixtures/failure.json"

    # ---------------------------------------------------------------- written by the tools (workspace)
    @property
    def evidence_dir(self) -> str:
        return f"evidence/{self.module_id}/{self.key}"

    @property
    def evidence_file(self) -> str:
        return f"{self.evidence_dir}/verification.json"

    @property
    def design_answer_file(self) -> str:
        return f"{self.evidence_dir}/design-answer.md"

    @property
    def lab_dir(self) -> str:
        return f"labs/{self.key}"

    @property
    def lab_module(self) -> str:
        return f"{self.lab_dir}/{self.module}"

    # ---------------------------------------------------------------- the course's own material
    @property
    def solution_module(self) -> str:
        return f"solutions/{self.module}"

    @property
    def reference_transfer(self) -> str:
        return f"solutions/{self.transfer_file}"

    @property
    def reference_answer(self) -> str:
        return f"solutions/answers/{self.key}.md"

    @property
    def instructor_checks(self) -> str:
        """A glob, relative to the root, of the instructor's hidden checks for this stage."""
        return f"instructor/checks/test_{self.number}_*.py"

    @property
    def mutants_file(self) -> Path:
        return self.source_dir / "mutants.toml"

    def text(self, language: str | None = None) -> StageText:
        """The stage's text in ``language`` (default: the edition the tools speak now), else English."""
        chosen = language or active()
        return self.texts[chosen] if chosen in self.texts else self.texts["en"]

    def demo_file(self, language: str = "en") -> Path:
        localized = self.source_dir / f"demo.{language}.py"
        return localized if localized.is_file() else self.source_dir / "demo.py"

    def source_files(self) -> list[Path]:
        return sorted(path for path in self.source_dir.iterdir() if path.is_file())


@dataclass(frozen=True)
class Scenario:
    id: str
    name: str
    input: str


@dataclass(frozen=True)
class Course:
    root: Path
    name: str
    module_id: str
    version: str
    languages: tuple[str, ...]
    texts: dict[str, dict[str, str]]
    scenarios: dict[str, dict[str, Scenario]]
    stages: tuple[Stage, ...]
    curriculum: tuple[str, ...] = ()  # the curriculum files the stages' source facts cite

    @cached_property
    def by_number(self) -> dict[str, Stage]:
        return {stage.number: stage for stage in self.stages}

    def stage(self, selector: str) -> Stage:
        """Find a stage by number (``1``, ``01``) or key (``01-instruction-hierarchy``)."""
        wanted = selector.strip()
        number = wanted.split("-", 1)[0]
        if number.isdigit():
            number = number.zfill(2)
            if number in self.by_number:
                return self.by_number[number]
        valid = ", ".join(f"{s.number} ({s.slug})" for s in self.stages)
        raise RegistryError(_("unknown stage {selector!r}: expected one of {valid}").format(selector=selector, valid=valid))

    def select(self, selectors: list[str]) -> list[Stage]:
        """The stages several words name, in course order: ``01 03``, a range ``01-03`` (or ``01..03``), a list
        ``01,03``, a key ``01-instruction-hierarchy``, or ``all``."""
        chosen: set[str] = set()
        for word in selectors:
            for part in (piece.strip() for piece in word.split(",")):
                if not part:
                    continue
                if part.lower() == "all":
                    chosen.update(stage.number for stage in self.stages)
                    continue
                ends = part.split("..") if ".." in part else part.split("-")
                if len(ends) == 2 and all(end.strip().isdigit() for end in ends):
                    low, high = (self.stage(end).number for end in ends)
                    if low > high:
                        raise RegistryError(_("the stage range {range!r} runs backwards: write {high}-{low}").format(
                            range=part, high=high, low=low))
                    chosen.update(stage.number for stage in self.stages if low <= stage.number <= high)
                else:
                    chosen.add(self.stage(part).number)
        if not chosen:
            raise RegistryError(_("no stage given: name one (01), several (01 02), a range (01-03) or all"))
        return [stage for stage in self.stages if stage.number in chosen]

    def scenario(self, scenario_id: str, language: str | None = None) -> Scenario:
        options = self.scenarios[scenario_id]
        return options.get(language or active()) or options["en"]

    def text(self, key: str, language: str | None = None) -> str:
        return self.texts.get(language or active(), self.texts["en"]).get(key) or self.texts["en"][key]


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise RegistryError(f"missing stage source {path}") from None
    except tomllib.TOMLDecodeError as error:
        raise RegistryError(f"{path}: not valid TOML ({error})") from None


class _Fields:
    """Typed access to one TOML table that names the file and key in every error."""

    def __init__(self, data: dict[str, Any], where: str) -> None:
        self.data, self.where = data, where

    def _get(self, key: str, kind: type | tuple[type, ...]) -> Any:
        if key not in self.data:
            raise RegistryError(f"{self.where}: missing key {key!r}")
        value = self.data[key]
        if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
            raise RegistryError(f"{self.where}: {key!r} has the wrong type ({type(value).__name__})")
        return value

    def text(self, key: str) -> str:
        return str(self._get(key, str)).strip()

    def integer(self, key: str) -> int:
        return int(self._get(key, int))

    def texts(self, key: str) -> tuple[str, ...]:
        items = self._get(key, list)
        if not all(isinstance(item, str) for item in items):
            raise RegistryError(f"{self.where}: {key!r} must be a list of strings")
        return tuple(item.strip() for item in items)

    def table(self, key: str) -> "_Fields":
        return _Fields(self._get(key, dict), f"{self.where} [{key}]")


def _missing_keys(english: dict[str, Any], edition: dict[str, Any], prefix: str = "") -> tuple[str, ...]:
    """Keys of the English text table (dotted for sub-tables) that another edition lacks; docstrings aside."""
    missing: list[str] = []
    for key, value in english.items():
        if key == "docstrings" and not prefix:
            continue
        if key not in edition:
            missing.append(prefix + key)
        elif isinstance(value, dict) and isinstance(edition[key], dict):
            missing += _missing_keys(value, edition[key], f"{prefix}{key}.")
    return tuple(missing)


def _over(english: dict[str, Any], edition: dict[str, Any]) -> dict[str, Any]:
    """The edition's table with every key it lacks taken from English (sub-tables merged the same way)."""
    merged = dict(english)
    merged.pop("docstrings", None)
    for key, value in edition.items():
        merged[key] = _over(english[key], value) if isinstance(value, dict) and isinstance(english.get(key), dict) \
            and key != "docstrings" else value
    return merged


def _stage_text(fields: _Fields) -> StageText:
    prediction = fields.table("prediction")
    fault = fields.table("fault")
    transfer = fields.table("transfer")
    design = fields.table("design")
    options = prediction.texts("options")
    answer = prediction.integer("answer")
    if not 0 <= answer < len(options):
        raise RegistryError(f"{prediction.where}: answer {answer} is not an index of options (0..{len(options) - 1})")
    return StageText(
        title=fields.text("title"),
        capability=fields.text("capability"),
        problem_title=fields.text("problem_title"),
        problem=fields.text("problem"),
        what_it_is=fields.text("what_it_is"),
        what_it_is_not=fields.text("what_it_is_not"),
        relations=fields.text("relations"),
        boundary_decision=fields.text("boundary_decision"),
        demo_goal=fields.text("demo_goal"),
        exercise=fields.text("exercise"),
        steps=fields.texts("steps"),
        hints=fields.texts("hints"),
        done_when=fields.texts("done_when"),
        mastery=fields.texts("mastery"),
        prediction=Prediction(prediction.text("question"), options, answer, prediction.text("rationale")),
        fault_story=fault.text("story"),
        fault_diagnosis=fault.texts("diagnosis"),
        fault_fix_principle=fault.text("fix_principle"),
        transfer_scenario=transfer.text("scenario"),
        transfer_changed_condition=transfer.text("changed_condition"),
        transfer_task=transfer.text("task"),
        transfer_criteria=transfer.texts("criteria"),
        design_question=design.text("question"),
        design_rubric=design.texts("rubric"),
        from_the_sources=fields.text("from_the_sources") if "from_the_sources" in fields.data else "",
        docstrings=_docstrings(fields) if "docstrings" in fields.data else None,
    )


def _docstrings(fields: _Fields) -> Docstrings:
    table = fields.table("docstrings")
    functions = table._get("functions", dict) if "functions" in table.data else {}
    if not all(isinstance(key, str) and isinstance(value, str) for key, value in functions.items()):
        raise RegistryError(f"{table.where}: 'functions' must map function names to their docstrings")
    return Docstrings(table.text("starter"), {key: value.strip() for key, value in functions.items()},
                      table.text("transfer"))


def _equivalent_mutants(top: _Fields) -> tuple[EquivalentMutant, ...]:
    """The optional ``[mutation]`` table: ``equivalent = [{ where = "...", why = "..." }, ...]``."""
    if "mutation" not in top.data:
        return ()
    mutation = top.table("mutation")
    unknown = sorted(set(mutation.data) - {"equivalent"})
    if unknown:
        raise RegistryError(f"{mutation.where}: unknown key {unknown[0]!r}: expected only 'equivalent'")
    entries = mutation._get("equivalent", list)
    result: list[EquivalentMutant] = []
    for index, entry in enumerate(entries):
        where = f"{mutation.where} equivalent[{index}]"
        if not isinstance(entry, dict) or set(entry) != {"where", "why"}:
            raise RegistryError(f"{where}: each entry must be a table with exactly the keys 'where' and 'why'")
        fields = _Fields(entry, where)
        item = EquivalentMutant(fields.text("where"), fields.text("why"))
        if not item.where or not item.why:
            raise RegistryError(f"{where}: 'where' and 'why' must not be empty")
        result.append(item)
    names = [item.where for item in result]
    if len(set(names)) != len(names):
        duplicate = sorted(name for name in names if names.count(name) > 1)[0]
        raise RegistryError(f"{mutation.where}: {duplicate!r} is listed twice in equivalent: keep one entry")
    return tuple(result)


def _source_facts(top: _Fields, curriculum: frozenset[str]) -> tuple[SourceFact, ...]:
    """The optional ``[[source_facts]]`` tables: ``source``, ``section`` and one of ``code``, ``constant``
    (with ``value``) or ``name`` (``value`` optional), plus an optional ``says``."""
    if "source_facts" not in top.data:
        return ()
    entries = top._get("source_facts", list)
    facts: list[SourceFact] = []
    for index, entry in enumerate(entries):
        where = f"{top.where} [[source_facts]] #{index + 1}"
        if not isinstance(entry, dict):
            raise RegistryError(f"{where}: each entry must be a table")
        fields = _Fields(entry, where)
        unknown = sorted(set(entry) - {"source", "section", "says", "value", *SOURCE_FACT_KINDS})
        kinds = [kind for kind in SOURCE_FACT_KINDS if kind in entry]
        if unknown:
            raise RegistryError(f"{where}: unknown key {unknown[0]!r}: expected source, section, one of "
                                f"{', '.join(SOURCE_FACT_KINDS)}, and optionally value and says")
        if len(kinds) != 1:
            raise RegistryError(f"{where}: give exactly one of {', '.join(SOURCE_FACT_KINDS)} (got {len(kinds)})")
        kind = kinds[0]
        if kind == "constant" and "value" not in entry:
            raise RegistryError(f"{where}: a constant needs its 'value'")
        if kind == "code" and "value" in entry:
            raise RegistryError(f"{where}: 'value' goes with 'constant' (or, for a default, with 'name'), not with 'code'")
        source = fields.text("source")
        if curriculum and source not in curriculum:
            raise RegistryError(f"{where}: unknown curriculum file {source!r}: expected one of "
                                f"{', '.join(sorted(curriculum))} (course.toml 'curriculum')")
        fact = SourceFact(source, fields.text("section"), kind, fields.text(kind), entry.get("value"),
                          fields.text("says") if "says" in entry else "")
        if not fact.section or not fact.name:
            raise RegistryError(f"{where}: 'section' and {kind!r} must not be empty")
        facts.append(fact)
    return tuple(facts)


def load_stage(folder: Path, module_id: str, scenarios: set[str], curriculum: frozenset[str] = frozenset()) -> Stage:
    source = folder / "stage.toml"
    data = _read(source)
    top = _Fields(data, source.as_posix())
    if top.integer("schema") != SCHEMA:
        raise RegistryError(f"{source}: schema {data['schema']} is not supported (expected {SCHEMA})")
    number, slug = top.text("number"), top.text("slug")
    if folder.name != f"{number}-{slug}":
        raise RegistryError(f"{source}: folder name {folder.name!r} must be '{number}-{slug}'")
    for table, key in ((data, "test_file"), (data.get("transfer", {}), "test_file"), (data.get("fault", {}), "fault_file")):
        if isinstance(table, dict) and key in table:
            raise RegistryError(f"{source}: {key!r} is derived from the stage's number, slug and module — remove it")
    fault = top.table("fault")
    transfer = top.table("transfer")
    scenario = top.text("scenario")
    for name in (scenario, transfer.text("scenario")):
        if name not in scenarios:
            raise RegistryError(f"{source}: unknown scenario {name!r}: expected one of {', '.join(sorted(scenarios))}")
    texts_table = top.table("text")
    if "en" not in texts_table.data:
        raise RegistryError(f"{source}: [text.en] is required")
    english = texts_table.table("en")
    texts = {"en": _stage_text(english)}
    untranslated: dict[str, tuple[str, ...]] = {}
    for lang in texts_table.data:
        if lang == "en":
            continue
        edition = texts_table.table(lang)
        missing = _missing_keys(english.data, edition.data)
        if missing:
            untranslated[lang] = missing  # an incomplete edition shows English there rather than break the tools
        texts[lang] = _stage_text(_Fields(_over(english.data, edition.data), edition.where))
    required = top.texts("required_tests")
    if len(set(required)) != len(required) or not required:
        raise RegistryError(f"{source}: required_tests must be a non-empty list without duplicates")
    module = top.text("module")
    contract = FaultContract(module, fault.text("target_test"), fault.text("symptom"))
    if contract.target_test not in required:
        raise RegistryError(f"{source}: fault target_test {contract.target_test!r} is not in required_tests")
    return Stage(
        number=number,
        slug=slug,
        module=module,
        scenario=scenario,
        builds_on=top.texts("builds_on"),
        required_tests=required,
        fault=contract,
        transfer_scenario=transfer.text("scenario"),
        source_dir=folder,
        texts=texts,
        module_id=module_id,
        equivalent_mutants=_equivalent_mutants(top),
        transfer_known_wrong=transfer.texts("known_wrong") if "known_wrong" in transfer.data else (),
        source_facts=_source_facts(top, curriculum),
        untranslated=untranslated,
    )


def load_course(root: Path) -> Course:
    course_file = root / "course" / "course.toml"
    data = _read(course_file)
    top = _Fields(data, course_file.as_posix())
    module_id = top.text("module_id")
    scenarios: dict[str, dict[str, Scenario]] = {}
    for scenario_id, by_lang in top.table("scenarios").data.items():
        scenarios[scenario_id] = {
            lang: Scenario(scenario_id, str(values["name"]), str(values["input"])) for lang, values in by_lang.items()
        }
    curriculum = top.texts("curriculum") if "curriculum" in data else ()
    stage_dirs = sorted(p for p in (root / "course" / "stages").iterdir() if (p / "stage.toml").is_file())
    stages = tuple(load_stage(folder, module_id, set(scenarios), frozenset(curriculum)) for folder in stage_dirs)
    numbers = [stage.number for stage in stages]
    if len(set(numbers)) != len(numbers):
        raise RegistryError(f"{root / 'course' / 'stages'}: two stages share a number")
    version = _project_version(root)
    texts = {lang: {k: str(v).strip() for k, v in table.items()} for lang, table in top.table("text").data.items()}
    return Course(
        root=root,
        name=top.text("name"),
        module_id=module_id,
        version=version,
        languages=top.texts("languages"),
        texts=texts,
        scenarios=scenarios,
        stages=stages,
        curriculum=curriculum,
    )


def _project_version(root: Path) -> str:
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        with pyproject.open("rb") as handle:
            return str(tomllib.load(handle).get("project", {}).get("version", "0"))

    return __version__
