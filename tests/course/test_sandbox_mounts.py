"""The sandbox mounts what learner code needs wherever it is installed — also a venv under /tmp."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from forgelab.judge import sandbox
from forgelab.judge.settings import SandboxMode


def test_a_python_installation_under_tmp_is_visible_inside_the_sandbox(tmp_path, monkeypatch) -> None:
    if not sandbox.isolation(SandboxMode.AUTO).sandboxed:
        pytest.skip("bubblewrap cannot start on this machine")
    fake_root = tmp_path / "venv"  # pytest's tmp_path lives under /tmp, like a fresh clone's .venv in CI
    (fake_root / "lib").mkdir(parents=True)
    (fake_root / "lib" / "marker.txt").write_text("installed", encoding="utf-8")
    real_roots = sandbox._python_roots()
    monkeypatch.setattr(sandbox, "_python_roots", lambda: [*real_roots, fake_root])
    code = tmp_path / "code"
    code.mkdir()
    (tmp_path / "secret.txt").write_text("not for learners", encoding="utf-8")
    probe = ("import pathlib, sys; print(pathlib.Path(sys.argv[1]).read_text());"
             "print(pathlib.Path(sys.argv[2]).exists())")
    argv = [sys.executable, "-s", "-c", probe, str(fake_root / "lib" / "marker.txt"), str(tmp_path / "secret.txt")]
    bwrap = sandbox.isolation(SandboxMode.AUTO).bwrap
    done = subprocess.run(sandbox.bwrap_command(bwrap, code, argv), capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["installed", "False"]  # the installation is there; its neighbours are not
