"""The learner's JupyterLab, driven in Chromium: `make lab` in the unzipped learner bundle.

What a learner meets: JupyterLab opens on the opening notebook, its contents reach ``forge/`` (the
files they edit), the notebooks' figures load (they live under ``course/``), Run All on a stage
notebook ends with the stage summary and no error, and the hint button reveals a hint. The bundle is
built from the working tree under test (a disposable git clone), so the repository is never written.
Screenshots go to ``test-artifacts/lab/``.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from browser import chromium, require_chromium  # noqa: F401 - chromium is a fixture
from make_lab import RunningLab, running_make_lab
from released import released_zip, unzip

# One JupyterLab per test run: the module's tests share one xdist worker (make test runs --dist loadgroup)
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("make-lab")]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "lab"
VENV = ROOT / ".venv"
WAIT_MS = 120_000  # a page, a kernel start, a widget on two busy cores
RUN_ALL_S = 480  # Run All runs the stage tests through the judge: minutes when the machine is crowded
NO_NETWORK = {"server": "http://127.0.0.1:9", "bypass": "127.0.0.1"}  # port 9 (discard): nothing listens
STEP_MS = 2_000  # one look after one scroll of the notebook, while a cell may come into view


def _unzipped_bundle(factory: pytest.TempPathFactory, into: Path) -> Path:
    """The learner bundle of the working tree under test, unzipped the way a learner unzips it."""
    return unzip(released_zip(factory), into / "learner")


@dataclass(frozen=True)
class Lab:
    running: RunningLab
    root: Path

    @property
    def start_url(self) -> str:
        return self.running.start_path

    def url(self, path: str) -> str:
        return self.running.url(path)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    require_chromium()
    if not (VENV / "bin" / "jupyter").is_file():
        pytest.skip("needs the workbook's .venv (make install)")
    root = _unzipped_bundle(tmp_path_factory, tmp_path_factory.mktemp("bundle"))
    home = tmp_path_factory.mktemp("jupyter-home")
    # every cell in the page: JupyterLab's default windowing draws only the cells in view, and on a crowded
    # machine it can leave the view blank after a long Run All (the outputs exist, the page shows none)
    tracker = home / "user-settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True, exist_ok=True)
    tracker.write_text('{"windowingMode": "none"}\n', encoding="utf-8")
    stamp = VENV / ".forge-workbook-installed"
    # the tabs JupyterLab restores live in a folder of this run (a learner's fresh bundle has an empty one too):
    # never in the repository's .venv, where an earlier run's tabs would open notebooks and start kernels here
    workspaces = f"LAB_WORKSPACES={home / 'lab-workspaces'}"
    with running_make_lab(root, home, ["-o", str(stamp), f"VENV={VENV}", workspaces]) as running:
        yield Lab(running, root)


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    # JupyterLab needs nothing from outside this machine: everything but 127.0.0.1 goes to a proxy that is not
    # there. (Not Playwright's context.route: with request interception on, JupyterLab's notebook never gets a
    # kernel session — "No Kernel | Initializing" — even when the route lets every local request through.)
    context = chromium.new_context(viewport={"width": 1300, "height": 950}, proxy=NO_NETWORK)
    context.set_default_timeout(WAIT_MS)
    tab = context.new_page()
    try:
        yield tab
    finally:
        context.close()
        expect.set_options(timeout=5_000)  # Playwright's default again, for the modules after this one


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _open_notebook(page: Any, lab: Lab, path: str, workspace: str) -> None:
    """Open ``path`` alone, in a workspace of its own (``lab/workspaces/NAME/tree/PATH``): no tab an earlier test
    left is restored beside it, so every selector below meets this notebook only."""
    from playwright.sync_api import expect

    page.goto(lab.url(f"lab/workspaces/{workspace}/tree/{path}"))
    expect(page.locator(".jp-Notebook .jp-Cell").first).to_be_attached()


def _wait_kernel_ready(page: Any, lab: Lab, path: str) -> None:
    """Until the notebook's kernel has started and is idle, as the server reports it (its REST API), and the
    notebook's execution indicator (its ``data-status``, not its words) says idle too."""
    from playwright.sync_api import expect

    try:
        lab.running.wait_kernel_idle(path, timeout=WAIT_MS / 1000)
    except AssertionError:
        _shot(page, f"kernel-{path.rsplit('/', 1)[1]}-failed")
        raise
    expect(page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator")).to_have_attribute(
        "data-status", "idle")


def _scroll_notebook(page: Any, pixels: int) -> None:
    page.evaluate("p => { for (const o of document.querySelectorAll('.jp-WindowedPanel-outer')) o.scrollTop += p; }",
                  pixels)


def _reveal(page: Any, locator: Any, *, pixels: int, timeout_s: float, what: str) -> Any:
    """Scroll the notebook by ``pixels`` at a time until ``locator`` is in the page (a virtualised notebook adds a
    cell only once it comes near the view); each look is Playwright's own auto-waiting ``expect``."""
    from playwright.sync_api import expect

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            expect(locator.first).to_be_attached(timeout=STEP_MS)
            return locator.first
        except AssertionError:
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} never appeared within {timeout_s:g} s") from None
            _scroll_notebook(page, pixels)


def test_make_lab_opens_the_opening_notebook_in_a_file_browser_that_reaches_forge(lab: Lab, page: Any) -> None:
    from playwright.sync_api import expect

    assert lab.start_url == "lab/tree/notebooks/00-opening.ipynb"
    page.goto(lab.url(lab.start_url))
    expect(page.locator(".jp-Notebook .jp-MarkdownCell h1").first).to_be_visible()
    items = page.locator(".jp-DirListing-item .jp-DirListing-itemName")
    expect(items.filter(has_text="01-instruction-hierarchy.ipynb")).to_have_count(1)  # the notebooks folder
    _shot(page, "opening")
    reached = page.evaluate("fetch('http://example.org/', {mode: 'no-cors'}).then(() => 'reached', () => 'blocked')")
    assert reached == "blocked"  # the guard of the page fixture holds
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
    from playwright.sync_api import expect

    failed: list[str] = []
    page.on("response", lambda response: failed.append(response.url) if response.status >= 400
            and "/files/" in response.url else None)
    number = notebook.rsplit("/", 1)[1][:2]
    _open_notebook(page, lab, notebook, f"figure-{number}-{'zh' if '/zh/' in notebook else 'en'}")
    title = f"阶段 {number}" if "/zh/" in notebook else f"Stage {number}"
    expect(page.locator(".jp-Notebook .jp-MarkdownCell h1").first).to_have_text(re.compile("^" + re.escape(title)))
    image = _reveal(page, page.locator(f".jp-RenderedMarkdown img[src*='{plot}']"), pixels=600, timeout_s=60,
                    what=f"the {plot} figure of notebook {number}")
    if diagram:  # JupyterLab draws the Mermaid block itself (as an image of the SVG), offline
        drawn = page.locator(".jp-RenderedMermaid img").first
        drawn.scroll_into_view_if_needed()
        expect(drawn).to_have_js_property("complete", True)
        assert drawn.evaluate("img => img.naturalWidth") > 100
        assert "e17" in page.locator(".jp-RenderedMermaid figcaption").first.inner_text() + (
            drawn.get_attribute("alt") or "")
        _shot(page, f"diagram-{number}-zh" if "/zh/" in notebook else f"diagram-{number}")
    image.scroll_into_view_if_needed()
    expect(image).to_have_js_property("complete", True)
    _shot(page, f"figure-{number}-zh" if "/zh/" in notebook else f"figure-{number}")
    assert image.evaluate("img => img.naturalWidth") > 100, failed
    assert failed == []


@pytest.mark.timeout(RUN_ALL_S + 300)
def test_run_all_on_the_starter_ends_with_the_summary_and_the_hint_button_follows_the_failure(lab: Lab,
                                                                                              page: Any) -> None:
    from playwright.sync_api import expect

    notebook = "notebooks/01-instruction-hierarchy.ipynb"
    _open_notebook(page, lab, notebook, "run-all-01")
    _wait_kernel_ready(page, lab, notebook)
    page.click(".lm-MenuBar-itemLabel:text-is('Run')")  # the Run menu
    page.click("li[data-command='runmenu:run-all']")
    # the last cell, lab.summary(), prints the stage at a glance once every cell before it has run
    summary = page.locator(".jp-OutputArea-output:has-text('Still open:')")
    try:
        _reveal(page, summary, pixels=100_000, timeout_s=RUN_ALL_S, what="the stage summary after Run All")
    except AssertionError:
        _shot(page, "run-all-01-failed")
        last_outputs = page.eval_on_selector_all(
            ".jp-Notebook .jp-CodeCell", "cells => cells.slice(-3).map(c => c.innerText.slice(-600))")
        raise AssertionError(f"Run All never reached the stage summary; the last cells show: {last_outputs}") from None
    expect(summary).to_have_count(1)
    lab.running.wait_kernel_idle(notebook, timeout=WAIT_MS / 1000)  # Run All has ended
    summary.scroll_into_view_if_needed()
    _shot(page, "run-all-01")
    cell = page.locator(".jp-CodeCell", has=summary)  # the summary: its title, its table of parts, what is open
    assert "at a glance" in cell.inner_text()
    expect(cell.locator("table.forgelab-table", has_text="stage tests")).to_have_count(1)
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    tracebacks = [text for text in errors.all_inner_texts() if "Traceback" in text]
    assert tracebacks == []
    button = _reveal(page, page.locator(".jp-OutputArea-output button:has-text('Show the next hint')"), pixels=-500,
                     timeout_s=60, what="the hint button of notebook 01 after Run All")
    button.scroll_into_view_if_needed()
    button.click()
    # the hint follows the test cell's first failing test: on the starter, the first test fails in `explain`, and
    # the stage's [hint_rungs] give it hints 4–6 — so hint 4 comes first, not the ladder's first (about rank_of)
    first = "test_lower_trust_instruction_cannot_override_system"
    expect(page.locator(".jp-OutputArea-output li[value='4']:has-text('explain')")).to_be_visible()
    expect(page.locator(f".jp-OutputArea-output p:has-text('hint 4 is for {first}')")).to_be_visible()
    _shot(page, "hint-01")
    # Run All writes no verification evidence; the hint is kept in the learning record, and only there
    evidence = lab.root / "evidence"
    assert sorted(p.name for p in evidence.iterdir()) == ["learning-record.json"]
    record = json.loads((evidence / "learning-record.json").read_text(encoding="utf-8"))
    hints = record["stages"]["01"]["hints"]
    assert hints["deepest"] == 1
    assert [(shown["rung"], shown["failing_test"], shown["addressed"]) for shown in hints["shown"]] == [(4, first, True)]


@pytest.mark.timeout(RUN_ALL_S + 300)
def test_re_check_on_save_updates_the_table_after_a_save_in_the_editor(lab: Lab, page: Any) -> None:
    """The test cell's toggle: off, it shows nothing; on, the one table lab.run_tests() showed follows each save of
    the module made in JupyterLab's own editor (another browser tab), updated in place, through the judge as
    lab.run_tests() runs it: no second table, and a footer that says to save, never to run the cell again."""
    from playwright.sync_api import expect

    notebook = "notebooks/01-instruction-hierarchy.ipynb"
    module = lab.root / "forge" / "instructions.py"
    starter = module.read_text(encoding="utf-8")
    solution = (ROOT / "solutions" / "forge" / "instructions.py").read_text(encoding="utf-8")
    _open_notebook(page, lab, notebook, "recheck-01")
    _wait_kernel_ready(page, lab, notebook)
    cell = page.locator(".jp-CodeCell:has(.jp-InputArea-editor:has-text('lab.recheck_on_save()'))")
    editor = None
    try:
        prompt = _reveal(page, cell.locator(".jp-InputPrompt"), pixels=600, timeout_s=120, what="the test cell")
        prompt.scroll_into_view_if_needed()
        prompt.click()  # the test cell is the active one: run every cell above it, then the test cell itself
        page.click(".lm-MenuBar-itemLabel:text-is('Run')")
        page.click("li[data-command='notebook:run-all-above']")
        lab.running.wait_kernel_idle(notebook, timeout=RUN_ALL_S)
        prompt.click()
        page.keyboard.press("Shift+Enter")
        toggle = cell.locator(".jp-OutputArea-output button:has-text('Re-check on save')")
        expect(toggle).to_be_visible(timeout=RUN_ALL_S * 1000)
        not_all = re.compile(r"required tests: (?!13/)\d+/13 passed")  # the starter: some tests fail
        printed = cell.locator(".jp-OutputArea-output").filter(has_text=not_all)
        expect(printed).to_have_count(1)
        live = cell.locator(".jp-OutputArea-output .widget-html")
        expect(live).to_have_text("")  # off: nothing under the toggle
        toggle.click()
        expect(live).to_contain_text("every save of forge/instructions.py checks again", timeout=RUN_ALL_S * 1000)
        expect(printed).to_contain_text("re-checking is on")  # the same table, its footer true now
        expect(printed).not_to_contain_text("run this cell again")
        tables = cell.locator(".jp-OutputArea-output").filter(has_text="required tests:")
        expect(tables).to_have_count(1)
        _shot(page, "recheck-on-01")

        editor = page.context.new_page()  # the module in JupyterLab's file editor, in a tab of its own
        editor.goto(lab.url("lab/workspaces/recheck-edit/tree/forge/instructions.py"))
        text = editor.locator(".jp-FileEditor .cm-content")
        expect(text).to_contain_text("def rank_of")
        text.click()
        editor.keyboard.press("Control+a")
        editor.keyboard.insert_text(solution)
        editor.keyboard.press("Control+s")
        expect(editor.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty")).to_have_count(0)
        assert module.read_text(encoding="utf-8") == solution  # saved by the editor, as typed

        expect(live).to_contain_text("re-checked after saving forge/instructions.py", timeout=RUN_ALL_S * 1000)
        expect(tables).to_contain_text("required tests: 13/13 passed")  # the table, updated in place
        expect(tables).to_have_count(1)
        expect(printed).to_have_count(0)  # no stale table is left above it
        page.bring_to_front()
        live.scroll_into_view_if_needed()
        _shot(page, "recheck-saved-01")
        toggle.click()
        expect(live).to_contain_text("Re-checking is off")
    finally:
        if editor is not None:
            editor.close()
        module.write_text(starter, encoding="utf-8")  # the next test meets the starter again
