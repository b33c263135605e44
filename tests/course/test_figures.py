"""Every stage has a figure: its source in the stage's folder, a committed SVG made from it, the same
figure in the notebook (a mermaid block, or the plot's SVG as an image), and a build that notices when
the SVG no longer matches its source or the plot no longer matches the demonstration's numbers."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from forgelab import figures
from forgelab.build import stale_figures
from forgelab.registry import load_course

ROOT = Path(__file__).resolve().parents[2]
STAGES = [stage.number for stage in load_course(ROOT).stages]


def _figure_cells(notebook) -> list:  # type: ignore[no-untyped-def]
    return [cell for cell in notebook.cells if cell.cell_type == "markdown"
            and ("```mermaid" in cell.source or re.search(r"!\[[^\]]*\]\([^)]+\.svg\)", cell.source))]


@pytest.mark.parametrize("number", STAGES)
def test_every_stage_has_a_figure_in_its_folder_and_its_notebook(course, number: str) -> None:
    stage = course.stage(number)
    stage_figures = figures.stage_figures(stage.source_dir)
    assert stage_figures, f"{stage.key} has no figure source (figure.mmd or figure-NAME.py)"
    notebook = nbformat.read(course.root / stage.notebook, as_version=4)
    cells = _figure_cells(notebook)
    assert len(cells) == len(stage_figures), f"{stage.notebook}: one Markdown cell per figure"
    for figure, cell in zip(stage_figures, cells):
        assert figure.caption in cell.source
        if figure.kind == "mermaid":
            assert f"```mermaid\n{figure.diagram()}```" in cell.source
        else:
            target = re.search(r"!\[[^\]]*\]\(([^)]+\.svg)\)", cell.source).group(1)
            shown = (course.root / stage.notebook).parent / target
            assert shown.resolve() == figure.svg.resolve(), f"{stage.notebook}: the image is not the committed plot"
            assert not cell.get("attachments")
    headings = [c.source.splitlines()[0] for c in notebook.cells if c.cell_type == "markdown"]
    part3, part4 = (next(i for i, h in enumerate(headings) if h.startswith(p)) for p in ("## 3 ·", "## 4 ·"))
    assert headings[part3 + 1] == "### In a picture", "the figures belong to part 3, after the boundary decision"
    assert part3 < headings.index("### In a picture") < part4


def test_the_committed_figures_are_current(course) -> None:
    assert stale_figures(course, list(course.stages)) == []


@pytest.mark.parametrize("number", STAGES)
def test_figure_svgs_are_self_contained_and_described(course, number: str) -> None:
    for figure in figures.stage_figures(course.stage(number).source_dir):
        text = figure.svg.read_text(encoding="utf-8")
        width, height = figures.svg_size(figure.svg)
        assert 200 <= width <= 1300 and 100 <= height <= 1000, f"{figure.svg.name}: {width}×{height} is no small figure"
        assert not re.search(r"<script|<foreignObject|\son[a-z]+\s*=", text, re.I), figure.svg
        assert not re.search(r"(href|src)\s*=\s*[\"'](?!#)", text), f"{figure.svg}: an external reference"
        assert "url(http" not in text and "@import" not in text
        assert re.search(r"<title[^>]*>[^<]{10,}</title>", text), f"{figure.svg}: no title for screen readers"
        assert len(figure.alt) >= 60, f"{figure.source}: the alt text should describe the figure, not name it"
        if figure.kind == "mermaid":
            assert figures.STAMP.match(text).group(1) == figure.source_digest()


def test_the_budget_plots_show_the_demonstrations_numbers(course) -> None:
    selection = course.stage("02")
    svg = (selection.source_dir / "figure-budget.svg").read_text(encoding="utf-8")
    for words in ("budget 400", "write-policy (required)", "150 tokens · skipped: 90 left", "350 used"):
        assert words in svg
    assembly = course.stage("10")
    svg = (assembly.source_dir / "figure-budget.svg").read_text(encoding="utf-8")
    for words in ("B 110", "O 700: output", "S 70", "memory 26", "dropped whole", "used 107 of 110"):
        assert words in svg


def test_a_changed_diagram_makes_its_svg_stale(workbook) -> None:
    source = workbook.root / "course/stages/03-few-shot-selection/figure.mmd"
    source.write_text(source.read_text(encoding="utf-8").replace("(default 2)", "(default 3)"), encoding="utf-8")
    result = workbook.run("build", "--check", "03", timeout=600)
    assert result.returncode != 0
    assert "out of date: course/stages/03-few-shot-selection/figure.svg — figure SVG differs from figure.mmd" \
        in result.stdout
    assert "out of date: notebooks/03-few-shot-selection.ipynb" in result.stdout  # the mermaid block changed too


def test_a_plot_follows_the_demonstration(workbook) -> None:
    demo = workbook.root / "course/stages/02-context-selection/demo.py"
    text = demo.read_text(encoding="utf-8")
    assert 'ContextCandidate("forum-snippet", tokens=40,' in text
    demo.write_text(text.replace('ContextCandidate("forum-snippet", tokens=40,', 'ContextCandidate("forum-snippet", tokens=45,'),
                    encoding="utf-8")
    result = workbook.run("build", "--check", "02", timeout=600)
    assert result.returncode != 0
    assert ("out of date: course/stages/02-context-selection/figure-budget.svg — figure SVG differs from what "
            "figure-budget.py draws") in result.stdout


def test_a_stage_without_a_figure_or_caption_is_reported(workbook) -> None:
    folder = workbook.root / "course/stages/04-task-specification-schema"
    (folder / "figure.mmd").unlink()
    (folder / "figure.svg").unlink()
    result = workbook.run("build", "--check", "04", timeout=600)
    assert "no figure: add figure.mmd (or a figure-NAME.py plot) to the stage's folder" in result.stdout
    (folder / "figure.mmd").write_text("flowchart LR\n  A --> B\n", encoding="utf-8")
    with pytest.raises(figures.FigureError, match=r"figure\.mmd: no caption — start the file with a line `%% caption:"):
        figures.stage_figures(folder)


def test_an_svg_without_its_source_is_reported(workbook) -> None:
    folder = workbook.root / "course/stages/01-instruction-hierarchy"
    (folder / "figure-old.svg").write_text((folder / "figure.svg").read_text(encoding="utf-8"), encoding="utf-8")
    result = workbook.run("build", "--check", "01", timeout=600)
    assert ("out of date: course/stages/01-instruction-hierarchy/figure-old.svg — figure SVG without a source"
            in result.stdout)
