"""The Chinese bundle's JupyterLab speaks Chinese; the English bundle's is unchanged.

`make lab` in a bundle released with ``--lang zh`` installs JupyterLab's Simplified Chinese language pack (the
``zh`` extra, from the package index) and writes ``@jupyterlab/translation-extension:plugin`` ``{"locale":
"zh_CN"}`` into the venv's settings overrides — a default of that JupyterLab only, which the learner can change
in Settings → Language. Driven in Chromium: the menu bar reads 文件, 编辑 …; make's own words are Chinese too.
Screenshots go to ``test-artifacts/lab/``.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser import chromium, require_chromium  # noqa: F401 - chromium is a fixture
from make_lab import RunningLab, running_make_lab
from released import released_zip, unzip

# one JupyterLab at a time: this module's lab and test_lab_browser's share one xdist worker (--dist loadgroup)
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("make-lab")]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "lab"
VENV = ROOT / ".venv"
WAIT_MS = 120_000
TRANSLATION = "@jupyterlab/translation-extension:plugin"


def _unzipped(factory: pytest.TempPathFactory, into: Path, language: str) -> Path:
    return unzip(released_zip(factory, language), into / "learner")


def test_the_zh_extra_is_the_language_pack_and_only_the_chinese_bundle_asks_for_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert [item.split(">")[0] for item in project["optional-dependencies"]["zh"]] == ["jupyterlab-language-pack-zh-CN"]
    assert not any("language-pack" in item for item in project["dependencies"])  # the English bundle: unchanged
    overrides = json.loads((ROOT / "forgelab/data/jupyterlab-overrides-zh.json").read_text(encoding="utf-8"))
    assert overrides == {TRANSLATION: {"locale": "zh_CN"}}


def _make_says(bundle: Path, target: str) -> str:
    """What ``make TARGET`` would run in ``bundle`` (``-n``: nothing is run)."""
    done = subprocess.run(["make", "--no-print-directory", "-n", target], cwd=bundle, capture_output=True, text=True,
                          timeout=60)
    return done.stdout


def _extras(bundle: Path) -> str:
    """The extras ``make`` installs the workbook with in ``bundle`` (its ``EXTRAS`` variable)."""
    done = subprocess.run(["make", "--no-print-directory", "-p", "-n", "help"], cwd=bundle, capture_output=True,
                          text=True, timeout=60)
    return next(line.split(":=", 1)[1].strip() for line in done.stdout.splitlines() if line.startswith("EXTRAS :="))


@pytest.fixture(scope="module")
def zh_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningLab, Path]]:
    require_chromium()
    if not (VENV / "bin" / "jupyter").is_file():
        pytest.skip("needs the workbook's .venv (make install)")
    root = _unzipped(tmp_path_factory, tmp_path_factory.mktemp("bundle-zh"), "zh")
    home = tmp_path_factory.mktemp("jupyter-home")
    # the course's venv stands in for the bundle's own (its dev extra holds the same language pack)
    with running_make_lab(root, home, ["-o", str(VENV / ".forge-workbook-installed"), f"VENV={VENV}"]) as running:
        yield running, root


def test_make_lab_in_the_chinese_bundle_speaks_chinese(zh_lab: tuple[RunningLab, Path]) -> None:
    lab, root = zh_lab
    assert lab.start_path == "lab/tree/notebooks/zh/00-opening.ipynb"
    dry = _make_says(root, "lab")
    assert "正在用 JupyterLab 打开" in dry and "Opening JupyterLab" not in dry
    assert "jupyterlab-overrides-zh.json" in dry
    assert _extras(root) == "[zh]"  # make installs the language pack from the package index
    with urllib.request.urlopen(lab.url(f"lab/api/settings/{TRANSLATION}"), timeout=30) as response:
        setting = json.loads(response.read())
    overrides = VENV / "share" / "jupyter" / "lab" / "settings" / "overrides.d"
    listing = sorted(path.name for path in overrides.glob("*")) if overrides.is_dir() else "(no such folder)"
    # the overrides are read once, when the server starts: say what the folder holds now and what the lab said
    assert setting["schema"]["properties"]["locale"]["default"] == "zh_CN", (
        f"JupyterLab's locale default is {setting['schema']['properties']['locale']['default']!r}; "
        f"{overrides} holds {listing}; the lab's last words:\n{lab.said()}")
    assert setting["raw"] in ("{}", "")  # a default of this JupyterLab, not a change of the learner's settings


def test_the_chinese_bundles_jupyterlab_has_a_chinese_file_menu(zh_lab: tuple[RunningLab, Path], chromium: Any) -> None:
    from playwright.sync_api import expect

    lab, _root = zh_lab
    context = chromium.new_context(viewport={"width": 1300, "height": 900})
    context.set_default_timeout(WAIT_MS)
    context.route(lambda url: not url.startswith(("http://127.0.0.1:", "data:", "blob:")), lambda route: route.abort())
    page = context.new_page()
    try:
        page.goto(lab.url(lab.start_path))
        menu = page.locator("#jp-MainMenu .lm-MenuBar-itemLabel")
        expect(menu.first).to_have_text("文件", timeout=WAIT_MS)
        expect(menu.nth(1)).to_have_text("编辑")
        expect(page.locator(".jp-Notebook .jp-MarkdownCell h1").first).to_be_visible(timeout=WAIT_MS)
        menu.first.click()
        expect(page.locator(".lm-Menu-itemLabel", has_text="新建").first).to_be_visible()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "zh-file-menu.png"))
    finally:
        context.close()


def test_the_english_bundle_installs_no_language_pack_and_sets_no_locale(tmp_path: Path,
                                                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    root = _unzipped(tmp_path_factory, tmp_path, "en")
    dry = _make_says(root, "lab")
    assert "Opening JupyterLab on" in dry and "rm -f" in dry and "forge-workbook-zh.json" in dry
    assert _extras(root) == ""


def test_a_chinese_table_lines_up_in_jupyterlab(zh_lab: tuple[RunningLab, Path], chromium: Any) -> None:
    """Stage 09's memory table, as JupyterLab draws it from the notebook: every cell of a column starts at the same x
    (right-aligned columns end at the same x), the Chinese header included — which a text table padded for a
    terminal does not do in the notebook's font. The shipped reference output (Markdown) is checked the same way."""
    from playwright.sync_api import expect

    lab, _root = zh_lab
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(WAIT_MS)
    context.route(lambda url: not url.startswith(("http://127.0.0.1:", "data:", "blob:")), lambda route: route.abort())
    page = context.new_page()
    try:
        page.goto(lab.url("lab/tree/notebooks/zh/09-memory-selection.ipynb"))
        tables = page.locator("table.forgelab-table", has_text="bo-deploy")
        expect(tables.first).to_be_attached(timeout=WAIT_MS)
        # JupyterLab draws only the cells near the view: with the cell's table in view, its reference cell below
        # (a Markdown cell holding the same table) is drawn too
        tables.first.scroll_into_view_if_needed()
        page.mouse.wheel(0, 600)
        expect(tables).to_have_count(2, timeout=WAIT_MS)  # the cell's output and its reference output
        for index in range(2):
            table = tables.nth(index)
            table.scroll_into_view_if_needed()
            expect(table).to_be_visible()
            # where each cell's text starts and ends on screen (a Range over its contents, not the cell's box)
            edges = table.evaluate("""t => [...t.rows].map(r => [...r.cells].map(c => {
                const range = document.createRange(); range.selectNodeContents(c);
                const b = range.getBoundingClientRect(); return [b.left, b.right]; }))""")
            header, *rows = edges
            assert len(rows) == 12 and len(header) == 6
            for column in range(6):  # 分数, 字符, 单位 (2–4) are right-aligned: their text ends at one x
                side = 1 if column in (2, 3, 4) else 0
                xs = sorted({round(row[column][side]) for row in edges})
                assert len(xs) == 1, f"table {index}: column {column}'s text {('starts', 'ends')[side]} at {xs}"
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            table.screenshot(path=str(ARTIFACTS / f"zh-table-{index}.png"))
        page.screenshot(path=str(ARTIFACTS / "zh-table-page.png"))
    finally:
        context.close()
