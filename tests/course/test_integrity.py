"""Course integrity by construction: generated fault variants, one layout, no import cycle, the stage
scaffold, and files that no stage owns."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from forgelab.core.demo import edition, parse_percent_cells
from conftest import ROOT, copy_workbook

KEY = "01-instruction-hierarchy"


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and ".forgelab" not in p.parts)


def test_a_changed_reference_makes_its_variant_stale_and_build_regenerates_it(tmp_path: Path) -> None:
    workbook = copy_workbook(tmp_path / "workbook")
    variant = workbook.root / "failure_labs" / KEY / "forge" / "instructions.py"
    reference = workbook.root / "solutions" / "forge" / "instructions.py"
    reference.write_text(reference.read_text() + "\n\ndef describe_ranks() -> str:\n    return 'system > developer > user > retrieved'\n")
    stale = workbook.run("build", "--check")
    assert stale.returncode != 0
    assert f"failure_labs/{KEY}/forge/instructions.py — fault variant differs" in stale.stdout
    built = workbook.run("build", "01", "--no-execute")
    assert built.returncode == 0, built.output
    assert "def describe_ranks()" in variant.read_text()
    assert "FAULT LAB" in variant.read_text()  # still the plain, readable broken file learners receive
    verified = workbook.run("verify-course", "01", timeout=300)
    assert "fault holds" in verified.stdout or "fault symptom" not in verified.stdout, verified.stdout
    assert "does not fail on fault:01" not in verified.stdout


def test_a_patch_whose_find_text_is_gone_is_reported_with_the_fix(tmp_path: Path) -> None:
    workbook = copy_workbook(tmp_path / "workbook")
    reference = workbook.root / "solutions" / "forge" / "instructions.py"
    reference.write_text(reference.read_text().replace("    ranks = [rank_of(item) for item in instructions]\n",
                                                       "    ranks = [rank_of(entry) for entry in instructions]\n"))
    stale = workbook.run("build", "--check")
    assert stale.returncode != 0
    assert "cannot be generated" in stale.stdout and "occurs 0 times" in stale.stdout
    assert "update it to the current reference" in stale.stdout


def test_stage_sources_do_not_restate_derived_paths(course) -> None:  # type: ignore[no-untyped-def]
    for stage in course.stages:
        text = (stage.source_dir / "stage.toml").read_text()
        assert "test_file" not in text and "fault_file" not in text, stage.key
        assert stage.test_file == f"tests/stages/test_{stage.number}_{stage.slug.replace('-', '_')}.py"
        assert (ROOT / stage.test_file).is_file() and (ROOT / stage.transfer_file).is_file()
        assert (ROOT / stage.fault_variant).is_file() and (ROOT / stage.reference_transfer).is_file()


def test_a_restated_path_is_refused_with_what_to_do(tmp_path: Path) -> None:
    workbook = copy_workbook(tmp_path / "workbook")
    source = workbook.root / "course" / "stages" / KEY / "stage.toml"
    source.write_text(source.read_text().replace('module = "forge/instructions.py"\n',
                                                 'module = "forge/instructions.py"\ntest_file = "tests/x.py"\n'))
    result = workbook.run("status")
    assert result.returncode == 2
    assert "'test_file' is derived from the stage's number, slug and module — remove it" in result.stderr


def test_no_command_handler_imports_the_command_line() -> None:
    for path in sorted((ROOT / "forgelab" / "commands").glob("*.py")):
        tree = ast.parse(path.read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert "forgelab.cli" not in imported, path.name


def test_course_demos_import_only_forge(course) -> None:  # type: ignore[no-untyped-def]
    for stage in course.stages:
        for language in ("en", "zh"):
            tree = ast.parse(edition(stage.demo_file.read_text(encoding="utf-8"), language))
            modules = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
            modules |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
            assert not any(name.startswith("forgelab") for name in modules), f"{stage.demo_file} ({language}): imports tooling"


def test_new_stage_is_incomplete_until_written_and_removing_it_restores_the_tree(tmp_path: Path) -> None:
    workbook = copy_workbook(tmp_path / "workbook")
    before = _files(workbook.root)
    created = workbook.run("new-stage", "12", "tool-budget", "--module", "forge/tool_budget.py")
    assert created.returncode == 0, created.output
    listed = [line.strip() for line in created.stdout.splitlines() if line.startswith("  ")]
    assert "forge/tool_budget.py" in listed and "tests/stages/test_12_tool_budget.py" in listed
    assert "course/stages/12-tool-budget/stage.toml" in listed
    assert sorted(set(_files(workbook.root)) - set(before)) == sorted(listed)  # only new files, nothing edited
    demo = (workbook.root / "course/stages/12-tool-budget/demo.py").read_text(encoding="utf-8")
    english, chinese = (parse_percent_cells(edition(demo, language)) for language in ("en", "zh"))
    assert [kind for kind, _ in english] == [kind for kind, _ in chinese] == ["markdown", "code"]  # one file, keyed
    assert english[0] != chinese[0] and english[1] == chinese[1]
    verified = workbook.run("verify-course", "12", timeout=300)
    assert verified.returncode == 1
    assert "FAIL 12 tool-budget" in verified.stdout and "incomplete: 11 file(s)" in verified.stdout  # seal.py among them
    again = workbook.run("new-stage", "12", "other", "--module", "forge/other.py")
    assert again.returncode == 2 and "stage 12 already exists" in again.stderr
    for relative in listed:
        (workbook.root / relative).unlink()
    (workbook.root / "course" / "stages" / "12-tool-budget").rmdir()
    assert _files(workbook.root) == before


@pytest.mark.parametrize("bad, message", [
    (("12", "Bad_Slug", "forge/x.py"), "lower-case words joined by hyphens"),
    (("12", "fine", "forge/instructions.py"), "already belongs to another stage"),
    (("12", "fine", "src/x.py"), "give a new module of the learner's package"),
])
def test_new_stage_refuses_names_that_break_the_layout(tmp_path: Path, bad: tuple[str, str, str], message: str) -> None:
    workbook = copy_workbook(tmp_path / "workbook")
    number, slug, module = bad
    result = workbook.run("new-stage", number, slug, "--module", module)
    assert result.returncode == 2 and message in result.stderr


def test_a_file_no_stage_owns_is_reported(course, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from forgelab.core.registry import load_course
    from forgelab.authoring.scaffold import unowned_files

    assert unowned_files(course) == []
    workbook = copy_workbook(tmp_path / "workbook")
    (workbook.root / "tests" / "stages" / "test_99_forgotten.py").write_text("def test_nothing() -> None:\n    pass\n")
    (workbook.root / "course" / "stages" / KEY / "notes.txt").write_text("draft\n")
    assert unowned_files(load_course(workbook.root)) == [f"course/stages/{KEY}/notes.txt", "tests/stages/test_99_forgotten.py"]
