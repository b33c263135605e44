"""`forgelab restore NN` says what it overwrites and asks first; `forgelab answer NN` warns at once
when the answer is too short for the check."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_workbook import git_workbook, run_in_terminal

from forgelab.verdicts.parts import MIN_DESIGN_WORDS

FIRST = "forge/instructions.py"
SECOND = "forge/context_selection.py"
MINE = "# my own work in progress\n"


@pytest.fixture
def repo(tmp_path: Path):  # type: ignore[no-untyped-def]
    return git_workbook(tmp_path / "course")


def _digest(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / "forge").rglob("*.py"))
            if "__pycache__" not in p.parts}


# ---------------------------------------------------------------- restore


def test_restore_lists_each_file_and_which_holds_own_work(repo) -> None:  # noqa: ANN001
    repo.write(SECOND, MINE)
    done = repo.run("restore", "03", "--yes")
    assert done.returncode == 0, done.output
    lines = done.stdout.splitlines()
    assert any(line.strip().startswith(f"{FIRST}: still the untouched starter") for line in lines)
    assert any(line.strip().startswith(f"{SECOND}: holds your own work") for line in lines)
    assert f"your own work in {SECOND} would be replaced; a backup would keep it" in done.stdout
    for module in (FIRST, SECOND):
        assert (repo.root / module).read_bytes() == (repo.root / "solutions" / module).read_bytes()
    name = next(line.split()[-1] for line in lines if "backup of your forge/ saved as" in line)
    undo = repo.run("backup", "restore", name, "--yes")
    assert undo.returncode == 0, undo.output
    assert (repo.root / SECOND).read_text(encoding="utf-8") == MINE


def test_restore_without_a_terminal_and_without_yes_changes_nothing(repo) -> None:  # noqa: ANN001
    repo.write(FIRST, MINE)
    before = _digest(repo.root)
    done = repo.run("restore", "03")
    assert done.returncode == 2
    assert f"{FIRST}: holds your own work" in done.stdout  # it still says what it would overwrite
    # a refusal says only what it did not do: nothing in the present tense claims a change
    assert "would be replaced" in done.stdout and " is replaced" not in done.output and "keeps it" not in done.output
    assert "stdin is not a terminal" in done.stderr and "forgelab restore 03 --yes" in done.stderr
    assert _digest(repo.root) == before
    assert not (repo.root / ".forgelab" / "backups").exists()


def test_restore_asks_in_a_terminal_and_no_keeps_everything(repo) -> None:  # noqa: ANN001
    repo.write(FIRST, MINE)
    before = _digest(repo.root)
    status, output = run_in_terminal(repo.root, "restore", "03", answer="n")
    assert status == 1, output
    assert "overwrite 2 files in forge/" in output and "[y/N]" in output and "nothing was changed" in output
    assert _digest(repo.root) == before
    status, output = run_in_terminal(repo.root, "restore", "03", answer="yes")
    assert status == 0, output
    assert (repo.root / FIRST).read_bytes() == (repo.root / "solutions" / FIRST).read_bytes()


def test_restore_when_everything_is_already_the_reference_writes_nothing(repo) -> None:  # noqa: ANN001
    assert repo.run("restore", "03", "--yes").returncode == 0
    again = repo.run("restore", "03")  # no --yes needed: nothing would be overwritten
    assert again.returncode == 0, again.output
    assert "already the reference" in again.stdout and "nothing to do" in again.stdout
    assert len(list((repo.root / ".forgelab" / "backups").iterdir())) == 1


def test_restore_of_the_first_stage_asks_nothing(repo) -> None:  # noqa: ANN001
    done = repo.run("restore", "01")
    assert done.returncode == 0 and "nothing before it" in done.stdout


def test_restore_without_reference_modules_points_at_forgelab_starter(repo) -> None:  # noqa: ANN001
    import shutil

    shutil.rmtree(repo.root / "solutions")  # what a learner's bundle looks like
    done = repo.run("restore", "03", "--yes")
    assert done.returncode == 2
    assert "not part of the learner bundle" in done.stderr
    assert "`forgelab starter 02` for forge/context_selection.py" in done.stderr


# ---------------------------------------------------------------- answer


def _answer(repo, words: int, tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "answer.md"
    path.write_text(" ".join(f"word{i}" for i in range(words)) + "\n", encoding="utf-8")
    return repo.run("answer", "01", "--file", str(path))


def test_a_short_answer_is_saved_with_a_warning_naming_the_numbers(repo, tmp_path: Path) -> None:  # noqa: ANN001
    done = _answer(repo, 5, tmp_path)
    assert done.returncode == 0, done.output
    assert "saved to evidence/prompt-context-output/01-instruction-hierarchy/design-answer.md (5 words)" in done.stdout
    warning = next(line for line in done.stdout.splitlines() if line.startswith("warning:"))
    assert "5 words" in warning and f"at least {MIN_DESIGN_WORDS}" in warning and f"({MIN_DESIGN_WORDS - 5} more)" in warning
    assert "stage 01 will not be accepted" in warning
    saved = repo.root / "evidence/prompt-context-output/01-instruction-hierarchy/design-answer.md"
    assert saved.read_text(encoding="utf-8").split() == [f"word{i}" for i in range(5)]
    check = repo.run("check", "01")
    assert "too short" in check.stdout or "too_short" in check.stdout  # the check agrees


def test_an_answer_just_long_enough_has_no_warning(repo, tmp_path: Path) -> None:  # noqa: ANN001
    done = _answer(repo, MIN_DESIGN_WORDS, tmp_path)
    assert done.returncode == 0, done.output
    assert "warning" not in done.stdout
    one_less = _answer(repo, MIN_DESIGN_WORDS - 1, tmp_path)
    assert "warning:" in one_less.stdout and "(1 more)" in one_less.stdout


def test_an_unreadable_answer_file_is_a_clear_error(repo, tmp_path: Path) -> None:  # noqa: ANN001
    done = repo.run("answer", "01", "--file", str(tmp_path / "missing.md"))
    assert done.returncode == 2 and "cannot read" in done.stderr and "Traceback" not in done.stderr
