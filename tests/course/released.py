"""The learner bundle of the working tree under test, released once per edition per test run and shared.

Releasing is one of the suite's slowest steps (the leak check, the sealed labs, the page), and eight modules need the
same bundle: the learner's own commands, the starters, the release's contents, the checkpoint packs' refusals,
JupyterLab in both editions, the Chinese CLI and the class hub. :func:`released_zip` builds each edition's zip once —
in the folder every xdist worker of one run shares (the parent of each worker's base temporary folder), under a file
lock, so the worker that comes second waits for the first and reads its zip. The zip is only read: each test unzips
its own copy (:func:`unzip`). A test about releasing itself (reproducibility, refusals, a changed tree) still builds
its own bundle.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from filelock import FileLock
from git_workbook import git_workbook

from forgelab.authoring.release.bundle import BUNDLE_NAME, build_bundle, zip_name


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


def released_zip(factory: pytest.TempPathFactory, language: str = "en") -> Path:
    """The bundle zip of ``language`` released from :func:`released_course` (built once per run)."""
    shared = _shared(factory)
    with FileLock(str(shared / "release.lock")):
        zipped = shared / language / zip_name(language)
        if not zipped.is_file():
            built = build_bundle(_course(shared), shared / language, language).path
            assert built == zipped, (built, zipped)
        return zipped


def unzip(zipped: Path, into: Path) -> Path:
    """``zipped`` unzipped into ``into`` the way a learner unzips it; the bundle's root folder."""
    with zipfile.ZipFile(zipped) as archive:
        archive.extractall(into)
    return into / BUNDLE_NAME
