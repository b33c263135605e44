"""Diagnosis before repair (issue 20, item 3): the fault lab asks which test shows the defect, where it lies and
what it is; the answer is checked against a key the workbook does not carry in clear; the evidence records the
diagnosis and the fix as two facts; revealed hints look revealed; after FIXED the hint says so."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT, WorkbookCopy

from forgelab.verdicts import diagnosis
from forgelab.core.registry import load_course

KEY = "01-instruction-hierarchy"
LAB_FILE = f"labs/{KEY}/forge/instructions.py"
RECORD = f"evidence/prompt-context-output/{KEY}/diagnosis.json"
BECAUSE = "explain lets each instruction overwrite its key in arrival order and records no rejection"


def _confirm_steps() -> dict[str, dict[str, str]]:
    """Every stage's last diagnosis step (the one that names the defect), per language, from fault.toml."""
    found = {}
    for stage in load_course(ROOT).stages:
        table = tomllib.loads((stage.source_dir / "fault.toml").read_text(encoding="utf-8"))["diagnosis"]
        found[stage.number] = table["confirm"]
    return found


# ---------------------------------------------------------------- the answer key


def test_every_stage_declares_a_diagnosis_and_its_key_is_current(course) -> None:  # noqa: ANN001
    from forgelab.authoring.build import stale_diagnosis_key

    for stage in course.stages:
        answer, choices, steps = diagnosis.declared(stage, tuple(course.languages))
        assert len(choices) >= 3 and answer in {choice.id for choice in choices}, stage.number
        assert set(steps) == set(course.languages)
        assert stale_diagnosis_key(course, stage) is None, stage.number
        key = diagnosis.load_key(ROOT, stage)
        test, function, defect = diagnosis.reference_answers(ROOT, stage)
        assert diagnosis.judge(key, test, function, defect) == {"test": True, "function": True, "defect": True}
        # a passing test, another function and a misconception are each refused
        passing = [name for name in stage.required_tests if not diagnosis.judge(key, name, function, defect)["test"]]
        others = [name for name in key.function.choices if name != function]
        wrong = [choice.id for choice in key.defect.choices if choice.id != defect]
        assert wrong and not diagnosis.judge(key, test, function, wrong[0])["defect"]
        if others:
            assert not all(diagnosis.judge(key, test, name, defect)["function"] for name in others)
        assert passing, stage.number  # a test that passes on the broken copy does not show the defect


def test_the_key_carries_neither_the_answer_nor_the_last_step_in_clear(course) -> None:  # noqa: ANN001
    for stage, (number, steps) in zip(course.stages, _confirm_steps().items()):
        text = diagnosis.key_path(ROOT, stage).read_text(encoding="utf-8")
        answer, _choices, _steps = diagnosis.declared(stage, ("en",))
        data = json.loads(text)
        assert answer not in json.dumps(data["defect"]["answers"]) and stage.fault.target_test not in json.dumps(
            data["test"]["answers"])
        for language, step in steps.items():
            assert " ".join(step.split())[:60] not in text, (number, language)
        contract = (ROOT / stage.fault_contract_file).read_text(encoding="utf-8")
        assert " ".join(steps["en"].split())[:60] not in contract
        stage_toml = (stage.source_dir / "stage.toml").read_text(encoding="utf-8")
        assert " ".join(steps["en"].split())[:60] not in " ".join(stage_toml.split())


def test_the_order_of_the_choices_does_not_give_the_answer_away(course) -> None:  # noqa: ANN001
    positions = []
    for stage in course.stages:
        key = diagnosis.load_key(ROOT, stage)
        answer, _choices, _steps = diagnosis.declared(stage, ("en",))
        positions.append([choice.id for choice in key.defect.choices].index(answer))
    assert len(set(positions)) > 1, positions  # fault.toml lists the true defect first; the key does not


def test_sealing_opens_only_with_the_right_defect() -> None:
    sealed = diagnosis.seal("Confirm: the loop walks in arrival order — 按到达顺序", "salt", "input-order")
    assert diagnosis.unseal(sealed, "salt", "input-order") == "Confirm: the loop walks in arrival order — 按到达顺序"
    assert diagnosis.unseal(sealed, "salt", "rank-table") is None
    assert diagnosis.unseal(sealed, "other salt", "input-order") is None
    assert "arrival" not in sealed.model_dump_json()


# ---------------------------------------------------------------- asking, checking, recording


def _diagnose(workbook: WorkbookCopy, test: str, function: str, defect: str, because: str = BECAUSE):  # type: ignore[no-untyped-def]
    return workbook.run("fault", "diagnose", "01", "--test", test, "--function", function, "--defect", defect,
                        "--because", because)


def test_a_diagnosis_is_asked_checked_and_recorded_beside_the_fix(workbook: WorkbookCopy,
                                                                 verification_validator) -> None:  # noqa: ANN001
    stage = load_course(workbook.root).stage("01")
    key = diagnosis.load_key(workbook.root, stage)
    confirm = _confirm_steps()["01"]["en"]
    before_start = _diagnose(workbook, "1", "1", "1")
    assert before_start.returncode == 2 and "not started" in before_start.stderr
    assert workbook.run("fault", "start", "01").returncode == 0

    asked = workbook.run("fault", "diagnose", "01")  # no terminal, no answers: the questions, and how to answer
    assert asked.returncode == 2
    assert "1. Which test shows the defect?" in asked.stdout and "3. What is the defect?" in asked.stdout
    for choice in key.defect.choices:
        assert " ".join(choice.text["en"].split())[:40] in " ".join(asked.stdout.split())
    assert "--test N --function N --defect N --because" in asked.stderr

    passing = "test_instructions_are_immutable"
    wrong = _diagnose(workbook, passing, "rank_of", "rank-table")
    assert wrong.returncode == 1, wrong.output
    assert f"which test shows it: {passing} — not right" in wrong.stdout
    assert "where it lies: rank_of() — not right" in wrong.stdout and "— not right" in wrong.stdout
    assert " ".join(confirm.split())[:40] not in " ".join(wrong.stdout.split())
    record = json.loads((workbook.root / RECORD).read_text(encoding="utf-8"))
    assert record["attempts"] == 1 and record["right"] == {"test": False, "function": False, "defect": False}

    short = _diagnose(workbook, "1", "explain", "input-order", because="it is wrong")
    assert short.returncode == 2 and "at least 6 words" in short.stderr

    number = str([choice.id for choice in key.defect.choices].index("input-order") + 1)
    right = _diagnose(workbook, "1", "explain", number)  # choices by number or by name
    assert right.returncode == 0, right.output
    assert "— right" in right.stdout and "not right" not in right.stdout
    assert " ".join(confirm.split())[:60] in " ".join(right.stdout.split())  # the sealed last step opens
    record = json.loads((workbook.root / RECORD).read_text(encoding="utf-8"))
    assert (record["attempts"], record["first_right_at"], record["stated_after_fix"]) == (2, 2, False)
    assert record["explanation"] == BECAUSE
    assert list((workbook.root / ".forgelab" / "backups").glob("*-diagnosis-01/" + RECORD))  # the first one is kept

    (workbook.root / LAB_FILE).write_bytes((workbook.root / "solutions/forge/instructions.py").read_bytes())
    fixed = workbook.run("fault", "check", "01")
    assert fixed.returncode == 0 and "FIXED" in fixed.stdout
    document = workbook.evidence(KEY)
    verification_validator(document)
    lab = document["fault_lab"]
    assert lab["status"] == "fixed" and lab["diagnosis"]["status"] == "right"
    assert lab["diagnosis"]["explanation"] == BECAUSE and lab["diagnosis"]["attempts"] == 2
    assert document["acceptance"]["fault_lab_fixed"] and document["acceptance"]["fault_lab_diagnosed"]


def test_a_fixed_lab_without_a_diagnosis_does_not_count(workbook: WorkbookCopy) -> None:
    (workbook.root / "forge/instructions.py").write_bytes((workbook.root / "solutions/forge/instructions.py").read_bytes())
    assert workbook.run("fault", "start", "01").returncode == 0
    (workbook.root / LAB_FILE).write_bytes((workbook.root / "solutions/forge/instructions.py").read_bytes())
    fixed = workbook.run("fault", "check", "01")
    assert fixed.returncode == 0 and "your self-reported diagnosis is not stated yet" in fixed.stdout
    document = workbook.evidence(KEY)
    assert document["acceptance"]["fault_lab_fixed"] and not document["acceptance"]["fault_lab_diagnosed"]
    assert document["fault_lab"]["diagnosis"]["status"] == "missing"
    assert any(problem.startswith("fault lab diagnosis (self-reported) not stated") for problem in document["problems"])
    status = workbook.run("status")
    assert "fixed, diagnosis missing" in status.stdout
    assert "next: stage 01: state your diagnosis of the fault lab: `forgelab fault diagnose 01`" in status.stdout


def test_a_record_edited_by_hand_is_judged_again(workbook: WorkbookCopy) -> None:
    assert workbook.run("fault", "start", "01").returncode == 0
    assert _diagnose(workbook, "test_instructions_are_immutable", "rank_of", "rank-table").returncode == 1
    path = workbook.root / RECORD
    record = json.loads(path.read_text(encoding="utf-8"))
    record["right"] = {"test": True, "function": True, "defect": True}
    path.write_text(json.dumps(record), encoding="utf-8")
    workbook.run("check", "01")
    assert workbook.evidence(KEY)["fault_lab"]["diagnosis"]["status"] == "not_right"


# ---------------------------------------------------------------- the hint ladder


def test_revealed_steps_look_revealed_and_the_last_opens_with_the_diagnosis(workbook: WorkbookCopy, course) -> None:  # noqa: ANN001
    text = course.stage("01").text()
    total = len(text.fault.diagnosis) + 3  # the story, the open steps, the sealed step, the fix principle
    assert workbook.run("fault", "start", "01").returncode == 0
    for _ in range(len(text.fault.diagnosis) + 1):
        shown = workbook.run("fault", "hint", "01").stdout
    assert "[ " not in shown and "[new]" not in shown  # nothing that reads as an empty checkbox
    assert f"{len(text.fault.diagnosis) + 1}/{total} diagnosis {len(text.fault.diagnosis)}/{len(text.fault.diagnosis) + 1} (new):" in shown
    assert shown.count("(new)") == 1
    locked = workbook.run("fault", "hint", "01")
    assert "it opens when your diagnosis is right" in locked.stdout
    assert "forgelab fault diagnose 01" in locked.stdout
    confirm = _confirm_steps()["01"]["en"]
    assert " ".join(confirm.split())[:40] not in " ".join(locked.stdout.split())
    assert _diagnose(workbook, "1", "explain", "input-order").returncode == 0
    opened = workbook.run("fault", "hint", "01").stdout
    assert " ".join(confirm.split())[:60] in " ".join(opened.split()) and "(new)" in opened


def test_after_fixed_the_hint_says_the_lab_is_fixed(workbook: WorkbookCopy) -> None:
    assert workbook.run("fault", "start", "01").returncode == 0
    (workbook.root / LAB_FILE).write_bytes((workbook.root / "solutions/forge/instructions.py").read_bytes())
    assert workbook.run("fault", "check", "01").returncode == 0
    hint = workbook.run("fault", "hint", "01").stdout
    assert "the lab is FIXED" in hint and "try the step in the lab" not in hint
    assert _diagnose(workbook, "1", "explain", "input-order").returncode == 0
    assert "nothing is left to do in it" in workbook.run("fault", "hint", "01").stdout


def test_stage_hints_mark_the_new_one_without_a_box(workbook: WorkbookCopy, course) -> None:  # noqa: ANN001
    total = len(course.stage("01").text().hints)
    workbook.run("hint", "01")
    second = workbook.run("hint", "01").stdout
    assert f"hint 1/{total}: " in second and f"hint 2/{total} (new): " in second and "[" not in second.split(":")[0]


@pytest.mark.parametrize("language", ["zh"])
def test_the_chinese_diagnosis_speaks_chinese(workbook: WorkbookCopy, language: str) -> None:
    assert workbook.run("fault", "start", "01").returncode == 0
    done = workbook.run("fault", "diagnose", "01", "--lang", language)
    assert done.returncode == 2 and "哪个测试暴露了这个缺陷" in done.stdout
    key = diagnosis.load_key(workbook.root, load_course(workbook.root).stage("01"))
    assert all(" ".join(choice.text["zh"].split())[:12] in " ".join(done.stdout.split()) for choice in key.defect.choices)
    right = _diagnose(workbook, "1", "explain", "input-order", because="explain 按到达顺序让每条指令覆盖它的键，没有记录任何拒绝")
    assert right.returncode == 0
    zh = workbook.run("fault", "hint", "01", "--lang", "zh")
    assert zh.returncode == 0 and re.search(r"（新）", zh.stdout)
