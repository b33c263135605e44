"""What the learner reads in the terminal: causes are never cut (they wrap), a closed pipe stops a command
quietly, several stages are checked at once, and every kind of backup comes back with the command the list
prints (issue 20, items 5, 7 and 8)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import WorkbookCopy, start_cli

KEY = "01-instruction-hierarchy"


def _column(output: str, header: str) -> list[str]:
    """The text of the table column that starts under ``header``, one entry per row (wrapped lines joined) — or,
    in a stacked table (``header`` on its own indented line), the indented lines under each row."""
    lines = output.splitlines()
    if f"    {header}" in lines:
        top = lines.index(f"    {header}")
        rows: list[str] = []
        for line in lines[top + 2:]:
            if not line.strip():
                break
            if line.startswith("    "):
                rows[-1] += line.strip()
            else:
                rows.append("")
        return rows
    top = next(index for index, line in enumerate(lines) if re.match(rf"^\S.*  {header}$", line))
    at = lines[top].index(header)
    rows: list[str] = []
    for line in lines[top + 2:]:
        if not line.strip():
            break
        if line[:at].strip():
            rows.append(line[at:].strip())
        elif rows:
            rows[-1] += line[at:].strip()
    return rows


def _bare(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_no_cause_is_cut_at_80_columns(workbook: WorkbookCopy) -> None:
    workbook.write("transfer/test_01_instruction_hierarchy.py",
                   "from forge.instructions import Instruction, resolve\n\n\ndef test_mine() -> None:\n"
                   "    accepted, _ = resolve([Instruction('system', 'write', 'deny')])\n"
                   "    assert accepted == {'write': 'deny', 'a key that makes this assertion long': 'x' * 3}\n")
    done = workbook.run("check", "01", env={"FORGELAB_WIDTH": "80"})
    assert done.returncode == 1, done.output
    assert max(len(line) for line in done.stdout.splitlines()) <= 80, done.stdout
    assert "…" not in done.stdout
    document = workbook.evidence(KEY)
    causes = [_bare(cell) for cell in _column(done.stdout, "cause")]
    for row in document["tests"]:
        if row["cause"]:
            assert _bare(row["cause"]) in causes, (row["cause"], done.stdout)
    details = [_bare(cell) for cell in _column(done.stdout, "detail")]
    for part in ("fault_lab", "transfer", "design_answer"):
        assert _bare(document[part]["detail"]) in details, (part, done.stdout)
    status = workbook.run("status", env={"FORGELAB_WIDTH": "80"})
    assert status.returncode == 0 and "…" not in status.stdout
    assert max(len(line) for line in status.stdout.splitlines()) <= 80, status.stdout


def test_check_into_a_closed_pipe_stops_quietly(workbook: WorkbookCopy) -> None:
    """`forgelab check 01 | head -1`: the reader is gone before the check prints; no traceback, no message."""
    process = start_cli(workbook.root, "check", "01", text=False)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader stops reading at once; the check takes longer than that
    stderr = process.stderr.read().decode("utf-8", "replace")
    assert process.wait(timeout=300) == 141
    assert stderr == ""


def test_several_stages_and_a_range_are_checked_in_one_command(workbook: WorkbookCopy) -> None:
    both = workbook.run("check", "01", "02", "--target", "solution", timeout=300)
    assert both.returncode == 0, both.output
    assert both.stdout.count("verdict: ACCEPTED") == 2
    assert "Stage 01 · Instruction hierarchy" in both.stdout and "Stage 02 · Context selection" in both.stdout
    assert both.stdout.rstrip().endswith("2/2 of the stages checked are accepted (01, 02)")
    ranged = workbook.run("check", "01-02", "--target", "solution", timeout=300)
    assert ranged.returncode == 0 and ranged.stdout.rstrip().endswith("(01, 02)"), ranged.output
    one_open = workbook.run("check", "01..02", timeout=300)  # the starters: neither is accepted
    assert one_open.returncode == 1 and "0/2 of the stages checked are accepted" in one_open.stdout
    backwards = workbook.run("check", "02-01")
    assert backwards.returncode == 2 and "runs backwards: write 01-02" in backwards.stderr
    why = workbook.run("check", "01", "02", "--why", "test_input_is_not_mutated")
    assert why.returncode == 2 and "about one stage" in why.stderr


def _backup_lines(listing: str) -> dict[str, str]:
    return {line.split()[0]: line for line in listing.splitlines() if re.match(r"^\d{8}-\d{6}-", line)}


def test_every_kind_of_backup_is_restored_by_the_command_the_list_prints(workbook: WorkbookCopy, tmp_path: Path) -> None:
    root = workbook.root
    module, transfer = root / "forge/instructions.py", root / "transfer/test_01_instruction_hierarchy.py"
    answer = root / f"evidence/prompt-context-output/{KEY}/design-answer.md"
    lab = root / f"labs/{KEY}/forge/instructions.py"
    # a whole-forge backup (starter), a transfer backup, a design-answer backup, a fault-lab backup, a restore
    workbook.write("forge/instructions.py", "# my module\n")
    assert workbook.run("starter", "01", "--yes").returncode == 0
    workbook.write("transfer/test_01_instruction_hierarchy.py", "# my transfer test\n")
    assert workbook.run("starter", "01", "--transfer", "--yes").returncode == 0
    for text in ("my first answer", "my second answer"):
        (tmp_path / "answer.md").write_text(text, encoding="utf-8")
        assert workbook.run("answer", "01", "--file", str(tmp_path / "answer.md")).returncode == 0
    assert workbook.run("fault", "start", "01").returncode == 0
    lab.write_text("# my lab fix\n", encoding="utf-8")
    assert workbook.run("fault", "reset", "01").returncode == 0
    workbook.write("forge/context_selection.py", "# my stage 02\n")
    assert workbook.run("restore", "03", "--yes").returncode == 0

    listing = workbook.run("backup", "list")
    assert "undo a change with: forgelab backup restore NAME" in listing.stdout
    names = _backup_lines(listing.stdout)
    kinds = {re.sub(r"^\d{8}-\d{6}-", "", name).rsplit("-", 1)[0] for name in names}
    assert {"starter", "answer", "lab", "restore"} <= kinds, listing.stdout
    expected = {"starter": (module, "# my module\n"), "answer": (answer, "my first answer\n"),
                "lab": (lab, "# my lab fix\n"), "restore": (root / "forge/context_selection.py", "# my stage 02\n")}
    for name in names:
        kind = re.sub(r"^\d{8}-\d{6}-", "", name).rsplit("-", 1)[0]
        undo = workbook.run("backup", "restore", name, "--yes")
        assert undo.returncode == 0, (name, undo.output)
        if kind == "starter" and "transfer/" in names[name]:
            assert transfer.read_text(encoding="utf-8") == "# my transfer test\n"
        elif kind in expected:
            path, text = expected[kind]
            assert path.read_text(encoding="utf-8") == text, (name, undo.output)


def test_backup_restore_asks_first_and_a_refusal_changes_nothing(workbook: WorkbookCopy) -> None:
    workbook.write("forge/instructions.py", "# mine\n")
    assert workbook.run("starter", "01", "--yes").returncode == 0
    name = next(iter(_backup_lines(workbook.run("backup", "list").stdout)))
    before = (workbook.root / "forge/instructions.py").read_bytes()
    refused = workbook.run("backup", "restore", name)  # no terminal, no --yes
    assert refused.returncode == 2
    assert "would be replaced" in refused.stdout and "restored from" not in refused.stdout
    assert f"forgelab backup restore {name} --yes" in refused.stderr and "nothing was changed" in refused.stderr
    assert (workbook.root / "forge/instructions.py").read_bytes() == before
    assert len(_backup_lines(workbook.run("backup", "list").stdout)) == 1  # no safety backup either
