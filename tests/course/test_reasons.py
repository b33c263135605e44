"""Issue 30 (7): reasons that name what happened.

Each reason here was seen misleading before: a named pipe or device where the module should be was "not handed
in"; a symbolic link stored in a zip "does not exist"; a zip member ``../../../../tmp/x`` was shown as
``'../../../..<tmp>'``; a learner's process that exited was a ``timeout``; ``...zip`` was graded under the id
``..``. (Learner Markdown on the feedback page: tests/course/test_feedback_page.py.)
"""

from __future__ import annotations

import csv
import os
import shutil
import socket
import stat
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from forgelab.core import submission
from forgelab.core.files import Kind, LayoutError
from forgelab.core.i18n import speaking
from forgelab.core.registry import load_course
from forgelab.grading import items
from forgelab.grading.rubric import GradeItem
from forgelab.judge.outcomes import Limit, Outcome, RunReport, TestRow, ended_how

COURSE = load_course(ROOT)
STAGE = COURSE.stage("01")


def _workbook(folder: Path) -> Path:
    (folder / "forge").mkdir(parents=True)
    (folder / "forge" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "transfer").mkdir()
    return folder


def _laid(tmp_path: Path, path: Path) -> submission.LaidOut:
    return submission.lay_out(submission.discover([str(path)])[0], tmp_path / "scratch")


# ---------------------------------------------------------------- special files and links, named and skipped


def test_a_fifo_a_socket_and_a_device_in_a_folder_are_named_and_skipped(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _workbook(tmp_path / "ana")
    os.mkfifo(folder / STAGE.module)  # where forge/instructions.py should be
    listening = socket.socket(socket.AF_UNIX)
    monkeypatch.chdir(folder)  # a socket's path is bound relative: an absolute one may pass AF_UNIX's 108 bytes
    listening.bind(STAGE.transfer_file)
    try:
        os.mknod(folder / "forge" / "util.py", stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
        device = True
    except PermissionError:  # a container without CAP_MKNOD: the pipe and the socket still prove the rule
        device = False
    try:
        laid = _laid(tmp_path, folder)
    finally:
        listening.close()
    found = {entry.relative.as_posix(): entry.kind for entry in laid.skipped}
    assert found == {STAGE.module: Kind.FIFO, STAGE.transfer_file: Kind.SOCKET,
                     **({"forge/util.py": Kind.DEVICE} if device else {})}
    assert ("import", STAGE.module) not in laid.files  # skipped: never opened, never copied
    missing = GradeItem("ana", "01", "transfer", 0, 10, "missing", f"{STAGE.transfer_file}: {STAGE.transfer_file} was "
                        "not handed in")
    said = items.with_skipped(missing, laid.skipped).reason
    assert said.startswith(f"{STAGE.transfer_file} is a socket, not a regular file: it was skipped"), said
    module = GradeItem("ana", "01", "stage_tests", 0, 40, "missing", f"0 of 13 required tests could run: {STAGE.module} "
                       "does not exist or cannot be imported as a module")
    said = items.with_skipped(module, laid.skipped).reason
    assert said.startswith(f"{STAGE.module} is a named pipe (FIFO), not a regular file: it was skipped"), said
    with speaking("zh"):
        assert "是一个命名管道（FIFO），不是普通文件" in items.with_skipped(module, laid.skipped).reason


def test_a_symbolic_link_stored_in_a_zip_is_named_not_missing(tmp_path: Path) -> None:
    archive = tmp_path / "bo.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("forge/__init__.py", "")
        link = zipfile.ZipInfo(STAGE.module)
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        bundle.writestr(link, "/etc/passwd")
        outside = zipfile.ZipInfo("notes/link")  # not a file grading reads: not worth a word
        outside.external_attr = (stat.S_IFLNK | 0o777) << 16
        bundle.writestr(outside, "/etc/passwd")
    laid = _laid(tmp_path, archive)
    assert [(entry.relative.as_posix(), entry.kind) for entry in laid.skipped] == [(STAGE.module, Kind.LINK)]
    module = GradeItem("bo", "01", "stage_tests", 0, 40, "missing", f"0 of 13 required tests could run: {STAGE.module} "
                       "does not exist or cannot be imported as a module")
    said = items.with_skipped(module, laid.skipped).reason
    assert said.startswith(f"{STAGE.module} is a symbolic link, not a regular file: it was skipped"), said


# ---------------------------------------------------------------- member paths as written, escaped


def test_a_member_climbing_out_of_the_zip_is_shown_as_written_never_as_a_temporary_path(tmp_path: Path) -> None:
    archive = tmp_path / "cai.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("forge/__init__.py", "")
        bundle.writestr(zipfile.ZipInfo("../../../../tmp/evil.py"), "x")
    with pytest.raises(LayoutError) as caught:
        _laid(tmp_path, archive)
    rows = items.failed_stage("cai", STAGE, "error", items.cannot_lay_out(caught.value), COURSE.root, flag="")
    for row in rows:
        if row.max_points:
            assert "the member path '../../../../tmp/evil.py' points outside the zip" in row.reason, row.reason
            assert "<tmp>" not in row.reason
    assert items.clean("at /tmp/forgelab-grade-x1/home/forge/a.py and '../../tmp/x'", COURSE.root) \
        == "at <tmp> and '../../tmp/x'"  # a scratch path is still hidden


def test_a_member_name_with_a_line_break_is_escaped(tmp_path: Path) -> None:
    archive = tmp_path / "dee.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("forge/__init__.py", "")
        bundle.writestr(zipfile.ZipInfo("forge/x\nforged line.py"), "A = 1")
        bundle.writestr(zipfile.ZipInfo("forge/./x\nforged line.py"), "A = 2")
    with pytest.raises(LayoutError) as caught:
        _laid(tmp_path, archive)
    assert "two members of the zip are both forge/x\\nforged line.py" in str(caught.value), str(caught.value)
    assert "\n" not in str(caught.value)


# ---------------------------------------------------------------- a process that ended is "ended", not a timeout


def _rows(outcome: Outcome, limit: Limit | None, cause: str) -> RunReport:
    first, *rest = STAGE.required_tests
    rows = [TestRow(f"{STAGE.test_file}::{first}", "sub-01", outcome, cause, limit=limit)]
    rows += [TestRow(f"{STAGE.test_file}::{name}", "sub-01", Outcome.PASSED, "") for name in rest]
    return RunReport(tuple(rows))


def test_a_process_that_exited_is_ended_with_its_status_not_a_timeout() -> None:
    assert (ended_how(3), ended_how(-9), ended_how(None)) == (
        "exit status 3", "ended by signal SIGKILL", "its exit status could not be read")
    ctx = items._Stage("eva", STAGE, COURSE.root)
    cause = f"your code's process ended in the middle of a call ({ended_how(3)}): look for os._exit()"
    ended = items.grade_tests(ctx, _rows(Outcome.TIMEOUT, Limit.CRASH, cause), "sub-01")
    assert ended.outcome == "ended", ended
    assert f"{STAGE.required_tests[0]} (ended: your code's process ended in the middle of a call (exit status 3)" \
        in ended.reason, ended.reason
    assert "timeout" not in ended.reason
    stopped = items.grade_tests(ctx, _rows(Outcome.TIMEOUT, Limit.CPU, "your code used more than 2 s of CPU time"),
                                "sub-01")
    assert stopped.outcome == "timeout" and "(timeout: your code used more than 2 s" in stopped.reason  # a real limit


# a transfer test whose own process dies: killed by a signal, ended before it reported, or its link to the judge broken
TRANSFER_THAT_DIES = {
    "killed": "import os, signal\nfrom forge.instructions import Instruction, resolve\n\n\ndef test_dies():\n"
              "    resolve([Instruction('system', 'a', 'allow')])\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    "exits": "import os\n\nos._exit(3)\n",
    "garbles": "import os\n\n\ndef test_garbles():\n    for fd in range(3, 20):\n        try:\n"
               "            os.write(fd, b'\\xff' * 64)\n        except OSError:\n            pass\n",
}


def test_a_transfer_test_whose_process_dies_is_ended_with_how_never_a_timeout(tmp_path: Path) -> None:
    """Graded on the reference, each loses the transfer points as "ended", with the exit status or signal the judge saw
    (before: "timeout" for the broken link, and "error: no line … named" for the other two, which hid the cause)."""
    for name, source in TRANSFER_THAT_DIES.items():
        home = tmp_path / "class" / name
        shutil.copytree(ROOT / "forge", home / "forge", ignore=shutil.ignore_patterns("__pycache__"))
        for module in (ROOT / "solutions" / "forge").glob("*.py"):
            shutil.copyfile(module, home / "forge" / module.name)
        (home / "transfer").mkdir()
        (home / STAGE.transfer_file).write_text(source, encoding="utf-8")
    done = run_cli(ROOT, "grade", *sorted(str(p) for p in (tmp_path / "class").iterdir()), "--stages", "01",
                   "--out", str(tmp_path / "out"), timeout=600)
    assert done.returncode == 0, done.output
    with (tmp_path / "out" / "gradebook.csv").open(encoding="utf-8") as table:
        rows = {row["submission"]: row for row in csv.DictReader(table) if row["item"] == "transfer"}
    assert {name: rows[name]["outcome"] for name in TRANSFER_THAT_DIES} == dict.fromkeys(TRANSFER_THAT_DIES, "ended"), rows
    assert "test_dies ended: this test started, but the process that ran it ended without reporting its result (ended " \
        "by signal SIGKILL)" in rows["killed"]["reason"], rows["killed"]
    assert "ended before it reported anything (exit status 3)" in rows["exits"]["reason"], rows["exits"]
    assert "test_garbles ended: your test's process stopped talking to the judge" in rows["garbles"]["reason"]
    assert not any("timeout" in row["reason"] for row in rows.values()), rows


def test_the_feedback_page_says_the_process_ended() -> None:
    from forgelab.grading import feedback

    row = GradeItem("eva", "01", "stage_tests", 0, 40, "ended", "ended: exit status 3")
    for lang, words in (("en", "Your code&#39;s process ended"), ("zh", "你的代码所在的进程结束了")):
        page = feedback.page(COURSE, "eva", "", [row], lang)
        assert words in page, lang


# ---------------------------------------------------------------- ids that name a place, refused before grading


@pytest.mark.parametrize(("name", "why"), [
    ("...zip", "'..' is a name of dots only, which names a folder, not a learner"),
    ("..zip", "'.' is a name of dots only"),
    (" .zip", "it is empty or blank"),
    ("a\\b.zip", "holds a slash or backslash, so it reads as a path"),
    ("x\ny.zip", "holds characters that cannot be printed"),
])
def test_an_id_that_names_a_place_is_refused_before_grading(tmp_path: Path, name: str, why: str) -> None:
    archive = tmp_path / name
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("forge/__init__.py", "")
    with pytest.raises(submission.SubmissionError) as refused:
        submission.discover([str(archive)])
    assert why in str(refused.value) and "rename it to the learner's name" in str(refused.value), str(refused.value)


def test_grade_refuses_the_id_dot_dot_with_a_next_step(tmp_path: Path) -> None:
    archive = tmp_path / "...zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("forge/__init__.py", "")
    done = run_cli(ROOT, "grade", str(archive), "--out", str(tmp_path / "out"), "--stages", "01")
    assert done.returncode == 2, done.output
    assert "cannot be graded under its name: '..' is a name of dots only" in done.stderr, done.stderr
    assert not (tmp_path / "out" / "gradebook.sqlite").exists()  # refused before grading
