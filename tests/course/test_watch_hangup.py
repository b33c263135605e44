"""Closing the terminal while `forgelab watch` runs (SIGHUP) ends it as Ctrl-C does (issue 32): the warm worker and
its /tmp/forgelab-warm-* folder are gone. Before, SIGHUP's default ended the process at once and left the folder."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pexpect

from conftest import WorkbookCopy, cli_command, cli_env, wait_until

WAIT_S = 240  # one check on a crowded 2-CPU machine, with room to spare


def test_a_closed_terminal_leaves_no_warm_folder(workbook: WorkbookCopy, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = cli_env(workbook.root, {"FORGE_LANG": "en", "TERM": "xterm", "TMPDIR": str(scratch)})
    program, *argv = cli_command("watch", "01")
    child = pexpect.spawn(program, argv, cwd=str(workbook.root), env=env, encoding="utf-8", timeout=WAIT_S,
                          dimensions=(60, 200))
    try:
        child.expect("watching forge/instructions.py")  # the first whole check is on screen, the worker is up
        assert [p.name for p in scratch.iterdir() if p.name.startswith("forgelab-warm-")], "no warm worker started"
        os.kill(child.pid, signal.SIGHUP)  # what the terminal's end sends its session leader
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    wait_until(lambda: not [p for p in scratch.iterdir() if p.name.startswith("forgelab-warm-")] or None,
               timeout=30, what="the warm worker's folder gone")
