"""The chapter's recovery point: `forgelab extract --recovery` runs with one fixed schema, three fixed
examples and no repair code at all — so it works while stage 05 (and stage 03) are still the starters.

Recovery mode parses the model's answer with ``forge/project/strict.py`` (finished infrastructure that
imports no stage module) instead of stage 05, and the command says which stages it still needs.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import WorkbookCopy, copy_workbook

from forge.project.scenarios import load_scenario
from forge.project.strict import NotStrictJSON, parse_strict_object, repairs_needed
from forgelab.core.starters import unfinished_functions

ZH = "为前端仓库增加功能、修改代码并补测试"
STARTERS_KEPT = ("forge/output_repair.py", "forge/fewshot.py")  # stage 05 and stage 03 stay unfinished


@pytest.fixture(scope="module")
def stuck_on_05(tmp_path_factory: pytest.TempPathFactory) -> WorkbookCopy:
    """A learner who finished every stage and the extractor except stage 05 (and never did 03)."""
    workbook = copy_workbook(tmp_path_factory.mktemp("recovery") / "workbook")
    for reference in sorted((workbook.root / "solutions" / "forge").glob("*.py")):
        module = f"forge/{reference.name}"
        if module not in STARTERS_KEPT:
            shutil.copyfile(reference, workbook.root / module)
    for module in STARTERS_KEPT:  # the shipped starters, untouched
        assert unfinished_functions(workbook.root / module), f"{module} must still be the starter"
        assert (workbook.root / module).read_bytes() == (workbook.root / "course" / "starters" / module).read_bytes()
    return workbook


def extract(workbook: WorkbookCopy, *args: str):  # type: ignore[no-untyped-def]
    return workbook.run("extract", *args, "--target", "learner")


# ---------------------------------------------------------------- the command


@pytest.mark.parametrize("scenario", ["software", "office", "music"])
def test_recovery_succeeds_while_stage_05_is_the_starter(stuck_on_05: WorkbookCopy, scenario: str) -> None:
    result = extract(stuck_on_05, "--scenario", scenario, ZH, "--recovery", "--json")
    assert result.returncode == 0, result.output
    document = json.loads(result.stdout)
    assert set(document["spec"]) == {"goal", "inputs", "outputs", "acceptance", "write_allowed"}
    audit = document["audit"]
    assert audit["mode"] == "recovery" and audit["schema_version"] == "v2" and audit["repairs"] == []
    assert audit["examples"] == list(load_scenario(scenario).recovery_examples)


def test_the_human_view_says_what_recovery_mode_left_out(stuck_on_05: WorkbookCopy) -> None:
    result = extract(stuck_on_05, "--scenario", "software", "add a search box", "--recovery")
    assert result.returncode == 0, result.output
    assert "(schema v2, recovery mode)" in result.stdout
    assert "stage 03 (example selection) and stage 05 (repair) were not called" in result.stdout


def test_without_recovery_the_unfinished_stage_is_named_and_recovery_suggested(stuck_on_05: WorkbookCopy) -> None:
    result = extract(stuck_on_05, "--scenario", "software", "add a search box")
    assert result.returncode == 2
    assert "is not implemented yet" in result.stderr and "--recovery" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("fault", "fragment"), [
    ("fenced", "the output needs repair (code_fence) but automatic repair is off in recovery mode"),
    ("trailing_comma", "the output needs repair (trailing_comma) but automatic repair is off in recovery mode"),
    ("prose", "the output is not strict JSON (Expecting value at line 1 column 1)"),
])
def test_recovery_rejects_what_needs_repair_without_calling_stage_05(stuck_on_05: WorkbookCopy, fault: str,
                                                                     fragment: str) -> None:
    result = extract(stuck_on_05, "--scenario", "office", "compare the quotes", "--recovery", "--fault", fault)
    assert result.returncode == 1, result.output
    assert "rejected by the strict JSON parser of recovery mode" in result.stderr
    assert fragment in result.stderr
    assert "not implemented" not in result.output and "stage 05 (bounded output repair)" not in result.stderr


def test_a_spec_error_is_still_caught_by_stage_04_in_recovery(stuck_on_05: WorkbookCopy) -> None:
    result = extract(stuck_on_05, "--scenario", "music", "plan it", "--recovery", "--fault", "unknown_field")
    assert result.returncode == 1
    assert "rejected by stage 04 (strict task specification): unknown fields: priority" in result.stderr


def test_regress_in_recovery_mode_runs_while_stage_05_is_the_starter(stuck_on_05: WorkbookCopy) -> None:
    result = stuck_on_05.run("regress", "--recovery", "--target", "learner")
    assert result.returncode == 0, result.output
    assert "recovery mode" in result.stdout


def test_recovery_names_the_stages_it_still_needs_and_never_03_or_05(workbook: WorkbookCopy) -> None:
    result = extract(workbook, "--scenario", "software", "add a search box", "--recovery")
    assert result.returncode == 2
    cause, next_step = result.stderr.strip().splitlines()
    assert cause.startswith("forgelab: recovery mode still needs stages 01 (forge/instructions.py: rank_of, explain")
    for needed in ("02 (forge/context_selection.py", "04 (forge/task_spec.py", "06 (forge/injection.py",
                   "07 (forge/prompt_regression.py: prompt_version_id not written yet)", "08 (forge/extractor.py"):
        assert needed in cause
    assert "03 (" not in cause and "05 (" not in cause
    assert "it leaves out 03 (three fixed examples) and 05 (nothing is repaired)" in next_step
    assert "forgelab restore 08 --from PACK" in next_step
    assert "Traceback" not in result.output


def test_a_stage_05_module_that_does_not_parse_is_named(stuck_on_05: WorkbookCopy, tmp_path) -> None:  # type: ignore[no-untyped-def]
    broken = copy_workbook(tmp_path / "broken")
    shutil.copytree(stuck_on_05.root / "forge", broken.root / "forge", dirs_exist_ok=True)
    broken.write("forge/output_repair.py", "def parse_json_object(text:\n")
    result = extract(broken, "--scenario", "software", "add a search box", "--recovery")
    assert result.returncode == 2
    assert "recovery mode still needs stage 05 (forge/output_repair.py: does not parse (line 1))" in result.stderr
    assert "only have to import" in result.stderr


# ---------------------------------------------------------------- forge/project/strict.py


def test_the_strict_parser_takes_exactly_one_bare_object() -> None:
    assert parse_strict_object('  {"goal": "g", "acceptance": ["a"], "write_allowed": false}\n') == {
        "goal": "g", "acceptance": ["a"], "write_allowed": False}
    for text, fragment in [("[1]", "a JSON array, expected an object"), ("null", "a JSON null"),
                           ('{"a": 1, "a": 2}', "duplicate key 'a'"), ('{"a": NaN}', "NaN is not valid JSON"),
                           ("please", "not strict JSON (Expecting value at line 1 column 1)"),
                           ('{"a": 1', "not strict JSON (Expecting ',' delimiter"),
                           ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply")]:
        with pytest.raises(NotStrictJSON, match=fragment.replace("(", r"\(").replace(")", r"\)")):
            parse_strict_object(text)


@pytest.mark.parametrize(("text", "needs"), [
    ('```json\n{"a": 1}\n```', ("code_fence",)),
    ('~~~\n{"a": 1}', ("code_fence",)),
    ('```json\n{"a": [1,],}\n```', ("code_fence", "trailing_comma")),
    ('{"a": 1, }', ("trailing_comma",)),
    ('[1, 2,\n]', ("trailing_comma",)),
    ('```python\n{"a": 1}\n```', ()),  # standard mode refuses this fence too
    ('{"a": "x, }" x}', ()),  # the comma is inside a string
    ('Sure: {"a": 1,}', ()),  # prose first: no repair would help
    ('{"a": 1}', ()),
])
def test_the_repairs_a_refused_answer_would_need_are_found_not_applied(text: str, needs: tuple[str, ...]) -> None:
    assert repairs_needed(text) == needs
    if needs:
        with pytest.raises(NotStrictJSON) as caught:
            parse_strict_object(text)
        assert caught.value.needs == needs and "automatic repair is off in recovery mode" in str(caught.value)


def test_the_strict_parser_imports_no_stage_module() -> None:
    import ast
    from pathlib import Path

    import forge.project.strict as strict

    tree = ast.parse(Path(strict.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {name for name in imported if name.startswith("forge")}, imported
