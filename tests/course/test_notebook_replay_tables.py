"""Grading's replay of the worked demonstrations (forgelab.judge.notebook_replay) knows the tables they show.

The demonstrations of stages 02, 03, 08, 09, 10 and 11 show tables with ``lab.table`` (HTML in JupyterLab). The
replay runs those cells without a kernel and without the notebook's stage tools: it gives them a ``lab`` that prints a
table as its cells, and reads the reference output's HTML table the same way — so the course's own code reproduces
every graded cell, and a table that differs in one cell is caught.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, run_cli

from forgelab.core.display import Grid
from forgelab.judge.notebook_replay import Output, ReferenceNotebook, ReplayTools, _shown, notebook_language, read_notebook


def _printed(headers: list[str], rows: list[list[object]]) -> str:
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        ReplayTools("en").table(headers, rows, right=(1,))  # type: ignore[arg-type]
    return captured.getvalue()


def _reference(grid: Grid) -> str:
    bundle = grid._repr_mimebundle_()
    return _shown(Output.model_validate({"output_type": "display_data", "data": bundle, "metadata": {}}))


def test_a_shown_table_and_its_replay_are_compared_cell_by_cell() -> None:
    headers, rows = ["记忆", "分数"], [["bo-deploy <b>&", 0.97], ["tests-first", 0.81]]
    reference = _reference(Grid(headers, rows, right=(1,)))
    assert reference == _printed(headers, rows)
    assert "bo-deploy <b>&" in reference  # the cell's text, unescaped
    assert reference != _printed(headers, [["bo-deploy <b>&", 0.97], ["tests-first", 0.8]])  # one cell differs
    labels = [["spec", "a"], ["audit", "b"]]  # a table of labels and values: no header row
    assert _reference(Grid([], labels)) == _printed([], labels)


def test_only_a_forgelab_table_and_printed_text_count_as_output() -> None:
    def shown(output: dict[str, object]) -> str:
        return _shown(Output.model_validate(output))

    assert shown({"output_type": "stream", "name": "stdout", "text": ["a\n", "b\n"]}) == "a\nb\n"
    assert shown({"output_type": "stream", "name": "stderr", "text": "warning\n"}) == ""
    assert shown({"output_type": "display_data", "data": {"text/html": "<table><tr><td>x</td></tr></table>"}}) == ""


def test_the_notebook_language_comes_from_its_stage_tools_cell() -> None:
    cell = {"cell_type": "code", "source": 'from forgelab.learner.notebook import stage_tools\nlab = stage_tools("09", lang="zh")'}
    assert notebook_language(ReferenceNotebook.model_validate({"cells": [cell]})) == "zh"
    assert notebook_language(ReferenceNotebook()) == "en"


def test_a_reference_notebook_that_is_not_one_is_named_with_its_field(tmp_path: Path) -> None:
    broken = tmp_path / "01_broken.ipynb"
    broken.write_text(json.dumps({"cells": [{"cell_type": "code", "source": 7}]}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"01_broken\.ipynb: not a notebook the replay can read \(cells\.0\.source"):
        read_notebook(broken)
    good = tmp_path / "01_good.ipynb"
    good.write_text(json.dumps({"cells": [{"cell_type": "code", "source": ["a", "b"], "id": "x", "outputs": []}],
                                "nbformat": 4}), encoding="utf-8")
    assert [cell.source for cell in read_notebook(good).cells] == [["a", "b"]]


def test_the_reference_code_reproduces_every_graded_cell_of_every_notebook(tmp_path: Path) -> None:
    """The course's reference, handed in as a learner's forge/, replays every notebook's graded cells (it raised
    NameError: name 'lab' is not defined in the five notebooks with tables, costing a correct submission points)."""
    learner = tmp_path / "learner"
    shutil.copytree(ROOT / "forge", learner / "forge")
    shutil.copytree(ROOT / "solutions" / "forge", learner / "forge", dirs_exist_ok=True)
    done = run_cli(ROOT, "nbval", "--target", str(learner), timeout=900)
    assert done.returncode == 0, done.output
    lines = [line.strip() for line in done.stdout.splitlines() if ".ipynb:" in line]
    assert len(lines) == 11, done.stdout
    for line in lines:
        shown, total = line.split(": ", 1)[1].split(" ", 1)[0].split("/")
        assert shown == total and int(total) > 0, line
