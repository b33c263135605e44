"""The chapter's opening: notebooks/00-opening.ipynb and the course page's section, both made from the
opening texts of course/course.toml; the notebook is executed, current and passes nbval."""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path

import nbformat
import pytest
from markupsafe import escape  # how the templates escape (" is &#34;)

from conftest import run_cli

from forgelab.core.opening import CONCEPTS, OPENING_KEYS, opening_texts
from forgelab.authoring.build import OPENING_NOTEBOOK, opening_notebook, stale_opening

ROOT = Path(__file__).resolve().parents[2]


def _markdown(notebook) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_opening_notebook_is_current_and_executed(course) -> None:
    assert stale_opening(course) == []
    notebook = nbformat.read(course.root / OPENING_NOTEBOOK, as_version=4)
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.execution_count is not None and cell.outputs for cell in code)
    assert all(output.output_type != "error" for cell in code for output in cell.outputs)


def test_the_opening_holds_every_opening_text_in_order(course) -> None:
    notebook = nbformat.read(course.root / OPENING_NOTEBOOK, as_version=4)
    markdown = _flat(_markdown(notebook))
    texts = opening_texts(course)
    for key in OPENING_KEYS:
        assert _flat(texts[key]) in markdown, f"the opening does not show course.toml's {key}"
    headings = [cell.source.splitlines()[0] for cell in notebook.cells if cell.cell_type == "markdown"]
    expected = ["## Where this chapter sits", "## What you need", "## Three concepts, calibrated",
                *(f"### {title}" for _, title in CONCEPTS), f"## The capability chain: 01 → {course.stages[-1].number}",
                "## The chapter project", "## How each stage works", "## Stuck? The recovery point",
                "## Where you stand"]
    positions = [headings.index(heading) for heading in expected]
    assert positions == sorted(positions)
    for concept, _ in CONCEPTS:  # what it is, what it is not, its place in Forge, typical misuse
        cell = next(c.source for c in notebook.cells if c.source.startswith(f"### {dict(CONCEPTS)[concept]}"))
        assert [label for label in ("What it is.", "What it is not.", "Its place in Forge.", "Typical misuse.")
                if f"**{label}**" in cell] == ["What it is.", "What it is not.", "Its place in Forge.", "Typical misuse."]


def test_the_chain_cell_lists_every_stage_and_links_its_notebook(course) -> None:
    notebook = nbformat.read(course.root / OPENING_NOTEBOOK, as_version=4)
    chain = next(cell for cell in notebook.cells if cell.cell_type == "code" and "load_course" in cell.source
                 and "unfinished" not in cell.source)
    printed = "".join(output.get("text", "") or output.get("data", {}).get("text/plain", "")
                      for output in chain.outputs).splitlines()
    assert [line.split()[0] for line in printed] == [stage.number for stage in course.stages]
    markdown = _markdown(notebook)
    for stage in course.stages:
        assert f"]({Path(stage.notebook).name})" in markdown
        assert stage.module in printed[int(stage.number) - 1]


def test_the_opening_passes_nbval() -> None:
    done = run_cli(ROOT, "nbval", "00", timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nbval: 2 notebook(s) against target solution, 2 edition(s)" in done.stdout  # the opening of both editions
    # one pytest per edition, side by side: each reports its own notebook's two cells
    assert [int(count) for count in re.findall(r"\b(\d+) passed\b", done.stdout)] == [2, 2], done.stdout


def test_nbval_runs_the_opening_with_the_stage_notebooks(course) -> None:
    from forgelab.authoring.nbval import nbval_command

    # `forgelab nbval` without stage numbers: per edition, the opening first, then every stage notebook
    import forgelab.authoring.nbval as runner

    seen: list[list[str]] = []
    original = runner.subprocess.run

    def fake_run(command, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(command)
        return subprocess.CompletedProcess(command, 0, stdout="")

    runner.subprocess.run = fake_run  # type: ignore[assignment]
    try:
        from forgelab.core.paths import Workbook

        runner.run_nbval(Workbook(ROOT, ROOT), course, "solution")
    finally:
        runner.subprocess.run = original  # type: ignore[assignment]
    expected = [path for language in ("en", "zh") for path in
                (opening_notebook(language), *(stage.notebook_in(language) for stage in course.stages))]
    assert expected[0] == OPENING_NOTEBOOK and expected[len(course.stages) + 1] == "notebooks/zh/00-opening.ipynb"
    # one pytest per edition (they run side by side, so in either order), each edition's opening first
    half = len(course.stages) + 1
    assert sorted(seen) == sorted([nbval_command(expected[:half], False), nbval_command(expected[half:], False)])


def test_a_missing_opening_text_fails_the_build_check(workbook) -> None:
    source = workbook.root / "course/course.toml"
    text = source.read_text(encoding="utf-8")
    assert re.search(r"^concept_agent_misuse = ", text, re.M)
    source.write_text(re.sub(r"^concept_agent_misuse = ", "concept_agent_misuses = ", text, flags=re.M),
                      encoding="utf-8")
    result = workbook.run("build", "--check", timeout=600)
    assert result.returncode != 0
    assert ("out of date: notebooks/00-opening.ipynb — course/course.toml [text.en]: missing key(s) "
            "concept_agent_misuse") in result.stdout
    site = workbook.run("site", "build", "--out", str(workbook.root / "site-out"), timeout=600)
    assert site.returncode != 0 and "concept_agent_misuse" in site.output


def test_a_changed_opening_text_makes_the_notebook_stale(workbook) -> None:
    source = workbook.root / "course/course.toml"
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace('opening_title = "', 'opening_title = "First: ', 1), encoding="utf-8")
    result = workbook.run("build", "--check", timeout=600)
    assert "out of date: notebooks/00-opening.ipynb — cells differ from course/course.toml" in result.stdout


@pytest.fixture(scope="module")
def index_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    from forgelab.core.registry import load_course
    from forgelab.site.builder import build_site

    out = tmp_path_factory.mktemp("opening-site") / "site"
    build_site(load_course(ROOT), out)
    return (out / "index.html").read_text(encoding="utf-8")


def _visible(page: str) -> str:
    return _flat(html.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_the_course_page_opens_with_the_same_opening(course, index_html: str) -> None:
    section = index_html[index_html.index('<section id="opening"'):index_html.index("</section>",
                                                                                   index_html.index('id="opening"'))]
    visible = _visible(section)
    texts = opening_texts(course)
    for key in OPENING_KEYS:
        if key == "recovery_point":
            continue
        plain = _visible(re.sub(r"`([^`]*)`", r"\1", texts[key]).replace("**", "").replace("*", ""))
        assert plain[:120] in visible, f"the page's opening lacks {key}"
    for _, title in CONCEPTS:
        assert f"<h4>{escape(title)}</h4>" in section
    assert index_html.index('id="opening"') < index_html.index('id="lab"') < index_html.index('id="stages"')
