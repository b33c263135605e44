"""`forgelab check all` (what `make test` runs in the learner bundle): one row per stage, nothing cut."""

from __future__ import annotations

import re
import shutil

import pytest

from conftest import ROOT, WorkbookCopy

WIDTH = 100
ROW = re.compile(r"^(\d\d) (.+?)\s+(\d+)/(\d+)  (\S+(?: \S+)?)\s+(\S+(?: \S+)?)\s+(\S+(?: \S+)?)\s+(.+)$")
STEP_COLUMN = re.compile(r"first open item")


def _stage_rows(output: str) -> dict[str, tuple[re.Match[str], str]]:
    """Each stage's row and its whole first-open-item text (the last column wraps onto continuation lines)."""
    lines = output.splitlines()
    assert lines[0].split() == ["stage", "tests", "lab", "transfer", "answer", "first", "open", "item"]
    assert set(lines[1]) <= {"-", " "}
    step_at = lines[0].index("first open item")
    found: dict[str, tuple[re.Match[str], list[str]]] = {}
    current = ""
    for line in lines[2:]:
        if re.match(r"^\d\d ", line):
            match = ROW.match(line)
            assert match, f"not a stage row: {line!r}"
            current = match.group(1)
            found[current] = (match, [line[step_at:].strip()])
        elif "stages accepted" in line:
            break  # the summary after the table
        elif current:
            found[current][1].append(line[step_at:].strip())  # a wrapped stage title or a wrapped step
    return {number: (match, " ".join(part for part in parts if part)) for number, (match, parts) in found.items()}


@pytest.mark.slow
def test_each_stage_is_one_row_that_fits_and_the_last_line_names_the_next_step(workbook: WorkbookCopy) -> None:
    from forgelab.core.registry import load_course

    course = load_course(ROOT)
    shutil.copy(ROOT / "solutions" / "forge" / "instructions.py", workbook.root / "forge" / "instructions.py")
    done = workbook.run("check", "all", env={"FORGELAB_WIDTH": "200"}, timeout=900)
    assert done.returncode == 1, done.output
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= WIDTH, done.stdout  # even on a wide terminal

    rows = _stage_rows(done.stdout)
    assert list(rows) == [stage.number for stage in course.stages]
    first, step = rows["01"]
    assert first.group(2).startswith("Instruction hierarchy")
    assert (first.group(3), first.group(4)) == ("13", "13")
    assert first.group(5) == "to do"  # the fault lab is the first open item of a solved module
    assert step == "start the fault lab: `forgelab fault start 01`"  # whole: nothing is cut
    second, step = rows["02"]
    assert int(second.group(3)) < int(second.group(4))
    assert step == "implement forge/context_selection.py (notebook part 6; `forgelab hint 02` for a hint)"
    summary = " ".join(lines[next(i for i, line in enumerate(lines) if "stages accepted" in line):])
    assert summary == (f"0/{len(course.stages)} stages accepted. Next: stage 01 — start the fault lab: "
                       "`forgelab fault start 01`; details: forgelab check 01")


STACKED_ROW = re.compile(r"^(\d\d) (.+?)\s+(\d+)/(\d+)  (\S+(?: \S+)?)\s+(\S+(?: \S+)?)\s+(\S+(?: \S+)?)$")


def _stacked_rows(output: str) -> dict[str, tuple[re.Match[str], str]]:
    """Each stage's row and its first open item, which a narrow terminal puts on indented lines under the row."""
    lines = output.splitlines()
    assert lines[0].split() == ["stage", "tests", "lab", "transfer", "answer"] and lines[1] == "    first open item"
    assert set(lines[2]) <= {"-", " "}
    found: dict[str, tuple[re.Match[str], list[str]]] = {}
    for line in lines[3:]:
        if "stages accepted" in line:
            break
        if re.match(r"^\d\d ", line):
            match = STACKED_ROW.match(line)
            assert match, f"not a stage row: {line!r}"
            found[match.group(1)] = (match, [])
        elif line.startswith("    ") and found:
            found[list(found)[-1]][1].append(line.strip())  # the first open item, at the full width
    return {number: (match, " ".join(parts)) for number, (match, parts) in found.items()}


@pytest.mark.slow
def test_a_narrow_terminal_stacks_the_next_step_and_finished_stages_say_accepted(workbook: WorkbookCopy) -> None:
    done = workbook.run("check", "all", "--target", "solution", env={"FORGELAB_WIDTH": "80"}, timeout=900)
    assert done.returncode == 0, done.output
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, done.stdout
    for match, step in _stacked_rows(done.stdout).values():
        assert match.group(3) == match.group(4)
        assert (match.group(5), match.group(6), match.group(7), step) == ("fixed", "passed", "ok", "ACCEPTED")
    assert "stages accepted. Next:" in done.stdout and "`forgelab page`" in " ".join(lines[-2:])
