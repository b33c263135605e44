"""`forgelab check`: readable tables, honest evidence, and clear causes for every bad input."""

from __future__ import annotations

import re

import pytest

from forgelab.core.evidence import integrity_holds

KEY = "01-instruction-hierarchy"


def test_starter_is_not_accepted_with_a_table_and_no_traceback(workbook, verification_validator) -> None:
    result = workbook.run("check", "01")
    assert result.returncode == 1
    assert "Traceback" not in result.output
    assert "test_lower_trust_instruction_cannot_override_system" in result.stdout
    assert "not implemented yet" in result.stdout
    assert "verdict: NOT ACCEPTED" in result.stdout
    document = workbook.evidence(KEY)
    verification_validator(document)
    assert document["accepted"] is False
    assert document["target"] == {"name": "learner", "kind": "learner"}
    assert document["acceptance"]["required_tests_passed"] is False
    assert document["transfer"]["status"] == "not_written"
    assert document["design_answer"]["status"] == "missing"
    assert document["fault_lab"]["status"] == "not_started"
    assert integrity_holds(document)


def test_solution_target_is_accepted(workbook, verification_validator) -> None:
    result = workbook.run("check", "01", "--target", "solution")
    assert result.returncode == 0, result.output
    assert "verdict: ACCEPTED" in result.stdout
    assert result.stdout.startswith("Stage 01 · Instruction hierarchy · target: the reference solution (solution)\n")
    document = workbook.evidence(KEY)
    verification_validator(document)
    assert document["accepted"] is True
    assert document["summary"]["required_passed"] == document["summary"]["required_total"] == 13
    assert all(row["outcome"] == "passed" for row in document["tests"])
    assert document["experiment_id"] == "prompt-context-output-01-instruction-hierarchy"
    assert document["stage"]["evidence_dir"] == "evidence/prompt-context-output/01-instruction-hierarchy/"


def test_fault_target_fails_the_target_test(workbook) -> None:
    result = workbook.run("check", "01", "--target", "fault:01", "--out", str(workbook.root / "fault.json"))
    assert result.returncode == 1
    assert "First difference at ['write']: got 'allow', expected 'deny'" in result.stdout
    assert result.stdout.splitlines()[0].endswith(" · target: the fault lab's broken copy (fault:01)")


def test_learner_solution_written_by_hand_is_accepted_once_every_part_is_done(workbook) -> None:
    workbook.write("forge/instructions.py", (workbook.root / "solutions/forge/instructions.py").read_text())
    workbook.write("transfer/test_01_instruction_hierarchy.py",
                   (workbook.root / "solutions/transfer/test_01_instruction_hierarchy.py").read_text())
    first = workbook.run("check", "01")
    assert first.returncode == 1 and re.search(r"fault lab\s+not started", first.stdout), first.stdout
    assert workbook.run("fault", "start", "01").returncode == 0
    diagnosed = workbook.run("fault", "diagnose", "01", "--test", "test_lower_trust_instruction_cannot_override_system",
                             "--function", "explain", "--defect", "input-order", "--because",
                             "explain lets the last instruction overwrite each key and records nothing")
    assert diagnosed.returncode == 0, diagnosed.output
    workbook.write(f"labs/{KEY}/forge/instructions.py", (workbook.root / "solutions/forge/instructions.py").read_text())
    answer = workbook.root / "answer.md"
    answer.write_text((workbook.root / f"solutions/answers/{KEY}.md").read_text())
    assert workbook.run("answer", "01", "--file", str(answer)).returncode == 0
    final = workbook.run("check", "01")
    assert final.returncode == 0, final.stdout
    document = workbook.evidence(KEY)
    assert document["acceptance"] == {"required_tests_passed": True, "fault_lab_fixed": True, "fault_lab_diagnosed": True,
                                      "transfer_passed": True, "design_answer_present": True}
    assert "fixed_file_sha256" in document["fault_lab"]
    # the lab was repaired and judged by `check` alone (no `fault check`): status says what the evidence says
    shown = workbook.run("status")
    assert re.search(r"^01 .*fixed and diagnosed .*accepted", shown.stdout, re.MULTILINE), shown.stdout
    assert "fault start 01" not in shown.stdout, shown.stdout


BROKEN_MODULES = {
    "syntax-error": ("def rank_of(instruction):\n    return RANK[\n", r"syntax error in forge/instructions.py, line 2"),
    "raises-at-import": ("raise RuntimeError('config missing')\n",
                         r"importing forge/instructions.py raised RuntimeError: config missing \(forge/instructions.py, line 1\)"),
    "hangs-at-import": ("while True:\n    pass\n",
                        r"importing forge/instructions.py did not finish: it used \d+ s of CPU time without finishing"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_MODULES))
def test_broken_module_gives_one_readable_cause(workbook, verification_validator, case: str) -> None:
    source, expected = BROKEN_MODULES[case]
    workbook.write("forge/instructions.py", source)
    result = workbook.run("check", "01", "--cpu-limit", "2")
    assert result.returncode == 1
    assert "Traceback" not in result.output
    import re

    assert re.search(expected, result.stdout), result.stdout
    document = workbook.evidence(KEY)
    verification_validator(document)
    assert document["accepted"] is False
    assert {row["outcome"] for row in document["tests"]} == {"not_run"}


def test_missing_module_says_so(workbook, verification_validator) -> None:
    (workbook.root / "forge/instructions.py").unlink()
    result = workbook.run("check", "01")
    assert result.returncode == 1
    assert "forge/instructions.py does not exist" in result.stdout
    verification_validator(workbook.evidence(KEY))


def test_infinite_loop_in_a_test_is_reported_as_timeout(workbook) -> None:
    solution = (workbook.root / "solutions/forge/instructions.py").read_text()
    looping = solution.replace('    """Decide every key and keep the reason for every rejection."""\n',
                               '    """Decide every key and keep the reason for every rejection."""\n    while True:\n        pass\n')
    assert looping != solution
    workbook.write("forge/instructions.py", looping)
    result = workbook.run("check", "01", "--cpu-limit", "1", timeout=90)
    assert result.returncode == 1
    assert "TIMEOUT" in result.stdout
    document = workbook.evidence(KEY)
    outcomes = [row["outcome"] for row in document["tests"]]
    assert outcomes.count("timeout") == 2  # then the rest is not run
    assert "not_run" in outcomes


def test_unknown_stage_lists_the_valid_ones(workbook) -> None:
    result = workbook.run("check", "42")
    assert result.returncode == 2
    assert "unknown stage '42'" in result.stderr and "01 (instruction-hierarchy)" in result.stderr
    assert "Traceback" not in result.output


def test_unknown_target_lists_the_valid_ones(workbook) -> None:
    result = workbook.run("check", "01", "--target", "teacher")
    assert result.returncode == 2
    assert "unknown target 'teacher'" in result.stderr and "fault:NN" in result.stderr


def test_edited_stage_tests_change_the_recorded_digest(workbook) -> None:
    workbook.run("check", "01", "--target", "solution")
    before = workbook.evidence(KEY)["digests"]["tests"][0]["sha256"]
    test_file = workbook.root / "tests/stages/test_01_instruction_hierarchy.py"
    test_file.write_text(test_file.read_text() + "\n# edited\n")
    workbook.run("check", "01", "--target", "solution")
    assert workbook.evidence(KEY)["digests"]["tests"][0]["sha256"] != before


def test_a_typo_in_the_transfer_test_costs_only_the_transfer_part(workbook) -> None:
    workbook.write("forge/instructions.py", (workbook.root / "solutions/forge/instructions.py").read_text())
    workbook.write("transfer/test_01_instruction_hierarchy.py", "def test_office(:\n    pass\n")
    result = workbook.run("check", "01")
    assert result.returncode == 1
    document = workbook.evidence(KEY)
    assert document["acceptance"]["required_tests_passed"] is True
    assert document["transfer"]["status"] == "error"
    assert "transfer/test_01_instruction_hierarchy.py" in document["transfer"]["detail"]
