"""``--dist loadgroup`` keeps a group's tests on one worker (xdist_groups.py): a module fixture of a grouped module is
made once per run, not once per worker. A small project of its own, run under ``-n 2 --dist loadgroup``, records
which worker made its module fixture; without the shim (pytest 9.2 with pytest-xdist 3.8) both did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CONFTEST = f'''
import sys
sys.path.insert(0, {str(HERE)!r})
import pytest
from xdist_groups import keep_xdist_groups


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    keep_xdist_groups(config, items)
'''

GROUPED = '''
import os
import pytest

pytestmark = [pytest.mark.timeout(300), pytest.mark.xdist_group("made-once")]


@pytest.fixture(scope="module")
def made():
    with open(os.environ["MADE_LOG"], "a") as log:
        log.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
    return 1


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_without_the_fixture(edition):
    pass


@pytest.mark.parametrize("n", range(6))
def test_with_the_fixture(made, n):
    assert made == 1
'''

OTHERS = '''
import pytest


@pytest.mark.parametrize("n", range(12))
def test_other(n):
    pass
'''


def test_a_grouped_modules_fixture_is_made_by_one_worker_once(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (project / "test_grouped.py").write_text(GROUPED, encoding="utf-8")
    (project / "test_others.py").write_text(OTHERS, encoding="utf-8")
    log = tmp_path / "made.log"
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider",
                           "--basetemp", str(tmp_path / "basetemp"), str(project)], cwd=project, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "MADE_LOG": str(log)}, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "20 passed" in done.stdout, done.stdout[-2000:]
    assert len(log.read_text(encoding="utf-8").split()) == 1, (log.read_text(encoding="utf-8"), done.stdout[-3000:])
    grouped = [line for line in done.stdout.splitlines() if "test_grouped.py::" in line and "PASSED" in line]
    assert len(grouped) == 8 and all("@made-once" in line for line in grouped), grouped
    assert len({line.split("]", 1)[0] for line in grouped}) == 1, grouped  # one worker ran them all
