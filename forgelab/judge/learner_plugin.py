"""Reports tests that the learner wrote (transfer tests), from the sandbox that runs them.

Loaded with ``-p forgelab.judge.learner_plugin`` into the process that runs the learner's own test
file (:mod:`forgelab.judge.tester`), which hands it the sink for its events (:func:`use_sink`): one
event per test start, per report and per collection error, sent to the judge as soon as it happens,
so a run that is stopped at a limit still tells which test was running. The judge treats the events
as claims of learner code (they come from the learner's process): it reads them with strict limits
and uses them only to judge that learner's own tests. What the judge saw itself — a limit the
learner's ``forge`` hit during a test — overrides them.
"""

from __future__ import annotations

import gc
import os
import re
import sys
from collections.abc import Callable
from typing import Any

import pytest

_MAX_TEXT = 4000
# An event is written in the tester's sandbox, where no Pydantic loads (its start would cost every run of a learner's
# test): it leaves as a plain frame (free-form), and the judge reads each one as a model of forgelab.judge.events or drops it.
_SINKS: list[Callable[[dict[str, Any]], None]] = []


def use_sink(sink: Callable[[dict[str, Any]], None]) -> None:  # free-form: a plain frame, see above
    """Where the events go (the tester's link to the judge)."""
    _SINKS[:] = [sink]


def _write(event: dict[str, Any]) -> None:  # free-form: a plain frame, see above
    for sink in _SINKS:
        try:
            sink(event)
        except OSError:
            pass


_PREFIXES: list[str] = []  # how pytest writes the code folder in front of a path: shown relative to it instead


def _cut(text: str) -> str:
    for prefix in _PREFIXES:
        text = text.replace(prefix, "")
    text = text.replace("forgelab.judge.channel.", "")  # the judge's exception classes by their own names
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _line(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and crash.message:
        return str(crash.message).strip().splitlines()[0]
    lines = str(longrepr or "").strip().splitlines()
    last = lines[-1] if lines else ""
    return last[1:].strip() if last.startswith("E ") else last


def pytest_configure(config: pytest.Config) -> None:
    root = str(config.rootpath)
    relative = os.path.relpath(root, str(config.invocation_params.dir))
    _PREFIXES[:] = [root + os.sep] + ([relative + os.sep] if relative != "." else [])
    if "hypothesis" in sys.modules or any(_mentions_hypothesis(arg) for arg in config.args):
        _hypothesis_profile()


def _mentions_hypothesis(path: str) -> bool:
    """Does the test file name Hypothesis? Only then is it imported here before the file is (its import is a third
    of this process's start); a test that reaches it some other way gets the profile before its first test runs."""
    try:
        with open(path.split("::", 1)[0], "rb") as handle:
            return b"hypothesis" in handle.read()
    except OSError:
        return True


def _hypothesis_profile() -> None:
    """Slowness never becomes a failure and every run draws the same examples (the judge's own profile)."""
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:
        return
    settings.register_profile("forgelab-judge", derandomize=True, deadline=None, database=None,
                              suppress_health_check=list(HealthCheck))
    settings.load_profile("forgelab-judge")


def pytest_collection_finish(session: pytest.Session) -> None:
    if "hypothesis" in sys.modules:  # imported without being named (the profile is loaded again: the same one)
        _hypothesis_profile()
    # what was imported and built so far lives until the process ends: the collections that pytest and a long run
    # make no longer walk it (pytest collects twice as it ends, in every run of a learner's test file)
    gc.freeze()


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
        _write({"event": "collect_error", "nodeid": report.nodeid, "cause": _cut(_where(report) + _line(report)),
                "detail": _cut(report.longreprtext or "")})


def _where(report: pytest.CollectReport) -> str:
    """``line N: `` when the test file itself cannot be read (a syntax error in it), else ''."""
    places = re.findall(r'File "([^"]+)", line (\d+)', report.longreprtext or "")
    if places and report.nodeid and places[-1][0].endswith(report.nodeid):
        return f"line {places[-1][1]}: "
    return ""


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _write({"event": "finish", "exitstatus": int(exitstatus)})
