"""Stages 09, 10 and 11 compose: stage 11's one-turn test runs stage 09's selection, stage 10's assembly and
stage 11's deletion plan on one agent turn, each stage's real output the next one's input. It passes on the
reference modules and fails whichever of the three stages still holds its starter — so the test proves the
pipeline, not only stage 11."""

from __future__ import annotations

import pytest

from conftest import WorkbookCopy

TEST = "test_one_turn_runs_through_selection_assembly_and_the_context_pipeline"
MODULES = {"09": "forge/memory_selection.py", "10": "forge/prompt_assembly.py", "11": "forge/context_pipeline.py"}


def _row(workbook: WorkbookCopy) -> tuple[str, str]:
    """The one-turn test's outcome in `forgelab check 11 --why`, and the line under it (the cause, when it failed)."""
    lines = workbook.run("check", "11", "--why", TEST).stdout.splitlines()
    index = lines.index(next(line for line in lines if line.startswith(f"{TEST}: ")))
    return lines[index].split(": ")[1], (lines[index + 1:] or [""])[0]


def _solve(workbook: WorkbookCopy, *numbers: str) -> None:
    for number in numbers:
        workbook.write(MODULES[number], (workbook.root / "solutions" / MODULES[number]).read_text(encoding="utf-8"))


def test_the_one_turn_test_passes_on_the_three_reference_modules(workbook: WorkbookCopy) -> None:
    _solve(workbook, "09", "10", "11")
    assert _row(workbook)[0] == "passed"


@pytest.mark.parametrize("starter", ["09", "10", "11"])
def test_the_one_turn_test_fails_while_any_stage_holds_its_starter(workbook: WorkbookCopy, starter: str) -> None:
    _solve(workbook, *(number for number in MODULES if number != starter))
    outcome, cause = _row(workbook)
    assert outcome == "FAILED"
    assert "not implemented yet" in cause and f"(forgelab hint {starter})" in cause, cause
