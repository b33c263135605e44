"""`forgelab starter NN` and `forgelab.core.starters`: a wrecked starter can always be brought back, with a backup.

In the learner bundle the pristine starters come from ``course/starters/``; in the course
repository from ``git show HEAD:...``; elsewhere there is a clear error.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import pytest

from conftest import CliResult, bundle_env, copy_workbook, run_cli
from git_workbook import git, git_workbook, run_in_terminal
from released import released_zip

from forgelab.authoring.release.bundle import BUNDLE_NAME
from forgelab.core.starters import StarterError, pristine_starters_dir, starter_source

MODULE = "forge/instructions.py"
TRANSFER = "transfer/test_01_instruction_hierarchy.py"
WRECK = "def rank_of(:\n    this is not python\n"


# The repository and its bundle are module fixtures: made once per run only if the module keeps to one xdist worker
# (make test runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("starters")


@pytest.fixture(scope="module")
def bundle_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return released_zip(tmp_path_factory)


@pytest.fixture
def unzipped(bundle_zip: Path, tmp_path: Path) -> Path:
    """A fresh unzipped bundle for each test (they write into it)."""
    with zipfile.ZipFile(bundle_zip) as archive:
        archive.extractall(tmp_path / "fresh")
    return tmp_path / "fresh" / BUNDLE_NAME


def _in_bundle(root: Path, *args: str) -> CliResult:
    return run_cli(root, *args, bare_env=bundle_env(root), input="")


def _backup_name(stdout: str) -> str:
    return next(line.split()[-1] for line in stdout.splitlines() if line.startswith("backup of what was there:"))


# ---------------------------------------------------------------- starter_source


def test_starter_source_reads_the_shipped_copy_in_the_bundle(unzipped: Path) -> None:
    assert pristine_starters_dir(unzipped) == unzipped / "course" / "starters"
    (unzipped / MODULE).write_text(WRECK, encoding="utf-8")
    text = starter_source(unzipped, MODULE)
    assert text == (unzipped / "course" / "starters" / MODULE).read_text(encoding="utf-8")
    assert 'raise NotImplementedError("rank_of() is not implemented yet' in text
    assert starter_source(unzipped, TRANSFER).count("pytest.skip(") == 1


def test_starter_source_reads_git_head_in_the_course_repository(tmp_path: Path) -> None:
    repo = git_workbook(tmp_path / "course").root
    committed = (repo / MODULE).read_text(encoding="utf-8")
    (repo / MODULE).write_text((repo / "solutions" / MODULE).read_text(encoding="utf-8"), encoding="utf-8")
    assert pristine_starters_dir(repo) is None
    assert starter_source(repo, MODULE) == committed
    assert starter_source(repo, "forge/project/prompts/extractor.txt") == git(repo, "show", "HEAD:forge/project/prompts/extractor.txt")


def test_starter_source_without_bundle_or_git_says_what_to_do(tmp_path: Path) -> None:
    plain = copy_workbook(tmp_path / "plain").root
    shutil.rmtree(plain / "course" / "starters")  # the copy carries them, as a bundle would: take them away
    with pytest.raises(StarterError, match=r"no pristine starter for forge/instructions.py: .*course/starters/.*git"):
        starter_source(plain, MODULE)


@pytest.mark.parametrize("bad", ["solutions/forge/instructions.py", "forge/../solutions/forge/instructions.py",
                                 "/etc/passwd", "forge"])
def test_starter_source_refuses_paths_outside_the_starters(unzipped: Path, bad: str) -> None:
    with pytest.raises(StarterError, match="is not a starter path"):
        starter_source(unzipped, bad)


def test_a_bundle_without_that_starter_says_so(unzipped: Path) -> None:
    (unzipped / "course" / "starters" / MODULE).unlink()
    with pytest.raises(StarterError, match=r"ships no pristine starter for forge/instructions.py"):
        starter_source(unzipped, MODULE)


# ---------------------------------------------------------------- forgelab starter NN, in the bundle


def test_starter_restores_a_wrecked_module_after_a_backup(unzipped: Path) -> None:
    pristine = (unzipped / "course" / "starters" / MODULE).read_bytes()
    (unzipped / MODULE).write_text(WRECK, encoding="utf-8")
    done = _in_bundle(unzipped, "starter", "01", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (unzipped / MODULE).read_bytes() == pristine
    assert f"{MODULE}: differs from the starter" in done.stdout and f"restored {MODULE}" in done.stdout
    name = _backup_name(done.stdout)
    assert "starter-01" in name
    listing = _in_bundle(unzipped, "backup", "list")
    assert name in listing.stdout and "forge/ (" in listing.stdout
    undo = _in_bundle(unzipped, "backup", "restore", name, "--yes")
    assert undo.returncode == 0, undo.stderr
    assert (unzipped / MODULE).read_text(encoding="utf-8") == WRECK  # the wreck was kept


def test_starter_brings_back_a_deleted_module(unzipped: Path) -> None:
    (unzipped / MODULE).unlink()
    done = _in_bundle(unzipped, "starter", "01", "--yes")
    assert done.returncode == 0, done.stderr
    assert "missing now: it would be created" in done.stdout
    assert (unzipped / MODULE).read_bytes() == (unzipped / "course" / "starters" / MODULE).read_bytes()


def test_starter_without_a_terminal_and_without_yes_changes_nothing(unzipped: Path) -> None:
    (unzipped / MODULE).write_text(WRECK, encoding="utf-8")
    done = _in_bundle(unzipped, "starter", "01")
    assert done.returncode == 2
    assert "stdin is not a terminal" in done.stderr and "forgelab starter 01 --yes" in done.stderr
    assert (unzipped / MODULE).read_text(encoding="utf-8") == WRECK
    assert not (unzipped / ".forgelab" / "backups").exists()


def test_starter_asks_in_a_terminal(unzipped: Path) -> None:
    (unzipped / MODULE).write_text(WRECK, encoding="utf-8")
    status, output = run_in_terminal(unzipped, "starter", "01", answer="n")
    assert status == 1 and "[y/N]" in output and "nothing was changed" in output
    assert (unzipped / MODULE).read_text(encoding="utf-8") == WRECK
    status, output = run_in_terminal(unzipped, "starter", "01", answer="y")
    assert status == 0, output
    assert (unzipped / MODULE).read_bytes() == (unzipped / "course" / "starters" / MODULE).read_bytes()


def test_starter_of_an_untouched_module_does_nothing(unzipped: Path) -> None:
    done = _in_bundle(unzipped, "starter", "01")  # nothing to overwrite: no question, no backup
    assert done.returncode == 0, done.stderr
    assert "already the starter" in done.stdout and "nothing to do" in done.stdout
    assert not (unzipped / ".forgelab" / "backups").exists()


def test_starter_transfer_restores_only_the_transfer_test_and_backup_restore_undoes_it(unzipped: Path) -> None:
    mine = "def test_mine() -> None:\n    assert 1 + 1 == 2\n"
    (unzipped / TRANSFER).write_text(mine, encoding="utf-8")
    (unzipped / MODULE).write_text(WRECK, encoding="utf-8")
    done = _in_bundle(unzipped, "starter", "01", "--transfer", "--yes")
    assert done.returncode == 0, done.stderr
    assert (unzipped / TRANSFER).read_bytes() == (unzipped / "course" / "starters" / TRANSFER).read_bytes()
    assert (unzipped / MODULE).read_text(encoding="utf-8") == WRECK  # the module was not asked for
    name = _backup_name(done.stdout)
    assert re.search(rf"{re.escape(name)}\s+{re.escape(TRANSFER)}$", _in_bundle(unzipped, "backup", "list").stdout, re.M)
    undo = _in_bundle(unzipped, "backup", "restore", name, "--yes")
    assert undo.returncode == 0, undo.stderr
    assert (unzipped / TRANSFER).read_text(encoding="utf-8") == mine
    assert (unzipped / MODULE).read_text(encoding="utf-8") == WRECK


def test_starter_all_restores_module_and_transfer_test(unzipped: Path) -> None:
    (unzipped / TRANSFER).write_text("# mine\n", encoding="utf-8")
    (unzipped / MODULE).write_text(WRECK, encoding="utf-8")
    done = _in_bundle(unzipped, "starter", "01", "--all", "--yes")
    assert done.returncode == 0, done.stderr
    for relative in (MODULE, TRANSFER):
        assert (unzipped / relative).read_bytes() == (unzipped / "course" / "starters" / relative).read_bytes()
    undo = _in_bundle(unzipped, "backup", "restore", _backup_name(done.stdout), "--yes")
    assert undo.returncode == 0, undo.stderr
    assert (unzipped / TRANSFER).read_text(encoding="utf-8") == "# mine\n"
    assert (unzipped / MODULE).read_text(encoding="utf-8") == WRECK


def test_starter_rejects_an_unknown_stage(unzipped: Path) -> None:
    done = _in_bundle(unzipped, "starter", "42", "--yes")
    assert done.returncode == 2 and "42" in done.stderr and "Traceback" not in done.stderr


# ---------------------------------------------------------------- in the course repository


def test_starter_in_the_course_repository_restores_head(tmp_path: Path) -> None:
    repo = git_workbook(tmp_path / "course")
    committed = (repo.root / MODULE).read_bytes()
    repo.write(MODULE, WRECK)
    done = repo.run("starter", "01", "--yes")
    assert done.returncode == 0, done.output
    assert "from git HEAD" in done.stdout
    assert (repo.root / MODULE).read_bytes() == committed
