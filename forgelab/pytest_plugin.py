"""A tiny pytest plugin loaded by the checker (``-p forgelab.pytest_plugin``).

It records one row per test item — outcome, one-line cause, full failure text, duration — and writes
them as JSON to the file named by ``FORGELAB_REPORT``. After two timeouts the remaining items are not
run, so a learner's infinite loop costs seconds, not minutes.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

MAX_TIMEOUTS = 2
_rows: dict[str, dict[str, Any]] = {}
_collect_errors: list[dict[str, str]] = []
_timeouts = 0


def _name(nodeid: str) -> str:
    return nodeid.rsplit("::", 1)[-1].split("[", 1)[0]


def _crash_line(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # skip: (file, line, reason)
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and crash.message:
        return crash.message.strip().splitlines()[0]
    text = str(longrepr or "").strip().splitlines()
    errors = [line[1:].strip() for line in text if line.startswith("E ")]
    return errors[0] if errors else (text[-1] if text else "")


def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    if _timeouts >= MAX_TIMEOUTS:
        _rows[item.nodeid] = {
            "nodeid": item.nodeid, "name": _name(item.nodeid), "outcome": "not_run",
            "cause": f"not run: {MAX_TIMEOUTS} earlier tests timed out (look for a loop that never ends)",
            "longrepr": "", "duration_ms": 0,
        }
        return True
    return None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _timeouts
    row = _rows.setdefault(report.nodeid, {
        "nodeid": report.nodeid, "name": _name(report.nodeid), "outcome": "passed",
        "cause": "", "longrepr": "", "duration_ms": 0,
    })
    row["duration_ms"] += int(round(report.duration * 1000))
    if report.passed or row["outcome"] in ("failed", "error", "timeout"):
        return
    text = report.longreprtext or ""
    cause = _crash_line(report)
    if report.skipped:
        row.update(outcome="skipped", cause=cause)
        return
    if "Timeout" in cause and "pytest-timeout" in text or cause.startswith("Failed: Timeout"):
        _timeouts += 1
        row.update(outcome="timeout", cause=cause, longrepr=text)
    elif report.when == "call":
        row.update(outcome="failed", cause=cause, longrepr=text)
    else:
        row.update(outcome="error", cause=f"error in {report.when}: {cause}", longrepr=text)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _collect_errors.append({"nodeid": report.nodeid, "cause": _crash_line(report), "longrepr": report.longreprtext})


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    target = os.environ.get("FORGELAB_REPORT")
    if not target:
        return
    payload = {"tests": list(_rows.values()), "collect_errors": _collect_errors, "exitstatus": int(exitstatus)}
    with open(target, "w", encoding="utf-8") as handle:
        json.dump(payload, handle)
