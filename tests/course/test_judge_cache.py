"""Shared caches of the judge (judge/cache.py): built once, atomically, whoever asks first.

The starter cache (the course's ``forge/`` as committed at HEAD, exported under ``.forgelab/starters/``)
was once built under a scratch name made from the process id, which two grading threads of one process
share: the first ``grade --jobs 2`` on a fresh clone failed a correct submission with ``FileExistsError``.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from git_workbook import commit_all, git

from forgelab.verdicts import jobs
from forgelab.judge.cache import build_once
from forgelab.core.paths import Workbook


def _tiny_repo(root: Path) -> Workbook:
    (root / "forge").mkdir(parents=True)
    for index in range(40):
        (root / "forge" / f"module_{index:02d}.py").write_text(f"VALUE = {index}\n" * 200, encoding="utf-8")
    (root / "forge" / "__init__.py").write_text("", encoding="utf-8")
    git(root, "init", "--quiet")
    commit_all(root, "starters")
    return Workbook(root, root)


def _together(count: int, work: Callable[[], Path]) -> tuple[list[Path], list[str]]:
    barrier = threading.Barrier(count)
    results: list[Path] = []
    errors: list[str] = []

    def one() -> None:
        barrier.wait()
        try:
            results.append(work())
        except Exception as error:  # noqa: BLE001 - every failure is the test's finding
            errors.append(repr(error))

    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results, errors


def test_threads_of_one_process_build_the_starter_cache_once(tmp_path: Path) -> None:
    workbook = _tiny_repo(tmp_path / "course")
    results, errors = _together(8, lambda: jobs.starters(workbook))
    assert errors == []
    assert len(set(results)) == 1 and len(results) == 8
    folder = results[0]
    assert folder.parent == workbook.state_dir / "starters"
    assert len(list((folder / "forge").glob("*.py"))) == 41  # complete, not a half-extracted scratch
    # no scratch folder is left beside it, only the lock file
    assert sorted(path.name for path in folder.parent.iterdir() if not path.name.endswith(".lock")) == [folder.name]


def test_processes_build_the_starter_cache_once(tmp_path: Path) -> None:
    workbook = _tiny_repo(tmp_path / "course")
    code = ("import sys; from pathlib import Path; from forgelab.core.paths import Workbook; from forgelab.verdicts import jobs; "
            "root = Path(sys.argv[1]); print(jobs.starters(Workbook(root, root)))")
    started = [subprocess.Popen([sys.executable, "-c", code, str(workbook.root)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(4)]
    answers = [process.communicate(timeout=120) for process in started]
    assert [process.returncode for process in started] == [0] * 4, [err for _, err in answers]
    assert len({out.strip() for out, _ in answers}) == 1


def test_a_builder_that_fails_leaves_nothing_and_the_next_one_builds(tmp_path: Path) -> None:
    final = tmp_path / "cache" / "thing"

    def broken(scratch: Path) -> None:
        (scratch / "half").write_text("half", encoding="utf-8")
        raise RuntimeError("the builder broke")

    with pytest.raises(RuntimeError, match="the builder broke"):
        build_once(final, broken)
    assert not final.exists()
    assert [path.name for path in final.parent.iterdir() if not path.name.endswith(".lock")] == []
    calls: list[int] = []

    def good(scratch: Path) -> None:
        calls.append(1)
        (scratch / "whole").write_text("whole", encoding="utf-8")

    results, errors = _together(6, lambda: build_once(final, good))
    assert errors == [] and set(results) == {final}
    assert calls == [1]  # the others waited and reused it
    assert (final / "whole").read_text(encoding="utf-8") == "whole"
