"""Ctrl-C in `forgelab grade`: the batch stops now, not after the submissions being graded (or, as before, after
every submission still queued); what was recorded stays, with its pages; the submission whose grading was cut is
not recorded at all (a stopped run is no grade, and would blame it); the command names the rest and how to grade
it; no process and no run folder is left."""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import pytest
from conftest import (ROOT, OutputLines, interrupt_a_thread_other_than_the_main_one, main_thread_waits,
                      processes_with_variable, start_cli, wait_until)
from grading_fixtures import MODULE, derive_handed_in, shared_base

from forgelab.judge import channel

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SLEEPS = '''

import time as _time

_resolve_at_once = resolve


def resolve(instructions):  # every call waits an hour: each test runs to its wall-clock limit
    _time.sleep(3600)
    return _resolve_at_once(instructions)
'''


@pytest.mark.parametrize("taken_by", ["the process", "another thread"])
def test_ctrl_c_stops_the_batch_now_keeps_what_was_recorded_and_names_the_rest(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, taken_by: str) -> None:
    """With "another thread" the signal goes to one of grade's threads but the main one, which waits for the
    submissions being graded (Linux may deliver Ctrl-C so): the batch must stop as soon as it does otherwise."""
    base = shared_base(tmp_path_factory)
    first = derive_handed_in(base, tmp_path / "subs" / "a-correct")
    slow = derive_handed_in(base, tmp_path / "subs" / "b-sleeps")
    (slow / MODULE).write_text((slow / MODULE).read_text(encoding="utf-8") + SLEEPS, encoding="utf-8")
    last = derive_handed_in(base, tmp_path / "subs" / "c-correct")
    out, scratch = tmp_path / "out", tmp_path / "scratch"
    scratch.mkdir()
    command = start_cli(ROOT, "grade", str(first), str(slow), str(last), "--out", str(out), "--stages", "01",
                        "--jobs", "1", env={"TMPDIR": str(scratch)})
    assert command.stdout is not None and command.stderr is not None
    printed = OutputLines(command.stdout)
    try:
        # the first is recorded, and the second's judge run has begun (the first's folder went before its line)
        printed.wait_for(r"^\[1/3\] a-correct: ", timeout=600)
        wait_until(lambda: list(scratch.glob("forgelab-judge-*")) or None, timeout=120, what="b-sleeps to be graded",
                   gave_up=lambda: None if command.poll() is None else f"grade ended first: {printed.tail()}")
        if taken_by == "another thread":
            wait_until(lambda: main_thread_waits(command.pid), timeout=60, every=0.05,
                       what="grade's main thread to wait for the submission being graded")
            interrupt_a_thread_other_than_the_main_one(command.pid)
        else:
            command.send_signal(signal.SIGINT)
        # b-sleeps alone would take minutes (each test to its 90 s limit); the batch must not wait for it
        command.wait(timeout=120)
        stderr = command.stderr.read()
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
    printed.close()
    stdout = printed.tail(100)
    assert command.returncode == 2, (stdout, stderr)
    assert "[1/3] a-correct: " in stdout and "b-sleeps:" not in stdout and "Traceback" not in stderr, (stdout, stderr)
    assert f"interrupted: 1 of 3 submission(s) graded and recorded in {out / 'gradebook.sqlite'}" in stderr, stderr
    assert "not graded: b-sleeps, c-correct" in stderr, stderr
    assert f"`forgelab grade {slow} {last} --out {out}`" in stderr, stderr

    connection = sqlite3.connect(out / "gradebook.sqlite")
    try:
        graded = {row[0] for row in connection.execute("SELECT DISTINCT submission FROM grades")}
        tested = {row[0] for row in connection.execute("SELECT DISTINCT submission FROM tests")}
        finished = [row[0] for row in connection.execute("SELECT finished_at FROM runs")]
    finally:
        connection.close()
    assert graded == tested == {"a-correct"}
    assert finished == [None]  # the run was interrupted
    assert sorted(path.name for path in (out / "feedback").iterdir()) == ["a-correct.html"]
    assert "a-correct" in (out / "gradebook.csv").read_text(encoding="utf-8")

    wait_until(lambda: processes_with_variable(f"TMPDIR={scratch}") == [], timeout=30,
               what="every process of the batch to end")
    assert sorted(path.name for path in scratch.iterdir()) == []


def test_a_run_within_a_stopped_run_is_stopped_and_one_within_another_is_not() -> None:
    """What grade's Ctrl-C relies on: stopping a submission's processes stops the judge runs made within it, those
    made later too, and nothing of a run beside it."""
    submission, beside = channel.RunProcesses(), channel.RunProcesses()
    inner, inner_beside = channel.RunProcesses(within=submission), channel.RunProcesses(within=beside)
    submission.stop()
    assert inner.stopped and not inner_beside.stopped and not beside.stopped
    assert channel.RunProcesses(within=submission).stopped
