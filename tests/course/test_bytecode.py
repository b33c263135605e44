"""make install compiles the bytecode of what the command line and the judge load (forgelab/cli/bytecode.py): the
judge's sessions write none (PYTHONDONTWRITEBYTECODE), so without it every check compiled pytest and Hypothesis
from source. It compiles whole packages (a lazily imported submodule too), in the venv and forgelab only."""

from __future__ import annotations

import importlib.util
import marshal
import os
import py_compile
import shutil
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


TEST_MODULE = "def test_sum():\n    total = 1 + 1\n    assert total == 3\n"
NO_REWRITING = ("import _pytest.assertion.rewrite as rewrite\n\n\n"
                "def refuse(*args, **kwargs):\n    raise RuntimeError('pytest rewrote a test module itself')\n\n\n"
                "rewrite._rewrite_test = refuse\n")


def run_like_the_session(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest as the judge's trusted session runs it: no bytecode written, no plugin autoload, importlib mode."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
           "PYTHONPATH": str(folder)}
    env.pop("PYTHONPYCACHEPREFIX", None)
    return subprocess.run([sys.executable, "-P", "-m", "pytest", "-p", "no:cacheprovider", "--import-mode=importlib",
                           "-q", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_the_course_tests_get_the_assert_rewritten_bytecode_pytest_would_write(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Grading imports the same course test files in every submission's session: pytest's rewritten bytecode of each
    is written beside every copy (forgelab/judge/bytecode.py), rewritten once per process, and the session uses it."""
    from forgelab.judge import bytecode

    ours, pytests = tmp_path / "ours" / "tests", tmp_path / "pytests" / "tests"
    for folder in (ours, pytests):
        folder.mkdir(parents=True)
        (folder / "test_sum.py").write_text(TEST_MODULE, encoding="utf-8")
    (tmp_path / "ours" / "no_rewriting.py").write_text(NO_REWRITING, encoding="utf-8")
    # what pytest writes itself when it may (the same source, in a folder of its own)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    subprocess.run([sys.executable, "-P", "-m", "pytest", "-p", "no:cacheprovider", "--import-mode=importlib", "-q",
                    str(pytests / "test_sum.py")], cwd=pytests, env={**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
                   capture_output=True, timeout=300, check=False)
    [written_by_pytest] = (pytests / "__pycache__").iterdir()

    bytecode.rewritten_beside(ours / "test_sum.py")
    [written] = (ours / "__pycache__").iterdir()
    assert written.name == written_by_pytest.name
    # the same code (the file name inside differs: pytest points it at the copy it imports, as importlib does)
    assert marshal.loads(written.read_bytes()[16:]).co_code == marshal.loads(written_by_pytest.read_bytes()[16:]).co_code
    assert written.read_bytes()[:16] == written_by_pytest.read_bytes()[:16]  # checked by the source's hash

    # the session imports it without rewriting anything, and the failed assert still says what it compared
    done = run_like_the_session(tmp_path / "ours", "-p", "no_rewriting", str(ours / "test_sum.py"))
    assert "1 failed" in done.stdout and "assert 2 == 3" in done.stdout, done.stdout + done.stderr
    first = written.read_bytes()
    written.unlink()
    done = run_like_the_session(tmp_path / "ours", "-p", "no_rewriting", str(ours / "test_sum.py"))
    assert "pytest rewrote a test module itself" in done.stdout, done.stdout  # the plugin above does refuse

    # once per process: a copy elsewhere gets the same file without a second rewrite
    monkeypatch.setattr(bytecode, "_rewrite", lambda path: pytest.fail("rewritten twice"))
    elsewhere = tmp_path / "elsewhere" / "test_sum.py"
    elsewhere.parent.mkdir()
    elsewhere.write_text(TEST_MODULE, encoding="utf-8")
    bytecode.rewritten_beside(elsewhere)
    assert [path.read_bytes() for path in (elsewhere.parent / "__pycache__").iterdir()] == [first]
    # a copy that differs from the source it was rewritten from: pytest checks the hash and rewrites it itself
    elsewhere.write_text(TEST_MODULE.replace("3", "2"), encoding="utf-8")
    done = run_like_the_session(elsewhere.parent, str(elsewhere))
    assert "1 passed" in done.stdout, done.stdout + done.stderr


def test_the_rewritten_bytecode_is_kept_for_the_next_process_and_is_only_ever_a_head_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Given the workbook's cache, the rewritten bytecode of a course test file is kept there (named by the file's
    SHA-256 and pytest's own name tail), and a later process writes it beside its copies without rewriting. A kept
    file that is damaged changes no verdict: pytest checks what it finds against the source and rewrites it."""
    from forgelab.judge import bytecode

    keep = tmp_path / "cache" / "rewritten"
    first = tmp_path / "first" / "test_sum.py"
    first.parent.mkdir()
    first.write_text(TEST_MODULE, encoding="utf-8")
    monkeypatch.setattr(bytecode, "_REWRITTEN", {})  # a process that has rewritten nothing yet
    bytecode.rewritten_beside(first, keep)
    [written] = (first.parent / "__pycache__").iterdir()
    [kept] = keep.iterdir()
    assert kept.read_bytes() == written.read_bytes() and kept.name.startswith(hashlib_hex(TEST_MODULE))
    assert kept.name.endswith(written.name[len("test_sum"):])  # pytest's tail: Python's cache tag, pytest's version

    # the next process: nothing rewritten in it yet, and it does not rewrite
    monkeypatch.setattr(bytecode, "_REWRITTEN", {})
    monkeypatch.setattr(bytecode, "_rewrite", lambda path: pytest.fail("rewritten although it was kept"))
    second = tmp_path / "second" / "test_sum.py"
    second.parent.mkdir()
    second.write_text(TEST_MODULE, encoding="utf-8")
    bytecode.rewritten_beside(second, keep)
    assert [path.read_bytes() for path in (second.parent / "__pycache__").iterdir()] == [written.read_bytes()]
    done = run_like_the_session(second.parent, str(second))
    assert "1 failed" in done.stdout and "assert 2 == 3" in done.stdout, done.stdout + done.stderr

    # a damaged kept file: written beside the copy as it is, and pytest rewrites the module itself
    kept.write_bytes(b"not bytecode at all")
    monkeypatch.setattr(bytecode, "_REWRITTEN", {})
    third = tmp_path / "third" / "test_sum.py"
    third.parent.mkdir()
    third.write_text(TEST_MODULE, encoding="utf-8")
    bytecode.rewritten_beside(third, keep)
    done = run_like_the_session(third.parent, str(third))
    assert "1 failed" in done.stdout and "assert 2 == 3" in done.stdout, done.stdout + done.stderr
    assert not [path for path in keep.iterdir() if path.name.startswith(".writing-")]


def hashlib_hex(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_grading_and_watch_sessions_get_the_rewritten_bytecode_and_other_runs_do_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A grading job's session and a session given a warm worker (watch mode) find pytest's rewritten bytecode beside
    their copies of the course's test files when they start; a cold check's does not."""
    from forgelab.judge import core, starters
    from forgelab.judge.sandbox import Isolation
    from forgelab.judge.settings import DEFAULT

    (tmp_path / "course" / "tests").mkdir(parents=True)
    (tmp_path / "course" / "tests" / "test_sum.py").write_text(TEST_MODULE, encoding="utf-8")
    (tmp_path / "course" / "tests" / "helper.py").write_text("X = 1\n", encoding="utf-8")
    seen: list[list[str]] = []

    def written() -> list[str]:
        return sorted(path.name for path in (tmp_path / "run" / "tests").rglob("*.pyc"))

    def session(command: list[str], **kwargs: object) -> starters.Watched:  # not started: only its folder is seen
        seen.append(written())
        return starters.Watched(0, None, "", 0.0)

    class Warm:  # a worker that is busy: the judge then starts the cold session
        def run(self, args: list[str], **kwargs: object) -> None:
            seen.append(written())

    monkeypatch.setattr(starters, "run_watched", session)
    monkeypatch.setattr(core.early, "take", lambda: None)
    for rewritten, warm in ((True, None), (False, None), (False, Warm())):
        shutil.rmtree(tmp_path / "run", ignore_errors=True)
        (tmp_path / "run").mkdir()
        job = core.Job(tmp_path / "course", tmp_path, (), (core.TargetSpec("sub-01", ()),),
                       (core.CourseTests("sub-01", ("tests/test_sum.py", "tests/helper.py")),), rewritten_tests=rewritten)
        core._course_session(job, DEFAULT, Isolation(False, "", "test"), tmp_path / "run", {"sub-01": tmp_path},
                             tmp_path / "interface", warm=warm)  # type: ignore[arg-type]
    grading, cold, watch, after_watch = seen
    assert grading and all(name.startswith("test_sum.") and "-pytest-" in name for name in grading)
    assert cold == []
    assert watch == after_watch == grading

def test_in_the_course_repository_what_grading_loads_is_compiled_too(tmp_path: Path) -> None:
    """`forgelab grade` runs in the course repository (its instructor/ folder), and each grading run imported about 400
    modules of the similarity check (copydetect, NumPy) and of the class report's plots (Matplotlib) that no check
    loads: where bytecode is not written they were compiled from source again by every run."""
    import copydetect.detector
    import matplotlib.figure

    from forgelab.cli.bytecode import grades_here

    assert grades_here()  # this is the course repository; a learner bundle has no instructor/
    sources = [Path(copydetect.detector.__file__), Path(matplotlib.figure.__file__)]
    for source in sources:
        Path(importlib.util.cache_from_source(str(source))).unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-m", "forgelab.cli.bytecode"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert [source.name for source in sources if not fresh(source)] == []
