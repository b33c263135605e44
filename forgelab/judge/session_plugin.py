"""The pytest plugin of the judge's trusted session: the course's tests, against one or more targets.

Loaded with ``-p forgelab.judge.session_plugin --forgelab-job JOB.json`` into a pytest process whose
path starts with the course's interface ``forge`` (see :mod:`forgelab.judge.remote`). The job (a
:class:`~forgelab.judge.messages.SessionJob`, read strictly) names
every target (its code folder in the sandbox, the modules to import first) and, for every test
file, the target it runs against — the same course file may appear once per target.

For each test the plugin makes its target current, starts that target's host if needed (its
import problem, if any, turns every test of the target into one "not run" row with the cause),
and records one typed row: outcome, the limit that stopped the learner's code if one did, a
one-line cause, the full detail and what the learner's code printed. After ``max_limit_hits``
tests of a target hit a limit, its remaining tests are not run. It writes them, as it ends, as one
:class:`~forgelab.judge.messages.SessionReport` where the job said.
"""

from __future__ import annotations

import gc
import json
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from forgelab.core import i18n
from forgelab.core.i18n import N_, _
from forgelab.judge import explain, messages
from forgelab.judge.channel import BoundaryError, LimitExceeded, NotImplementedYet
from forgelab.judge.messages import SessionFile, SessionJob, SessionReport
from forgelab.judge.outcomes import CollectError, Limit, Outcome, TestRow
from forgelab.judge.remote import HostPool, install_pool
from forgelab.judge.settings import JudgeSettings

MAX_DETAIL = 12000
WATCH_ARGUMENTS = "watch_arguments"  # the marker of a test that sees what the learner's code changed in its arguments
MAX_PRINTED = 4000

# What the code probably does, by the limit that stopped it (the cause of the tests not run after it).
LIMIT_HINTS = {
    Limit.CPU: N_("look for a loop that never ends"),
    Limit.WALL: N_("look for code that waits forever"),
    Limit.MEMORY: N_("look for data that keeps growing"),
    Limit.OUTPUT: N_("look for a print inside a loop"),
    Limit.CRASH: N_("look for code that ends the process"),
}


def _not_run(item: pytest.Item, nextitem: pytest.Item | None) -> bool:
    """Record nothing more for ``item`` and tear down what the test before it set up, as pytest's own
    protocol does after a test: the next test (perhaps in another file) then starts from a clean state."""
    try:
        item.session._setupstate.teardown_exact(nextitem)
    except Exception:  # noqa: BLE001 - a fixture's teardown failing belongs to the test that set it up
        pass
    return True


@pytest.fixture
def forgelab_record(request: pytest.FixtureRequest) -> Callable[[object], None]:
    """A course test hands the judge a value to carry back on its row (:attr:`TestRow.recorded`): JSON data only,
    written with sorted keys, so the same value is the same text in every run. The fault lab's seal uses it: its
    probes record what the target's code answers (:mod:`forgelab.verdicts.seal`)."""
    session = request.config.pluginmanager.get_plugin("forgelab-judge-session")

    def record(value: object) -> None:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        if isinstance(session, JudgeSession):
            session.recorded[request.node.nodeid] = text

    return record


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--forgelab-job", dest="forgelab_job", default=None, help="the judge's job description (JSON)")


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: object, right: object) -> list[str] | None:
    return explain.pytest_assertrepr_compare(config, op, left, right)


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("forgelab_job")
    if not path:
        raise pytest.UsageError("the judge's session plugin needs --forgelab-job")
    try:
        job = messages.read(SessionJob, Path(path))
    except (OSError, messages.MessageError) as error:
        raise pytest.UsageError(f"the judge's session cannot read its job: {error}") from None
    settings = job.settings
    i18n.use(settings.language)  # causes worded by the judge speak the learner's edition
    pool = HostPool(job.targets, settings, job.isolation, (Path(job.tests_root).resolve(),))
    install_pool(pool)
    first = next(iter(job.files.values()), None)  # the first test file's target: its host starts while pytest
    if first is not None:                        # collects (it imports the learner's code at its first test)
        pool.prespawn(first.target)
    if uses_hypothesis(job.files) or "hypothesis" in sys.modules:
        load_hypothesis_profile()
    config.pluginmanager.register(JudgeSession(job, pool, settings), "forgelab-judge-session")


def uses_hypothesis(files: Iterable[str]) -> bool:
    """Does any of the session's test files (course code) mention Hypothesis? Only then is it imported (its import
    is a good part of a session's start); a test that reaches it some other way still gets the judge's profile
    before its first test runs (:meth:`JudgeSession.pytest_collection_finish`)."""
    for path in files:
        try:
            if b"hypothesis" in Path(path).read_bytes():
                return True
        except OSError:
            return True
    return False


def load_hypothesis_profile() -> None:
    """Slowness never becomes a failure: no deadline, no health check about speed, the same examples every run."""
    try:
        from hypothesis import HealthCheck  # lazy: only a session whose tests use Hypothesis imports it
        from hypothesis import settings as hypothesis_settings  # lazy: as above
    except ImportError:
        return
    hypothesis_settings.register_profile("forgelab-judge", deadline=None, derandomize=True, database=None,
                                         suppress_health_check=list(HealthCheck), print_blob=False)
    hypothesis_settings.load_profile("forgelab-judge")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


FRAME = re.compile(r'^  File "(?P<path>[^"]+)", line \d+, in .*$')


def clean_detail(text: str, files: dict[str, SessionFile] | None = None) -> str:
    """A native traceback cut to the frames of the course's test file (shown by its course path); pytest's,
    pluggy's and the judge's own frames are the machinery, not what a learner needs to read."""
    kept: list[str] = []
    keep = True
    for line in text.splitlines():
        match = FRAME.match(line)
        if match:
            path = match.group("path")
            keep = "site-packages" not in path and "/forgelab/" not in path
            if keep and files:
                entry = files.get(path)
                if entry is not None:
                    line = line.replace(path, entry.canonical)
        elif not line.startswith("    "):
            keep = True
        if keep and not set(line.strip()) <= set("^~ "):
            kept.append(line)
        elif keep and line.strip() == "":
            kept.append(line)
    return "\n".join(kept).replace("forgelab.judge.channel.", "")


def crash_line(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (file, line, reason)
        return str(longrepr[2]).removeprefix("Skipped: ")
    text = report.longreprtext or ""
    explained = explain.explanation_from_text(text)
    if explained:
        return explained
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and crash.message:
        line = str(crash.message).strip().splitlines()[0]
    else:
        lines = [line for line in text.strip().splitlines() if line and not line.startswith((" ", "Traceback"))]
        line = lines[-1] if lines else ""
    return line.replace("forgelab.judge.channel.", "")


class JudgeSession:
    def __init__(self, job: SessionJob, pool: HostPool, settings: JudgeSettings) -> None:
        self.job, self.pool, self.settings = job, pool, settings
        self.files: dict[str, SessionFile] = {str(Path(k).resolve()): v for k, v in job.files.items()}
        self.real_paths: dict[str, str] = {}  # a test file's path as pytest gives it -> resolved (see where)
        self.rows: dict[str, TestRow] = {}  # by pytest's node id, in the order the tests ran
        self.collect_errors: list[CollectError] = []
        self.limits: dict[str, Limit] = {}
        self.failed_targets: set[str] = set()
        self.causes: dict[str, str] = {}  # a cause the judge itself worded (a limit, a stub not written yet)
        self.unfinished: set[str] = set()  # tests that failed on a starter stub
        self.stop_early = {label for label, spec in job.targets.items() if spec.first_failure_ends}
        self.recorded: dict[str, str] = {}  # node id -> what the test recorded (forgelab_record), kept if it passed

    # ------------------------------------------------------------ where a test belongs

    def where(self, path: Path, nodeid: str) -> tuple[str, str]:
        key = str(path)
        real = self.real_paths.get(key)
        if real is None:  # resolved once per path: asked four times per test (a dozen file-system calls each)
            real = self.real_paths[key] = str(Path(path).resolve())
        entry = self.files.get(real)
        if entry is None:
            return "", nodeid
        rest = nodeid.split("::", 1)[1] if "::" in nodeid else ""
        return entry.target, entry.canonical + (f"::{rest}" if rest else "")

    def _row(self, key: str, canonical: str, target: str) -> TestRow:
        if key not in self.rows:
            self.rows[key] = TestRow(canonical, target, Outcome.PASSED, "")
        return self.rows[key]

    def _set(self, key: str, canonical: str, target: str, **changes: Any) -> None:
        """Change the row of test ``key`` (made first if the test has none yet)."""
        self.rows[key] = replace(self._row(key, canonical, target), **changes)

    # ------------------------------------------------------------ hooks

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if file_path.suffix == ".ipynb" and str(file_path.resolve()) in self.files:
            from forgelab.judge.notebook_replay import NotebookFile  # lazy: nbformat loads only for a notebook

            return NotebookFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        """A test module is imported while it is collected: values it builds at module level (a case, a
        fixed input) are built by its own target's code, so that target must be current already."""
        if isinstance(collector, pytest.Module):
            target, _canonical = self.where(collector.path, "")
            if target:
                try:
                    self.pool.begin_test(target)
                except LimitExceeded as stop:
                    self.pool.record_limit(target, stop.limit)
        return (yield)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        target, canonical = self.where(item.path, item.nodeid)
        if not target:
            return None
        if target in self.failed_targets:
            self._set(item.nodeid, canonical, target, outcome=Outcome.NOT_RUN,
                      cause=_("not run: an earlier test of this target failed"))
            return _not_run(item, nextitem)
        if self.pool.time_budget.used_up:
            self._set(item.nodeid, canonical, target, outcome=Outcome.NOT_RUN, limit=Limit.WALL,
                      cause=_("not run: {why}").format(why=self.pool.time_budget.message()))
            return _not_run(item, nextitem)
        hits = self.pool.limit_hits.get(target, 0)
        if hits >= self.settings.max_limit_hits:
            limit = self.pool.last_limit.get(target, Limit.CPU)
            self._set(item.nodeid, canonical, target, outcome=Outcome.NOT_RUN, limit=limit,
                      cause=_("not run: {count} earlier tests hit a limit ({why})").format(count=hits,
                                                                                       why=_(LIMIT_HINTS[limit])))
            return _not_run(item, nextitem)
        try:
            problem = self.pool.begin_test(target, item.get_closest_marker(WATCH_ARGUMENTS) is not None)
        except LimitExceeded as stop:
            self.pool.record_limit(target, stop.limit)
            self._set(item.nodeid, canonical, target, outcome=Outcome.TIMEOUT, limit=stop.limit, cause=str(stop))
            return _not_run(item, nextitem)
        if problem is not None:
            self._set(item.nodeid, canonical, target, outcome=Outcome.NOT_RUN,
                      cause=_("not run: {cause}").format(cause=problem.cause))
            return _not_run(item, nextitem)
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if call.excinfo is not None and isinstance(call.excinfo.value, (LimitExceeded, NotImplementedYet)):
            self.causes[item.nodeid] = str(call.excinfo.value)
        if call.excinfo is not None and isinstance(call.excinfo.value, NotImplementedYet):
            self.unfinished.add(item.nodeid)
        if call.excinfo is not None and isinstance(call.excinfo.value, LimitExceeded):
            self.limits[item.nodeid] = call.excinfo.value.limit
            target, _canonical = self.where(item.path, item.nodeid)
            if target:
                self.pool.record_limit(target, call.excinfo.value.limit)
        if call.excinfo is not None and isinstance(call.excinfo.value, BoundaryError):
            item.stash[_BOUNDARY] = True
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = Path(str(report.fspath)) if report.fspath else None
        target, canonical = self.where(Path(report.location[0]) if path is None else path, report.nodeid)
        if not target:
            target, canonical = self._from_nodeid(report.nodeid)
        key = report.nodeid
        row = self._row(key, canonical, target)
        self._set(key, canonical, target, duration_ms=row.duration_ms + int(round(report.duration * 1000)))
        if report.when == "teardown" and target:
            self._set(key, canonical, target, trips=self.pool.take_trips(target))
            printed = self.pool.take_output(target)
            if printed.strip():
                self._set(key, canonical, target, printed=_cut(printed, MAX_PRINTED))
        if report.when == "call" and report.passed and key in self.recorded:
            self._set(key, canonical, target, recorded=self.recorded[key])
        if report.passed or row.outcome in (Outcome.FAILED, Outcome.ERROR, Outcome.TIMEOUT):
            return
        if target in self.stop_early and not report.skipped:
            self.failed_targets.add(target)
        cause = self.causes.get(report.nodeid) or crash_line(report)
        detail = _cut(clean_detail(report.longreprtext or "", self.files), MAX_DETAIL)
        if report.skipped:
            self._set(key, canonical, target, outcome=Outcome.SKIPPED, cause=cause)
        elif key in self.limits:
            self._set(key, canonical, target, outcome=Outcome.TIMEOUT, limit=self.limits[key], cause=cause, detail=detail)
        elif report.when == "call":
            self._set(key, canonical, target, outcome=Outcome.FAILED, cause=cause, detail=detail,
                      unfinished=key in self.unfinished)
        else:
            self._set(key, canonical, target, outcome=Outcome.ERROR, detail=detail,
                      cause=_("error in {phase}: {cause}").format(phase=report.when, cause=cause))

    def _from_nodeid(self, nodeid: str) -> tuple[str, str]:
        head = nodeid.split("::", 1)[0]
        for path, entry in self.files.items():
            if path.endswith("/" + head) or path.endswith(head):
                rest = nodeid.split("::", 1)[1] if "::" in nodeid else ""
                return entry.target, entry.canonical + (f"::{rest}" if rest else "")
        return "", nodeid

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if "hypothesis" in sys.modules:  # imported by a test without naming it: the judge's profile all the same
            load_hypothesis_profile()
        # what was imported and collected lives until the session ends: the collections during the tests (and the two
        # pytest makes as it ends) no longer walk it
        gc.freeze()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if not report.failed:
            return
        path = Path(str(report.fspath)) if report.fspath else Path(report.nodeid)
        target, canonical = self.where(path, report.nodeid)
        self.collect_errors.append(CollectError(canonical.split("::", 1)[0], target, crash_line(report),
                                                _cut(report.longreprtext or "", MAX_DETAIL)))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.pool.close()
        problems = {label: p for label, p in self.pool.import_problems.items() if p is not None}
        # a value recorded by a test that failed after all (its teardown) is no answer
        rows = tuple(row if row.outcome is Outcome.PASSED else replace(row, recorded="") for row in self.rows.values())
        messages.write(SessionReport(rows=rows, import_problems=problems, collect_errors=tuple(self.collect_errors),
                                     exitstatus=int(exitstatus), budget_spent_s=self.pool.time_budget.spent),
                       Path(self.job.report))


_BOUNDARY = pytest.StashKey[bool]()
