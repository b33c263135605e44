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


def test_forgelabs_own_start_up_hook_does_not_run_in_the_sandbox_and_site_packages_still_import(tmp_path) -> None:
    """The editable install's .pth (an import hook for folders no sandbox mounts) is empty inside; pydantic, from the
    same site-packages, still imports in a forge module, and the other .pth files still run."""
    if not sandbox.isolation(SandboxMode.AUTO).sandboxed:
        pytest.skip("bubblewrap cannot start on this machine")
    hooks = sandbox.own_start_up_files()
    if not hooks:
        pytest.skip("forgelab is not installed in editable mode here")
    site_packages = hooks[0].parent
    others = sorted(path.name for path in site_packages.glob("*.pth") if path not in hooks)
    code = tmp_path / "code"
    (code / "forge").mkdir(parents=True)
    (code / "forge" / "__init__.py").write_text("", encoding="utf-8")
    (code / "forge" / "models.py").write_text("import pydantic\n\nclass Item(pydantic.BaseModel):\n    n: int\n",
                                              encoding="utf-8")
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); from forge.models import Item; print(Item(n=2).n);"
             "print(any('__editable__' in str(e) for e in [*sys.path, *map(type, sys.meta_path)]));"
             "print(sorted(sys.modules).count('_distutils_hack'))")
    argv = [sys.executable, "-s", "-P", "-c", probe, sandbox.CODE_MOUNT]
    bwrap = sandbox.isolation(SandboxMode.AUTO).bwrap
    done = subprocess.run(sandbox.bwrap_command(bwrap, code, argv), capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    assert lines[:2] == ["2", "False"]  # pydantic imports; the hook is neither on the path nor a finder
    if "distutils-precedence.pth" in others:  # setuptools' own start-up file still runs
        assert lines[2] == "1"
    assert hooks[0].read_text(encoding="utf-8").strip()  # outside, the installation is untouched
