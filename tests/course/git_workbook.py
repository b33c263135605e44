"""A disposable *git repository* of the workbook, for the tools that read the committed course.

``git_workbook(destination)`` clones the course repository (so the history is there), lays the
working tree under test over the clone (the same files the ``workbook`` fixture copies) and commits
it: the clone's ``HEAD`` is the course as it is being tested, and /work/main itself is never written.
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import time
from pathlib import Path

from conftest import COPY_IGNORE, ROOT, WorkbookCopy, start_cli

IDENTITY = {"GIT_AUTHOR_NAME": "course tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
            "GIT_COMMITTER_NAME": "course tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid"}


def git(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(IDENTITY, LC_ALL="C")
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def commit_all(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def git_workbook(destination: Path) -> WorkbookCopy:
    git(ROOT.parent, "clone", "--quiet", str(ROOT), str(destination))
    shutil.copytree(ROOT, destination, ignore=COPY_IGNORE, dirs_exist_ok=True)
    for tracked in git(destination, "ls-files", "-z").split("\0"):
        if tracked and not (ROOT / tracked).exists():
            (destination / tracked).unlink(missing_ok=True)  # deleted in the working tree under test
    commit_all(destination, "the working tree under test")
    return WorkbookCopy(destination)


def run_in_terminal(root: Path, *args: str, answer: str, timeout: float = 120) -> tuple[int, str]:
    """Run ``forgelab ARGS`` with a pseudo-terminal as stdin/stdout; type ``answer`` when it asks. (status, output)"""
    main, child = pty.openpty()
    process = start_cli(root, *args, stdin=child, stdout=child, stderr=child, close_fds=True, text=False)
    os.close(child)
    output = b""
    answered = False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(main, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                output += chunk
                if not answered and b"[y/N]" in output:
                    os.write(main, answer.encode() + b"\n")
                    answered = True
            elif process.poll() is not None:
                break
        status = process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(main)
    return status, output.decode("utf-8", "replace").replace("\r\n", "\n")
