"""The house style of the course's own tests, checked: one CLI runner, one wait helper, no fixed sleeps in a
browser, every browser test marked.

* the command line is spawned only by ``conftest.run_cli`` / ``conftest.start_cli`` (its environment is decided
  in one place);
* a page is waited on with Playwright's auto-waiting (``expect``, ``wait_for_selector``…), never with
  ``wait_for_timeout``; a server with ``conftest.wait_for_http``, a child's output with ``conftest.OutputLines``;
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


def test_every_module_driving_a_browser_marks_its_tests(pytestconfig: pytest.Config) -> None:
    assert any(line.startswith("browser:") for line in pytestconfig.getini("markers"))
    for path in _modules():
        text = path.read_text()
        drives = re.search(r"^def test_\w+\([^)]*\bchromium\b", text, re.M) or "running_make_lab(" in text
        if not path.name.startswith("test_") or not drives or path.name == "test_lab_settings.py":
            continue  # test_lab_settings asks the lab's REST API only: no browser
        assert "pytest.mark.browser" in text, f"{path.name} drives a browser but marks no test 'browser'"
