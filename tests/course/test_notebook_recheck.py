"""Re-check on save in the notebook's test cell: off until it is turned on (no output, so nbval compares the cell
as before), then a check at once and one after every save of the stage's module, the table under the toggle
updated in place, the checks run in a warm worker (forgelab/judge/warm.py) that lab.run_tests() shares while the
toggle is on, or cold when it cannot start; off again, the watcher and the worker are gone (forgelab/learner/recheck.py, StageTools.recheck_on_save).
The browser test in test_lab_browser.py does the same in JupyterLab, with the real judge."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import ipywidgets
import pytest

from conftest import WorkbookCopy, wait_until
from forgelab.judge.warm import WarmUnavailable, WarmWorker
from forgelab.learner.recheck import Rechecker

WAIT_S = 60


def _stand_in_table(outcome: Any, *_footer: Any) -> dict[str, str]:
    """The test table a stand-in outcome shows: which check it was, as text and as HTML."""
    return {"text/plain": f"TABLE OF RUN {outcome.run}", "text/html": f"<p>TABLE OF RUN {outcome.run}</p>"}


def save(path: Path, text: str) -> None:
    """As an editor saves: a new file beside it, renamed over it."""
    scratch = path.with_name(f".{path.name}.saving")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, path)


def test_the_rechecker_checks_once_then_after_each_save_of_its_file_only(tmp_path: Path) -> None:
    module = tmp_path / "forge" / "instructions.py"
    module.parent.mkdir()
    module.write_text("first\n", encoding="utf-8")
    calls: list[list[Path]] = []
    watcher = Rechecker(module, calls.append).start()
    try:
        wait_until(lambda: calls or None, timeout=WAIT_S, what="the first check")
        save(module.parent / "other.py", "not the module\n")
        save(module, "second\n")
        wait_until(lambda: len(calls) >= 2 or None, timeout=WAIT_S, what="a check after the save")
        assert calls == [[], [module.resolve()]]  # the other file's save ran nothing
    finally:
        watcher.stop()
    assert not watcher.running



def test_the_rechecker_checks_in_the_language_of_the_cell_that_turned_it_on(tmp_path: Path) -> None:
    """Its thread runs in a copy of its maker's context: a Chinese notebook's table stays Chinese after a save."""
    import contextvars

    from forgelab.core import i18n

    module = tmp_path / "instructions.py"
    module.write_text("first\n", encoding="utf-8")
    heard: list[str] = []

    def turned_on() -> Rechecker:
        i18n.use("zh")
        return Rechecker(module, lambda _saved: heard.append(i18n.active())).start()

    watcher = contextvars.copy_context().run(turned_on)
    try:
        wait_until(lambda: heard or None, timeout=WAIT_S, what="the first check")
    finally:
        watcher.stop()
    assert heard[0] == "zh" and i18n.active() == "en"

@pytest.fixture
def tools(workbook: WorkbookCopy, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("FORGELAB_ROOT", str(workbook.root))
    monkeypatch.setenv("FORGELAB_WORKSPACE", str(workbook.root))
    from forgelab.learner.notebook import stage_tools

    return stage_tools("01", lang="en")


def test_the_toggle_is_off_and_silent_until_turned_on(tools: Any, workbook: WorkbookCopy,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[Any] = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    runs: list[int] = []

    def check(*_args: Any, **_kwargs: Any) -> Any:  # the judge's part is the browser test's: here, the wiring
        runs.append(len(runs) + 1)
        return SimpleNamespace(run=len(runs), tests=(), transfer_tests=(), stale=frozenset())

    monkeypatch.setattr(tools.bench, "check", check)
    monkeypatch.setattr(tools, "_tests_bundle", _stand_in_table)
    shown_when_kept: list[str] = []  # what the toggle showed when the check's records were kept (after the table)
    monkeypatch.setattr(tools.bench, "record", lambda outcome, *_args, **_kwargs: shown_when_kept.append(live.value))
    assert tools.recheck_on_save() is None
    (box,) = shown
    toggle, live = box.children
    assert isinstance(toggle, ipywidgets.ToggleButton) and toggle.value is False
    assert toggle.description == "Re-check on save" and live.value == ""
    assert runs == [] and tools._rechecker is None

    toggle.value = True
    wait_until(lambda: "TABLE OF RUN 1" in live.value or None, timeout=WAIT_S, what="the first table")
    assert "every save of forge/instructions.py checks again" in live.value
    save(workbook.root / "forge" / "instructions.py", (workbook.root / "forge" / "instructions.py").read_text() + "\n")
    wait_until(lambda: "TABLE OF RUN 2" in live.value or None, timeout=WAIT_S, what="the table after a save")
    assert "re-checked after saving forge/instructions.py" in live.value and "RUN 1" not in live.value
    wait_until(lambda: len(shown_when_kept) >= 2 or None, timeout=WAIT_S, what="the records of the second check")
    assert "TABLE OF RUN 1" in shown_when_kept[0] and "TABLE OF RUN 2" in shown_when_kept[1]

    watcher = tools._rechecker
    toggle.value = False
    assert tools._rechecker is None and not watcher.running
    assert "Re-checking is off" in live.value


def test_the_toggle_checks_in_a_warm_worker_shared_with_run_tests_and_ends_it(tools: Any, workbook: WorkbookCopy,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[Any] = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    given: list[Any] = []

    def check(*_args: Any, warm: Any = None, **_kwargs: Any) -> Any:
        given.append(warm)
        return SimpleNamespace(run=len(given), tests=(), transfer_tests=(), stale=frozenset())

    monkeypatch.setattr(tools.bench, "check", check)
    monkeypatch.setattr(tools.bench, "record", lambda *_args, **_kwargs: None)  # a stand-in outcome has no records
    monkeypatch.setattr(tools, "_tests_bundle", _stand_in_table)
    tools.run_tests()  # before the toggle is on: no worker, the cold path
    assert given == [None]
    tools.recheck_on_save()
    (box,) = shown
    toggle, live = box.children
    toggle.value = True
    wait_until(lambda: "TABLE OF RUN 2" in live.value or None, timeout=WAIT_S, what="the first warm table")
    worker = given[1]
    assert isinstance(worker, WarmWorker) and worker.alive
    tools.run_tests()  # while it is on, lab.run_tests() uses the same worker
    assert given[2] is worker
    toggle.value = False
    assert not worker.alive and tools._warm is None  # off: the worker and all it started are gone
    tools.run_tests()
    assert given[3] is None


def test_the_toggle_says_once_why_it_checks_cold_when_the_worker_cannot_start(tools: Any, workbook: WorkbookCopy,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[Any] = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    starts: list[int] = []

    def cannot_start(cls: type[WarmWorker], timeout_s: float = 0) -> WarmWorker:
        starts.append(1)
        raise WarmUnavailable("the warm worker could not start (no fork here)")

    monkeypatch.setattr(WarmWorker, "start", classmethod(cannot_start))
    given: list[Any] = []

    def check(*_args: Any, warm: Any = None, **_kwargs: Any) -> Any:
        given.append(warm)
        return SimpleNamespace(run=len(given), tests=(), transfer_tests=(), stale=frozenset())

    monkeypatch.setattr(tools.bench, "check", check)
    monkeypatch.setattr(tools.bench, "record", lambda *_args, **_kwargs: None)  # a stand-in outcome has no records
    monkeypatch.setattr(tools, "_tests_bundle", _stand_in_table)
    tools.recheck_on_save()
    (box,) = shown
    toggle, live = box.children
    toggle.value = True
    wait_until(lambda: "TABLE OF RUN 1" in live.value or None, timeout=WAIT_S, what="the first cold table")
    save(workbook.root / "forge" / "instructions.py", (workbook.root / "forge" / "instructions.py").read_text() + "\n")
    wait_until(lambda: "TABLE OF RUN 2" in live.value or None, timeout=WAIT_S, what="the cold table after a save")
    assert given == [None, None] and starts == [1]  # tried once, then cold every time
    assert ("the warm worker could not start (no fork here): every save runs a whole cold check instead "
            "(the same verdict, only later)") in live.value
    toggle.value = False
