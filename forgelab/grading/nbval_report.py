"""A pytest plugin loaded next to nbval while grading (``-p forgelab.grading.nbval_report``).

For every notebook cell it appends one JSON line to the file named by ``FORGELAB_NBVAL_REPORT``
as soon as the cell is done, so the results of the cells that ran survive even when the whole
run is killed at its wall-clock limit. A line holds the cell number, the outcome (``passed``,
``differs``, ``exception``, ``timeout``, ``not_run``, ``error``), a one-line detail, and the
phase durations (the first cell's setup includes starting the kernel).

After a cell times out, the remaining cells are skipped ("an earlier cell timed out") instead of
being executed against an interrupted kernel: a hang costs one cell timeout, not one per cell.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

_LIMIT = 160
_durations: dict[str, dict[str, float]] = {}


def _write(row: dict[str, Any]) -> None:
    target = os.environ.get("FORGELAB_NBVAL_REPORT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        handle.flush()


def _one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= _LIMIT else line[: _LIMIT - 1] + "…"


def _text_of(item: Any, outputs: Any) -> list[str]:
    """The visible text of a cell's outputs, sanitized like nbval compares them, as lines."""
    pieces: list[str] = []
    for output in outputs or []:
        kind = output.get("output_type")
        if kind == "stream":
            text = output.get("text", "")
        elif kind in ("execute_result", "display_data"):
            text = output.get("data", {}).get("text/plain", "")
        elif kind == "error":
            text = f"{output.get('ename', '')}: {output.get('evalue', '')}"
        else:
            continue
        text = "".join(text) if isinstance(text, list) else str(text)
        try:
            text = item.sanitize(text)
        except Exception:  # noqa: BLE001 - sanitizing is a nicety, never a reason to lose the row
            pass
        pieces.append(text)
    return "".join(pieces).splitlines()


def _difference(item: Any) -> str:
    expected = _text_of(item, getattr(item.cell, "outputs", []))
    obtained = _text_of(item, getattr(item, "test_outputs", []))
    first: str | None = None
    for index in range(max(len(expected), len(obtained))):
        want = expected[index] if index < len(expected) else "(nothing)"
        got = obtained[index] if index < len(obtained) else "(nothing)"
        if want.rstrip() == got.rstrip():
            continue
        found = f"line {index + 1}: expected {_one_line(want)!r}, got {_one_line(got)!r}"
        if want.strip(" -=") or got.strip(" -="):  # a line with words in it explains more than a ruler
            return found
        first = first or found
    return first or "the outputs differ in kind (e.g. a value shown instead of printed text)"


def _exception(item: Any) -> str:
    for output in getattr(item, "test_outputs", []) or []:
        if output.get("output_type") == "error":
            return _one_line(f"{output.get('ename', 'Error')}: {output.get('evalue', '')}")
    return "the cell raised an exception"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if getattr(item.parent, "timed_out", False):
        pytest.skip("not run: an earlier cell timed out")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:  # type: ignore[type-arg]
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    phases = _durations.setdefault(item.nodeid, {})
    phases[call.when] = round(call.duration, 4)
    cell = getattr(item, "cell_num", None)
    row: dict[str, Any] | None = None
    if call.when == "setup" and report.failed:
        row = {"outcome": "error", "detail": _one_line(f"the notebook could not start: {call.excinfo.value if call.excinfo else ''}")}
    elif call.when == "setup" and report.skipped:
        row = {"outcome": "not_run", "detail": "not run: an earlier cell timed out"}
    elif call.when == "call":
        if report.passed:
            row = {"outcome": "passed", "detail": ""}
        elif report.skipped:  # nbval marks the cells after a timeout as xfail
            row = {"outcome": "not_run", "detail": "not run: an earlier cell timed out"}
        else:
            error = call.excinfo.value if call.excinfo else None
            message = str(error) if error is not None else ""
            if "Timeout" in message or "timed out" in message.lower():
                row = {"outcome": "timeout", "detail": _one_line(message.split(".")[0])}
            elif "outputs differ" in message:
                row = {"outcome": "differs", "detail": _difference(item)}
            elif "exception" in message:
                row = {"outcome": "exception", "detail": _exception(item)}
            else:
                row = {"outcome": "error", "detail": _one_line(message or "the cell could not be run")}
    if row is not None:
        row.update(cell=cell, setup_s=phases.get("setup", 0.0), call_s=phases.get("call", 0.0))
        _write(row)
