"""Notebook tables are HTML tables, so they line up in JupyterLab in both editions.

A text table lines up only where every Chinese character is exactly two columns wide: a terminal does that, the
notebook's monospace fallback font does not (stage 09's 分数 header ended two characters left of 0.97). So what a
notebook shows as a table — the experiment card, the stage tests, the summary, the opening's stage list and the
worked demonstrations' tables (``lab.table``) — is a display with an HTML ``<table>`` beside its text (a terminal,
nbval and a log still read the text), and a demonstration's reference-output cell keeps the same table.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from forgelab.authoring.editions import same_demo_code
from forgelab.core.display import Grid, table

ROOT = Path(__file__).resolve().parents[2]
EDITIONS = {"en": ROOT / "notebooks", "zh": ROOT / "notebooks" / "zh"}
REFERENCE = "forgelab-reference-output"
# the worked demonstrations that show a table, and a cell of it
DEMO_TABLES = {"02": "write-policy", "03": "search-form-v1", "08": "write_allowed", "09": "bo-deploy", "10": "system",
               "11": "hit-00"}


def _notebooks(language: str) -> list[Path]:
    return sorted(path for path in EDITIONS[language].glob("[01][0-9]-*.ipynb") if not path.name.startswith("00-"))


def _cells(path: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return cells


def _html(cell: dict[str, Any]) -> str:
    return "".join("".join(out.get("data", {}).get("text/html", "")) for out in cell.get("outputs", []))


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def test_a_grid_is_an_escaped_html_table_beside_the_text_table() -> None:
    grid = Grid(["名称", "分数", "说明"], [("a<b>", "0.97", "x & y"), ("长一些的名称", "12.5", "")], right=(1,))
    bundle = grid._repr_mimebundle_()
    assert bundle["text/plain"] == table(["名称", "分数", "说明"], [("a<b>", "0.97", "x & y"), ("长一些的名称", "12.5", "")],
                                         right=(1,))
    html = bundle["text/html"]
    assert html.startswith("<table") and "<b>" not in html and "a&lt;b&gt;" in html and "x &amp; y" in html
    cells = re.findall(r'<t[hd] style="text-align: (\w+);[^>]*>([^<]*)</t[hd]>', html)
    assert [text for _align, text in cells[:3]] == ["名称", "分数", "说明"]
    assert {text: align for align, text in cells}["0.97"] == "right" and {t: a for a, t in cells}["12.5"] == "right"
    assert {text: align for align, text in cells}["长一些的名称"] == "left"


def test_a_grid_without_headers_pads_its_labels_by_display_width() -> None:
    grid = Grid([], [("实验 id", "x"), ("模块", "forge/a.py")], indent=2)
    assert grid.text().splitlines() == ["  实验 id x", "  模块    forge/a.py"]
    assert "<thead>" not in grid.html() and "margin-left: 2ch" in grid.html()


@pytest.mark.parametrize("language", sorted(EDITIONS))
def test_the_card_and_the_stage_tests_are_html_tables_in_every_stage_notebook(language: str) -> None:
    notebooks = _notebooks(language)
    assert len(notebooks) == 11
    for path in notebooks:
        cells = _cells(path)
        card = next(cell for cell in cells if _source(cell).strip() == "lab.card()")
        tests = next(cell for cell in cells if _source(cell).startswith("lab.run_tests()"))
        assert "<table" in _html(card), f"{path.name}: the experiment card is not an HTML table"
        assert "<table" in _html(tests) and "test_" in _html(tests), f"{path.name}: the stage tests are not a table"


@pytest.mark.parametrize("language", sorted(EDITIONS))
def test_the_opening_lists_the_stages_in_an_html_table(language: str) -> None:
    cells = _cells(EDITIONS[language] / "00-opening.ipynb")
    chain = next(cell for cell in cells if "Grid(" in _source(cell))
    assert _html(chain).count("<tr>") == 11 and "forge/instructions.py" in _html(chain)


@pytest.mark.parametrize("language", sorted(EDITIONS))
@pytest.mark.parametrize("number", sorted(DEMO_TABLES))
def test_a_demonstrations_table_is_html_and_its_reference_cell_keeps_it(language: str, number: str) -> None:
    path = next(EDITIONS[language].glob(f"{number}-*.ipynb"))
    cells = _cells(path)
    shown = [index for index, cell in enumerate(cells)
             if "lab.table(" in _source(cell) and DEMO_TABLES[number] in _html(cell)]
    assert shown, f"{path.name}: no demonstration cell shows its table as HTML"
    index = shown[0]
    reference = cells[index + 1]
    assert REFERENCE in reference["metadata"].get("tags", [])
    tables = re.findall(r"<table.*?</table>", _html(cells[index]), flags=re.S)
    assert tables and all(found in _source(reference) for found in tables)


def test_no_chinese_demonstration_pads_a_table_by_hand() -> None:
    """A Chinese header padded with spaces lines up only in a terminal: the demonstrations use ``lab.table``."""
    for demo in sorted((ROOT / "course" / "stages").glob("*/demo.py")):
        for number, line in enumerate(demo.read_text(encoding="utf-8").splitlines(), 1):
            if line.rstrip().endswith("# [zh]"):
                assert not re.search(r'" \* \d+|显示宽度对齐', line), f"{demo.parent.name}/demo.py:{number}: {line}"


def test_the_editions_may_differ_in_a_tables_words_but_not_in_its_rows() -> None:
    english = 'rows = [(a, b) for a, b in pairs]\nlab.table(["id", "score"], rows, right=(1,))'
    chinese = 'rows = [(a, b) for a, b in pairs]\nlab.table(["编号", "分数"], rows, right=(1,))'
    assert same_demo_code(english) == same_demo_code(chinese)
    other_rows = 'rows = [(a, b) for a, b in pairs if b]\nlab.table(["编号", "分数"], rows, right=(1,))'
    assert same_demo_code(english) != same_demo_code(other_rows)


@pytest.mark.parametrize("language", sorted(EDITIONS))
def test_the_chapter_projects_report_is_two_html_tables_of_labels_and_lines(language: str) -> None:
    """Stage 08's report (the spec and its audit trail) padded its labels by hand, two columns to a Chinese
    character: in JupyterLab its values drifted left of each other. It is two tables now, one cell per label and
    per line, nothing padded."""
    cells = _cells(next(EDITIONS[language].glob("08-*.ipynb")))
    demo = next(cell for cell in cells if "extraction_tables(" in _source(cell))
    tables = re.findall(r"<table.*?</table>", _html(demo), flags=re.S)
    assert len(tables) == 2, f"the spec and the audit trail are not two HTML tables: {len(tables)}"
    rows = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", tables[0])]
    labels = {"en": ["goal", "inputs", "outputs", "acceptance"], "zh": ["目标", "输入", "输出", "验收标准"]}[language]
    assert [row[0] for row in rows if row[0]] == labels + ["write_allowed"], rows
    assert all(len(row) == 2 and row[0] == row[0].strip() and row[1] == row[1].strip() for row in rows), rows
    audit = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", tables[1])]
    assert any(row[0] == "" and row[1] for row in audit), "a value's second line is its own row under no label"
