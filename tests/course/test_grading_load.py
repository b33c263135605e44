"""Verdicts do not depend on load: a correct submission graded beside two CPU-bound processes gets
the same rows as without them — full points on stage 05, whose Hypothesis test once turned a busy
machine into a `FlakyFailure` and cost a correct submission 17 points."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli
from grading_fixtures import shared_submissions

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

STAGES = "01,05"


def _rows(out: Path) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(out / "gradebook.sqlite")
    try:
        return list(connection.execute("SELECT submission, stage, item, points, max_points, outcome, flag, reason "
                                       "FROM grades ORDER BY submission, stage, item_order"))
    finally:
        connection.close()


def _grade(submission: str, out: Path) -> list[tuple[Any, ...]]:
    done = run_cli(ROOT, "grade", submission, "--stages", STAGES, "--out", str(out), timeout=800)
    assert done.returncode == 0, done.stdout + done.stderr
    return _rows(out)


def test_two_busy_loops_beside_the_grader_change_no_row(tmp_path_factory: pytest.TempPathFactory,
                                                        tmp_path: Path) -> None:
    correct = shared_submissions(tmp_path_factory)["paths"]["correct"]
    quiet = _grade(correct, tmp_path / "quiet")
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        busy = _grade(correct, tmp_path / "busy")
    finally:
        for loop in loops:
            loop.kill()
            loop.wait(timeout=30)
    assert busy == quiet
    assert len(busy) == 14
    for row in busy:
        assert (row[3], row[5], row[6]) == (row[4], "passed", ""), row  # full points, nothing flagged
    assert sum(row[3] for row in busy if row[1] == "05") == 100
    stage_05 = next(row for row in busy if row[1] == "05" and row[2] == "stage_tests")
    assert stage_05[3] == 40 and re.fullmatch(r"all \d+ required tests pass", stage_05[7]), stage_05

