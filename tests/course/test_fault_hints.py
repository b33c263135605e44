"""`forgelab fault hint NN`: the fault lab's story, diagnosis steps and fix principle, one rung at a time.

The counter lives in the workspace state (like the stage hints), so the notebook reads the same number
through ``forgelab.learner.state.fault_hints_shown``; nothing is written into the evidence. The last diagnosis step
names the defect: it stays closed until the learner's own diagnosis is right (test_fault_diagnosis.py).
"""

from __future__ import annotations

import json

import pytest

from forgelab.learner.faulthints import ladder
from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.learner.state import fault_hints_shown, hints_shown
from forgelab.learner.workbench import Workbench


def test_the_ladder_is_story_then_each_diagnosis_step_then_the_fix_principle(course) -> None:
    for stage in course.stages:
        text = stage.text()
        rungs = ladder(text, None)
        steps = len(text.fault.diagnosis) + 1  # the open steps and the sealed one
        assert len(rungs) == steps + 2
        assert rungs[0].label == "what you observe" and rungs[0].text == " ".join(text.fault.story.split())
        assert [rung.text for rung in rungs[1:-2]] == [" ".join(step.split()) for step in text.fault.diagnosis]
        assert rungs[-2].sealed and rungs[-2].text == "" and rungs[-2].label == f"diagnosis {steps}/{steps}"
        assert ladder(text, "Confirm: it.")[-2].text == "Confirm: it."
        assert rungs[-1].label == "fix principle" and rungs[-1].text == " ".join(text.fault.fix_principle.split())
        assert rungs[1].label == f"diagnosis 1/{steps}"


def test_fault_hint_reveals_one_rung_at_a_time_and_remembers(workbook, course) -> None:
    stage = course.stage("02")
    rungs = ladder(stage.text(), None)
    first = workbook.run("fault", "hint", "02")
    assert first.returncode == 0, first.output
    assert f"1/{len(rungs)} what you observe (new): {rungs[0].text}" in " ".join(first.stdout.split())
    assert "diagnosis 1/" not in first.stdout
    assert "next: `forgelab fault start 02`" in first.stdout  # the lab is not started yet
    second = " ".join(workbook.run("fault", "hint", "02").stdout.split())
    assert f"1/{len(rungs)} what you observe: " in second
    assert f"2/{len(rungs)} {rungs[1].label} (new): {rungs[1].text}" in second
    for _ in range(len(rungs) - 4):  # up to the last open step, before the sealed one
        last = workbook.run("fault", "hint", "02").stdout
    assert "(new)" in last and "it opens when your diagnosis is right" not in last
    closed = workbook.run("fault", "hint", "02")
    assert closed.returncode == 0
    assert "it opens when your diagnosis is right" in closed.stdout and "(new)" not in closed.stdout
    assert rungs[-1].text[:40] not in " ".join(closed.stdout.split())  # the fix principle comes after it
    state = json.loads((workbook.root / ".forgelab" / "state.json").read_text(encoding="utf-8"))
    assert state["fault_hints"] == {"02": len(rungs) - 2}
    assert "hints" not in state, "the fault ladder has its own counter, apart from the stage hints"


def test_reset_hides_the_ladder_again_and_only_for_that_stage(workbook) -> None:
    workbook.run("fault", "hint", "03")
    workbook.run("fault", "hint", "03")
    workbook.run("fault", "hint", "04")
    reset = workbook.run("fault", "hint", "03", "--reset")
    assert reset.returncode == 0 and "hidden again (0 of" in reset.stdout
    root = Workbook(workbook.root, workbook.root)
    assert fault_hints_shown(root, "03") == 0
    assert fault_hints_shown(root, "04") == 1
    again = workbook.run("fault", "hint", "03").stdout
    assert "1/" in again and "(new)" in again and "2/" not in again


def test_reset_is_refused_for_the_other_fault_actions(workbook) -> None:
    result = workbook.run("fault", "check", "01", "--reset")
    assert result.returncode == 2
    assert "--reset belongs to `forgelab fault hint 01`" in result.stderr
    assert "forgelab fault reset 01" in result.stderr


def test_after_start_the_next_step_points_at_the_lab(workbook) -> None:
    assert workbook.run("fault", "start", "01").returncode == 0
    shown = workbook.run("fault", "hint", "01").stdout
    assert "forgelab fault check 01" in shown and "fault start" not in shown


def test_the_counter_is_shared_with_the_notebook_through_the_workbench(workbook) -> None:
    course = load_course(workbook.root)
    bench = Workbench(Workbook(workbook.root, workbook.root), course)
    stage = course.stage("06")
    message = bench.fault_hint(stage)
    assert message.ok and len(message.lines) == 1 and message.lines[0].startswith("1/")
    assert "(new)" in message.lines[0]
    assert fault_hints_shown(bench.workbook, "06") == 1
    workbook.run("fault", "hint", "06")  # the terminal continues where the notebook stopped
    assert fault_hints_shown(bench.workbook, "06") == 2
    assert hints_shown(bench.workbook, "06") == 0
    hidden = bench.fault_hint(stage, reset=True)
    assert "hidden again" in hidden.text() and fault_hints_shown(bench.workbook, "06") == 0


@pytest.mark.parametrize("stage", ["01", "05", "10"])
def test_fault_hint_never_touches_the_evidence_or_the_lab(workbook, stage: str) -> None:
    workbook.run("fault", "hint", stage)
    assert not (workbook.root / "evidence").exists()
    assert not (workbook.root / "labs").exists()
