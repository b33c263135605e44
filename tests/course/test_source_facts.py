"""Fidelity to the curriculum: every stage declares its source facts (stage.toml ``[[source_facts]]``:
curriculum file and section for each named code, constant, notice text and formula letter), and each
declared fact holds in the reference module and, where the starter gives it, in the starter. Stages
09–11 carry the names and rules of their seeds (000, 003, 004) — the reason codes, R, the notice."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from forgelab.authoring import sourcefacts
from forgelab.core.registry import RegistryError, SourceFact, load_course

ROOT = Path(__file__).resolve().parents[2]
STAGES = [stage.number for stage in load_course(ROOT).stages]
SEED_000_CODES = {"scope_mismatch", "low_confidence", "duplicate_content", "authority_loser", "conflict_loser",
                  "top_k_reached", "char_budget_exceeded", "token_budget_exceeded"}
RENAMED_CODES = {"out_of_scope", "below_min_score", "duplicate", "authority_lost", "conflict_lost", "over_top_k",
                 "over_char_budget", "over_token_budget"}


@pytest.mark.parametrize("number", STAGES)
def test_every_stage_declares_its_source_facts_and_its_code_keeps_them(course, number: str) -> None:
    stage = course.stage(number)
    assert stage.source_facts, f"{stage.key} declares no [[source_facts]] in its stage.toml"
    assert all(fact.source in course.curriculum for fact in stage.source_facts)
    assert sourcefacts.problems(course, stage) == []


def _facts(course, number: str) -> dict[str, SourceFact]:  # type: ignore[no-untyped-def]
    return {fact.name: fact for fact in course.stage(number).source_facts}


def test_stage_09_decides_with_seed_000s_reason_codes_and_tie_break(course) -> None:
    stage = course.stage("09")
    facts = _facts(course, "09")
    declared = {fact.name for fact in stage.source_facts if fact.kind == "code"}
    assert SEED_000_CODES <= declared
    assert all(facts[code].source == "000_ba3fafd02a458dec.txt" for code in SEED_000_CODES)
    assert not sourcefacts.read_module(course.root / stage.solution_module).strings & RENAMED_CODES
    assert "captured_at desc" in facts["MemoryCandidate.captured_at"].says
    assert {"MemoryPlan.context", "MemoryPlan.used_chars", "<recalled_memory>", "</memory_hit>"} <= set(facts)


def test_stage_10_names_r_the_tool_result_reserve_and_keeps_seed_003s_notice_and_configuration(course) -> None:
    facts = _facts(course, "10")
    assert facts["MEMORY_NOTICE"].value == "[System Notice] Relevant memory skipped due to token budget."
    assert facts["MEMORY_NOTICE"].source == "003_abec3952fdc74bd5.txt"
    assert facts["input_budget.tool_result_reserve"].says.startswith("R")
    assert "工具结果" in facts["input_budget.tool_result_reserve"].says
    assert (facts["SAFETY_THRESHOLD"].value, facts["MEMORY_TOP_K"].value, facts["MEMORY_SUMMARY_MAX"].value,
            facts["RECENT_MESSAGES"].value) == (0.75, 3, 3, 3)
    assert "input_budget.max_output" in facts


def test_no_course_file_still_calls_r_a_reasoning_reserve(course) -> None:
    stale = []
    for folder in ("forge", "solutions", "tests/stages", "transfer", "failure_labs", "instructor", "course", "notebooks"):
        for path in sorted((course.root / folder).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".toml", ".ipynb", ".mmd", ".svg", ".md", ".json"):
                text = path.read_text(encoding="utf-8", errors="replace")
                if re.search(r"reasoning_reserve|reasoning reserve|R [0-9 ]+: reasoning|留给推理|推理和工具", text):
                    stale.append(path.relative_to(course.root).as_posix())
    assert stale == []


MODULE = '''"""A module whose docstring mentions "docstring_only"."""
from dataclasses import dataclass

LIMIT = 3
NAMES: tuple[str, ...] = ("a", "b")
TABLE = {"x": 1}
BUILT = Settings(mode="recovery", limit=3, fixed=True, version=VERSION)


@dataclass(frozen=True)
class Item:
    """An item."""

    id: str
    trust: str = "untrusted"

    def render(self) -> str:
        return f"<item>{self.id}</item>"


def pick(items: list[Item], limit: int = 2, *, strict: bool = False) -> str:
    return "picked"
'''


def _check(tmp_path: Path, fact: SourceFact, starter: str | None = None) -> list[str]:
    (tmp_path / "reference.py").write_text(MODULE, encoding="utf-8")
    reference = sourcefacts.read_module(tmp_path / "reference.py")
    if starter is None:
        return sourcefacts.check_fact(fact, reference, None)
    (tmp_path / "starter.py").write_text(starter, encoding="utf-8")
    return sourcefacts.check_fact(fact, reference, sourcefacts.read_module(tmp_path / "starter.py"))


@pytest.mark.parametrize(("kind", "name", "value"), [
    ("code", "picked", None), ("code", "</item>", None), ("constant", "LIMIT", 3), ("constant", "NAMES", ["a", "b"]),
    ("constant", "TABLE", {"x": 1}), ("constant", "BUILT.limit", 3), ("constant", "BUILT.fixed", True),
    ("name", "pick", None), ("name", "pick.limit", 2), ("name", "pick.strict", False), ("name", "Item.trust", "untrusted"),
    ("name", "Item.render", None), ("name", "Item", None),
])
def test_a_fact_that_holds_is_accepted(tmp_path: Path, kind: str, name: str, value: object) -> None:
    assert _check(tmp_path, SourceFact("000_x.txt", "a section", kind, name, value)) == []


@pytest.mark.parametrize(("kind", "name", "value", "message"), [
    ("code", "docstring_only", None, "code 'docstring_only' (000_x.txt · a section) does not occur in the reference"),
    ("code", "pick", None, "code 'pick'"),
    ("constant", "LIMIT", 4, "reference: LIMIT is 3, but the stage declares 4 (000_x.txt · a section)"),
    ("constant", "NAMES", ["b", "a"], "reference: NAMES is ['a', 'b'], but the stage declares ['b', 'a']"),
    ("constant", "MISSING", 1, "constant MISSING (000_x.txt · a section) is not defined in the reference module"),
    ("constant", "BUILT.version", "v2", "reference: BUILT.version is not a literal"),
    ("constant", "BUILT.other", 1, "the call that builds BUILT passes no other="),
    ("constant", "LIMIT.field", 1, "LIMIT is not built by a call"),
    ("name", "pick.budget", None, "reference: pick.budget (000_x.txt · a section) is not in the module"),
    ("name", "pick.limit", 3, "reference: the default of pick.limit is not 3"),
    ("name", "Item.source", None, "reference: Item.source"),
    ("name", "choose", None, "reference: choose"),
])
def test_a_fact_that_does_not_hold_is_named(tmp_path: Path, kind: str, name: str, value: object, message: str) -> None:
    found = _check(tmp_path, SourceFact("000_x.txt", "a section", kind, name, value))
    assert len(found) == 1 and message in found[0], found


def test_the_starter_must_agree_where_it_gives_the_name(tmp_path: Path) -> None:
    starter = MODULE.replace("LIMIT = 3", "LIMIT = 5").replace("limit: int = 2", "size: int = 2")
    assert _check(tmp_path, SourceFact("000_x.txt", "s", "constant", "LIMIT", 3), starter) == [
        "starter: LIMIT is 5, but the stage declares 3 (000_x.txt · s)"]
    assert _check(tmp_path, SourceFact("000_x.txt", "s", "name", "pick.limit", None), starter) == [
        "starter: pick.limit (000_x.txt · s) is not in the module"]
    # a constant the starter leaves to the learner is not required there
    without = MODULE.replace("LIMIT = 3\n", "")
    assert _check(tmp_path, SourceFact("000_x.txt", "s", "constant", "LIMIT", 3), without) == []


def _course_copy(tmp_path: Path, repo_root: Path, facts: str) -> Path:
    shutil.copytree(repo_root / "course", tmp_path / "course")
    source = tmp_path / "course/stages/01-instruction-hierarchy/stage.toml"
    text = source.read_text(encoding="utf-8")
    start = text.index("[[source_facts]]")
    end = text.index("[text.en]")
    source.write_text(text[:start] + facts + "\n" + text[end:], encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("facts", "message"), [
    ('[[source_facts]]\nsource = "999_unknown.txt"\nsection = "s"\nname = "resolve"\n',
     "unknown curriculum file '999_unknown.txt'"),
    ('[[source_facts]]\nsource = "002_cbca18f941552e51.txt"\nsection = "s"\nname = "resolve"\ncode = "x"\n',
     "give exactly one of code, constant, name (got 2)"),
    ('[[source_facts]]\nsource = "002_cbca18f941552e51.txt"\nsection = "s"\nconstant = "RANK"\n',
     "a constant needs its 'value'"),
    ('[[source_facts]]\nsource = "002_cbca18f941552e51.txt"\nsection = "s"\ncode = "x"\nvalue = 1\n',
     "'value' goes with 'constant'"),
    ('[[source_facts]]\nsource = "002_cbca18f941552e51.txt"\nsection = "s"\nname = "resolve"\nfile = "x"\n',
     "unknown key 'file'"),
    ('[[source_facts]]\nsource = "002_cbca18f941552e51.txt"\nsection = ""\nname = "resolve"\n',
     "'section' and 'name' must not be empty"),
])
def test_a_malformed_source_fact_names_the_stage_and_the_entry(tmp_path: Path, repo_root: Path, facts: str,
                                                               message: str) -> None:
    root = _course_copy(tmp_path, repo_root, facts)
    with pytest.raises(RegistryError, match=re.escape(message)) as caught:
        load_course(root)
    assert "01-instruction-hierarchy/stage.toml [[source_facts]] #1" in str(caught.value)


def test_the_notebook_shows_the_table_in_part_3_of_both_editions(course) -> None:
    import nbformat

    stage = course.stage("10")
    for language, heading, kind in (("en", "### From the sources", "constant"), ("zh", "### 出自课程资料", "常量")):
        cells = nbformat.read(course.root / stage.notebook_in(language), as_version=4).cells
        [cell] = [c for c in cells if c.cell_type == "markdown" and c.source.startswith(heading)]
        assert '`MEMORY_NOTICE = "[System Notice] Relevant memory skipped due to token budget."`' in cell.source
        assert f"| {kind} |" in cell.source and "`003_abec3952fdc74bd5.txt` · 阶段 5：安全阀" in cell.source
        assert stage.text(language).from_the_sources in cell.source


def test_the_glossary_tells_instruction_authority_from_memory_precedence(course) -> None:
    import tomllib

    terms = {term["id"]: term for term in tomllib.loads((course.root / "course/glossary.toml").read_text())["term"]}
    assert "authority" not in terms, "one word for two things: split it"
    assert (terms["instruction-authority"]["en"], terms["instruction-authority"]["zh"]) == ("instruction authority", "指令权")
    assert (terms["memory-precedence"]["en"], terms["memory-precedence"]["zh"]) == ("memory precedence", "权限层级")
    assert "current_turn > workspace_override > user_default" in terms["memory-precedence"]["meaning"]
    assert "tool results" in terms["token-budget"]["meaning"]
