"""Re-check on save updates one table in place (issue 32): the table ``lab.run_tests()`` shows is a display with an
id, and every re-check after a save replaces it (``update_display_data`` with that id) — no second table appears
under the toggle, and the footer says what is true: while re-checking is on, "save it", never "run this cell
again" (which would turn re-checking off). A real kernel runs the test cell; its messages are read as JupyterLab
reads them. The browser test in test_lab_browser.py watches the same in JupyterLab."""

from __future__ import annotations

import os
import queue
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, WorkbookCopy

MODULE = "forge/instructions.py"
NOT_ALL = re.compile(r"required tests: (?!13/)\d+/13 passed")  # the starter: some tests fail
WAIT_S = 240  # a check on a crowded 2-CPU machine, with room to spare


class Kernel:
    """A kernel whose every IOPub message is kept (a re-check's updates come from a thread, not from a cell)."""

    def __init__(self, root: Path) -> None:
        from forgelab.authoring.kernels import start_kernel

        env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGELAB_", "PYTEST_", "PYTHONPATH"))}
        env.update(FORGELAB_ROOT=str(root), PYTHONPATH=str(root), FORGELAB_WIDTH="200")
        self.manager, self.client = start_kernel(cwd=str(root / "notebooks"), env=env, startup_timeout=180)
        self.messages: list[dict[str, Any]] = []

    def run(self, code: str) -> list[dict[str, Any]]:
        """Run one cell; the messages that arrived until it was idle."""
        msg_id = self.client.execute(code)
        start = len(self.messages)
        self.wait_for(lambda m: m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "status"
                      and m["content"]["execution_state"] == "idle", f"the cell {code!r} to finish")
        return self.messages[start:]

    def wait_for(self, condition: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                message = self.client.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"waited {WAIT_S} s for {what} in vain") from None
            self.messages.append(message)
            if message["msg_type"] == "error":
                raise AssertionError(f"a cell raised: {message['content']['evalue']}")
            if condition(message):
                return message

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


@pytest.fixture
def kernel(workbook: WorkbookCopy) -> Iterator[Kernel]:
    running = Kernel(workbook.root)
    try:
        running.run('%load_ext forgelab.learner.notebook\nfrom forgelab.learner.notebook import stage_tools\n'
                    'lab = stage_tools("01", lang="en")')
        yield running
    finally:
        running.run("lab._toggle.value = False")  # the watcher and its warm worker end with the toggle
        running.close()


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    return str(content.get("text") or content.get("data", {}).get("text/plain", "")) + str(content.get("data", {}).get(
        "state", {}).get("value", ""))


def _tables(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every message that shows a test table: printed, displayed, updated, or a widget's new value."""
    return [m for m in messages if "required tests:" in _text(m)]


def test_a_save_updates_the_one_table_in_place_with_a_true_footer(kernel: Kernel, workbook: WorkbookCopy) -> None:
    cell = kernel.run("lab.run_tests()\nlab.recheck_on_save()")
    (shown,) = _tables(cell)
    assert shown["msg_type"] == "display_data", shown["msg_type"]  # not printed: a display that can be replaced
    table = shown["content"]["transient"]["display_id"]
    assert NOT_ALL.search(_text(shown)) and "run this cell again" in _text(shown)

    def update(saying: str) -> Callable[[dict[str, Any]], bool]:
        return lambda m: m["msg_type"] == "update_display_data" and saying in _text(m)

    before = len(kernel.messages)
    kernel.run("lab._toggle.value = True")
    first = kernel.wait_for(update("re-checking is on"), "the first re-check's table")
    assert first["content"]["transient"]["display_id"] == table
    assert NOT_ALL.search(_text(first)) and "run this cell again" not in _text(first)
    (workbook.root / MODULE).write_bytes((ROOT / "solutions" / MODULE).read_bytes())
    saved = kernel.wait_for(update("required tests: 13/13 passed"), "the table after the save")
    assert saved["content"]["transient"]["display_id"] == table
    assert "All stage tests pass" in _text(saved)
    others = [m for m in _tables(kernel.messages[before:]) if m["msg_type"] != "update_display_data"]
    assert others == [], [(m["msg_type"], _text(m)[:200]) for m in others]  # no second table anywhere
    updates = {m["content"]["transient"]["display_id"] for m in _tables(kernel.messages[before:])}
    assert updates == {table}
