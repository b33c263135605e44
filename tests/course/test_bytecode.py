"""make install compiles the bytecode of what the command line and the judge load (forgelab/cli/bytecode.py): the
judge's sessions write none (PYTHONDONTWRITEBYTECODE), so without it every check compiled pytest and Hypothesis
from source. It compiles whole packages (a lazily imported submodule too), in the venv and forgelab only."""

from __future__ import annotations

import importlib.util
import py_compile
import subprocess
import sys
from pathlib import Path

import _pytest.python
import hypothesis
import pytest

from conftest import ROOT

import forgelab.judge.session_plugin
import forgelab.learner.workbench

LAZY = Path(hypothesis.__file__).parent / "extra" / "pandas" / "impl.py"  # imported by no check: its package is
# forgelab is compiled whole: the learner's tools, which `check` imports lazily after start-up, too
SOURCES = [Path(_pytest.python.__file__), Path(forgelab.judge.session_plugin.__file__), LAZY,
           Path(forgelab.learner.workbench.__file__)]


def fresh(source: Path) -> bool:
    """A bytecode file exists for ``source`` and was compiled from it as it is now (mtime and size)."""
    cached = Path(importlib.util.cache_from_source(str(source)))
    if not cached.is_file():
        return False
    header = cached.read_bytes()[:16]
    stat = source.stat()
    return (int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF)


def test_the_packages_the_judge_loads_are_compiled_whole_and_the_workbook_is_not(tmp_path: Path) -> None:
    for source in SOURCES:
        Path(importlib.util.cache_from_source(str(source))).unlink(missing_ok=True)
    assert not any(fresh(source) for source in SOURCES)
    done = subprocess.run([sys.executable, "-m", "forgelab.cli.bytecode"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("bytecode compiled for "), done.stdout
    assert [source.name for source in SOURCES if not fresh(source)] == []
    from forgelab.cli.bytecode import loaded_packages

    forge = (ROOT / "forge").resolve()  # the learner's code is never compiled here, even when it was imported
    assert all(path != forge and forge not in path.parents for path in loaded_packages())


def test_registering_the_commands_loads_no_grading_tool() -> None:
    """The command line's start-up (every cold check pays it): `grade report`'s --min-class default is read from
    forgelab.grading, not from the report module that imports the whole gradebook."""
    probe = ("import sys; from forgelab.cli.main import build_parser; build_parser(); "
             "print(sorted(name for name in sys.modules if name.startswith('forgelab.grading.')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_the_judge_copies_its_modules_with_bytecode_checked_by_the_source_hash(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The host's wire module, the tester's forgelab modules and the course's interface are copied into a new folder
    every run, read-only in the sandbox: their bytecode goes with them (forgelab/judge/bytecode.py), compiled once."""
    from forgelab.judge import channel

    first, second = tmp_path / "one", tmp_path / "two"
    for folder in (first, second):
        folder.mkdir()
    channel.install_host_files(first)
    cached = Path(importlib.util.cache_from_source(str(first / "_judge_wire.py")))
    assert cached.is_file() and int.from_bytes(cached.read_bytes()[4:8], "little") == 0b11  # by hash, checked
    assert not Path(importlib.util.cache_from_source(str(first / "_judge_host.py"))).exists()  # a script: never
    monkeypatch.setattr(py_compile, "compile", lambda *args, **kwargs: pytest.fail("compiled twice"))
    channel.install_host_files(second)  # the same source elsewhere: the bytecode compiled for the first copy
    assert Path(importlib.util.cache_from_source(str(second / "_judge_wire.py"))).read_bytes() == cached.read_bytes()
    monkeypatch.undo()
    (second / "_judge_wire.py").write_text("VALUE = 'changed after the copy'\n", encoding="utf-8")
    probe = "import sys; sys.path.insert(0, sys.argv[1]); import _judge_wire; print(getattr(_judge_wire, 'VALUE', '-'))"
    done = subprocess.run([sys.executable, "-B", "-c", probe, str(second)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "changed after the copy"  # a source that differs is not run from stale bytecode
