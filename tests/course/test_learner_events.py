"""The events a learner's test run sends the judge are claims: each is read as one strict shape
(forgelab/judge/events.py) or dropped, and only then turned into rows (judge/core.py _read_learner_report)."""

from __future__ import annotations

from forgelab.judge import events
from forgelab.judge.core import _read_learner_report
from forgelab.judge.outcomes import Outcome
from forgelab.judge.relay import RelayRun
from forgelab.judge.sandbox import Isolation
from forgelab.judge.settings import DEFAULT

FILE = "transfer/test_01_instruction_hierarchy.py"
TEST = f"{FILE}::test_it"


def _report(*raw: dict[str, object]):  # type: ignore[no-untyped-def]
    return _read_learner_report("transfer", RelayRun(tuple(raw)), [FILE], DEFAULT, Isolation(False, "", "off"))


def test_what_the_plugin_writes_is_read() -> None:
    report = _report({"event": "start", "nodeid": TEST},
                     {"event": "report", "nodeid": TEST, "when": "call", "outcome": "failed", "cause": "assert 1 == 2",
                      "detail": "Traceback…", "duration_ms": 12},
                     {"event": "finish", "exitstatus": 1})
    [row] = report.rows
    assert (row.nodeid, row.outcome, row.cause, row.duration_ms) == (TEST, Outcome.FAILED, "assert 1 == 2", 12)


def test_an_event_of_no_known_shape_is_dropped() -> None:
    forged = [
        {"event": "report", "nodeid": TEST, "when": "call", "outcome": "passed", "duration_ms": 1, "verdict": "ok"},
        {"event": "report", "nodeid": TEST, "when": "call", "outcome": "failed", "duration_ms": True},
        {"event": "report", "nodeid": TEST, "when": "call", "outcome": "failed", "duration_ms": -5},
        {"event": "report", "nodeid": TEST, "when": "later", "outcome": "failed"},
        {"event": "report", "nodeid": TEST, "when": "call", "outcome": "excellent"},
        {"event": "start", "nodeid": FILE + "::" + "x" * 600},
        {"event": "promote", "nodeid": TEST},
        {"nodeid": TEST},
        ["start", TEST],
    ]
    assert [events.read(raw) for raw in forged] == [None] * len(forged)
    report = _report({"event": "start", "nodeid": TEST}, *forged)
    # dropped, the forged reports leave a test that started and was never reported on: no result, not a pass
    assert [(row.outcome, row.duration_ms) for row in report.rows] == [(Outcome.ERROR, 0)]
    passed = {"event": "report", "nodeid": TEST, "when": "call", "outcome": "passed", "duration_ms": 3}
    report = _report({"event": "start", "nodeid": TEST}, *forged, passed)
    assert [(row.outcome, row.duration_ms) for row in report.rows] == [(Outcome.PASSED, 3)]


def test_long_texts_are_cut_not_refused() -> None:
    event = events.read({"event": "report", "nodeid": TEST, "when": "call", "outcome": "error",
                         "cause": "c" * 1000, "detail": "d" * 9000})
    assert isinstance(event, events.Reported)
    assert len(event.cause) == 300 and event.cause.endswith("…") and len(event.detail) == 4000


def test_a_collection_error_names_the_file_shown_to_the_learner() -> None:
    report = _report({"event": "collect_error", "nodeid": "/elsewhere/x.py", "cause": "line 3: SyntaxError",
                      "detail": ""})
    [error] = report.collect_errors
    assert (error.file, error.cause) == (FILE, "line 3: SyntaxError")
