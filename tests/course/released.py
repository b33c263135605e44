"""The learner bundle of the working tree under test, released once per edition per test run and shared.

Releasing is one of the suite's slowest steps (the leak check, the sealed labs, the page), and nine modules need the
same bundle: the learner's own commands, the starters, the release's contents and its report, the reference outputs,
the checkpoint packs' refusals, JupyterLab in both editions, the Chinese CLI and the class hub. :func:`released_zip`
builds each edition's zip once, with ``forgelab release`` as an author runs it in a fresh clone — in the folder every
xdist worker of one run shares (the parent of each worker's base temporary folder), under a file lock, so the worker
that comes second waits for the first and reads its zip; :func:`released_report` is what that command printed. The
zip is only read: each test unzips its own copy (:func:`unzip`). A test about releasing itself (reproducibility,
refusals, a changed tree) still builds its own bundle. The site modules publish the course page with its bundles
several times over: :func:`bundles_built_once` builds each of those bundles once per run too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CliResult, run_cli
from filelock import FileLock
from git_workbook import git_workbook

from forgelab.authoring.release.bundle import BUNDLE_NAME, Bundle, zip_name


def _shared(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "released"
    folder.mkdir(exist_ok=True)
    return folder


def _course(shared: Path) -> Path:
    course = shared / "course"
    if not (course / ".git").is_dir():
        git_workbook(course)
    return course


def released_course(factory: pytest.TempPathFactory) -> Path:
    """The git clone the shared bundles are released from (:func:`git_workbook` of the working tree under test): read
    it, never write into it."""
    shared = _shared(factory)
    with FileLock(str(shared / "release.lock")):
        return _course(shared)


def _released(factory: pytest.TempPathFactory, language: str) -> tuple[Path, CliResult]:
    shared = _shared(factory)
    with FileLock(str(shared / "release.lock")):
        zipped, report = shared / language / zip_name(language), shared / f"release-{language}.json"
        if not report.is_file():
            out = shared / language
            edition = () if language == "en" else ("--lang", language)  # English: the command as the docs show it
            done = run_cli(_course(shared), "release", *edition, "--out", str(out), timeout=900)
            assert done.returncode == 0, f"forgelab release {' '.join(edition)}: {done.output[-3000:]}"
            assert sorted(out.iterdir()) == [zipped], sorted(out.iterdir())
            report.write_text(json.dumps(dataclasses.asdict(done)), encoding="utf-8")
        return zipped, CliResult(**json.loads(report.read_text(encoding="utf-8")))


def released_zip(factory: pytest.TempPathFactory, language: str = "en") -> Path:
    """The bundle zip of ``language``, released by ``forgelab release [--lang LANGUAGE]`` in :func:`released_course`
    (once per run)."""
    return _released(factory, language)[0]


def released_report(factory: pytest.TempPathFactory, language: str = "en") -> CliResult:
    """What ``forgelab release [--lang LANGUAGE]`` printed when it built :func:`released_zip` (its exit status was 0)."""
    return _released(factory, language)[1]


def unzip(zipped: Path, into: Path) -> Path:
    """``zipped`` unzipped into ``into`` the way a learner unzips it; the bundle's root folder."""
    with zipfile.ZipFile(zipped) as archive:
        archive.extractall(into)
    return into / BUNDLE_NAME


def _bundle_key(root: Path, language: str) -> str:
    """What a bundle of ``root`` is made from: its HEAD and the working-tree changes the bundle reports (left out)."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=60, check=True)
    status = subprocess.run(["git", "status", "--porcelain=v1", "--untracked-files=all"], cwd=root, capture_output=True,
                            timeout=60, check=True)
    return hashlib.sha256(b"\0".join([str(root.resolve()).encode(), head.stdout.encode(), status.stdout,
                                      language.encode()])).hexdigest()[:24]


@contextlib.contextmanager
def bundles_built_once(factory: pytest.TempPathFactory) -> Iterator[None]:
    """Inside it, ``publish_site`` (the site modules publish the working tree under test again and again: one or both
    editions, in either order, and once more to compare) gets each edition's bundle of one HEAD built once per run and
    copied after that: ``build_bundle`` is deterministic — the same commit gives the same bytes, which
    test_release.py proves on a second clone — so a copy is what a second build would write. The first build of each
    is the real one, in the folder all workers share, under the lock."""
    from forgelab.authoring import publish

    real = publish.build_bundle
    shared = _shared(factory) / "published"
    shared.mkdir(exist_ok=True)

    def once(root: Path, out_dir: Path, language: str = "en") -> Bundle:
        key = _bundle_key(root, language)
        kept, facts = shared / f"{key}.zip", shared / f"{key}.json"
        with FileLock(str(shared / f"{key}.lock")):
            if not facts.is_file():
                built = real(root, shared / key, language)
                shutil.copyfile(built.path, kept)
                facts.write_text(json.dumps({**dataclasses.asdict(built), "path": built.path.name}), encoding="utf-8")
        fields = json.loads(facts.read_text(encoding="utf-8"))
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / fields.pop("path")
        shutil.copyfile(kept, path)
        return Bundle(path=path, **{name: tuple(value) if isinstance(value, list) else value
                                    for name, value in fields.items()})

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(publish, "build_bundle", once)
        yield
