"""Hints that follow the failure: each stage's ``[hint_rungs]`` says which hint rungs address which test;
``forgelab hint NN`` (and ``h`` in watch mode, and the notebook's button, through the same Workbench.hint) reveals the
next unrevealed rung for the first failing test of the stage's latest check, then the ladder's order, and the
learning record notes each rung with the failure it was shown for (forgelab/learner/stagehints.py)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import WorkbookCopy, copy_workbook
from forgelab.core.paths import Workbook
from forgelab.core.registry import RegistryError, load_course
from forgelab.judge import outcomes
from forgelab.judge.outcomes import Outcome
from forgelab.learner import stagehints, state
from forgelab.learner.workbench import Workbench

STAGE = "course/stages/01-instruction-hierarchy"
RECORD = "evidence/learning-record.json"


def test_every_stage_maps_its_hints_to_its_own_tests(course) -> None:
    for stage in course.stages:
        total = len(stage.text().hints)
        assert stage.hint_rungs, f"stage {stage.number} declares no [hint_rungs]"
        assert set(stage.hint_rungs) <= set(stage.required_tests)
        addressed = {rung for rungs in stage.hint_rungs.values() for rung in rungs}
        assert addressed == set(range(1, total + 1)), f"stage {stage.number}: a rung addresses no test"


def _row(name: str, outcome: Outcome) -> outcomes.TestRow:
    return outcomes.TestRow(nodeid=f"tests/stages/test_01_instruction_hierarchy.py::{name}", target="learner", outcome=outcome,
                   cause="")


def test_the_first_failing_test_picks_its_rungs_then_the_ladder_takes_over(course) -> None:
    stage = dataclasses.replace(course.stage("01"), hint_rungs={"test_input_is_not_mutated": (5,),
                                                                 "test_unknown_source_fails_closed": (1, 2, 3)})
    rows = [_row("test_lower_trust_instruction_cannot_override_system", Outcome.PASSED),
            _row("test_input_is_not_mutated", Outcome.FAILED),
            _row("test_unknown_source_fails_closed", Outcome.FAILED)]
    failing = stagehints.first_failing(stage, rows)
    assert failing == "test_input_is_not_mutated"  # the order the tests ran in, not the order of the mapping
    assert stagehints.next_rung(stage, 6, (), failing) == stagehints.Choice(5, failing, True)
    assert stagehints.next_rung(stage, 6, (5,), failing) == stagehints.Choice(1, failing, False)  # none left for it
    assert stagehints.next_rung(stage, 6, (1, 5), "test_unknown_source_fails_closed") == \
        stagehints.Choice(2, "test_unknown_source_fails_closed", True)
    assert stagehints.next_rung(stage, 6, (), None) == stagehints.Choice(1, None, False)
    assert stagehints.next_rung(stage, 6, range(1, 7), failing) is None
    assert stagehints.first_failing(stage, [_row("test_input_is_not_mutated", Outcome.PASSED)]) is None


def test_an_earlier_count_of_hints_reads_as_the_first_rungs(tmp_path: Path) -> None:
    workbook = Workbook(tmp_path, tmp_path)
    state.modify(workbook, lambda data: data.hints.__setitem__("01", 2))  # how the state kept stage hints before they followed the failure
    assert state.revealed_hints(workbook, "01") == (1, 2) and state.hints_shown(workbook, "01") == 2
    assert state.reveal_hint(workbook, "01", 6, lambda revealed: 4) == ((1, 2, 4), 4)
    assert json.loads((tmp_path / ".forgelab/state.json").read_text())["hints"] == {"01": [1, 2, 4]}


def test_hint_follows_the_checked_failure_and_notes_it_in_the_learning_record(workbook: WorkbookCopy, course) -> None:
    stage = course.stage("01")
    hints, rungs = stage.text().hints, stage.hint_rungs
    total = len(hints)
    checked = workbook.run("check", "01")  # the starter: every test fails, the first in the file first
    first = stage.required_tests[0]
    assert checked.returncode == 1 and first in checked.stdout
    wanted = rungs[first]
    assert wanted[0] != 1, "the test proves nothing if the first failing test's rung is also the ladder's first"
    shown: list[int] = []
    for rung in wanted:
        out = workbook.run("hint", "01").stdout
        assert f"hint {rung}/{total} (new): {hints[rung - 1][:40]}" in out, out
        assert f"hint {rung} is for {first}, the first failing test of your latest check" in out
        shown.append(rung)
        assert [int(n) for n in re.findall(rf"^hint (\d+)/{total}", out, re.M)] == sorted(shown)  # ladder order
    fallback = workbook.run("hint", "01").stdout
    assert f"hint 1/{total} (new):" in fallback
    assert f"no hint is left for {first}, the first failing test of your latest check: hint 1 is the next" in fallback

    record = json.loads((workbook.root / RECORD).read_text(encoding="utf-8"))["stages"]["01"]["hints"]
    assert record["deepest"] == len(wanted) + 1 and record["available"] == total
    assert [(entry["rung"], entry["failing_test"], entry["addressed"]) for entry in record["shown"]] == \
        [*((rung, first, True) for rung in wanted), (1, first, False)]
    assert "hidden again" in workbook.run("hint", "01", "--reset").stdout
    assert f"hint {wanted[0]}/{total} (new):" in workbook.run("hint", "01").stdout
    again = json.loads((workbook.root / RECORD).read_text(encoding="utf-8"))["stages"]["01"]["hints"]
    assert again["shown"][:-1] == record["shown"] and again["shown"][-1]["rung"] == wanted[0]
    assert again["deepest"] == record["deepest"]  # hiding the hints again does not lower it


def test_without_a_failure_the_ladder_order_and_watch_mode_passes_its_own_check(workbook: WorkbookCopy, course) -> None:
    """No check yet: the ladder's order, and the line says how hints come to follow a failure. Watch mode (and a
    notebook judging another target) hands its latest check to the same Workbench.hint."""
    bench = Workbench(Workbook(workbook.root, workbook.root), load_course(workbook.root))
    stage = course.stage("02")
    message = bench.hint(stage)
    assert message.extra == {"rung": 1, "test": None, "addressed": False}
    assert "after `forgelab check 02` the next hint follows your first failing test" in message.lines[-1]
    state.remember_first_failing(bench.workbook, "02", None)
    assert "your latest check has no failing test: hint 2 is the next" in bench.hint(stage).lines[-1]
    failing = "test_item_that_does_not_fit_is_skipped_and_smaller_ones_still_tried"
    latest = SimpleNamespace(import_problem=None, tests=(_row("test_equal_density_is_broken_by_id", Outcome.PASSED),
                                                         _row(failing, Outcome.TIMEOUT)))
    assert bench.hint(stage, latest=latest).extra == {"rung": stage.hint_rungs[failing][0], "test": failing,
                                                      "addressed": True}


def _plant(copy: WorkbookCopy, old: str, new: str) -> str:
    path = copy.root / STAGE / "stage.toml"
    before = path.read_text(encoding="utf-8")
    at = before.index(old, before.index("\n[hint_rungs]\n"))
    path.write_text(before[:at] + new + before[at + len(old):], encoding="utf-8")
    return before


@pytest.fixture(scope="module")
def course_copy(tmp_path_factory: pytest.TempPathFactory) -> WorkbookCopy:
    return copy_workbook(tmp_path_factory.mktemp("hint-rungs") / "workbook")


def test_a_mapping_that_names_no_test_fails_build_check(course_copy: WorkbookCopy) -> None:
    before = _plant(course_copy, "test_unknown_source_fails_closed =", "test_unknown_source_fail_closed =")
    try:
        result = course_copy.run("build", "--check")
    finally:
        (course_copy.root / STAGE / "stage.toml").write_text(before, encoding="utf-8")
    assert result.returncode != 0
    assert (f"{STAGE}/stage.toml [hint_rungs]: key 'test_unknown_source_fail_closed' names no test of stage 01 — "
            "did you mean 'test_unknown_source_fails_closed'? each key must be one of the stage's required_tests "
            "(the tests of its test file): rename the key or remove its line") in \
        result.output.replace(f"{course_copy.root.as_posix()}/", ""), result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("old", "new", "says"), [
    ("test_unknown_source_fails_closed = [1, 2, 3]", "test_unknown_source_fails_closed = [1, 2, 7]",
     "key 'test_unknown_source_fails_closed': rung 7 does not exist (the ladder has rungs 1–6)"),
    ("test_unknown_source_fails_closed = [1, 2, 3]", "test_unknown_source_fails_closed = []",
     "key 'test_unknown_source_fails_closed': no rung is given"),
])
def test_a_rung_the_ladder_lacks_is_refused(course_copy: WorkbookCopy, old: str, new: str, says: str) -> None:
    before = _plant(course_copy, old, new)
    try:
        with pytest.raises(RegistryError, match=re.escape(f"stage.toml [hint_rungs]: {says} — list the numbers")):
            load_course(course_copy.root)
    finally:
        (course_copy.root / STAGE / "stage.toml").write_text(before, encoding="utf-8")
