"""The judge: one execution core for every command that runs learner code.

A :class:`Job` names *targets* (implementations of ``forge``, as folders laid over each other),
*course tests* (files the course wrote: stage tests, instructor checks, reference transfer tests)
and *learner tests* (files the learner wrote: transfer tests). :func:`run` returns one typed
:class:`~forgelab.judge.outcomes.RunReport`:

* course tests run in one pytest process on the trusted side, with the course's interface
  ``forge`` (:mod:`forgelab.judge.remote`); every call into learner code crosses into that target's
  sandboxed host (:mod:`forgelab.judge.channel`) and comes back as data;
* learner tests are learner code too, but never share a process with the ``forge`` they test: each
  test file runs alone in a sandbox of its own with the same interface ``forge``, and its calls reach
  the target's host through this process, which relays them as data and watches both sides
  (:mod:`forgelab.judge.relay`). Their report is read as untrusted data with strict limits; what the
  judge saw itself (a limit the learner's ``forge`` hit) overrides it.

Nothing the learner wrote runs in the process that decides; nothing of the course that the learner
must not see (solutions, variants, instructor checks, this run's files) is visible in any sandbox.
"""

from __future__ import annotations

import contextvars
import re
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from forgelab.core import i18n
from forgelab.core.i18n import _
from forgelab.judge import bytecode, channel, early, messages, relay, removal, starters, waiting
from forgelab.judge.interface import Offered, build_interface, offered
from forgelab.judge.messages import SessionFile, SessionJob, SessionReport, SessionRequest, SessionTarget
from forgelab.judge.outcomes import CollectError, ImportProblem, Limit, Outcome, RunReport, TestRow, ended_how
from forgelab.judge.sandbox import Isolation, isolation as decide_isolation
from forgelab.judge.settings import JudgeSettings
from forgelab.judge.starters import SessionStarter

if TYPE_CHECKING:  # only watch mode starts a warm worker, and hands it in: a cold check never loads its module
    from forgelab.judge.warm import WarmWorker

SESSION_INI = """# the judge's trusted pytest session: no plugin autoload, no cache, no conftest
[pytest]
python_files = test_*.py
python_functions = test_*
console_output_style = classic
addopts = -p no:cacheprovider --import-mode=importlib
markers =
    watch_arguments: the test sees what the learner's code changed in its arguments (in every other test the
        learner's code works on its own copies and the test's objects stay as the test built them)
"""
MAX_LEARNER_EVENTS = 5000
MAX_PRINTED = 4000


@dataclass(frozen=True)
class TargetSpec:
    label: str
    layers: tuple[Path, ...]  # folders that each hold a forge package's files, laid over each other in order
    stage: str = ""
    probe: tuple[str, ...] = ()  # workbook module paths imported first, e.g. ("forge/instructions.py",)
    first_failure_ends: bool = False  # stop this target's tests at its first failure (a mutant needs only one)
    # the course's own code (its reference, a fault variant, a mutant): a learner's test run on it reports only each
    # test's outcome and the line of the learner's file where it failed, never a value, repr or message made while
    # that code ran (the reference is never an oracle; see _sealed)
    course_code: bool = False


@dataclass(frozen=True)
class CourseTests:
    target: str
    files: tuple[str, ...]  # paths relative to the course root


@dataclass(frozen=True)
class LearnerTests:
    target: str
    files: tuple[tuple[Path, str], ...]  # (file on disk, path shown and used in node ids, e.g. transfer/test_01_x.py)
    # each file runs alone (its own tester, its own host) unless the job runs it together with others (Job.together):
    # no run can tell from its surroundings which target it is given, and a file that hits a limit spoils no other


@dataclass(frozen=True)
class Job:
    course_root: Path
    starters: Path  # a folder that holds the pristine starter package forge/
    stage_modules: tuple[str, ...]  # every stage module of the course, e.g. forge/instructions.py
    targets: tuple[TargetSpec, ...]
    course_tests: tuple[CourseTests, ...] = ()
    learner_tests: tuple[LearnerTests, ...] = ()
    cache_dir: Path | None = None  # a folder the trusted session may keep caches in (Hypothesis's character tables)
    sessions: int = 1  # course tests may be split over this many trusted sessions, whole targets each
    # write pytest's assert-rewritten bytecode beside the course's test files, rewritten once per process (grading:
    # every submission's session imports the same files; see forgelab.judge.bytecode.rewritten_beside). A run given
    # a warm worker (watch mode: one process, a run at every save) gets it too
    rewritten_tests: bool = False
    # labels of one-file learner suites whose files run one after the other in one tester, in this order (each still
    # as if alone: see forgelab.judge.relay). Only for suites whose targets hold the same code, and only where every
    # run the verdict compares them with runs the same files in the same order: the runs must look alike from inside
    together: tuple[tuple[str, ...], ...] = ()


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-") or "target"


def _copy_tree(source: Path, destination: Path) -> None:
    for path in sorted(source.rglob("*")):
        if "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo") or path.is_symlink():
            continue
        relative = path.relative_to(source)
        if path.is_dir():
            (destination / relative).mkdir(parents=True, exist_ok=True)
        elif path.is_file():
            (destination / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination / relative)


def materialize(target: TargetSpec, code_dir: Path) -> Path:
    """``code_dir/forge/`` from the target's layers, plus the host script; returns ``code_dir``."""
    forge = code_dir / "forge"
    forge.mkdir(parents=True, exist_ok=True)
    for layer in target.layers:
        if layer.is_dir():
            _copy_tree(layer, forge)
    channel.install_host_files(code_dir)
    return code_dir


class _CodeFolders:
    """The code folders of one run: one per distinct layering of its targets, made when first asked for (from any
    thread). Targets laid from the same folders share theirs, which is read-only to every host in the sandbox
    (without one, the learner's code can write anywhere anyway). A graded submission's eleven stage targets were
    eleven copies of one folder, and the reference its transfer tests run on eleven more."""

    def __init__(self, under: Path) -> None:
        self._under = under
        self._made: dict[tuple[Path, ...], Path] = {}
        self._lock = threading.Lock()

    def of(self, target: TargetSpec) -> Path:
        with self._lock:
            folder = self._made.get(target.layers)
            if folder is None:
                folder = materialize(target, self._under / _safe(target.label))
                self._made[target.layers] = folder
            return folder


def _dotted(module: str) -> str:
    return ".".join(Path(module).with_suffix("").parts)


# ---------------------------------------------------------------- course tests (trusted side)


def _course_session(job: Job, settings: JudgeSettings, isolation: Isolation, run_dir: Path,
                    code_dirs: dict[str, Path], interface: Path, warm: WarmWorker | None = None,
                    starter: SessionStarter | None = None) -> RunReport:
    """The course's tests of ``job`` in one trusted session, started by ``starter`` (by default the warm worker's
    when there is one, else a session started early; the cold start when the strategy cannot run it)."""
    tests_dir = run_dir / "tests"
    files: dict[str, SessionFile] = {}
    for suite in job.course_tests:
        for relative in suite.files:
            source = job.course_root / relative
            if not source.is_file():
                continue
            copy = tests_dir / _safe(suite.target) / relative
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
            if (job.rewritten_tests or warm is not None) and copy.suffix == ".py" and copy.name.startswith("test_"):
                bytecode.rewritten_beside(copy, None if job.cache_dir is None else job.cache_dir / "rewritten")
            files[str(copy)] = SessionFile(target=suite.target, canonical=relative)
    if not files:
        return RunReport(())
    report_path = run_dir / "session-report.json"
    job_path = run_dir / "session-job.json"
    specs = {target.label: target for target in job.targets}
    messages.write(SessionJob(
        targets={label: SessionTarget(code_dir=str(path), probe=tuple(_dotted(m) for m in specs[label].probe),
                                      stage=specs[label].stage, first_failure_ends=specs[label].first_failure_ends)
                 for label, path in code_dirs.items()},
        files=files, settings=settings, isolation=isolation, report=str(report_path), tests_root=str(tests_dir),
    ), job_path)
    ini = run_dir / "session.ini"
    ini.write_text(SESSION_INI, encoding="utf-8")
    env = {**early.session_env(), "PYTHONPATH": str(interface)}
    session_tmp = run_dir / "session-tmp"  # the session's hosts' folders: they go with the run's folder, even when
    session_tmp.mkdir(exist_ok=True)       # the session is killed before it could remove them itself (Ctrl-C)
    env["TMPDIR"] = str(session_tmp)
    if job.cache_dir is not None:  # Hypothesis builds its Unicode tables once and keeps them here (no example database)
        job.cache_dir.mkdir(parents=True, exist_ok=True)
        env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(job.cache_dir / "hypothesis")
    request = SessionRequest(args=["-c", str(ini), f"--rootdir={tests_dir}", "--noconftest",
                                   "--continue-on-collection-errors", "-p", "forgelab.judge.session_plugin",
                                   "--forgelab-job", str(job_path), "-q", "--tb=native", "--color=no", *files],
                             cwd=str(run_dir), env=env)
    # whichever strategy starts it, the same session: the same request, held by the same watchdog to the same limits
    watched = starters.start_session(request, wall_s=settings.session_wall_s,
                                     strategy=starter if starter is not None else starters.for_run(warm))
    if not report_path.is_file():
        tail = [line for line in watched.output.strip().splitlines() if line.strip()][-3:] or ["no output"]
        why = (f"the test session was stopped after {settings.session_wall_s} s" if watched.limit is Limit.WALL
               else f"the test session could not finish: {' | '.join(tail)[:400]}")
        return RunReport((), problem=why, sandbox=isolation.description)
    try:
        report = messages.read(SessionReport, report_path)
    except messages.MessageError as error:
        return RunReport((), problem=str(error), sandbox=isolation.description)
    return RunReport(report.rows, report.import_problems, report.collect_errors, sandbox=isolation.description,
                     course_budget_spent_s=report.budget_spent_s)


# ---------------------------------------------------------------- learner tests (a tester and a host per file)


@dataclass(frozen=True)
class _LearnerFile:
    """One test file the learner wrote, to run against the target ``label`` names."""

    label: str
    test_file: Path
    shown: str


def _learner_units(job: Job) -> list[list[_LearnerFile]]:
    """The learner's test files, grouped into the runs that run them: one file each, or a group of ``job.together``
    (when its suites are there, hold one file each, at distinct paths, and their targets hold the same code)."""
    files = {suite.target: [_LearnerFile(suite.target, path, shown) for path, shown in suite.files]
             for suite in job.learner_tests}
    specs = {target.label: target for target in job.targets}
    units: list[list[_LearnerFile]] = []
    grouped: set[str] = set()
    for labels in job.together:
        members = [files[label][0] for label in labels if len(files.get(label, ())) == 1 and label in specs]
        code = {(specs[member.label].layers, specs[member.label].course_code) for member in members}
        if len(members) == len(labels) > 1 and len(code) == 1 and len({m.shown for m in members}) == len(members) \
                and not grouped & set(labels):
            units.append(members)
            grouped |= set(labels)
    for suite in job.learner_tests:
        if suite.target not in grouped:
            units.extend([member] for member in files[suite.target])
    return units


def _learner_files(unit: list[_LearnerFile], specs: dict[str, TargetSpec], folders: _CodeFolders,
                   settings: JudgeSettings, isolation: Isolation, folder: Path, template: Path, offer: Offered,
                   budget: channel.TimeBudget) -> RunReport:
    """Test files the learner wrote, run one after the other in one tester against the code of the first one's target
    (see :mod:`forgelab.judge.relay`); a file that run did not reach runs alone afterwards."""
    host_dir = folders.of(specs[unit[0].label])
    mounted = isolation.sandboxed  # the sandbox binds the template over the folder (see relay.tester_folder)
    tester_dir = relay.tester_folder(template, folder / "tester", [(item.test_file, item.shown) for item in unit],
                                     mounted)
    runs = relay.run_files(tester_dir, [item.shown for item in unit], host_dir, settings, isolation,
                           folder / "scratch", offer, budget, template if mounted else None)
    reports = []
    with i18n.speaking(settings.language):
        for item, run in zip(unit, runs):
            course_code = specs[item.label].course_code
            report = _read_learner_report(item.label, run, [item.shown], settings, isolation, show_output=not course_code)
            reports.append(_sealed(report, item.shown, _line_count(item.test_file)) if course_code else report)
    for index, item in enumerate(unit[len(runs):]):  # the tester stopped or ended before it began these
        reports.append(_learner_files([item], specs, folders, settings, isolation, folder / f"alone-{index}", template,
                                      offer, budget))
    return merge(reports, isolation.description)


def _line_count(path: Path) -> int:
    try:
        return len(path.read_bytes().splitlines())
    except OSError:
        return 0


def learner_line(text: str, shown: str, lines: int) -> int:
    """The last line of the learner's file ``shown`` that ``text`` (pytest's report of a failure) names, or 0.

    Only a line the file has counts: the report is the learner's process's claim, and the line is all of it that
    leaves a sealed run (:func:`_sealed`)."""
    place = re.compile(rf'(?:{re.escape(shown)}:(\d{{1,9}})|File "[^"]*{re.escape(shown)}", line (\d{{1,9}})'
                       r'|^line (\d{1,9}): )', re.MULTILINE)
    found = [int(next(group for group in match.groups() if group)) for match in place.finditer(text)]
    found = [line for line in found if 1 <= line <= lines]
    return found[-1] if found else 0


def _at(shown: str, line: int) -> str:
    return _("at line {line} of {file}").format(line=line, file=shown) if line else \
        _("no line of {file} named").format(file=shown)


def _sealed(report: RunReport, shown: str, lines: int) -> RunReport:
    """What leaves a run of a learner's test on the course's own code: each test's outcome, the line of the learner's
    file where it failed, and the judge's own words about limits — never the failure's message, traceback, repr or
    what was printed, which the course's code may have computed (a test that fails on purpose with
    ``repr(explain(case))`` in its message would read the reference's answers)."""
    rows = []
    for row in report.rows:
        if row.outcome in (Outcome.PASSED, Outcome.SKIPPED):
            rows.append(replace(row, cause="", detail="", printed=""))
        elif row.limit is not None:  # the judge's own words about the limit it saw
            rows.append(replace(row, detail="", printed=""))
        else:
            line = learner_line(row.detail, shown, lines) or learner_line(row.cause, shown, lines)
            rows.append(replace(row, cause=_at(shown, line), detail="", printed=""))
    errors = tuple(replace(error, cause=_at(shown, learner_line(f"{error.cause}\n{error.detail}", shown, lines)),
                           detail="") for error in report.collect_errors)
    return replace(report, rows=tuple(rows), collect_errors=errors)


@dataclass
class _Draft:
    """A row of a learner's test run while its events are read (:func:`_read_learner_report`)."""

    outcome: Outcome = Outcome.PASSED
    cause: str = ""
    detail: str = ""
    duration_ms: int = 0
    limit: Limit | None = None
    reported: bool = False  # its process said how it ended


def _read_learner_report(label: str, run: relay.RelayRun, files: list[str], settings: JudgeSettings,
                         isolation: Isolation, show_output: bool = True) -> RunReport:
    """Events written by learner code: each read as one shape of :mod:`forgelab.judge.events` or dropped, nothing
    else trusted; then what the judge saw itself (a limit the learner's forge hit, what it printed, where it raised) on top."""
    # a cold check hands the judge its job before the rest of its tools load (forgelab.learner.checkjob)
    # lazy: start-up speed — the events' models are built only when a learner's own tests ran
    from forgelab.judge import events as learner_events

    events = [event for raw in run.events[:MAX_LEARNER_EVENTS] if (event := learner_events.read(raw)) is not None]
    rows: dict[str, _Draft] = {}  # by node id, in the order the tests started
    errors: list[CollectError] = []
    running: str | None = None

    def valid(nodeid: object) -> str | None:
        if not isinstance(nodeid, str) or len(nodeid) > 500:
            return None
        return nodeid if nodeid.split("::", 1)[0] in files else None

    def row_of(nodeid: str) -> _Draft:
        if nodeid not in rows:
            rows[nodeid] = _Draft()
        return rows[nodeid]

    for event in events:
        if isinstance(event, learner_events.Started) and (nodeid := valid(event.nodeid)):
            running = nodeid
            row_of(nodeid)
        elif isinstance(event, learner_events.Reported) and (nodeid := valid(event.nodeid)) and nodeid in rows:
            row = rows[nodeid]
            row.duration_ms += event.duration_ms
            row.reported = True
            if event.outcome == "passed" or row.outcome in (Outcome.FAILED, Outcome.ERROR):
                if event.when == "teardown" and running == nodeid:
                    running = None
                continue
            row.outcome, row.cause, row.detail = Outcome(event.outcome), event.cause, event.detail
            if event.when == "teardown":
                running = None
        elif isinstance(event, learner_events.CollectionFailed):
            file = event.nodeid
            errors.append(CollectError(file if file in files else (files[0] if files else file), label, event.cause,
                                       event.detail))
    # a test passes on its process's word that it passed, never for want of a word: one that started and was never
    # reported on (its process ended during it, or its last report was lost) has no result
    # (its limit is Limit.CRASH: the process ended by itself, and how — an exit status or a signal — is the judge's word)
    for row in rows.values():
        if not row.reported:
            row.outcome, row.limit, row.cause = Outcome.ERROR, Limit.CRASH, _(
                "this test started, but the process that ran it ended without reporting its result ({how}): does the "
                "test call os._exit or send a signal?").format(how=ended_how(run.ended))
    # what the judge saw itself overrides what the tests say about themselves
    for nodeid, (limit, message) in sorted(run.limits.items()):
        if valid(nodeid):
            row = row_of(nodeid)
            row.outcome, row.cause, row.limit = Outcome.TIMEOUT, message, limit
    for nodeid, trace in sorted(run.traces.items()):
        if nodeid in rows and rows[nodeid].outcome in (Outcome.FAILED, Outcome.ERROR, Outcome.TIMEOUT):
            rows[nodeid].detail = (rows[nodeid].detail.rstrip() + "\n\n" + _("where your code raised:") + "\n"
                                   + trace).strip()
    shown = files[0] if files else "transfer"
    problem = None
    ended = any(row.limit is Limit.CRASH for row in rows.values()) or run.stopped is Limit.CRASH
    if run.stopped is not None:
        words = run.budget or {Limit.CPU: _("your test used more than {seconds} s of CPU time (a loop that never "
                                             "ends?)").format(seconds=settings.learner_tests_cpu_s),
                 Limit.WALL: _("your test did not finish within {seconds} s").format(seconds=settings.learner_tests_wall_s),
                 Limit.OUTPUT: _("your test printed more than {kb} KB").format(kb=settings.output_kb),
                 Limit.MEMORY: _("your test ran out of memory"),
                 Limit.CRASH: _("your test's process stopped talking to the judge")}[run.stopped]
        stopped_in = valid(run.stopped_in) or running
        if stopped_in:
            row = row_of(stopped_in)
            row.outcome, row.cause, row.limit = Outcome.TIMEOUT, _("{what}; it was stopped").format(what=words), run.stopped
        problem = _("the run of {file} was stopped: {what}").format(file=shown, what=words)
    elif run.gave_up:
        problem = _("the run of {file} was stopped after {count} tests hit a limit").format(file=shown, count=run.gave_up)
    elif not events and run.ended_seen:
        problem = _("the process that ran {file} ended before it reported anything ({how}): does the file call "
                    "os._exit or send a signal when it is imported?").format(file=shown, how=ended_how(run.ended))
        tail = [line for line in run.output.strip().splitlines() if line.strip()][-2:]
        if show_output and tail:
            problem = f"{problem} | {' | '.join(tail)[:300]}"
        ended = True
    elif not events:
        tail = [line for line in run.output.strip().splitlines() if line.strip()][-2:] or ["no output"]
        problem = (_("your tests could not be run: {why}").format(why=" | ".join(tail)[:300]) if show_output else
                   _("your tests could not be run (what the run printed is not shown: it ran on the course's own "
                     "code)"))
    result = tuple(TestRow(nodeid, label, row.outcome, row.cause, row.detail, row.duration_ms, row.limit,
                           run.printed.get(nodeid, "")[-MAX_PRINTED:]) for nodeid, row in rows.items())
    return RunReport(result, collect_errors=tuple(errors), sandbox=isolation.description,
                     target_problems={label: problem} if problem else {},
                     ended_targets=frozenset({label}) if ended else frozenset())


# ---------------------------------------------------------------- the whole job


def run(job: Job, settings: JudgeSettings, isolation: Isolation | None = None,
        warm: WarmWorker | None = None, processes: channel.RunProcesses | None = None,
        starter: SessionStarter | None = None, remove_later: bool = False) -> RunReport:
    """Run every suite of ``job``; one report whose rows name their file, test and target. With ``warm`` (watch
    mode), the course's tests run in a session forked from that worker; everything else is as in a cold run.
    ``starter`` chooses how the course's sessions start instead (:mod:`forgelab.judge.starters`).
    ``processes`` holds what the run starts (the caller may stop it from another thread: a check's Ctrl-C); when the
    run fails, it ends its own processes and no other run's.

    The run's folder is removed before this returns, except in watch mode and with ``remove_later`` (``grade``: a full
    submission's folder holds about 3,000 files, whose removal took longer than building its rows, similarity check
    and pages): then a thread of its own removes it, and what that thread has not finished is removed at the
    interpreter's exit (:mod:`forgelab.judge.removal`). A caller that ends its process with ``os._exit`` (``check``)
    must not ask for it."""
    isolation = isolation or decide_isolation(settings.sandbox)
    folder = tempfile.mkdtemp(prefix="forgelab-judge-")
    processes = processes or channel.RunProcesses(within=channel.current_run())  # stopped with what it runs within
    token = channel.running_as(processes)
    try:
        return _run_in(job, settings, isolation, Path(folder), warm, processes, starter)
    finally:
        channel.stop_running_as(token)
        if warm is None and not remove_later:
            shutil.rmtree(folder, ignore_errors=True)
        else:  # the verdict is shown (the rows built) while the run's folder goes: nothing of it is read again
            removal.remove_soon(Path(folder))


def _run_in(job: Job, settings: JudgeSettings, isolation: Isolation, run_dir: Path,
            warm: WarmWorker | None, processes: channel.RunProcesses,
            starter: SessionStarter | None = None) -> RunReport:
    """The body of :func:`run`, in the run's folder ``run_dir``."""
    folders = _CodeFolders(run_dir / "targets")
    tested = {suite.target for suite in job.course_tests}
    # the course's tests' targets now; a target only the learner's tests use when its tester starts (_learner_files)
    code_dirs = {target.label: folders.of(target) for target in job.targets if target.label in tested}
    reports: list[RunReport] = []
    learner_units = _learner_units(job)
    course_sessions = _shards(job) if job.course_tests else []
    workers = max(2, len(course_sessions) + min(2, len(learner_units)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = []
        interface = run_dir / "interface"
        if job.course_tests or learner_units:  # watch mode builds it once (forgelab.judge.warm.WarmWorker.interface)
            interface = (warm.interface(job.starters, list(job.stage_modules)) if warm is not None
                         else build_interface(job.starters, list(job.stage_modules), interface))
        for index, shard in enumerate(course_sessions):
            folder_of_shard = run_dir / f"session-{index}"
            folder_of_shard.mkdir()
            # each thread runs as this run (channel.running_as): what it starts is stopped with the run
            futures.append(pool.submit(contextvars.copy_context().run, _course_session, shard, settings, isolation,
                                       folder_of_shard,
                                       {t.label: code_dirs[t.label] for t in shard.targets}, interface, warm,
                                       starter))
        if learner_units:
            template = relay.write_template(run_dir / "tester", interface)
            offer = offered(job.starters, list(job.stage_modules))
            specs = {target.label: target for target in job.targets}
            budget = channel.TimeBudget(settings.submission_wall_s)  # every run of the learner's tests together
            for index, unit in enumerate(learner_units):
                futures.append(pool.submit(contextvars.copy_context().run, _learner_files, unit, specs, folders,
                                           settings, isolation, run_dir / "learner" / f"{index:02d}-{_safe(unit[0].label)}",
                                           template, offer, budget))
        try:
            reports = waiting.results(futures)  # a Ctrl-C is raised at once, whichever thread the signal reached
        except BaseException:  # Ctrl-C or a failure: nothing this run started may keep running (another run's may)
            processes.stop()
            if warm is not None:
                warm.stop_child()
            raise
    return merge(reports, isolation.description)


def _shards(job: Job) -> list[Job]:
    """Split the course tests over ``job.sessions`` sessions; every target stays whole in one of them."""
    labels = [target.label for target in job.targets if any(s.target == target.label for s in job.course_tests)]
    count = max(1, min(job.sessions, len(labels)))
    weight = {label: sum(len(s.files) for s in job.course_tests if s.target == label) for label in labels}
    buckets: list[list[str]] = [[] for _ in range(count)]
    loads = [0] * count
    for label in sorted(labels, key=lambda item: (-weight[item], labels.index(item))):
        smallest = loads.index(min(loads))
        buckets[smallest].append(label)
        loads[smallest] += weight[label]
    shards = []
    for bucket in buckets:
        chosen = set(bucket)
        shards.append(replace(job, targets=tuple(t for t in job.targets if t.label in chosen),
                              course_tests=tuple(s for s in job.course_tests if s.target in chosen), learner_tests=()))
    return shards


def merge(reports: list[RunReport], sandbox: str = "") -> RunReport:
    rows: list[TestRow] = []
    problems: dict[str, ImportProblem] = {}
    errors: list[CollectError] = []
    run_problems = []
    target_problems: dict[str, str] = {}
    ended: set[str] = set()
    spent = 0.0
    for report in reports:
        ended |= report.ended_targets
        spent += report.course_budget_spent_s
        rows.extend(report.rows)
        problems.update(report.import_problems)
        errors.extend(report.collect_errors)
        for label, problem in report.target_problems.items():  # one per learner test file: keep them all
            target_problems[label] = f"{target_problems[label]}; {problem}" if label in target_problems else problem
        if report.problem:
            run_problems.append(report.problem)
    return RunReport(tuple(rows), problems, tuple(errors), "; ".join(run_problems) or None,
                     sandbox or next((r.sandbox for r in reports if r.sandbox), ""), target_problems, frozenset(ended),
                     spent)
