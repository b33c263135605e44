"""The registry is the single source; generated artefacts must be current with it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from forgelab.authoring.build import (OPENING_NOTEBOOK, REFERENCE_OUTPUT_NOTE, fault_contract, notebook_source,
    stale_artefacts, stale_opening)
from forgelab.core.opening import is_project
from forgelab.core.registry import RegistryError, load_course

PARTS = ["## 1 ·", "## 2 ·", "## 3 ·", "## 4 ·", "## 5 ·", "## 6 ·", "## 7 ·", "## 8 ·", "## 9 ·", "## 10 ·"]


def test_every_stage_follows_the_naming_contract(course) -> None:
    assert course.stages, "no stages found"
    for stage in course.stages:
        assert stage.experiment_id == f"prompt-context-output-{stage.number}-{stage.slug}"
        assert stage.evidence_dir == f"evidence/prompt-context-output/{stage.number}-{stage.slug}"
        assert (course.root / stage.test_file).is_file()
        assert (course.root / stage.transfer_file).is_file()
        assert (course.root / "solutions" / stage.module).is_file()
        assert (course.root / stage.module).is_file()
        text = stage.text()
        assert len(text.prediction.options) == 4
        assert len(text.hints) >= 3
        assert text.design.rubric and text.transfer.criteria and text.fault.diagnosis


def test_numbers_are_consecutive_from_01(course) -> None:
    assert [s.number for s in course.stages] == [f"{i:02d}" for i in range(1, len(course.stages) + 1)]


def test_committed_artefacts_are_current(course) -> None:
    assert stale_artefacts(course) == []
    assert stale_opening(course) == []


def test_fault_contract_files_hold_every_declared_field(course) -> None:
    for stage in course.stages:
        path = course.root / stage.failure_lab / "fixtures" / "failure.json"
        contract = json.loads(path.read_text(encoding="utf-8"))
        assert contract == fault_contract(stage)
        assert set(contract) >= {"stage_id", "fault_file", "target_test", "expected_symptom", "diagnosis", "fix_principle"}
        re.compile(contract["expected_symptom"])


def test_changing_stage_text_makes_the_notebook_stale(workbook) -> None:
    source = workbook.root / "course/stages/01-instruction-hierarchy/stage.toml"
    source.write_text(source.read_text().replace('title = "Instruction hierarchy"', 'title = "Instruction ranks"'))
    result = workbook.run("build", "--check")
    assert result.returncode == 2
    assert "out of date: notebooks/01-instruction-hierarchy.ipynb" in result.stdout


def test_printed_output_in_pieces_makes_the_notebook_stale(workbook) -> None:
    """The build keeps one output per run of printing, whatever the kernel's flushes were under load, so a rebuild
    is byte for byte the same; a notebook with its printed text split in two is reported."""
    path = workbook.root / "notebooks/01-instruction-hierarchy.ipynb"
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if c.cell_type == "code" and any(o.output_type == "stream" and len(o.text) > 2
                                                                          for o in c.outputs))
    at = next(i for i, o in enumerate(cell.outputs) if o.output_type == "stream" and len(o.text) > 2)
    whole = cell.outputs[at]
    half = len(whole.text) // 2
    cell.outputs[at:at + 1] = [nbformat.v4.new_output("stream", name=whole.name, text=whole.text[:half]),
                               nbformat.v4.new_output("stream", name=whole.name, text=whole.text[half:])]
    nbformat.write(notebook, path)
    result = workbook.run("build", "--check")
    assert result.returncode == 2
    assert "out of date: notebooks/01-instruction-hierarchy.ipynb" in result.stdout
    assert "split in pieces" in result.stdout


def test_changing_the_symptom_makes_the_contract_stale(workbook) -> None:
    source = workbook.root / "course/stages/01-instruction-hierarchy/stage.toml"
    source.write_text(source.read_text().replace("symptom = ", "symptom = \"x|\" + ", 1).replace("\"x|\" + ", "", 1)
                      .replace("\\\\{'write': 'allow'", "\\\\{ 'write': 'allow'"))
    result = workbook.run("build", "--check")
    assert "failure.json" in result.stdout


def test_a_malformed_stage_source_names_the_file_and_key(tmp_path, repo_root) -> None:
    import shutil

    shutil.copytree(repo_root / "course", tmp_path / "course")
    shutil.copy(repo_root / "pyproject.toml", tmp_path / "pyproject.toml")
    source = tmp_path / "course/stages/01-instruction-hierarchy/stage.toml"
    source.write_text(source.read_text().replace("problem_title =", "problem_headline ="))
    with pytest.raises(RegistryError, match=r"stage\.toml \[text\.en\]: missing key 'problem_title'"):
        load_course(tmp_path)


def test_the_answer_index_must_point_at_an_option(tmp_path, repo_root) -> None:
    import shutil

    shutil.copytree(repo_root / "course", tmp_path / "course")
    source = tmp_path / "course/stages/01-instruction-hierarchy/stage.toml"
    source.write_text(source.read_text().replace("answer = 1", "answer = 7"))
    with pytest.raises(RegistryError, match="answer 7 is not an index of options"):
        load_course(tmp_path)


def test_stage_lookup_accepts_numbers_and_keys(course) -> None:
    assert course.stage("1") is course.stage("01") is course.stage("01-instruction-hierarchy")
    with pytest.raises(RegistryError, match="expected one of 01 \\(instruction-hierarchy\\)"):
        course.stage("99")


STAGE_NUMBERS = [stage.number for stage in load_course(Path(__file__).resolve().parents[2]).stages]


@pytest.mark.parametrize("number", STAGE_NUMBERS)
def test_every_notebook_has_the_ten_parts_and_a_kernel(course, number: str) -> None:
    stage = course.stage(number)
    notebook = nbformat.read(course.root / stage.notebook, as_version=4)
    headings = [c.source.splitlines()[0] for c in notebook.cells if c.cell_type == "markdown"]
    for part in PARTS:
        assert any(h.startswith(part) for h in headings), f"{stage.notebook} lacks {part}"
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    widget_cells = [c for c in notebook.cells if "forgelab-widget" in c.metadata.get("tags", [])]
    assert {c.source for c in widget_cells} == {"lab.predict()", "lab.hint()", "lab.why()", "lab.fault_lab()",
                                                "lab.diagnose()", "lab.design_answer()", "lab.evidence()", "lab.page()",
                                                "from forgelab.hub.handin import hand_in\n\nhand_in(lab)"}
    for cell in widget_cells:
        assert "nbval-ignore-output" in cell.metadata["tags"] and cell.outputs == []
    for cell in notebook.cells:
        assert "widgets.Output" not in cell.source
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"{stage.notebook}: a reference cell raised"


def test_notebook_source_is_deterministic(course) -> None:
    stage = course.stages[0]
    assert nbformat.writes(notebook_source(course, stage)) == nbformat.writes(notebook_source(course, stage))


def test_another_language_needs_no_code_changes(tmp_path, repo_root) -> None:
    """A third edition is data only: copy the English tables under a new code and the tools use it."""
    import shutil

    shutil.copytree(repo_root / "course", tmp_path / "course")
    source = tmp_path / "course/stages/01-instruction-hierarchy/stage.toml"
    text = source.read_text(encoding="utf-8")
    english = text[text.index("\n[text.en]"): text.index("\n[text.zh]")]
    french = english.replace("[text.en", "[text.fr").replace('title = "Instruction hierarchy"', 'title = "Hiérarchie des instructions"', 1)
    source.write_text(text + "\n" + french, encoding="utf-8")
    course = load_course(tmp_path)
    stage = course.stage("01")
    assert stage.text("fr").title == "Hiérarchie des instructions"
    assert stage.text("en").title == "Instruction hierarchy"
    assert stage.text("zh").title == "指令层级"
    assert stage.text("de").title == "Instruction hierarchy"  # an edition that does not exist falls back to English
    notebook = notebook_source(course, stage, "fr")
    assert notebook.cells[0].source.startswith("# Stage 01 · Hiérarchie des instructions")
    assert notebook.metadata["forgelab"]["language"] == "fr"


def test_equivalent_mutants_are_read_from_the_mutation_table(tmp_path, repo_root) -> None:
    import shutil

    shutil.copytree(repo_root / "course", tmp_path / "course")
    source = tmp_path / "course/stages/01-instruction-hierarchy/stage.toml"
    text = source.read_text(encoding="utf-8")
    without = text[: text.index("[mutation]")] if "[mutation]" in text else text
    table = (
        '[mutation]\nequivalent = [\n'
        '    { where = "forge.instructions.x_explain__mutmut_1", why = "the two orders give the same winners" },\n'
        '    { where = "forge.instructions.x_rank_of__mutmut_2", why = "never reached with a known source" },\n]\n\n'
    )
    head, tail = without.split("[text.en]", 1)
    source.write_text(head + table + "[text.en]" + tail, encoding="utf-8")
    stage = load_course(tmp_path).stage("01")
    assert [(m.where, m.why) for m in stage.equivalent_mutants] == [
        ("forge.instructions.x_explain__mutmut_1", "the two orders give the same winners"),
        ("forge.instructions.x_rank_of__mutmut_2", "never reached with a known source"),
    ]

    source.write_text(head + "[text.en]" + tail, encoding="utf-8")
    assert load_course(tmp_path).stage("01").equivalent_mutants == ()

    for broken, message in [
        (table.replace('why = "never reached with a known source"', 'why = ""'), "must not be empty"),
        (table.replace(', why = "never reached with a known source"', ""), "exactly the keys 'where' and 'why'"),
        (table.replace("x_rank_of__mutmut_2", "x_explain__mutmut_1"), "is listed twice"),
        (table.replace("equivalent = [", "equivalents = ["), "unknown key 'equivalents'"),
    ]:
        source.write_text(head + broken + "[text.en]" + tail, encoding="utf-8")
        with pytest.raises(RegistryError, match=re.escape(message)):
            load_course(tmp_path)


def test_listed_equivalent_mutants_belong_to_the_stage_module(course) -> None:
    for stage in course.stages:
        module = stage.module.removesuffix(".py").replace("/", ".")
        for mutant in stage.equivalent_mutants:
            assert mutant.where.startswith(f"{module}.x"), f"{stage.key}: {mutant.where} is not a mutant of {module}"
            assert "__mutmut_" in mutant.where, f"{stage.key}: {mutant.where} is not a mutmut mutant name"


def _markdown_cells(notebook) -> list[str]:  # type: ignore[no-untyped-def]
    return [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("number", STAGE_NUMBERS)
def test_part_2_lists_the_options_and_asks_the_question_once(course, number: str) -> None:
    stage = course.stage(number)
    notebook = nbformat.read(course.root / stage.notebook, as_version=4)
    prediction = stage.text().prediction
    part2 = next(source for source in _markdown_cells(notebook) if source.startswith("## 2 ·"))
    for index, option in enumerate(prediction.options):
        assert f"- **{chr(ord('A') + index)}.** {option}" in part2, f"{stage.notebook}: option {index} not in Markdown"
    everything = "\n".join(cell.source + "".join(str(o.get("text", "")) for o in cell.get("outputs", []))
                           for cell in notebook.cells)
    assert everything.count(prediction.question) == 1, f"{stage.notebook}: the question is printed more than once"
    assert prediction.rationale not in everything, "the rationale is revealed only after answering"
    widget = notebook.cells[[c.source for c in notebook.cells].index(part2) + 1]
    assert widget.source == "lab.predict()"


def test_no_notebook_uses_an_emoji_for_your_code(course) -> None:
    for path in sorted((course.root / "notebooks").glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        for source in _markdown_cells(notebook):
            assert "🔧" not in source, f"{path.name}: the wrench renders as an empty box without an emoji font"
    notebook = nbformat.read(course.root / course.stages[0].notebook, as_version=4)
    headings = [source.splitlines()[0] for source in _markdown_cells(notebook)]
    assert "## 6 · Guided exercise (your code)" in headings


def test_no_notebook_markdown_tells_the_fault_story_before_the_reveal(course) -> None:
    notebooks = [course.root / OPENING_NOTEBOOK, *(course.root / stage.notebook for stage in course.stages)]
    markdown = {path.name: _flat("\n".join(_markdown_cells(nbformat.read(path, as_version=4)))) for path in notebooks}
    for stage in course.stages:
        text = stage.text()
        secrets = [text.fault.story, text.fault.fix_principle, *text.fault.diagnosis[1:]]
        for name, shown in markdown.items():
            for secret in secrets:
                assert _flat(secret) not in shown, f"{name} shows stage {stage.number}'s fault lab before the reveal"
            for sentence in re.split(r"(?<=[.!?])\s+", _flat(text.fault.story)):
                if len(sentence) > 40:
                    assert sentence not in shown, f"{name} tells part of stage {stage.number}'s fault story"


def test_the_recovery_point_is_in_the_chapter_projects_notebook_only(course) -> None:
    recovery = _flat(course.text("recovery_point"))
    projects = [stage for stage in course.stages if is_project(stage)]
    assert [stage.number for stage in projects] == ["08"]
    for stage in course.stages:
        shown = _flat("\n".join(_markdown_cells(nbformat.read(course.root / stage.notebook, as_version=4))))
        assert (recovery in shown) == is_project(stage), stage.notebook
    notebook = nbformat.read(course.root / projects[0].notebook, as_version=4)
    headings = [source.splitlines()[0] for source in _markdown_cells(notebook)]
    assert headings.index("### The recovery point") == headings.index("## 6 · Guided exercise (your code)") + 1


@pytest.mark.parametrize("number", STAGE_NUMBERS)
def test_the_demonstration_is_marked_as_reference_output(course, number: str) -> None:
    stage = course.stage(number)
    notebook = nbformat.read(course.root / stage.notebook, as_version=4)
    part5 = next(source for source in _markdown_cells(notebook) if source.startswith("## 5 ·"))
    assert REFERENCE_OUTPUT_NOTE.format(module=stage.module) in part5
    start = [cell.source for cell in notebook.cells].index(part5)
    demo = []
    for cell in notebook.cells[start + 1:]:
        if cell.cell_type == "markdown" and cell.source.startswith("## "):
            break
        if cell.cell_type == "code":
            demo.append(cell)
    assert demo and all("nbval-check-output" in cell.metadata.get("tags", []) and cell.outputs for cell in demo)
