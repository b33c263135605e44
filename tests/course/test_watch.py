"""`forgelab watch` driven in a pseudo-terminal, as a learner uses it: save, read the verdict.

The workbook has stages 01, 05 and 07 complete (reference modules and transfer tests, fault labs fixed and
diagnosed, design answers) — the grading suite's correct submission, built once per session by the same
commands a learner types. Each test then saves files into its own
copy while `forgelab watch` runs in a pty, and reads the screen: the first line after each save is the
first failing test with its first difference, or ACCEPTED. Nothing here waits a fixed time: every wait is
``expect`` for a text, with a generous timeout for a busy machine.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pexpect
import pytest

from conftest import (WorkbookCopy, cli_command, cli_env, command_line, descendants,
                      interrupt_a_thread_other_than_the_main_one, learner_code_sleeps_below, main_thread_waits,
                      wait_until)
from forgelab.judge.settings import DEFAULT
from finished_stages import workbook  # noqa: F401 - the fixture, used by name
from grading_fixtures import MODULE, SAME_RANK_FIND, SAME_RANK_LAST_WINS
from hostile_submissions import (FORK_BOMB, MARKERS, PRELUDE, REPORT_PATCH, HostileContext, markers_nearby,
                                 processes_with)

WAIT_S = 240  # one check on a crowded 2-CPU machine, with room to spare
FIRST_LINE = re.compile(r"\x1b\[2J([^\r\n]*)")  # the screen is cleared before every verdict: what follows is line 1
SAME_RANK_TEST = "test_same_rank_conflict_keeps_the_earlier_instruction"
STILL_JUDGING = "still judging:"


def spawn(copy: WorkbookCopy, *args: str) -> pexpect.spawn:
    env = cli_env(copy.root, {"FORGE_LANG": "en", "TERM": "xterm"})
    program, *argv = cli_command("watch", *args)
    child = pexpect.spawn(program, argv, cwd=str(copy.root), env=env,
                          encoding="utf-8", timeout=WAIT_S, dimensions=(60, 200))
    return child


@pytest.fixture
def watching(workbook: WorkbookCopy) -> Iterator[tuple[WorkbookCopy, pexpect.spawn]]:
    child = spawn(workbook, "01")
    child.expect("watching forge/instructions.py")  # the first whole check is on screen
    yield workbook, child
    if child.isalive():
        child.sendcontrol("c")
        child.expect(pexpect.EOF)
    child.close(force=True)


def save(copy: WorkbookCopy, relative: str, text: str) -> None:
    """Save as an editor does: write a new file next to it, then rename it over the old one."""
    path = copy.root / relative
    scratch = path.with_name(f".{path.name}.saving")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, path)


def next_screen(child: pexpect.spawn) -> str:
    """The first line of the next screen (the screen is cleared before it); ``child.before`` holds the rest."""
    child.expect(FIRST_LINE)
    first = child.match.group(1)
    child.expect("watching forge/instructions.py")
    return str(first)


def next_verdict(child: pexpect.spawn) -> str:
    """The first line of the next verdict on screen once every part that runs again is on it: after a save of the
    module the stage tests' verdict comes first, with a line naming the parts still being judged, then the whole."""
    first = next_screen(child)
    while STILL_JUDGING in child.before:
        first = next_screen(child)
    return first


def test_a_wrong_save_shows_the_first_difference_and_the_fix_is_accepted(watching: tuple[WorkbookCopy, pexpect.spawn]) -> None:
    copy, child = watching
    correct = (copy.root / MODULE).read_text(encoding="utf-8")
    save(copy, MODULE, correct.replace(SAME_RANK_FIND, SAME_RANK_LAST_WINS))
    first = next_verdict(child)
    assert first.startswith(f"FAILING {SAME_RANK_TEST}: First difference at"), first
    assert "NOT ACCEPTED" in child.before
    assert copy.evidence("01-instruction-hierarchy")["accepted"] is False

    save(copy, MODULE, correct)
    first = next_verdict(child)
    assert first == "ACCEPTED — stage 01 · Instruction hierarchy", first
    assert "press n to watch it, q to quit" in child.before
    document = copy.evidence("01-instruction-hierarchy")
    assert document["accepted"] is True

    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    # exactly what `check` writes for the same files (but when, how long each test took, and the seal over it)
    checked = copy.run("check", "01")
    assert checked.returncode == 0, checked.output
    again = copy.evidence("01-instruction-hierarchy")
    for written in (document, again):
        for key in ("checked_at", "integrity"):
            written.pop(key)
        for row in written["tests"]:
            row.pop("duration_ms")
    assert document == again


def test_the_stage_tests_verdict_comes_first_and_the_transfer_follows(
        watching: tuple[WorkbookCopy, pexpect.spawn]) -> None:
    copy, child = watching
    correct = (copy.root / MODULE).read_text(encoding="utf-8")
    save(copy, MODULE, correct + "\n# a comment: the tests run again, and the transfer test on this forge/\n")
    first = next_screen(child)
    assert first == "stage tests pass — stage 01 · Instruction hierarchy", first
    assert "still judging: transfer (their rows above are from before this save)" in child.before
    assert "verdict:" not in child.before  # the verdict waits for the transfer judgement
    first = next_screen(child)
    assert first == "ACCEPTED — stage 01 · Instruction hierarchy", first
    assert STILL_JUDGING not in child.before and "verdict: ACCEPTED" in child.before
    assert copy.evidence("01-instruction-hierarchy")["accepted"] is True


def test_a_check_after_a_save_runs_only_the_parts_whose_files_changed(workbook: WorkbookCopy) -> None:
    """The transfer test's run on the known-wrong module and the fault lab's runs are taken from the last check while
    their files are unchanged (content digests); what is written is what a whole check writes for the same files."""
    from forgelab.core.paths import Workbook
    from forgelab.core.registry import load_course
    from forgelab.learner.workbench import Workbench

    root = workbook.root
    bench = Workbench(Workbook(root=root, workspace=root), load_course(root))
    stage = bench.course.stage("01")

    def ran(outcome: object) -> set[str]:
        report = getattr(outcome, "report")
        return {row.target for row in report.rows}

    assert ran(bench.check(stage)) == {"target", "lab", "known-wrong", "regression-fixed", "regression-broken"}
    touched = (root / MODULE).read_text(encoding="utf-8") + "\n# saved again\n"
    (root / MODULE).write_text(touched, encoding="utf-8")
    again = bench.check(stage)
    assert ran(again) == {"target"}
    whole = Workbench(Workbook(root=root, workspace=root), load_course(root)).check(stage, write=False)
    assert ran(whole) == {"target", "lab", "known-wrong", "regression-fixed", "regression-broken"}
    for document in (again.document, whole.document):
        for key in ("checked_at", "integrity"):
            document.pop(key)
        for row in document["tests"]:
            row.pop("duration_ms")
    assert again.document == whole.document
    transfer = root / "transfer/test_01_instruction_hierarchy.py"
    transfer.write_text(transfer.read_text(encoding="utf-8") + "\n# saved again\n", encoding="utf-8")
    assert ran(bench.check(stage)) == {"target", "known-wrong"}
    lab = root / "labs/01-instruction-hierarchy" / MODULE
    lab.write_text(lab.read_text(encoding="utf-8") + "\n# saved again\n", encoding="utf-8")
    assert ran(bench.check(stage)) == {"target", "lab", "regression-fixed", "regression-broken"}
    assert ran(bench.check(stage)) == {"target"}


def test_a_save_of_the_transfer_test_judges_only_the_transfer(watching: tuple[WorkbookCopy, pexpect.spawn]) -> None:
    copy, child = watching
    transfer = "transfer/test_01_instruction_hierarchy.py"
    text = (copy.root / transfer).read_text(encoding="utf-8")
    save(copy, transfer, text + "\n\ndef test_cannot_fail() -> None:\n    assert (\n")
    first = next_verdict(child)
    assert first.startswith("the tests pass; still open: transfer challenge"), first
    assert "after saving transfer/test_01_instruction_hierarchy.py" in child.before
    assert copy.evidence("01-instruction-hierarchy")["transfer"]["status"] == "error"
    save(copy, transfer, text)
    assert next_verdict(child).startswith("ACCEPTED")


def test_h_shows_the_next_hint_and_q_quits(watching: tuple[WorkbookCopy, pexpect.spawn]) -> None:
    copy, child = watching
    child.send("h")
    child.expect(r"hint 1/\d+ \(new\)")
    child.send("q")
    child.expect(pexpect.EOF)


def test_without_a_number_it_watches_the_first_stage_not_accepted(workbook: WorkbookCopy) -> None:
    child = spawn(workbook)
    child.expect(r"Stage 02 · ")
    child.expect("watching ")
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1  # stage 02 is not accepted


def _context(copy: WorkbookCopy, tmp_path: Path) -> HostileContext:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return HostileContext(uuid.uuid4().hex[:12], str(copy.root), str(out), str(tmp_path), str(copy.root), 1,
                          str(tmp_path / "no.sock"), "forgelab-none")


@pytest.mark.parametrize("attack", ["fork-bomb", "markers", "report-patch"])
def test_a_hostile_save_gains_nothing(watching: tuple[WorkbookCopy, pexpect.spawn], tmp_path: Path,
                                      attack: str) -> None:
    copy, child = watching
    context = _context(copy, tmp_path)
    wrong = (copy.root / MODULE).read_text(encoding="utf-8").replace(SAME_RANK_FIND, SAME_RANK_LAST_WINS)
    code = {"fork-bomb": FORK_BOMB, "markers": MARKERS, "report-patch": REPORT_PATCH}[attack]
    prelude = PRELUDE.format(attack=attack, context=json.dumps(asdict(context)), mark=context.marker(attack))
    save(copy, MODULE, wrong + prelude + code)
    first = next_verdict(child)
    assert first.startswith(f"FAILING {SAME_RANK_TEST}"), first  # the same mistake, the same verdict
    document = copy.evidence("01-instruction-hierarchy")
    assert document["accepted"] is False
    failing = {row["name"] for row in document["tests"] if row["outcome"] != "passed"}
    assert SAME_RANK_TEST in failing
    assert markers_nearby(context) == []
    child.send("q")
    child.expect(pexpect.EOF)
    assert processes_with(context.token) == []


def _alive(pid: int, start: str) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 2:].split()
    return fields[19] == start and fields[0] != "Z"


@pytest.mark.parametrize("taken_by", ["the terminal", "another thread"])
def test_ctrl_c_in_the_middle_of_a_check_leaves_no_process(watching: tuple[WorkbookCopy, pexpect.spawn],
                                                          taken_by: str) -> None:
    """Ctrl-C while the learner's module sleeps in the sandbox ends watch and every process it started, at once.

    Linux hands a signal sent to a process to any one of its threads; Python raises the KeyboardInterrupt in the
    main thread. "another thread" sends SIGINT to one of watch's other threads, as the kernel did with one Ctrl-C
    in two at the start of a check: the main thread, blocked in a wait for the verdict, then went on waiting until
    the judge's wall-clock limit ended the sleeping import (90 s, and longer on a busy machine)."""
    copy, child = watching
    token = uuid.uuid4().hex[:12]
    slow = (copy.root / MODULE).read_text(encoding="utf-8") + (
        f"\n\ndef _sleep_{token}():\n    import time\n    time.sleep(300)\n\n\n_sleep_{token}()\n")
    save(copy, MODULE, slow)
    child.expect("checking stage 01")
    seen: dict[int, str] = {}

    def learner_code_sleeps() -> bool:
        seen.update(descendants(child.pid))
        return learner_code_sleeps_below(child.pid) and main_thread_waits(child.pid)

    wait_until(learner_code_sleeps, timeout=WAIT_S, every=0.05,
               what="the learner's module to sleep in the sandbox while watch waits for the verdict")
    seen.update(descendants(child.pid))
    pressed = time.monotonic()
    if taken_by == "the terminal":
        child.sendcontrol("c")
    else:
        interrupt_a_thread_other_than_the_main_one(child.pid)
    child.expect(pexpect.EOF)
    took = time.monotonic() - pressed
    child.close()
    assert child.signalstatus == signal.SIGINT or child.exitstatus != 0
    left = [pid for pid, start in seen.items() if _alive(pid, start)]
    assert left == [], [(pid, command_line(pid)) for pid in left]
    # the interrupt stopped the learner's code, not the judge's limit (never shorter than test_wall_s)
    assert took < DEFAULT.test_wall_s / 2, f"watch ended {took:.0f} s after Ctrl-C: the judge's limit ended the run"
