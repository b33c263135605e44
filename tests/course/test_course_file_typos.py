"""A misspelt key in any of the course's TOML files fails loading and `forgelab build --check`, naming the file,
the table, the key and the nearest valid key (forgelab/core/course_files.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import WorkbookCopy, copy_workbook
from forgelab.core.registry import RegistryError, load_course

STAGE = "course/stages/01-instruction-hierarchy"


@pytest.fixture(scope="module")
def course_copy(tmp_path_factory: pytest.TempPathFactory) -> WorkbookCopy:
    return copy_workbook(tmp_path_factory.mktemp("typos") / "workbook")


def _plant(copy: WorkbookCopy, relative: str, old: str, new: str, *, after: str = "") -> str:
    """Replace the first ``old`` after ``after`` in a copy's file; the file's text before the change."""
    path = copy.root / relative
    before = path.read_text(encoding="utf-8")
    start = before.index(after) if after else 0
    at = before.index(old, start)
    path.write_text(before[:at] + new + before[at + len(old):], encoding="utf-8")
    return before


TYPOS = [
    # (file, old text, typo, after this text, what the message must say)
    ("course/course.toml", "\nmodule_id =", "\nmodule_idd =", "",
     "course/course.toml: unknown key 'module_idd' — did you mean 'module_id'?"),
    ("course/course.toml", "input =", "imput =", "[scenarios",
     "course/course.toml [scenarios.software.en]: unknown key 'imput' — did you mean 'input'?"),
    (f"{STAGE}/stage.toml", "\nrequired_tests =", "\nrequried_tests =", "",
     f"{STAGE}/stage.toml: unknown key 'requried_tests' — did you mean 'required_tests'?"),
    (f"{STAGE}/stage.toml", "\nhints =", "\nhnits =", "\n[text.en]\n",
     f"{STAGE}/stage.toml [text.en]: unknown key 'hnits' — did you mean 'hints'?"),
    (f"{STAGE}/stage.toml", "\nhints =", "\nhnits =", "\n[text.zh]\n",
     f"{STAGE}/stage.toml [text.zh]: unknown key 'hnits' — did you mean 'hints'?"),
    (f"{STAGE}/stage.toml", "\nrationale =", "\nrationle =", "\n[text.zh.prediction]\n",
     f"{STAGE}/stage.toml [text.zh.prediction]: unknown key 'rationle' — did you mean 'rationale'?"),
    (f"{STAGE}/stage.toml", "\nsection =", "\nsecton =", "\n[[source_facts]]\n",
     f"{STAGE}/stage.toml [[source_facts]] #1: unknown key 'secton' — did you mean 'section'?"),
    (f"{STAGE}/fault.toml", "\nreplace =", "\nreplce =", "\n[[patch]]\n",
     f"{STAGE}/fault.toml [[patch]] #1: unknown key 'replce' — did you mean 'replace'?"),
    (f"{STAGE}/fault.toml", "\ndefect =", "\ndefekt =", "\n[diagnosis]\n",
     f"{STAGE}/fault.toml [diagnosis]: unknown key 'defekt' — did you mean 'defect'?"),
    (f"{STAGE}/mutants.toml", "\nfind =", "\nfnd =", "\n[[mutant]]\n",
     f"{STAGE}/mutants.toml [[mutant]] #1: unknown key 'fnd' — did you mean 'find'?"),
    ("course/glossary.toml", "\nmeaning =", "\nmeanning =", "\n[[term]]\n",
     "course/glossary.toml [[term]] #1: unknown key 'meanning' — did you mean 'meaning'?"),
]


@pytest.mark.parametrize(("relative", "old", "typo", "after", "message"), TYPOS,
                         ids=[row[0].rsplit("/", 1)[-1] + ":" + row[2].strip(" =\n") for row in TYPOS])
def test_a_typo_fails_build_check_with_file_key_and_suggestion(course_copy: WorkbookCopy, relative: str, old: str,
                                                               typo: str, after: str, message: str) -> None:
    before = _plant(course_copy, relative, old, typo, after=after)
    try:
        result = course_copy.run("build", "--check", timeout=600)
    finally:
        (course_copy.root / relative).write_text(before, encoding="utf-8")
    assert result.returncode != 0, result.output
    assert message in result.output.replace(f"{course_copy.root.as_posix()}/", ""), result.output
    assert "Traceback" not in result.output


def test_the_registry_refuses_a_typo_when_it_loads(tmp_path: Path, repo_root: Path) -> None:
    """The stage and course files are checked by every tool that loads the course, not only by the build."""
    copy = copy_workbook(tmp_path / "workbook")
    _plant(copy, f"{STAGE}/stage.toml", "\nhints =", "\nhnits =", after="\n[text.en]\n")
    with pytest.raises(RegistryError, match=re.escape("[text.en]: unknown key 'hnits' — did you mean 'hints'?")):
        load_course(copy.root)
    result = copy.run("status")
    assert result.returncode != 0 and "unknown key 'hnits' — did you mean 'hints'?" in result.output
    # whose fault and what to do: the course's files, not a stage to choose
    assert "a problem in the course's files, not in your work" in result.output, result.output
    assert "forgelab status` to see the stages" not in result.output, result.output


def test_a_key_with_no_near_neighbour_lists_the_keys_of_its_table(tmp_path: Path, repo_root: Path) -> None:
    copy = copy_workbook(tmp_path / "workbook")
    _plant(copy, f"{STAGE}/stage.toml", "\n[transfer]\n", "\n[transfer]\nwhatever = 1\n")
    with pytest.raises(RegistryError, match=re.escape(
            "stage.toml [transfer]: unknown key 'whatever' — expected one of known_wrong, scenario")):
        load_course(copy.root)


def test_a_wrong_type_names_the_key_and_the_type(tmp_path: Path, repo_root: Path) -> None:
    copy = copy_workbook(tmp_path / "workbook")
    _plant(copy, f"{STAGE}/stage.toml", 'number = "01"', "number = 1")
    with pytest.raises(RegistryError, match=re.escape("stage.toml: 'number' has the wrong type (int)")):
        load_course(copy.root)


def test_an_author_who_speaks_chinese_reads_the_problem_in_chinese(course_copy: WorkbookCopy) -> None:
    """`build --check --lang zh`: the course files' problems (a typo, a patch that no longer applies) in Chinese,
    with the file, the key and the suggestion as they are."""
    before = _plant(course_copy, f"{STAGE}/stage.toml", "\nhints =", "\nhnits =", after="\n[text.en]\n")
    try:
        result = course_copy.run("build", "--check", "--lang", "zh", timeout=600)
    finally:
        (course_copy.root / f"{STAGE}/stage.toml").write_text(before, encoding="utf-8")
    assert result.returncode != 0
    assert "stage.toml [text.en]：未知的键 'hnits'——是不是想写 'hints'？" in result.output, result.output
    assert "unknown key" not in result.output and "did you mean" not in result.output, result.output
    assert "这是课程文件本身的问题" in result.output, result.output

    fault = f"{STAGE}/fault.toml"
    before = _plant(course_copy, fault, '"""Stage 01 — instruction hierarchy.\n', '"""Stage 01 — no such line.\n')
    try:
        result = course_copy.run("build", "--check", "--lang", "zh", timeout=600)
    finally:
        (course_copy.root / fault).write_text(before, encoding="utf-8")
    assert result.returncode != 0
    assert "fault.toml：第 1 处补丁的 find 文本在 solutions/forge/instructions.py 中（应用之前的编辑后）出现了 0 次" \
        in result.output, result.output
    assert "occurs 0 times" not in result.output, result.output


def test_the_registry_speaks_the_authors_language(tmp_path: Path) -> None:
    """The registry's own checks (here a [hint_rungs] key that names no test) are worded in the active language."""
    from forgelab.core.i18n import speaking

    copy = copy_workbook(tmp_path / "workbook")
    _plant(copy, f"{STAGE}/stage.toml", "\ntest_non_conflicting_user_goal_is_retained = [6]",
           "\ntest_non_conflicting_user_goal_is_retaind = [6]")
    with speaking("zh"), pytest.raises(RegistryError) as raised:
        load_course(copy.root)
    assert ("[hint_rungs]：键 'test_non_conflicting_user_goal_is_retaind' 不是阶段 01 的任何测试——"
            "是不是想写 'test_non_conflicting_user_goal_is_retained'？每个键都必须是") in str(raised.value), raised.value
    with pytest.raises(RegistryError, match=re.escape("names no test of stage 01 — did you mean "
                                                      "'test_non_conflicting_user_goal_is_retained'? each key")):
        load_course(copy.root)


def test_new_stage_refuses_in_the_authors_language(course_copy: WorkbookCopy) -> None:
    result = course_copy.run("new-stage", "01", "tool-budget", "--module", "forge/tool_budget.py", "--lang", "zh")
    assert result.returncode != 0
    assert "阶段 01 已经存在（instruction-hierarchy）：请换一个没用过的编号" in result.output, result.output
    result = course_copy.run("new-stage", "12", "Tool_Budget", "--module", "forge/tool_budget.py", "--lang", "zh")
    assert result.returncode != 0 and "slug 'Tool_Budget'：请用连字符连接的小写英文单词" in result.output, result.output
