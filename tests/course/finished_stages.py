"""The ``workbook`` fixture of the modules that act as a learner at the end of a stage (test_watch.py,
test_recheck_parts.py): import it by name (``from finished_stages import workbook``).

Each test gets a copy of the course with the grading suite's correct submission of its base stages (01, 05 and 07:
reference modules and transfer tests, fault labs repaired and diagnosed, design answers) laid in: the submission is
built once per test session (:func:`grading_fixtures.shared_base`), the copy is the test's own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import WorkbookCopy, copy_workbook
from grading_fixtures import HANDED_IN, shared_base


@pytest.fixture
def workbook(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> WorkbookCopy:
    """A copy of the course with the grading suite's complete learner work for stages 01, 05 and 07."""
    base = shared_base(tmp_path_factory)
    copy = copy_workbook(tmp_path / "workbook")
    for name in HANDED_IN:
        shutil.rmtree(copy.root / name, ignore_errors=True)
        if (base / name).is_dir():
            shutil.copytree(base / name, copy.root / name)
    return copy
