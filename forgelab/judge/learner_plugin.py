"""Reports tests that the learner wrote (transfer tests), from inside the sandbox.

Copied into the sandbox as ``_judge_learner_plugin.py`` and loaded with ``-p``. It writes one JSON
line per event to the pipe whose descriptor is ``FORGELAB_LEARNER_REPORT_FD`` as soon as it happens,
so a run that is stopped at a limit still tells which test was running. The judge treats these lines as claims of
learner code (they come from the learner's process): it reads them with strict limits and uses them
only to judge that learner's own tests.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

_MAX_TEXT = 4000


def _write(event: dict[str, Any]) -> None:
    fd = int(os.environ.get("FORGELAB_LEARNER_REPORT_FD", "-1"))
    if fd < 0:
        return
    data = (json.dumps(event, ensure_ascii=True) + "\n").encode("ascii")
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        pass


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _line(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and crash.message:
        return str(crash.message).strip().splitlines()[0]
    lines = str(longrepr or "").strip().splitlines()
    return lines[-1] if lines else ""


def pytest_configure(config: pytest.Config) -> None:
    try:
        from hypothesis import HealthCheck, settings

        settings.register_profile("forgelab-judge", derandomize=True, deadline=None, database=None,
                                  suppress_health_check=list(HealthCheck))
        settings.load_profile("forgelab-judge")
    except ImportError:
        pass


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _write({"event": "start", "nodeid": nodeid})


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.passed and report.when != "call":
        return
    outcome = "passed" if report.passed else "skipped" if report.skipped else (
        "failed" if report.when == "call" else "error")
    _write({"event": "report", "nodeid": report.nodeid, "when": report.when, "outcome": outcome,
            "cause": _cut(_line(report)), "detail": _cut(report.longreprtext or ""),
            "duration_ms": int(round(report.duration * 1000))})


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _write({"event": "collect_error", "nodeid": report.nodeid, "cause": _cut(_line(report)),
                "detail": _cut(report.longreprtext or "")})


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _write({"event": "finish", "exitstatus": int(exitstatus)})
