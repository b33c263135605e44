"""Every way of starting the judge's session gives the cold start's verdicts (forgelab/judge/starters.py).

The cold start (a new ``python -P -m pytest``) is the reference; a session forked from the warm worker (watch mode)
and a session started as the command began (``forgelab check NN``) are strategies behind one interface. Each case
plants a stage 01 module in one workbook's ``forge/`` — the reference (honest), the shipped starter and the
reference with the same-rank mistake (wrong), and that mistake with one of the grading suite's attacks appended
(hostile) — and judges the stage's tests three times in this process, once per strategy, with the same job. Every
row must be the same: node id, target, outcome, limit, the cause and the detail (the lines a learner reads), as must
the import problem and the collection errors. Each strategy must really have run the session (not fallen back to
the cold start). The judge's messages between these processes are strict models: a malformed one names its field.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest
from conftest import copy_workbook
from grading_fixtures import MODULE, SAME_RANK_FIND, SAME_RANK_LAST_WINS
from hostile_submissions import FLOOD, FORK_BOMB, PRELUDE, REPORT_PATCH, HostileContext, processes_with

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.judge import core, early, messages
from forgelab.judge.messages import SessionJob, SessionReport, SessionRequest
from forgelab.judge.outcomes import Outcome, RunReport
from forgelab.judge.starters import ColdStart, EarlyStart, SessionStarter, Watched, WarmStart
from forgelab.judge.warm import WarmWorker
from forgelab.learner.checkjob import TESTS, plan_check
from forgelab.learner.workbench import Workbench

ATTACKS = {"fork-bomb": FORK_BOMB, "report-patch": REPORT_PATCH, "flood": FLOOD}
STRATEGIES = ("warm", "early")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Workbench:
    root = copy_workbook(tmp_path_factory.mktemp("starters") / "workbook").root
    return Workbench(Workbook(root=root, workspace=root), load_course(root))


@pytest.fixture(scope="module")
def worker() -> Iterator[WarmWorker]:
    with WarmWorker.start() as started:
        yield started


class Recording:
    """A strategy that counts the sessions it ran itself (a None sends the run to the cold start)."""

    def __init__(self, inner: SessionStarter) -> None:
        self.inner, self.ran = inner, 0

    @property
    def name(self) -> str:
        return self.inner.name

    def start(self, request: SessionRequest, *, wall_s: float) -> Watched | None:
        watched = self.inner.start(request, wall_s=wall_s)
        self.ran += watched is not None
        return watched


def verdict(report: RunReport) -> dict[str, object]:
    """Everything a run decides, without its timings."""
    return {"rows": [(row.nodeid, row.target, row.outcome, row.limit, row.cause, row.detail, row.unfinished,
                      row.recorded) for row in report.rows],
            "import_problems": {label: asdict(problem) for label, problem in report.import_problems.items()},
            "collect_errors": [asdict(error) for error in report.collect_errors], "problem": report.problem}


def judged(bench: Workbench, worker: WarmWorker, strategy: str) -> dict[str, object]:
    """The stage 01 tests on the module in forge/, the session started by ``strategy``."""
    stage = bench.course.stage("01")
    job = plan_check(bench.course, bench.workbook, stage, bench.target("learner"), frozenset({TESTS})).job
    if strategy == "cold":
        return verdict(core.run(job, bench.settings, starter=ColdStart()))
    if strategy == "warm":
        recording = Recording(WarmStart(worker))
        report = core.run(job, bench.settings, warm=worker, starter=recording)
    else:
        early.start_session()
        recording = Recording(EarlyStart())
        try:
            report = core.run(job, bench.settings, starter=recording)
        finally:
            early.discard()
    assert recording.ran == 1, f"the {strategy} start did not run the session: the cold start did"
    return verdict(report)


def same_as_cold(bench: Workbench, worker: WarmWorker, module: str) -> dict[str, object]:
    (bench.workbook.root / MODULE).write_text(module, encoding="utf-8")
    cold = judged(bench, worker, "cold")
    for strategy in STRATEGIES:
        assert judged(bench, worker, strategy) == cold, f"the {strategy} start decided otherwise than the cold one"
    return cold


def reference(bench: Workbench) -> str:
    return (bench.workbook.root / "solutions" / MODULE).read_text(encoding="utf-8")


def outcomes(cold: dict[str, object]) -> set[Outcome]:
    rows = cold["rows"]
    assert isinstance(rows, list) and rows
    return {row[2] for row in rows}


def test_an_honest_module_passes_whichever_way_the_session_starts(bench: Workbench, worker: WarmWorker) -> None:
    assert outcomes(same_as_cold(bench, worker, reference(bench))) == {Outcome.PASSED}


def test_the_shipped_starter_fails_the_same_tests_as_unfinished(bench: Workbench, worker: WarmWorker) -> None:
    starter = (bench.workbook.root / "course" / "starters" / MODULE).read_text(encoding="utf-8")
    cold = same_as_cold(bench, worker, starter)
    rows = cold["rows"]
    assert isinstance(rows, list) and any(row[2] is Outcome.FAILED and row[6] for row in rows), rows


def test_a_wrong_module_fails_the_same_test_with_the_same_lines(bench: Workbench, worker: WarmWorker) -> None:
    cold = same_as_cold(bench, worker, reference(bench).replace(SAME_RANK_FIND, SAME_RANK_LAST_WINS))
    rows = cold["rows"]
    assert isinstance(rows, list)
    failed = [row for row in rows if row[2] is Outcome.FAILED]
    assert failed and all(row[5] for row in failed), rows  # the detail (traceback and difference) compared too


def test_a_module_that_does_not_import_is_told_the_same(bench: Workbench, worker: WarmWorker) -> None:
    cold = same_as_cold(bench, worker, reference(bench) + "\nraise RuntimeError('broken at import')\n")
    assert cold["import_problems"], cold


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_hostile_module_gets_the_same_verdict_whichever_way_the_session_starts(
        bench: Workbench, worker: WarmWorker, attack: str, tmp_path: Path) -> None:
    context = HostileContext(uuid.uuid4().hex[:12], str(bench.workbook.root), str(tmp_path), str(tmp_path),
                             str(bench.workbook.root), 1, str(tmp_path / "no.sock"), "forgelab-none")
    wrong = reference(bench).replace(SAME_RANK_FIND, SAME_RANK_LAST_WINS)
    prelude = PRELUDE.format(attack=attack, context=json.dumps(asdict(context)), mark=context.marker(attack))
    cold = same_as_cold(bench, worker, wrong + prelude + ATTACKS[attack])
    assert outcomes(cold) != {Outcome.PASSED}, cold  # the mistake is still caught
    assert processes_with(context.token) == []
    assert worker.alive


def test_a_malformed_message_is_an_error_naming_its_field(tmp_path: Path) -> None:
    job = {"targets": {"t": {"code_dir": "/code", "probe": [], "stage": "01", "first_failure_ends": False}},
           "files": {"/run/tests/test_x.py": {"target": "t", "canonical": "tests/test_x.py"}},
           "settings": {"test_cpu_s": 10, "sandbox": "auto"},
           "isolation": {"sandboxed": False, "bwrap": "", "reason": "none here"},
           "report": "/run/report.json", "tests_root": "/run/tests"}
    assert messages.parse(SessionJob, json.dumps(job), "job.json").settings.test_cpu_s == 10
    for change, field in ((("settings", {"test_cpu_s": "10"}), "settings.test_cpu_s"),
                          (("settings", {"sandbox": "sometimes"}), "settings.sandbox"),
                          (("settings", {"cpu": 3}), "settings.cpu"),
                          (("isolation", {"sandboxed": "false", "bwrap": "", "reason": ""}), "isolation.sandboxed"),
                          (("targets", {"t": {"probe": []}}), "targets.t.code_dir"),
                          (("files", {"/x": {"target": "t"}}), "files./x.canonical"),
                          (("report", ""), "report")):
        with pytest.raises(messages.MessageError, match=rf"malformed SessionJob in job\.json \({field}: "):
            messages.parse(SessionJob, json.dumps({**job, change[0]: change[1]}), "job.json")
    row = {"nodeid": "tests/test_x.py::test_a", "target": "t", "outcome": "passed", "cause": ""}
    report = {"rows": [row], "import_problems": {}, "collect_errors": [], "exitstatus": 0}
    assert messages.parse(SessionReport, json.dumps(report), "report.json").rows[0].outcome is Outcome.PASSED
    for bad, field in (({**row, "outcome": "won"}, "rows.0.outcome"), ({**row, "limit": "forever"}, "rows.0.limit"),
                       ({**row, "duration_ms": 1.5}, "rows.0.duration_ms"), ({**row, "extra": 1}, "rows.0.extra")):
        with pytest.raises(messages.MessageError, match=rf"\({field}: "):
            messages.parse(SessionReport, json.dumps({**report, "rows": [bad]}), "report.json")
    with pytest.raises(messages.MessageError, match=r"SessionRequest .*\(cwd: "):
        messages.parse(SessionRequest, json.dumps({"args": [], "cwd": "", "env": {}}), "the request")
