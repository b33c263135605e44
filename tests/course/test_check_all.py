"""`forgelab check all` (what `make test` runs in the learner bundle): one readable line per stage."""

from __future__ import annotations

import re
import shutil

import pytest

from conftest import ROOT, WorkbookCopy

WIDTH = 100
LINE = re.compile(r"^(\d\d) (.+?)\s+(\d+)/(\d+)  (\S+(?: \S+)?)\s+(\S+(?: \S+)?)\s+(\S+(?: \S+)?)\s+(.+)$")


def _stage_lines(output: str) -> dict[str, re.Match[str]]:
    lines = output.splitlines()
    assert lines[0].split() == ["stage", "tests", "lab", "transfer", "answer", "first", "open", "item"]
    found = {}
    for line in lines[1:-1]:
        match = LINE.match(line)
        assert match, f"not a stage line: {line!r}"
        found[match.group(1)] = match
    return found


@pytest.mark.slow
def test_each_stage_is_one_line_that_fits_and_the_last_line_names_the_next_step(workbook: WorkbookCopy) -> None:
    from forgelab.registry import load_course

    course = load_course(ROOT)
    shutil.copy(ROOT / "solutions" / "forge" / "instructions.py", workbook.root / "forge" / "instructions.py")
    done = workbook.run("check", "all", env={"FORGELAB_WIDTH": "200"}, timeout=900)
    assert done.returncode == 1, done.output
    lines = done.stdout.splitlines()
    assert len(lines) == len(course.stages) + 2, done.stdout
    assert max(len(line) for line in lines) <= WIDTH, done.stdout  # even on a wide terminal

    rows = _stage_lines(done.stdout)
    assert list(rows) == [stage.number for stage in course.stages]
    first = rows["01"]
    assert first.group(2).startswith("Instruction hierarchy")
    assert (first.group(3), first.group(4)) == ("13", "13")
    assert first.group(5) == "to do"  # the fault lab is the first open item of a solved module
    assert first.group(8) == "start the fault lab"  # the command itself is on the last line
    second = rows["02"]
    assert int(second.group(3)) < int(second.group(4))
    assert second.group(8) == "implement forge/context_selection.py"
    assert lines[-1] == "0/10 stages accepted. Next: stage 01 — start the fault lab: `forgelab fault start 01`"


@pytest.mark.slow
def test_a_narrow_terminal_gets_shorter_lines_and_finished_stages_say_accepted(workbook: WorkbookCopy) -> None:
    done = workbook.run("check", "all", "--target", "solution", env={"FORGELAB_WIDTH": "80"}, timeout=900)
    assert done.returncode == 0, done.output
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, done.stdout
    for match in _stage_lines(done.stdout).values():
        assert match.group(3) == match.group(4)
        assert (match.group(5), match.group(6), match.group(7), match.group(8)) == ("fixed", "passed", "ok", "ACCEPTED")
    assert lines[-1].startswith("10/10 stages accepted. Next:")
