"""A cold check starts faster without changing what decides (issue 23, the cold check).

`forgelab check NN` starts its trusted session as the command begins (forgelab/judge/early.py), while it reads
the course and lays out the code; the session imports Hypothesis only when its tests use it; the sandbox is
probed on a thread; the course is read through a cache keyed by every byte it is read from
(forgelab/core/registry.py). What a check decides must be exactly what a session started the old way decides, a
session nobody used must end with the command, and a changed course file must be seen at once.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import (ROOT, WorkbookCopy, cli_env, copy_workbook, interrupt_a_thread_other_than_the_main_one,
                      learner_code_sleeps_below, main_thread_waits, processes_with_variable, start_cli, wait_until)
from grading_fixtures import MODULE, SAME_RANK_FIND, SAME_RANK_LAST_WINS

from forgelab.cli.launch import one_stage_check
from forgelab.core import registry
from forgelab.core.paths import Workbook
from forgelab.core.registry import CourseFileError, load_course
from forgelab.judge import channel, core, early, sandbox
from forgelab.judge.core import CourseTests, TargetSpec
from forgelab.judge.outcomes import Outcome
from forgelab.judge.settings import DEFAULT
from forgelab.learner.check import CheckOutcome
from forgelab.learner.checkjob import start_check
from forgelab.learner.workbench import Workbench
from forgelab.verdicts import jobs


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Workbench:
    root = copy_workbook(tmp_path_factory.mktemp("cold") / "workbook").root
    return Workbench(Workbook(root=root, workspace=root), load_course(root))


def verdict(outcome: CheckOutcome) -> dict[str, object]:
    return {"accepted": outcome.accepted,
            "import_problem": outcome.import_problem.cause if outcome.import_problem else None,
            "tests": {row.name: (row.outcome.value, row.cause) for row in outcome.tests},
            "problem": outcome.report.problem if outcome.report else None}


@pytest.mark.parametrize("module", ["reference", "wrong"])
def test_a_session_started_early_decides_what_a_new_session_decides(bench: Workbench, module: str) -> None:
    reference = (ROOT / "solutions" / MODULE).read_text(encoding="utf-8")
    code = reference if module == "reference" else reference.replace(SAME_RANK_FIND, SAME_RANK_LAST_WINS)
    (bench.workbook.root / MODULE).write_text(code, encoding="utf-8")
    stage = bench.course.stage("01")
    plain = verdict(bench.check(stage, write=False))
    early.start_session()
    started = early._PENDING[0].started.process
    try:
        sooner = verdict(bench.check(stage, write=False))
    finally:
        early.discard()
    assert started.poll() is not None and early.take() is None  # it ran this check's session, and ended
    assert sooner == plain
    # as `forgelab check NN` does it: the session started early, the run started before the rest of the tools load
    early.start_session()
    try:
        pending = start_check(bench.course, bench.workbook, stage, bench.target("learner"), bench.settings)
        pending.wait_until_started()
        assert early.take() is None  # the run has the session already
        assert verdict(bench.check(stage, write=False, pending=pending)) == plain
    finally:
        early.discard()
    tests = plain["tests"]
    assert isinstance(tests, dict) and len(tests) == len(stage.required_tests)
    assert all(outcome == "passed" for outcome, _cause in tests.values()) is (module == "reference")


def test_a_session_nobody_used_ends_with_the_command() -> None:
    early.start_session()
    process = early._PENDING[0].started.process
    early.probe_sandbox()
    early.discard()
    assert process.poll() is not None, "the session started early still runs"
    assert early._PROBES == [] and early.take() is None


def test_a_session_whose_python_would_start_otherwise_is_not_used() -> None:
    early.start_session()
    try:
        session = early._PENDING[0]
        assert session.fits({**early.session_env(), "PYTHONPATH": "/elsewhere", "HYPOTHESIS_STORAGE_DIRECTORY": "/x"})
        assert not session.fits({**early.session_env(), "PYTHONHASHSEED": "1"})
        assert not session.fits({**early.session_env(), "PYTHONDONTWRITEBYTECODE": ""})
    finally:
        early.discard()


def test_the_probe_on_a_thread_and_the_judge_get_one_answer() -> None:
    early.probe_sandbox()
    early.discard()  # waits for the thread
    assert sandbox.isolation(DEFAULT.sandbox) == sandbox.isolation(DEFAULT.sandbox)


PLAIN = '''import sys

from forge.instructions import Instruction


def test_without_it():
    assert Instruction("system", "write", "deny").key == "write"
    assert ("hypo" + "thesis") not in sys.modules  # the word itself would make the judge import it
'''
WITH_IT = '''from hypothesis import given, settings, strategies


def test_the_judge_profile():
    assert settings.default.deadline is None and settings.default.derandomize and settings.default.database is None


@given(strategies.integers())
def test_given(number):
    assert number == number
'''


@pytest.mark.parametrize("files", [("test_plain.py",), ("test_with_it.py",)])
def test_hypothesis_is_imported_only_for_tests_that_use_it_and_then_with_the_judge_profile(
        tmp_path: Path, files: tuple[str, ...]) -> None:
    course = tmp_path / "course"
    course.mkdir()
    (course / "test_plain.py").write_text(PLAIN, encoding="utf-8")
    (course / "test_with_it.py").write_text(WITH_IT, encoding="utf-8")
    workbook = Workbook(ROOT, ROOT)
    starters = jobs.starters(workbook)
    target = TargetSpec("ref", (starters / "forge", ROOT / "solutions" / "forge"), "01", (MODULE,))
    job = core.Job(course, starters, jobs.stage_modules(load_course(ROOT)), (target,), (CourseTests("ref", files),))
    report = core.run(job, DEFAULT)
    assert report.problem is None and report.rows, report
    assert {row.nodeid: (row.outcome, row.cause) for row in report.rows if row.outcome is not Outcome.PASSED} == {}


@pytest.mark.parametrize(("arguments", "one"), [
    (["check", "01"], True), (["check", "1", "--target", "solution"], True), (["--lang", "zh", "check", "05"], True),
    (["check", "--target=fault:01", "03", "--cpu-limit", "4"], True), (["check", "01", "--unsandboxed"], True),
    (["check", "01", "02"], False), (["check", "01-03"], False), (["check", "all"], False), (["check"], False),
    (["check", "01", "--why", "test_x"], False), (["check", "01", "--why=test_x"], False), (["check", "01", "-h"], False),
    (["check", "01", "--targ", "solution"], False), (["status", "01"], False), (["hint", "check", "01"], False),
    (["check", "--target", "01"], False), ([], False),
])
def test_the_entry_point_reads_one_stage_check_as_check_itself_would(arguments: list[str], one: bool) -> None:
    assert one_stage_check(arguments) is one


ENTRY = """import sys
from forgelab.judge import early

started = early.EarlySession.__init__


def noted(self):
    print("session started, command line loaded:", "forgelab.cli.main" in sys.modules, flush=True)
    started(self)


early.EarlySession.__init__ = noted
sys.argv = ["forgelab", *sys.argv[1:]]
from forgelab.cli.launch import main

sys.exit(main())
"""


def test_the_session_starts_before_the_command_line_loads(workbook: WorkbookCopy, tmp_path: Path) -> None:
    script = tmp_path / "entry.py"
    script.write_text(ENTRY, encoding="utf-8")
    env = {**cli_env(workbook.root), "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, str(script), "check", "01", "--target", "solution"], cwd=workbook.root,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("session started, command line loaded: False\n"), done.stdout[:300]
    assert "ACCEPTED" in done.stdout
    assert early.dies_with_parent(["python", "-c", "pass"]) == channel.dies_with_parent(["python", "-c", "pass"])


def test_a_session_started_for_a_command_that_then_fails_ends_with_it(monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from forgelab.cli import launch

    sessions: list[early.EarlySession] = []
    start_session = early.start_session

    def noted() -> None:
        start_session()
        sessions.extend(early._PENDING)

    monkeypatch.setattr(early, "start_session", noted)
    monkeypatch.setattr(sys, "argv", ["forgelab", "check", "01", "--cpu-limit", "many"])  # argparse refuses it
    with pytest.raises(SystemExit) as refused:
        launch.main()
    assert refused.value.code == 2 and "--cpu-limit: invalid int value: 'many'" in capsys.readouterr().err
    assert len(sessions) == 1 and sessions[0].started.process.poll() is not None  # closed, not left to the exit
    assert early.take() is None and early._PROBES == []


def _interrupt_check(workbook: WorkbookCopy, tmp_path: Path,
                     ready: Callable[[Path, subprocess.Popen[str]], object],
                     taken_by: str = "the process") -> tuple[int, str, str, Path]:
    """`forgelab check 01` on a module whose import sleeps 300 s, sent Ctrl-C once ``ready(scratch, command)`` has
    returned (``taken_by`` "another thread": to one of its threads but the main one): its exit status, output, error
    output and TMPDIR (``scratch``). It must end well before the judge's wall-clock limit would end the import."""
    module = (ROOT / "solutions" / MODULE).read_text(encoding="utf-8")
    workbook.write(MODULE, module + "\n\nimport time\ntime.sleep(300)  # the tests wait for this import\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    command = start_cli(workbook.root, "check", "01", env={"TMPDIR": str(scratch)})
    try:
        ready(scratch, command)
        pressed = time.monotonic()
        if taken_by == "another thread":
            interrupt_a_thread_other_than_the_main_one(command.pid)
        else:
            command.send_signal(signal.SIGINT)
        out, err = command.communicate(timeout=120)
        took = time.monotonic() - pressed
    finally:
        if command.poll() is None:
            command.kill()
            command.communicate()
    # the interrupt ended the sleeping import, not the judge's limit (never shorter than test_wall_s)
    assert took < DEFAULT.test_wall_s / 2, f"check ended {took:.0f} s after Ctrl-C: the judge's limit ended the run"
    return command.returncode, out, err, scratch


def _nothing_left(scratch: Path) -> None:
    wait_until(lambda: processes_with_variable(f"TMPDIR={scratch}") == [], timeout=30, what="every process of the check to end")
    assert sorted(path.name for path in scratch.iterdir()) == []


@pytest.mark.parametrize("taken_by", ["the process", "another thread"])
def test_ctrl_c_while_the_tests_run_leaves_no_process_and_no_run_folder(workbook: WorkbookCopy, tmp_path: Path,
                                                                        taken_by: str) -> None:
    """Ctrl-C ends the check at once, whichever of its threads the signal reaches (the main one waits for the report:
    before, a signal another thread took was raised only once the judge's limit had ended the sleeping import)."""

    def tests_running(scratch: Path, command: subprocess.Popen[str]) -> None:
        wait_until(lambda: list(scratch.glob("forgelab-judge-*/session-0/session-job.json")) or None, timeout=120,
                   what="the check's session to get its job", gave_up=lambda: None if command.poll() is None
                   else f"the check ended first: {command.communicate()}")
        wait_until(lambda: len(processes_with_variable(f"TMPDIR={scratch}")) >= 3, timeout=60,
                   what="the command, its session and the sandboxed host")
        wait_until(lambda: learner_code_sleeps_below(command.pid) and main_thread_waits(command.pid), timeout=120,
                   every=0.05, what="the learner's module to sleep in the sandbox while the command waits for the report")

    code, out, err, scratch = _interrupt_check(workbook, tmp_path, tests_running, taken_by)
    assert "interrupted" in err, (code, out[-300:], err)
    _nothing_left(scratch)


def test_ctrl_c_as_the_check_starts_says_interrupted_and_leaves_no_process(workbook: WorkbookCopy,
                                                                           tmp_path: Path) -> None:
    """The session and the sandbox's probe start before the command line has loaded (forgelab.cli.launch): Ctrl-C
    then, while it loads, is answered as later, not with a traceback, and nothing it started stays behind."""
    code, out, err, scratch = _interrupt_check(workbook, tmp_path, lambda scratch, _command: wait_until(
        lambda: len(processes_with_variable(f"TMPDIR={scratch}")) >= 2 or None, timeout=60, every=0.002,
        what="the command and the session it started"))
    assert code == 2 and "interrupted" in err and "Traceback" not in err, (code, out, err)
    _nothing_left(scratch)


# ---------------------------------------------------------------- the course read through its cache

STAGE_01 = "course/stages/01-instruction-hierarchy/stage.toml"
LAST_TEST = '    "test_instructions_are_immutable",\n'


def _course_only(folder: Path) -> Path:
    """What the registry reads: course/ and pyproject.toml."""
    shutil.copytree(ROOT / "course", folder / "course", ignore=shutil.ignore_patterns("starters"))
    shutil.copyfile(ROOT / "pyproject.toml", folder / "pyproject.toml")
    return folder


def _no_full_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_args: object) -> None:
        raise AssertionError("the course was read in full, not from its cache")

    monkeypatch.setattr(registry, "_load", refused)


def test_the_course_from_its_cache_is_the_course_a_full_read_gives(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "state" / "course-cache.json"
    full = load_course(ROOT)
    assert load_course(ROOT, cache=cache) == full and cache.is_file()  # read in full, then kept
    _no_full_read(monkeypatch)
    cached = load_course(ROOT, cache=cache)
    # every field of every stage, each edition's texts (validated again by their models) and the scenarios
    assert cached == full
    assert [stage.text("zh").title for stage in cached.stages] == [stage.text("zh").title for stage in full.stages]
    assert cached.scenario("office", "zh") == full.scenario("office", "zh")


def test_a_changed_added_or_removed_course_file_is_seen_through_the_cache(tmp_path: Path) -> None:
    root = _course_only(tmp_path / "workbook")
    cache = tmp_path / "course-cache.json"
    source = root / STAGE_01
    original = source.read_text(encoding="utf-8")
    assert load_course(root, cache=cache).stage("01").required_tests[-1] == "test_instructions_are_immutable"
    assert load_course(root, cache=cache) == load_course(root)  # from the cache now
    source.write_text(original.replace(LAST_TEST, "").replace('title = "Instruction hierarchy"',
                                                               'title = "Instruction ranks"'), encoding="utf-8")
    changed = load_course(root, cache=cache)
    assert "test_instructions_are_immutable" not in changed.stage("01").required_tests
    assert changed.stage("01").text("en").title == "Instruction ranks"
    assert changed == load_course(root)
    source.write_text(original, encoding="utf-8")  # back as it was: the first course again
    assert load_course(root, cache=cache).stage("01").text("en").title == "Instruction hierarchy"
    source.write_text(original.replace("[fault]", "[fault]\ntypo = 1"), encoding="utf-8")
    with pytest.raises(CourseFileError, match="unknown key 'typo'"):  # a broken file is never served from a cache
        load_course(root, cache=cache)
    source.write_text(original, encoding="utf-8")
    numbers = [stage.number for stage in load_course(root, cache=cache).stages]
    shutil.rmtree(sorted((root / "course" / "stages").iterdir())[-1])  # the last stage's folder, gone
    assert [stage.number for stage in load_course(root, cache=cache).stages] == numbers[:-1]
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8").replace('version = "0.1.0"', 'version = "0.1.1"', 1),
                         encoding="utf-8")
    assert load_course(root, cache=cache).version == "0.1.1"


def test_a_cache_of_another_course_or_a_damaged_one_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _course_only(tmp_path / "workbook")
    cache = tmp_path / "course-cache.json"
    load_course(root, cache=cache)
    data = json.loads(cache.read_text(encoding="utf-8"))
    data["course"]["stages"][0]["required_tests"].pop()  # what it says no longer matches its key's files
    data["key"] = "0" * 64
    cache.write_text(json.dumps(data), encoding="utf-8")
    assert load_course(root, cache=cache).stage("01").required_tests[-1] == "test_instructions_are_immutable"
    cache.write_text(cache.read_text(encoding="utf-8")[:1000], encoding="utf-8")  # cut short
    full = load_course(root)
    assert load_course(root, cache=cache) == full  # read in full, and kept again
    _no_full_read(monkeypatch)
    assert load_course(root, cache=cache) == full


def test_a_check_sees_a_changed_stage_toml_and_says_what_it_said_before(workbook: WorkbookCopy) -> None:
    first = workbook.run("check", "01", "--target", "solution")
    cache = workbook.root / ".forgelab" / "course-cache.json"
    assert first.returncode == 0 and cache.is_file(), first.output
    again = workbook.run("check", "01", "--target", "solution")  # the course from the cache this time
    assert again.stdout == first.stdout

    def evidence() -> dict[str, object]:
        document = workbook.evidence("01-instruction-hierarchy")
        document.pop("checked_at")
        for row in document["tests"]:
            row.pop("duration_ms")
        return document

    before = evidence()
    source = workbook.root / STAGE_01
    source.write_text(source.read_text(encoding="utf-8").replace(LAST_TEST, ""), encoding="utf-8")
    changed = workbook.run("check", "01", "--target", "solution")
    assert changed.returncode == 0, changed.output
    assert "test_instructions_are_immutable" not in changed.stdout and "required tests: 12/12 passed" in changed.stdout
    after = evidence()
    assert after["required_tests"] == before["required_tests"][:-1]  # type: ignore[index]
