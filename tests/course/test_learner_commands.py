"""Learner commands: status, hint, fault lab, restore and backups — nothing the learner wrote is lost."""

from __future__ import annotations

import hashlib
from pathlib import Path

KEY = "01-instruction-hierarchy"


def _tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def test_fault_lab_round_trip_never_touches_forge(workbook) -> None:
    before = _tree_digest(workbook.root / "forge")
    started = workbook.run("fault", "start", "01")
    assert started.returncode == 0 and f"labs/{KEY}/forge/instructions.py" in started.stdout
    check = workbook.run("fault", "check", "01")
    assert check.returncode == 1
    assert "declared symptom seen: {'write': 'allow'} == {'write': 'deny'}" in check.stdout
    assert workbook.run("fault", "diff", "01").stdout.startswith("no changes yet")
    lab_file = workbook.root / "labs" / KEY / "forge" / "instructions.py"
    lab_file.write_text((workbook.root / "solutions/forge/instructions.py").read_text())
    fixed = workbook.run("fault", "check", "01")
    assert fixed.returncode == 0 and "FIXED" in fixed.stdout
    assert "evidence updated: evidence/prompt-context-output/01-instruction-hierarchy/verification.json" in fixed.stdout
    assert workbook.evidence(KEY)["fault_lab"]["status"] == "fixed"
    diff = workbook.run("fault", "diff", "01").stdout
    assert diff.startswith("--- broken/forge/instructions.py") and "+    order = sorted(" in diff
    reset = workbook.run("fault", "reset", "01")
    assert reset.returncode == 0 and "backup" in reset.stdout
    assert lab_file.read_text() == (workbook.root / f"failure_labs/{KEY}/forge/instructions.py").read_text()
    backups = list((workbook.root / ".forgelab" / "backups").glob("*-lab-01/labs/*/forge/instructions.py"))
    assert len(backups) == 1 and backups[0].read_text() == (workbook.root / "solutions/forge/instructions.py").read_text()
    assert _tree_digest(workbook.root / "forge") == before


def test_fault_start_keeps_an_existing_lab(workbook) -> None:
    workbook.run("fault", "start", "01")
    lab_file = workbook.root / "labs" / KEY / "forge" / "instructions.py"
    lab_file.write_text(lab_file.read_text() + "\n# my notes\n")
    again = workbook.run("fault", "start", "01")
    assert "already started" in again.stdout
    assert lab_file.read_text().endswith("# my notes\n")


def test_fault_commands_before_start_explain_what_to_do(workbook) -> None:
    result = workbook.run("fault", "check", "01")
    assert result.returncode == 2
    assert "not started: run `forgelab fault start 01`" in result.stderr


def test_hints_are_revealed_one_at_a_time_and_remembered(workbook, course) -> None:
    total = len(course.stage("01").text().hints)
    first = workbook.run("hint", "01").stdout
    assert f"hint 1/{total} (new):" in first and f"hint 2/{total}" not in first
    second = workbook.run("hint", "01").stdout
    assert f"hint 1/{total}:" in second and f"hint 2/{total} (new):" in second
    for _ in range(total - 1):
        done = workbook.run("hint", "01").stdout
    assert f"all {total} hints are shown" in done
    assert "hidden again" in workbook.run("hint", "01", "--reset").stdout


def test_status_lists_every_stage_and_a_next_step(workbook, course) -> None:
    result = workbook.run("status")
    assert result.returncode == 0
    for stage in course.stages:
        assert stage.text().title in result.stdout
    assert "next: stage 01" in result.stdout


def test_status_works_when_the_forge_package_is_broken(workbook) -> None:
    workbook.write("forge/__init__.py", "this is not python (\n")
    result = workbook.run("status")
    assert result.returncode == 0
    assert "Traceback" not in result.output
    assert "cannot import" in result.stdout


def test_restore_lays_earlier_reference_modules_after_a_backup_that_can_be_restored(workbook, course) -> None:
    if len(course.stages) < 2:
        return
    mine = "# my own work in progress\n"
    workbook.write("forge/instructions.py", mine)
    second = course.stages[1]
    result = workbook.run("restore", second.number, "--yes")
    assert result.returncode == 0
    assert (workbook.root / "forge/instructions.py").read_text() == (workbook.root / "solutions/forge/instructions.py").read_text()
    backup_name = next(line.split()[-1] for line in result.stdout.splitlines() if "backup of your forge/ saved as" in line)
    listing = workbook.run("backup", "list").stdout
    assert backup_name in listing
    undo = workbook.run("backup", "restore", backup_name, "--yes")
    assert undo.returncode == 0
    assert (workbook.root / "forge/instructions.py").read_text() == mine


def test_restore_of_the_first_stage_changes_nothing(workbook) -> None:
    before = _tree_digest(workbook.root / "forge")
    assert "nothing before it" in workbook.run("restore", "01").stdout
    assert _tree_digest(workbook.root / "forge") == before


def test_unknown_backup_is_a_clear_error(workbook) -> None:
    result = workbook.run("backup", "restore", "yesterday")
    assert result.returncode == 2 and "no backup named 'yesterday'" in result.stderr


def test_empty_design_answer_is_refused(workbook) -> None:
    empty = workbook.root / "empty.md"
    empty.write_text("   \n")
    result = workbook.run("answer", "01", "--file", str(empty))
    assert result.returncode == 2 and "the answer is empty" in result.stderr


def test_materialize_writes_the_solution_and_refuses_the_workbook_itself(workbook, tmp_path) -> None:
    result = workbook.run("materialize", "solution", "--into", str(tmp_path / "out"))
    assert result.returncode == 0
    assert (tmp_path / "out/forge/instructions.py").read_text() == (workbook.root / "solutions/forge/instructions.py").read_text()
    fault = workbook.run("materialize", "fault:01", "--into", str(tmp_path / "fault"))
    assert fault.returncode == 0
    assert (tmp_path / "fault/forge/instructions.py").read_text() == (
        workbook.root / f"failure_labs/{KEY}/forge/instructions.py").read_text()
    refused = workbook.run("materialize", "solution", "--into", str(workbook.root))
    assert refused.returncode == 2 and "refusing" in refused.stderr


def test_tools_that_need_solutions_fail_clearly_without_them(workbook) -> None:
    import shutil

    shutil.rmtree(workbook.root / "solutions")
    result = workbook.run("check", "01", "--target", "solution")
    assert result.returncode == 2
    assert "not part of the learner bundle" in result.stderr
