"""The house style of the course's own tests, checked: one CLI runner, one wait helper, no fixed sleeps, every
browser test marked.

* the command line is spawned only by ``conftest.run_cli`` / ``conftest.start_cli`` (its environment is decided
  in one place);
* a page is waited on with Playwright's auto-waiting (``expect``, ``wait_for_selector``…), never with
  ``wait_for_timeout``; a server with ``conftest.wait_for_http``, a child's output with ``conftest.OutputLines``;
* no test sleeps a fixed time to wait for something, or to make something happen "during" something else: it waits
  on the condition with ``conftest.wait_until`` (or blocks on an event, a pipe, a process), and a race is staged by
  a condition. The ``sleep(`` calls left are the code under test sleeping (:data:`SLEEPS_UNDER_TEST`);
* a module that drives Chromium (the ``chromium`` fixture) or JupyterLab (``running_make_lab``) marks its
  browser tests ``@pytest.mark.browser`` (so ``-m "not browser"`` leaves them out, and ``-m browser`` runs them).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
HELPERS = {"conftest.py", "test_house_style.py"}


def _modules() -> list[Path]:
    return sorted(path for path in HERE.glob("*.py") if path.name not in HELPERS)


def test_only_the_conftest_runner_spawns_the_command_line() -> None:
    spawning = [path.name for path in _modules() if re.search(r"""["']-m["'],\s*["']forgelab\.cli["']""", path.read_text())]
    assert spawning == [], "spawn forgelab's command line with conftest.run_cli / start_cli"


def test_no_fixed_sleep_waits_on_a_page_or_a_server() -> None:
    sleeping = [path.name for path in _modules() if "wait_for_timeout(" in path.read_text()]
    assert sleeping == [], "wait on a page with Playwright's expect, not wait_for_timeout"
    polling = [path.name for path in _modules() if re.search(r"urlopen\([^\n]*\n(?:[^\n]*\n){0,6}[^\n]*time\.sleep\(",
                                                            path.read_text())]
    assert polling == [], "wait for a server with conftest.wait_for_http"


# every sleep( left in the tests' modules (the line, stripped) -> why it is not a wait of the test's
SLEEPS_UNDER_TEST = {
    ("conftest.py", "time.sleep(every)"): "wait_until itself, between two askings of its condition",
    ("hostile_submissions.py", '"signal.signal(signal.SIGHUP, signal.SIG_IGN); time.sleep(600)")'):
        "the daemon submission's sleepers, which the judge must end",
    ("hostile_submissions.py", "time.sleep({SLEEP_S})"): "the sleeper submission, held to the time budgets",
    ("hostile_submissions.py", "time.sleep(3)"): "the fork-bomb submission's children",
    ("test_cold_start.py", 'workbook.write(MODULE, module + "\\n\\nimport time\\ntime.sleep(300)  # the tests wait for '
                           'this import\\n")'): "a learner's module whose import hangs, interrupted by Ctrl-C",
    ("test_grade_interrupt.py", "_time.sleep(3600)"): "a learner's code that never answers, interrupted by Ctrl-C",
    ("test_grading_units.py", 'subprocess.Popen(["setsid", sys.executable, "-c", "import time; time.sleep(300)", '
                              '{marker!r}],'): "a process that escapes its session, which the sandbox must end",
    ("test_judge_load.py", "time.sleep(seconds)"): "a learner's code that waits: the wall-clock limit stops it",
    ("test_judge_tester.py", "time.sleep(120)"): "a learner's test longer than the judge waits for an abandoned run",
    ("test_judge_watchdog.py", 'sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])'):
        "a process that uses no CPU, watched by the watchdog",
    ("test_judge_watchdog.py", '"        subprocess.Popen([sys.executable, \'-c\', \'import time; time.sleep(60)\'])]\\n"'):
        "a child that uses no CPU in a tree the watchdog reads",
    ("test_judge_watchdog.py", '"kids[0].wait()\\ntime.sleep(60)\\n")'):
        "the parent of that tree, kept alive while its CPU seconds are read",
    ("test_state_lock.py", "time.sleep(0.001)"):
        "the writer processes' start line: each spins on the 'go' file so that both start changing the state at once",
    ("test_warm_worker.py", '"        time.sleep(300)\\n", encoding="utf-8")'): "a test that hangs, stopped by its wall limit",
    ("test_watch.py", 'f"\\n\\ndef _sleep_{token}():\\n    import time\\n    time.sleep(300)\\n\\n\\n_sleep_{token}()\\n")'):
        "a learner's module whose import hangs, interrupted by Ctrl-C",
}


def _sleeps() -> set[tuple[str, str]]:
    return {(path.name, line.strip()) for path in [*_modules(), HERE / "conftest.py"]
            for line in path.read_text(encoding="utf-8").splitlines() if re.search(r"\bsleep\(", line)}


def test_no_test_waits_a_fixed_time() -> None:
    waits = sorted(_sleeps() - SLEEPS_UNDER_TEST.keys())
    assert waits == [], ("wait on a condition with conftest.wait_until (or block on an event, a pipe, a process); "
                         "stage a race with a condition, not a sleep")


def test_every_sleep_allowed_is_still_there() -> None:
    assert sorted(SLEEPS_UNDER_TEST.keys() - _sleeps()) == [], "remove what is no longer in the tests"


def test_every_module_driving_a_browser_marks_its_tests(pytestconfig: pytest.Config) -> None:
    assert any(line.startswith("browser:") for line in pytestconfig.getini("markers"))
    for path in _modules():
        text = path.read_text()
        drives = re.search(r"^def test_\w+\([^)]*\bchromium\b", text, re.M) or "running_make_lab(" in text
        if not path.name.startswith("test_") or not drives or path.name == "test_lab_settings.py":
            continue  # test_lab_settings asks the lab's REST API only: no browser
        assert "pytest.mark.browser" in text, f"{path.name} drives a browser but marks no test 'browser'"


def test_a_leftover_in_the_temporary_folder_is_told_with_what_it_holds(tmp_path: Path) -> None:
    """The session's last check names what a test left in the temporary folder so that its maker can be found: a
    judge run's folder is told with its file count, its times and its first entries (its targets)."""
    from conftest import describe_leftover

    run = tmp_path / "forgelab-judge-abc123"
    (run / "targets" / "sub-01" / "forge").mkdir(parents=True)
    (run / "targets" / "sub-01" / "forge" / "instructions.py").write_text("x", encoding="utf-8")
    (run / "session-0").mkdir()
    (run / "session-0" / "session-job.json").write_text("{}", encoding="utf-8")
    told = describe_leftover(run)
    assert told.startswith("forgelab-judge-abc123 (2 files; made about "), told
    assert "holds session-0, session-0/session-job.json, targets, targets/sub-01)" in told, told
    (tmp_path / "tmpq1").write_bytes(b"abc")
    assert describe_leftover(tmp_path / "tmpq1").startswith("tmpq1 (a file of 3 bytes, last changed "), told
    assert describe_leftover(tmp_path / "gone") == "gone (No such file or directory)"
    many = tmp_path / "many"
    for number in range(20):
        (many / f"f{number:02d}").mkdir(parents=True)
    assert describe_leftover(many, shown=3).endswith("holds f00, f01, f02, … 17 more)")
