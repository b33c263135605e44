"""The learner's JupyterLab, driven in Chromium: `make lab` in the unzipped learner bundle.

What a learner meets: JupyterLab opens on the opening notebook, its contents reach ``forge/`` (the
files they edit), the notebooks' figures load (they live under ``course/``), Run All on a stage
notebook ends with the stage summary and no error, and the hint button reveals a hint. The bundle is
built from the working tree under test (a disposable git clone), so the repository is never written.
Screenshots go to ``test-artifacts/lab/``.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from browser import chromium, require_chromium  # noqa: F401 - chromium is a fixture
from make_lab import running_make_lab

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "lab"
VENV = ROOT / ".venv"
WAIT_MS = 120_000  # a page, a kernel start, a widget on two busy cores
RUN_ALL_S = 480  # Run All runs the stage tests through the judge: minutes when the machine is crowded


def _unzipped_bundle(into: Path) -> Path:
    """The learner bundle of the working tree under test, unzipped the way a learner unzips it."""
    import zipfile

    from git_workbook import git_workbook

    from forgelab.authoring.release.bundle import BUNDLE_NAME, build_bundle

    bundle = build_bundle(git_workbook(into / "course").root, into / "release").path
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(into / "learner")
    return into / "learner" / BUNDLE_NAME


@dataclass(frozen=True)
class Lab:
    base: str
    token: str
    start_url: str
    root: Path

    def url(self, path: str) -> str:
        return f"{self.base}{path}?token={self.token}"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    require_chromium()
    if not (VENV / "bin" / "jupyter").is_file():
        pytest.skip("needs the workbook's .venv (make install)")
    root = _unzipped_bundle(tmp_path_factory.mktemp("bundle"))
    home = tmp_path_factory.mktemp("jupyter-home")
    # every cell in the page: JupyterLab's default windowing draws only the cells in view, and on a crowded
    # machine it can leave the view blank after a long Run All (the outputs exist, the page shows none)
    tracker = home / "user-settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True, exist_ok=True)
    tracker.write_text('{"windowingMode": "none"}\n', encoding="utf-8")
    stamp = VENV / ".forge-workbook-installed"
    with running_make_lab(root, home, ["-o", str(stamp), f"VENV={VENV}"]) as running:
        yield Lab(running.base, running.token, running.start_path, root)


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 1300, "height": 950})
    context.set_default_timeout(WAIT_MS)
    # JupyterLab needs nothing from outside this machine
    context.route(lambda url: not url.startswith(("http://127.0.0.1:", "data:", "blob:")), lambda route: route.abort())
    tab = context.new_page()
    try:
        yield tab
    finally:
        context.close()


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _open_notebook(page: Any, lab: Lab, path: str) -> None:
    """Open ``path`` alone: ``reset`` drops the tabs an earlier test left in the saved workspace, so every
    selector below meets this notebook only (a restored, hidden opening notebook comes first in the page)."""
    page.goto(lab.url(f"lab/tree/{path}") + "&reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=WAIT_MS)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'], .jp-Toolbar-kernelStatus",
                           timeout=WAIT_MS)


def _scroll_notebook(page: Any, pixels: int) -> None:
    page.evaluate("p => { const o = document.querySelector('.jp-WindowedPanel-outer'); if (o) o.scrollTop += p; }",
                  pixels)


def test_make_lab_opens_the_opening_notebook_in_a_file_browser_that_reaches_forge(lab: Lab, page: Any) -> None:
    assert lab.start_url == "lab/tree/notebooks/00-opening.ipynb"
    page.goto(lab.url(lab.start_url))
    page.wait_for_selector(".jp-Notebook .jp-MarkdownCell h1", timeout=WAIT_MS)
    page.wait_for_selector(".jp-DirListing-item", timeout=WAIT_MS)
    _shot(page, "opening")
    listed = page.eval_on_selector_all(".jp-DirListing-item .jp-DirListing-itemName", "items => items.map(i => i.innerText)")
    assert "01-instruction-hierarchy.ipynb" in " ".join(listed)  # the browser shows the notebooks folder
    with urllib.request.urlopen(lab.url("api/contents/forge/instructions.py"), timeout=30) as response:
        assert response.status == 200  # the learner can open and edit their module in JupyterLab


@pytest.mark.parametrize(("notebook", "plot", "diagram"), [
    ("notebooks/02-context-selection.ipynb", "figure-budget", False),
    ("notebooks/zh/02-context-selection.ipynb", "figure-budget", False),
    ("notebooks/11-context-pipeline.ipynb", "figure-cache", True),  # the e17 closure in Mermaid, then the plot
    ("notebooks/zh/11-context-pipeline.ipynb", "figure-cache", True),
])
def test_a_stage_notebook_shows_its_figure_from_course_stages(lab: Lab, page: Any, notebook: str, plot: str,
                                                              diagram: bool) -> None:
    failed: list[str] = []
    page.on("response", lambda response: failed.append(response.url) if response.status >= 400
            and "/files/" in response.url else None)
    number = notebook.rsplit("/", 1)[1][:2]
    _open_notebook(page, lab, notebook)
    heading = page.inner_text(".jp-Notebook .jp-MarkdownCell h1")
    assert heading.startswith(f"阶段 {number}" if "/zh/" in notebook else f"Stage {number}"), heading
    image = None
    for _ in range(40):
        image = page.query_selector(f".jp-RenderedMarkdown img[src*='{plot}']")
        if image is not None:
            break
        _scroll_notebook(page, 600)
        page.wait_for_timeout(300)
    assert image is not None, f"the {plot} figure never appeared in notebook {number}"
    if diagram:  # JupyterLab draws the Mermaid block itself (as an image of the SVG), offline
        drawn = page.wait_for_selector(".jp-RenderedMermaid img", timeout=WAIT_MS)
        drawn.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 100", arg=drawn, timeout=WAIT_MS)
        assert "e17" in page.inner_text(".jp-RenderedMermaid figcaption") + (drawn.get_attribute("alt") or "")
        _shot(page, f"diagram-{number}-zh" if "/zh/" in notebook else f"diagram-{number}")
    image.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete", arg=image, timeout=WAIT_MS)
    _shot(page, f"figure-{number}-zh" if "/zh/" in notebook else f"figure-{number}")
    assert image.evaluate("img => img.naturalWidth") > 100, failed
    assert failed == []


@pytest.mark.timeout(RUN_ALL_S + 300)
def test_run_all_on_the_starter_ends_with_the_summary_and_the_hint_button_reveals_a_hint(lab: Lab, page: Any) -> None:
    _open_notebook(page, lab, "notebooks/01-instruction-hierarchy.ipynb")
    page.wait_for_selector(".jp-StatusBar-Item:has-text('| Idle')", timeout=WAIT_MS)  # its kernel is up
    page.click(".lm-MenuBar-itemLabel:text-is('Run')")  # the Run menu
    page.click("li[data-command='runmenu:run-all']")
    # the last cell, lab.summary(), prints the stage at a glance once every cell before it has run
    summary = page.locator(".jp-OutputArea-output:has-text('Still open:')")
    deadline = time.monotonic() + RUN_ALL_S
    while summary.count() == 0 and time.monotonic() < deadline:
        _scroll_notebook(page, 100_000)
        page.wait_for_timeout(1000)
    if summary.count() != 1:
        _shot(page, "run-all-01-failed")
    last_outputs = page.eval_on_selector_all(
        ".jp-Notebook .jp-CodeCell", "cells => cells.slice(-3).map(c => c.innerText.slice(-600))")
    assert summary.count() == 1, f"Run All never reached the stage summary; the last cells show: {last_outputs}"
    summary.scroll_into_view_if_needed()
    _shot(page, "run-all-01")
    assert "at a glance" in summary.inner_text()
    errors = page.query_selector_all(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    tracebacks = [node.inner_text() for node in errors if "Traceback" in node.inner_text()]
    assert tracebacks == []
    button = None
    for _ in range(60):
        button = page.query_selector(".jp-OutputArea-output button:has-text('Show the next hint')")
        if button is not None:
            break
        _scroll_notebook(page, -500)
        page.wait_for_timeout(250)
    assert button is not None, "no hint button in notebook 01 after Run All"
    button.scroll_into_view_if_needed()
    button.click()
    page.wait_for_selector(".jp-OutputArea-output li:has-text('rank_of')", timeout=WAIT_MS)  # hint 1 names rank_of
    _shot(page, "hint-01")
    # Run All writes no verification evidence; the hint is kept in the learning record, and only there
    evidence = lab.root / "evidence"
    assert sorted(p.name for p in evidence.iterdir()) == ["learning-record.json"]
    record = json.loads((evidence / "learning-record.json").read_text(encoding="utf-8"))
    assert record["stages"]["01"]["hints"]["deepest"] == 1
