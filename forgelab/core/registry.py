"""The stage registry: one source per stage, read by every tool.

Each stage lives in ``course/stages/NN-slug/`` with ``stage.toml`` (facts and text keyed by language)
and ``demo.py`` (the worked demonstration cells). ``course/course.toml`` holds course-wide facts.
Nothing else restates these facts; notebooks, fault contracts and the page are generated from here.

Reading the course validates every file with Pydantic (:mod:`forgelab.core.course_files`), a fifth of a second of a
cold ``forgelab check``. The command line reads it through a cache (:func:`load_course` with ``cache``): the course
as it was read, kept in the workspace's state folder under a key that is a hash of every byte the course is read
from — ``course.toml``, each ``stage.toml`` and its folder's name, ``pyproject.toml`` — and of the code that reads
them (this module, the models, the Pydantic and Python versions). A changed, added or removed file changes the key,
and the course is read and validated again; a cache is written only after a full read, and only when the course
rebuilt from it equals that read. A stage's texts (and the course's scenarios) from the cache are validated again
by their models the first time a tool asks for them, so the command hands the judge its job before Pydantic loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from forgelab import __version__
from forgelab.core.errors import CourseFileError as CourseFileError
from forgelab.core.errors import RegistryError as RegistryError
from forgelab.core.i18n import _, active

if TYPE_CHECKING:
    from forgelab.core.course_files import ScenarioText, StageTexts

CACHE_FORMAT = 1  # what a course cache file holds (see _snapshot): a new format is a new key


def edition_notebook(name: str, language: str) -> str:
    """Where one edition's copy of a notebook lives: English in ``notebooks/``, others in ``notebooks/<lang>/``."""
    return f"notebooks/{name}" if language == "en" else f"notebooks/{language}/{name}"


@dataclass(frozen=True)
class FaultContract:
    fault_file: str  # the stage's module: the lab holds a broken copy of it
    target_test: str
    symptom: str


@dataclass(frozen=True)
class EquivalentMutant:
    """A mutant no test can kill, and why (``[mutation] equivalent``)."""

    where: str
    why: str


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
    texts: Mapping[str, StageTexts] = field(repr=False)  # language → its [text.<language>] (English filled in)
    module_id: str = "prompt-context-output"
    equivalent_mutants: tuple[EquivalentMutant, ...] = ()  # [mutation] equivalent: mutants no test can kill
    # known-wrong variants (mutant names in mutants.toml) a transfer test must fail on, besides the fault variant
    transfer_known_wrong: tuple[str, ...] = ()
    source_facts: tuple[SourceFact, ...] = ()
    # test → the hint rungs (1 = the first of the ladder) that address it, in the ladder's order ([hint_rungs])
    hint_rungs: dict[str, tuple[int, ...]] = field(default_factory=dict)
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

    @property
    def sealed_lab(self) -> str:
        """In a learner bundle, the broken module encrypted until the stage passes (:mod:`forgelab.core.seal`)."""
        return f"{self.failure_lab}/sealed-lab.json"

    @property
    def seal_probes(self) -> str:
        """The course's probes whose answers make the sealed lab's key, relative to the root (shipped as course code)."""
        return f"course/stages/{self.source_dir.name}/seal.py"

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

    @property
    def regression_test(self) -> str:
        """The learner's regression test of the lab's defect: it fails on the broken copy, passes on a repair."""
        return f"{self.lab_dir}/test_diagnosis.py"

    # ---------------------------------------------------------------- the course's own material
    @property
    def solution_module(self) -> str:
        return f"solutions/{self.module}"

    @property
    def reference_transfer(self) -> str:
        return f"solutions/{self.transfer_file}"

    @property
    def reference_regression_test(self) -> str:
        """The course's example regression test of the lab (never shipped: it names the defect)."""
        return f"solutions/regression/{self.key}/test_diagnosis.py"

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

    def text(self, language: str | None = None) -> StageTexts:
        """The stage's text in ``language`` (default: the edition the tools speak now), else English."""
        chosen = language or active()
        return self.texts[chosen] if chosen in self.texts else self.texts["en"]

    @property
    def demo_file(self) -> Path:
        """The worked demonstration, both editions in one file (:func:`forgelab.core.demo.edition` picks one)."""
        return self.source_dir / "demo.py"

    def source_files(self) -> list[Path]:
        return sorted(path for path in self.source_dir.iterdir() if path.is_file())


@dataclass(frozen=True)
class Course:
    root: Path
    name: str
    module_id: str
    version: str
    languages: tuple[str, ...]
    texts: dict[str, dict[str, str]]
    scenarios: Mapping[str, Mapping[str, ScenarioText]]  # scenario id → language → its name and input
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

    def scenario(self, scenario_id: str, language: str | None = None) -> ScenarioText:
        options = self.scenarios[scenario_id]
        return options.get(language or active()) or options["en"]

    def text(self, key: str, language: str | None = None) -> str:
        return self.texts.get(language or active(), self.texts["en"]).get(key) or self.texts["en"][key]


# free-form: raw TOML tables of two editions, before the merged one is validated
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


# free-form: raw TOML tables of two editions, before the merged one is validated
def _over(english: dict[str, Any], edition: dict[str, Any]) -> dict[str, Any]:
    """The edition's table with every key it lacks taken from English (sub-tables merged the same way)."""
    merged = dict(english)
    merged.pop("docstrings", None)
    for key, value in edition.items():
        merged[key] = _over(english[key], value) if isinstance(value, dict) and isinstance(english.get(key), dict) \
            and key != "docstrings" else value
    return merged


def load_stage(folder: Path, module_id: str, scenarios: set[str], curriculum: frozenset[str] = frozenset(),
               content: bytes | None = None) -> Stage:
    """The stage in ``folder``, from its ``stage.toml`` (or ``content``, that file's bytes, read already)."""
    # lazy: start-up speed — the models (and Pydantic) load with the course, not with `forgelab --help`
    from forgelab.core import course_files as files

    source = folder / "stage.toml"
    top = files.read(source, files.StageFile) if content is None else files.parse(source, content, files.StageFile)
    if folder.name != f"{top.number}-{top.slug}":
        raise CourseFileError(_("{source}: folder name {folder!r} must be '{expected}'").format(
            source=source, folder=folder.name, expected=f"{top.number}-{top.slug}"))
    for name in (top.scenario, top.transfer.scenario):
        if name not in scenarios:
            raise CourseFileError(_("{source}: unknown scenario {name!r}: expected one of {scenarios}").format(
                source=source, name=name, scenarios=_(", ").join(sorted(scenarios))))
    english = top.text["en"]
    texts = {"en": files.validate(english, files.StageTexts, source, ("text", "en"))}
    untranslated: dict[str, tuple[str, ...]] = {}
    for lang, edition in top.text.items():
        if lang == "en":
            continue
        missing = _missing_keys(english, edition)
        if missing:
            untranslated[lang] = missing  # an incomplete edition shows English there rather than break the tools
        texts[lang] = files.validate(_over(english, edition), files.StageTexts, source, ("text", lang))
    hint_rungs = check_hint_rungs(source, top.number, top.hint_rungs, tuple(top.required_tests), texts)
    for index, entry in enumerate(top.source_facts, 1):
        if curriculum and entry.source not in curriculum:
            raise CourseFileError(_("{source} [[source_facts]] #{index}: unknown curriculum file {file!r}: expected one of "
                                  "{files} (course.toml 'curriculum')").format(source=source, index=index, file=entry.source,
                                                                              files=_(", ").join(sorted(curriculum))))
    return Stage(
        number=top.number,
        slug=top.slug,
        module=top.module,
        scenario=top.scenario,
        builds_on=tuple(top.builds_on),
        required_tests=tuple(top.required_tests),
        fault=FaultContract(top.module, top.fault.target_test, top.fault.symptom),
        transfer_scenario=top.transfer.scenario,
        source_dir=folder,
        texts=texts,
        module_id=module_id,
        equivalent_mutants=tuple(EquivalentMutant(entry.where, entry.why)
                                 for entry in (top.mutation.equivalent if top.mutation else ())),
        transfer_known_wrong=tuple(top.transfer.known_wrong),
        source_facts=tuple(SourceFact(entry.source, entry.section, entry.kind, str(getattr(entry, entry.kind)),
                                      entry.value, entry.says) for entry in top.source_facts),
        hint_rungs=hint_rungs,
        untranslated=untranslated,
    )


def check_hint_rungs(source: Path, number: str, declared: dict[str, list[int]], tests: tuple[str, ...],
                     texts: Mapping[str, StageTexts]) -> dict[str, tuple[int, ...]]:
    """``[hint_rungs]`` of one stage.toml, checked: every key one of the stage's tests, every value rungs of the
    hint ladder (numbered from 1, as many in every edition). :class:`RegistryError` names the file, the key and
    what to do."""
    import difflib

    where = f"{source.as_posix()} [hint_rungs]"
    total = len(texts["en"].hints)
    if declared:
        for lang, text in texts.items():
            if len(text.hints) != total:
                raise CourseFileError(_("{source} [text.{language}] hints: {count} rungs, but [text.en] has {total} — "
                                      "[hint_rungs] numbers the rungs of every edition alike: give each edition the same "
                                      "rungs in the same order").format(source=source.as_posix(), language=lang,
                                                                        count=len(text.hints), total=total))
    checked: dict[str, tuple[int, ...]] = {}
    for name, rungs in declared.items():
        if name not in tests:
            close = difflib.get_close_matches(name, tests, n=1, cutoff=0.6)
            advice = _("did you mean {key!r}? ").format(key=close[0]) if close else ""  # the space: before "each key"
            raise CourseFileError(_("{where}: key {name!r} names no test of stage {number} — {advice}each key must be one "
                                  "of the stage's required_tests (the tests of its test file): rename the key or remove "
                                  "its line").format(where=where, name=name, number=number, advice=advice))
        wrong = [rung for rung in rungs if not 1 <= rung <= total]
        if not rungs or wrong or len(set(rungs)) != len(rungs):
            problem = (_("rung {rung} does not exist (the ladder has rungs 1–{total})").format(rung=wrong[0], total=total)
                       if wrong else _("no rung is given") if not rungs else _("a rung is listed twice"))
            raise CourseFileError(_("{where}: key {name!r}: {problem} — list the numbers of the hints in [text.en] hints "
                                  "(1 = the first) that help with this test, each once").format(where=where, name=name,
                                                                                                 problem=problem))
        checked[name] = tuple(sorted(rungs))
    return checked


def load_course(root: Path, cache: Path | None = None) -> Course:
    """The course of the workbook at ``root``, every file validated. With ``cache`` (a file in the workspace's state
    folder), a course read before from exactly the same bytes by the same code is taken from there instead, and a
    course read anew is written there (see the module's docstring)."""
    sources = _Sources.read(root)
    key = sources.key() if cache is not None else None
    if cache is not None and key is not None:
        cached = _from_cache(cache, key, root)
        if cached is not None:
            return cached
    course = _load(root, sources)
    if cache is not None and key is not None:
        _write_cache(cache, key, course)
    return course


def _load(root: Path, sources: _Sources) -> Course:
    # lazy: start-up speed — the models (and Pydantic) load with the course, not with `forgelab --help`
    from forgelab.core import course_files as files

    top = files.parse(sources.course_file, sources.course, files.CourseFile)
    if sources.stages is None:  # no stages folder: said after a problem in course.toml, as always
        (root / "course" / "stages").iterdir()
    stages = tuple(load_stage(folder, top.module_id, set(top.scenarios), frozenset(top.curriculum), content)
                   for folder, content in sources.stages or ())
    numbers = [stage.number for stage in stages]
    if len(set(numbers)) != len(numbers):
        raise CourseFileError(_("{folder}: two stages share a number").format(folder=root / "course" / "stages"))
    return Course(
        root=root,
        name=top.name,
        module_id=top.module_id,
        version=_project_version(sources.pyproject),
        languages=tuple(top.languages),
        texts={lang: dict(table) for lang, table in top.text.items()},
        scenarios=top.scenarios,
        stages=stages,
        curriculum=tuple(top.curriculum),
    )


def _read_source(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CourseFileError(_("missing course source {path}").format(path=path)) from None


@dataclass(frozen=True)
class _Sources:
    """Every byte a course is read from, each file read once: what is validated is what the cache is keyed by."""

    course_file: Path
    course: bytes
    stages: tuple[tuple[Path, bytes], ...] | None  # each stage's folder and its stage.toml, in order (None: no folder)
    pyproject: bytes | None

    @classmethod
    def read(cls, root: Path) -> _Sources:
        course_file = root / "course" / "course.toml"
        course = _read_source(course_file)
        try:
            folders = sorted(p for p in (root / "course" / "stages").iterdir() if (p / "stage.toml").is_file())
        except FileNotFoundError:
            stages = None
        else:
            stages = tuple((folder, _read_source(folder / "stage.toml")) for folder in folders)
        pyproject = root / "pyproject.toml"
        return cls(course_file, course, stages, pyproject.read_bytes() if pyproject.is_file() else None)

    def key(self) -> str | None:
        """A hash of these bytes and of everything else a read of them depends on; None where the code that reads
        them cannot be found (then nothing is cached)."""
        if self.stages is None:
            return None
        digest = hashlib.sha256()

        def add(part: bytes) -> None:
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)

        try:
            for part in _reader_sources():
                add(part)
        except OSError:
            return None
        for text in (str(CACHE_FORMAT), sys.version, __version__):
            add(text.encode())
        add(self.course)
        add(b"-" if self.pyproject is None else b"+" + self.pyproject)
        for folder, content in self.stages:
            add(folder.name.encode("utf-8", "surrogateescape"))
            add(content)
        return digest.hexdigest()


def _reader_sources() -> Iterator[bytes]:
    """The source of the code that turns the files into a course: this module, the models, and Pydantic's version
    (found without importing Pydantic)."""
    import importlib.util  # lazy: only a cached read needs it

    here = Path(__file__)
    yield here.read_bytes()
    yield here.with_name("course_files.py").read_bytes()
    spec = importlib.util.find_spec("pydantic")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("pydantic")
    yield (Path(spec.origin).parent / "version.py").read_bytes()


Value = TypeVar("Value")


class _Checked(Mapping[str, Value]):
    """A mapping whose values are built (validated by their model) the first time each is asked for."""

    # free-form: the raw TOML table, built into typed values on first use
    def __init__(self, raw: dict[str, Any], build: Callable[[str, Any], Value]) -> None:
        self._raw, self._build, self._built = raw, build, dict[str, Value]()

    def __getitem__(self, key: str) -> Value:
        if key not in self._built:
            self._built[key] = self._build(key, self._raw[key])
        return self._built[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self._raw)!r})"


class _StageEntry(TypedDict):
    """One stage in the course cache file (JSON; a TypedDict so that reading the cache loads no Pydantic)."""

    folder: str
    number: str
    slug: str
    module: str
    scenario: str
    builds_on: list[str]
    required_tests: list[str]
    fault: list[str]  # FaultContract's fields in order
    transfer_scenario: str
    module_id: str
    texts: dict[str, dict[str, object]]  # language → the StageTexts table as written, validated when asked for
    equivalent_mutants: list[list[str]]  # [where, why]
    transfer_known_wrong: list[str]
    source_facts: list[tuple[str, str, str, str, object, str]]  # SourceFact's fields in order (a JSON array)
    hint_rungs: dict[str, list[int]]
    untranslated: dict[str, list[str]]


class _Snapshot(TypedDict):
    """The course in its cache file; :func:`_rebuild` turns it back into the course."""

    name: str
    module_id: str
    version: str
    languages: list[str]
    texts: dict[str, dict[str, str]]
    curriculum: list[str]
    scenarios: dict[str, dict[str, dict[str, object]]]  # id → language → the ScenarioText table, validated when asked for
    stages: list[_StageEntry]


def _snapshot(course: Course) -> _Snapshot:
    """The course as JSON data (paths relative to its root); :func:`_rebuild` turns it back into the course."""
    return {
        "name": course.name, "module_id": course.module_id, "version": course.version,
        "languages": list(course.languages), "texts": course.texts, "curriculum": list(course.curriculum),
        "scenarios": {scenario: {lang: text.model_dump(exclude_unset=True) for lang, text in by_language.items()}
                      for scenario, by_language in course.scenarios.items()},
        "stages": [{
            "folder": stage.source_dir.name, "number": stage.number, "slug": stage.slug, "module": stage.module,
            "scenario": stage.scenario, "builds_on": list(stage.builds_on), "required_tests": list(stage.required_tests),
            "fault": [stage.fault.fault_file, stage.fault.target_test, stage.fault.symptom],
            "transfer_scenario": stage.transfer_scenario, "module_id": stage.module_id,
            "texts": {lang: text.model_dump(exclude_unset=True) for lang, text in stage.texts.items()},
            "equivalent_mutants": [[entry.where, entry.why] for entry in stage.equivalent_mutants],
            "transfer_known_wrong": list(stage.transfer_known_wrong),
            "source_facts": [(fact.source, fact.section, fact.kind, fact.name, fact.value, fact.says)
                             for fact in stage.source_facts],
            "hint_rungs": {test: list(rungs) for test, rungs in stage.hint_rungs.items()},
            "untranslated": {lang: list(keys) for lang, keys in stage.untranslated.items()},
        } for stage in course.stages],
    }


def _rebuild(root: Path, data: _Snapshot) -> Course:
    """The course :func:`_snapshot` made ``data`` of, at ``root``; texts and scenarios validated when asked for."""
    def scenario(scenario_id: str, by_language: dict[str, dict[str, object]]) -> dict[str, ScenarioText]:
        # lazy: the models (and Pydantic) load when a tool first asks for a scenario, after a check's hand-over
        from forgelab.core import course_files as files

        course_file = root / "course" / "course.toml"
        return {lang: files.validate(text, files.ScenarioText, course_file, ("scenarios", scenario_id, lang))
                for lang, text in by_language.items()}

    def stage(entry: _StageEntry) -> Stage:
        folder = root / "course" / "stages" / entry["folder"]

        def texts(lang: str, text: dict[str, object]) -> StageTexts:
            # lazy: as above, when a tool first asks for a stage's text
            from forgelab.core import course_files as files

            return files.validate(text, files.StageTexts, folder / "stage.toml", ("text", lang))

        return Stage(
            number=entry["number"], slug=entry["slug"], module=entry["module"], scenario=entry["scenario"],
            builds_on=tuple(entry["builds_on"]), required_tests=tuple(entry["required_tests"]),
            fault=FaultContract(*entry["fault"]), transfer_scenario=entry["transfer_scenario"], source_dir=folder,
            texts=_Checked(entry["texts"], texts), module_id=entry["module_id"],
            equivalent_mutants=tuple(EquivalentMutant(where, why) for where, why in entry["equivalent_mutants"]),
            transfer_known_wrong=tuple(entry["transfer_known_wrong"]),
            source_facts=tuple(SourceFact(*fact) for fact in entry["source_facts"]),
            hint_rungs={test: tuple(rungs) for test, rungs in entry["hint_rungs"].items()},
            untranslated={lang: tuple(keys) for lang, keys in entry["untranslated"].items()},
        )

    return Course(
        root=root, name=data["name"], module_id=data["module_id"], version=data["version"],
        languages=tuple(data["languages"]), texts=data["texts"], scenarios=_Checked(data["scenarios"], scenario),
        stages=tuple(stage(entry) for entry in data["stages"]), curriculum=tuple(data["curriculum"]),
    )


def _from_cache(cache: Path, key: str, root: Path) -> Course | None:
    """The course in ``cache`` if it was written under ``key``; None if there is none, another, or no readable one."""
    try:
        data = json.loads(cache.read_bytes())
        if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT or data.get("key") != key:
            return None
        return _rebuild(root, data["course"])
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):  # not a cache this code wrote
        return None


def _write_cache(cache: Path, key: str, course: Course) -> None:
    """Keep ``course`` (just read and validated) in ``cache`` under ``key`` — only if the course rebuilt from what is
    written equals it (a value JSON cannot hold exactly, a TOML date say, leaves the course uncached)."""
    try:
        text = json.dumps({"format": CACHE_FORMAT, "key": key, "course": _snapshot(course)}, ensure_ascii=False,
                          allow_nan=False)
    except (TypeError, ValueError):
        return
    if _rebuild(course.root, json.loads(text)["course"]) != course:
        return
    scratch = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        scratch.write_text(text, encoding="utf-8")
        os.replace(scratch, cache)  # whole or not at all, also when two commands write it at once
    except OSError:  # a workspace that cannot be written: the course is read in full next time too
        try:
            scratch.unlink(missing_ok=True)
        except OSError:
            pass


def _project_version(pyproject: bytes | None) -> str:
    if pyproject is not None:
        return str(tomllib.loads(pyproject.decode()).get("project", {}).get("version", "0"))
    return __version__
