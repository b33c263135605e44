"""A fault lab's diagnosis is proven by a test the judge runs, not claimed.

The learner hands in ``labs/NN-slug/test_diagnosis.py``, a regression test of the lab's defect. Grading runs it like
the transfer test — on the course's reference implementation, where it must pass, and with the lab's broken module
laid over it, where it must fail — and only then gives the lab's diagnosis points. The multiple-choice diagnosis
(``diagnosis.json``, checked against a key the bundle holds) is shown as self-reported and earns nothing.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import ROOT

from forgelab.core.registry import load_course
from forgelab.grading import gradebook
from forgelab.grading.rubric import SPEC
from forgelab.verdicts.diagnosis import RECORD_FILE, DiagnosisRecord, reference_answers

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

KEY = "01-instruction-hierarchy"
REGRESSION = f"labs/{KEY}/test_diagnosis.py"
# passes on the reference and on the broken module alike: one instruction has nothing to conflict with
BLIND = '''from forge.instructions import Instruction, resolve


def test_one_instruction_is_kept() -> None:
    only = Instruction("system", "write", "deny")
    assert resolve([only]) == ({"write": "deny"}, [])
'''
# asserts what the broken module does: it fails where the defect is repaired
BACKWARDS = '''from forge.instructions import Instruction, resolve


def test_the_last_word_wins() -> None:
    system = Instruction("system", "write", "deny")
    retrieved = Instruction("retrieved", "write", "allow")
    accepted, _rejected = resolve([system, retrieved])
    assert accepted == {"write": "allow"}
'''


def _submission(folder: Path, regression: str | None, diagnosed: bool) -> Path:
    """Stage 01 done right, its lab repaired, with ``regression`` as the lab's regression test."""
    (folder / "forge").mkdir(parents=True)
    for module in sorted((ROOT / "forge").glob("*.py")):
        shutil.copyfile(module, folder / "forge" / module.name)
    shutil.copyfile(ROOT / "solutions" / "forge" / "instructions.py", folder / "forge" / "instructions.py")
    shutil.copytree(folder / "forge", folder / "labs" / KEY / "forge")
    if regression is not None:
        (folder / REGRESSION).write_text(regression, encoding="utf-8")
    if diagnosed:  # every answer right at the first attempt: the claim a learner's machine can forge
        stage = load_course(ROOT).stage("01")
        test, function, defect = reference_answers(ROOT, stage)
        record = DiagnosisRecord(schema_version=1, stage="01", test=test, function=function, defect=defect,
                                 explanation="the broken copy keeps the last instruction for every key",
                                 right={"test": True, "function": True, "defect": True}, attempts=1,
                                 first_right_at=1, hints_shown=0, stated_after_fix=False)
        path = folder / stage.evidence_dir / RECORD_FILE
        path.parent.mkdir(parents=True)
        path.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    base = tmp_path_factory.mktemp("diagnosis")
    example = (ROOT / "solutions" / "regression" / KEY / "test_diagnosis.py").read_text(encoding="utf-8")
    folders = [_submission(base / "claims", BLIND, diagnosed=True),
               _submission(base / "honest", example, diagnosed=False),
               _submission(base / "backwards", BACKWARDS, diagnosed=True),
               _submission(base / "silent", None, diagnosed=True)]
    out = base / "out"
    from conftest import run_cli

    result = run_cli(ROOT, "grade", *map(str, folders), "--stages", "01", "--out", str(out), timeout=800)
    assert result.returncode == 0, result.output
    rows = {row.submission: row for row in gradebook.rows(sqlite3.connect(out / "gradebook.sqlite"))
            if row.item == "fault_lab"}
    pages = {path.stem: path.read_text(encoding="utf-8") for path in (out / "feedback").glob("*.html")}
    return {"rows": rows, "pages": pages}


FIX = 5  # the repaired module's share of the fault lab's points
TOP = SPEC["fault_lab"].max_points


def test_a_right_multiple_choice_diagnosis_with_a_test_blind_to_the_defect_earns_no_diagnosis_points(
        graded: dict) -> None:
    row = graded["rows"]["claims"]
    assert (row.points, row.outcome) == (FIX, "partial"), row
    assert "on the lab's broken module too, so they do not pin the defect" in row.reason, row.reason
    assert "self-reported, earns no points: diagnosis: right at attempt 1" in row.reason, row.reason


def test_an_honest_regression_test_earns_the_diagnosis_points_without_any_multiple_choice_answer(
        graded: dict) -> None:
    row = graded["rows"]["honest"]
    assert (row.points, row.outcome) == (TOP, "passed"), row
    assert "1 regression test(s) pass on the course's reference implementation and fail on the lab's broken module" \
        in row.reason, row.reason
    assert "self-reported, earns no points: diagnosis: not stated" in row.reason


def test_a_regression_test_that_fails_on_the_reference_earns_nothing(graded: dict) -> None:
    row = graded["rows"]["backwards"]
    assert (row.points, row.outcome) == (FIX, "partial"), row
    assert f"test_the_last_word_wins failed on the course's reference implementation, where the defect is repaired: " \
           f"at line 8 of {REGRESSION}; it must pass there" in row.reason, row.reason
    assert "'allow'" not in row.reason  # the reference's value is not shown (never an oracle)


def test_no_regression_test_no_diagnosis_points_whatever_diagnosis_json_claims(graded: dict) -> None:
    row = graded["rows"]["silent"]
    assert (row.points, row.outcome) == (FIX, "partial"), row
    assert f"no regression test handed in ({REGRESSION})" in row.reason


def test_the_feedback_page_labels_the_multiple_choice_diagnosis_self_reported(graded: dict) -> None:
    page = graded["pages"]["claims"]
    assert "self-reported, earns no points: diagnosis: right at attempt 1" in page
    assert "half for the diagnosis, proven by your regression test" in page


def test_fault_check_runs_the_regression_test_on_the_broken_copy_and_on_the_repair(workbook) -> None:  # type: ignore[no-untyped-def]
    """The learner's side: `fault start` writes the starter (what it must do, no answer), `fault check` runs it on the
    lab's broken copy and on the repair and says which, and the evidence records it beside the self-reported
    diagnosis."""
    root = workbook.root
    (root / "forge/instructions.py").write_bytes((root / "solutions/forge/instructions.py").read_bytes())
    assert workbook.run("fault", "start", "01").returncode == 0
    starter = (root / REGRESSION).read_text(encoding="utf-8")
    assert "it must FAIL on the lab's broken copy and PASS once the" in starter and "pytest.skip(" in starter
    assert "resolve" not in starter  # no answer in it
    assert f"regression test {REGRESSION} (not written)" in workbook.run("fault", "check", "01").stdout

    (root / REGRESSION).write_text(BLIND, encoding="utf-8")
    assert f"regression test {REGRESSION} (cannot tell): it passes on the lab's broken copy" in \
        workbook.run("fault", "check", "01").stdout
    (root / REGRESSION).write_text((root / "solutions" / "regression" / KEY / "test_diagnosis.py").read_text(
        encoding="utf-8"), encoding="utf-8")
    assert f"regression test {REGRESSION} (pending): it fails on the lab's broken copy, as it should" in \
        workbook.run("fault", "check", "01").stdout

    (root / "labs" / KEY / "forge/instructions.py").write_bytes((root / "solutions/forge/instructions.py").read_bytes())
    fixed = workbook.run("fault", "check", "01")
    assert fixed.returncode == 0, fixed.output
    assert f"regression test {REGRESSION} (passed): 1 regression test(s) pass on your repaired lab and fail on the " \
           "lab's broken copy, as they should" in fixed.stdout
    lab = workbook.evidence(KEY)["fault_lab"]
    assert lab["regression_test"]["status"] == "passed" and lab["regression_test"]["on_broken"] == "fails"
    assert lab["regression_test"]["file"] == REGRESSION and len(lab["regression_test"]["sha256"]) == 64
    assert lab["diagnosis"]["self_reported"] is True
    table = workbook.run("check", "01").stdout
    assert "regression test" in table and "diagnosis (self-reported)" in table
