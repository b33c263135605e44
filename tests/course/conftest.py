"""Fixtures for the course's own tests: a disposable copy of the workbook and a CLI runner."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COPY_IGNORE = shutil.ignore_patterns(".venv", ".git", "build", "labs", "evidence", ".forgelab", "__pycache__",
                                     "*.pyc", "test-artifacts", ".hypothesis", "node_modules")


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass(frozen=True)
class WorkbookCopy:
    root: Path

    def run(self, *args: str, env: dict[str, str] | None = None, timeout: int = 120) -> CliResult:
        return run_cli(self.root, *args, env=env, timeout=timeout)

    def evidence(self, key: str) -> dict:
        path = self.root / "evidence" / "prompt-context-output" / key / "verification.json"
        return json.loads(path.read_text(encoding="utf-8"))

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path


def cli_env(root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGELAB_", "PYTEST_XDIST", "PYTEST_CURRENT"))}
    env["FORGELAB_ROOT"] = str(root)
    env["FORGELAB_WIDTH"] = "200"
    env.update(extra or {})
    return env


def run_cli(root: Path, *args: str, env: dict[str, str] | None = None, timeout: int = 120) -> CliResult:
    done = subprocess.run([sys.executable, "-m", "forgelab.cli", *args], cwd=root, env=cli_env(root, env),
                          capture_output=True, text=True, timeout=timeout)
    return CliResult(done.returncode, done.stdout, done.stderr)


_PRISTINE: list[Path] = []


def pristine_starters() -> Path:
    """``forge/`` and ``transfer/`` as committed (or, outside git, as they are), exported once per test process."""
    if not _PRISTINE:
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="forge-pristine-"))
        done = subprocess.run(["git", "archive", "--format=tar", "HEAD", "forge", "transfer"], cwd=ROOT,
                              capture_output=True, timeout=120, check=False)
        if done.returncode == 0:
            import io
            import tarfile

            with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
                archive.extractall(folder, filter="data")
        else:
            for name in ("forge", "transfer"):
                shutil.copytree(ROOT / name, folder / name, ignore=COPY_IGNORE)
        _PRISTINE.append(folder)
    return _PRISTINE[0]


def copy_workbook(destination: Path) -> WorkbookCopy:
    """A copy of the course repository without git: it carries the pristine starters in course/starters/,
    as the learner bundle does, so the judge's course definitions never come from a test's broken forge/."""
    shutil.copytree(ROOT, destination, ignore=COPY_IGNORE)
    shutil.copytree(pristine_starters(), destination / "course" / "starters", dirs_exist_ok=True)
    return WorkbookCopy(destination)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture
def workbook(tmp_path: Path) -> WorkbookCopy:
    """A fresh copy of the workbook (course material + starters + solutions) to change freely."""
    return copy_workbook(tmp_path / "workbook")


@pytest.fixture(scope="session")
def course():  # type: ignore[no-untyped-def]
    from forgelab.core.registry import load_course

    return load_course(ROOT)


@pytest.fixture(scope="session")
def verification_validator() -> Callable[[dict], None]:
    import jsonschema

    from forgelab.core.evidence import schema

    validator = jsonschema.Draft202012Validator(schema(), format_checker=jsonschema.FormatChecker())

    def validate(document: dict) -> None:
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
        assert not errors, "; ".join(f"{list(e.path)}: {e.message}" for e in errors)

    return validate
