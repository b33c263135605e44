"""One terminology in the Chinese edition: `forgelab build --check` fails on a wrong variant or a term left in English.

The glossary (`course/glossary.toml`) gives each term one Chinese rendering and the renderings the course does not
use; :mod:`forgelab.authoring.terminology` reads every learner-facing Chinese text against it. Each case plants one
departure into a copy of the workbook and the check must name the file, the word and the glossary's term.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from forgelab.authoring import terminology
from forgelab.authoring.terminology import Passage, Term
from forgelab.core.registry import load_course

from conftest import run_cli

STAGE = "course/stages/03-few-shot-selection/stage.toml"


def _plant(root: Path, key: str, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in the ``[text.zh]`` value of ``key`` of stage 03."""
    path = root / STAGE
    head, zh = path.read_text(encoding="utf-8").split("\n[text.zh]", 1)
    start = zh.index(f"\n{key} = ")
    end = zh.index("\n", start + 1)
    line = zh[start:end]
    assert old in line, f"{key} does not say {old!r}"
    path.write_text(head + "\n[text.zh]" + zh[:start] + line.replace(old, new, 1) + zh[end:], encoding="utf-8")


def test_the_course_speaks_one_terminology(course) -> None:
    assert terminology.problems(course) == []


def test_every_clash_of_the_issue_is_settled_in_the_glossary(repo_root) -> None:
    terms = {term.id: term for term in terminology.load(repo_root)}
    assert (terms["harness"].zh, terms["harness"].wrong) == ("Harness", ("框架",))  # as the sources write it
    assert terms["instruction-authority"].zh == "指令权" and "权威" in terms["instruction-authority"].wrong
    assert terms["memory-precedence"].zh == "权限层级"
    assert (terms["pipeline"].zh, terms["case"].zh, terms["contract"].zh, terms["workbook"].zh) == \
        ("流水线", "用例", "契约", "练习册")
    assert {"小管道"} <= set(terms["pipeline"].wrong) and terms["case"].wrong == ("案例",)
    assert terms["contract"].wrong == ("合同",) and terms["workbook"].wrong == ("工作簿",)
    catalog = (repo_root / "forgelab/locale/zh/LC_MESSAGES/forgelab.po").read_text(encoding="utf-8")
    assert f'msgid "passed"\nmsgstr "{terms["passed"].zh}"' in catalog  # the text says what the table prints


# issue 35: each clash a native reader found has one rendering (the sources' own where they have one)
ONE_RENDERING = {"trust-rank": ("可信层级", "可信等级"), "gate": ("门禁", "门槛"), "trailing-comma": ("尾逗号", "尾随逗号"),
                 "json-wrapping": ("外壳", "外层包装"), "system-prompt": ("系统提示词", "系统 Prompt"),
                 "instructor": ("讲师", "老师"), "learner": ("学员", "学习者"), "learner-bundle": ("实验包", "学员包"),
                 "design-answer": ("设计题回答", "设计回答"), "design-question": ("设计题", "设计问题"),
                 "chapter-project": ("本章项目", "章节项目"), "agent": ("Agent", "智能体"),
                 "worked-demonstration": ("教师示范", "完整示范"), "evidence-folder": ("证据目录", "证据文件夹"),
                 "api-key": ("API key", "API 密钥"), "wall-clock": ("挂钟时间", "墙钟时间"),
                 "access-token": ("令牌", "带 token"), "answer-key": ("标准答案", "答案钥匙"),
                 "grading-item": ("评分项", "题目"), "harness": ("Harness", "框架")}


@pytest.mark.parametrize("term_id", sorted(ONE_RENDERING))
def test_each_term_has_one_rendering_and_a_planted_synonym_is_named(repo_root, term_id: str) -> None:
    terms = {term.id: term for term in terminology.load(repo_root)}
    rendering, synonym = ONE_RENDERING[term_id]
    assert terms[term_id].zh == rendering and synonym in terms[term_id].wrong
    found = terminology.check([Passage("docs/learner.zh-CN.md:3", f"这一段里写了{synonym}。")], list(terms.values()))
    assert any(f"{synonym!r} is not the course's word" in line and f"write {rendering!r}" in line for line in found), found


def test_a_planted_wrong_variant_fails_the_build_check(workbook) -> None:
    _plant(workbook.root, "title", "示例选择", "示例选择（工作簿里的）")
    found = terminology.problems(load_course(workbook.root))
    assert len(found) == 1
    assert re.match(rf"{STAGE} \[text\.zh\.title\]: '工作簿' is not the course's word for 'workbook': write '练习册' "
                    r"\(course/glossary\.toml, term 'workbook'\)", found[0])
    result = run_cli(workbook.root, "build", "--check")
    assert result.returncode == 2
    assert "terminology: " + found[0] in result.stdout
    assert "1 place(s) in the Chinese edition depart from course/glossary.toml" in result.stderr


def test_a_term_left_in_english_fails_and_names_its_rendering(workbook) -> None:
    _plant(workbook.root, "title", "示例选择", "pipeline 的示例选择")
    found = terminology.problems(load_course(workbook.root))
    assert found == [f"{STAGE} [text.zh.title]: 'pipeline' is left in English: the Chinese edition writes '流水线' "
                     "(course/glossary.toml, term 'pipeline'; code goes in backticks)"]
    assert run_cli(workbook.root, "build", "--check").returncode == 2


def test_a_catalog_message_is_checked_with_its_line(workbook) -> None:
    po = workbook.root / "forgelab/locale/zh/LC_MESSAGES/forgelab.po"
    text = po.read_text(encoding="utf-8").replace('msgstr "通过"', 'msgstr "已 passed"', 1)
    po.write_text(text, encoding="utf-8")
    line = text.splitlines().index('msgstr "已 passed"') + 1
    found = terminology.check(terminology.catalog(po), terminology.load(workbook.root), terminology.names(workbook.root))
    assert found == [f"forgelab/locale/zh/LC_MESSAGES/forgelab.po:{line}: 'passed' is left in English: the Chinese "
                     "edition writes '通过' (course/glossary.toml, term 'passed'; code goes in backticks)"]


HARNESS = Term("harness", "harness", "框架", ("Harness",))
CONTEXT = Term("context", "context", "上下文", ())
SELECTION = Term("context-selection", "context selection", "上下文选择", ())


@pytest.mark.parametrize("text", [
    "**框架**（harness）只做一件事。",           # the English word once, after its rendering
    "运行 `forgelab check 01`，看 `harness` 一列。",  # code span
    "字段 context_budget 和 harness.py 都是代码。",    # identifier and file name
    "示例：\n\n```python\nharness = build()  # 框架\n```\n",  # fenced code
    "payload:\n    \"Cite only the evidence below; the harness decides.\"",  # a line without Chinese is data
    "**上下文选择**（context selection）决定放什么。",   # a longer term wins over the shorter one inside it
    "见 [说明](docs/harness.md)。",                 # link target
])
def test_code_identifiers_and_the_first_use_in_parentheses_are_allowed(text) -> None:
    assert terminology.check([Passage("x.md:1", text)], [HARNESS, CONTEXT, SELECTION]) == []


@pytest.mark.parametrize("text, word", [
    ("这个 harness 很小。", "harness"),
    ("第二段\n如果 Harness 合并指令……", "Harness"),
    ("把 context 放进去。", "context"),
])
def test_prose_is_judged_line_by_line(text, word) -> None:
    found = terminology.check([Passage("x.md:1", text)], [HARNESS, CONTEXT, SELECTION])
    assert len(found) == 1 and f"{word!r}" in found[0]
    assert found[0].startswith(f"x.md:{text.count(chr(10), 0, text.index(word)) + 1}: ")


def test_a_malformed_glossary_is_named(tmp_path) -> None:
    (tmp_path / "course").mkdir()
    (tmp_path / "course/glossary.toml").write_text('[[term]]\nid = "x"\nen = "x"\nzh = "叉"\nwrong = "叉"\n',
                                                   encoding="utf-8")
    with pytest.raises(terminology.GlossaryError, match=r"glossary\.toml .*wrong"):
        terminology.load(tmp_path)
    (tmp_path / "course/glossary.toml").write_text('schema = 1\n[[term]]\nid = "x"\nen = "x"\nzh = "叉"\nmeaning = "m"\n'
                                                   'wrong = ["叉"]\n', encoding="utf-8")
    with pytest.raises(terminology.GlossaryError, match="term 'x': wrong = … lists an empty word or the term's own"):
        terminology.load(tmp_path)


def test_the_chinese_role_documents_speak_the_glossary(workbook) -> None:
    guide = workbook.root / "docs" / "instructor.zh-CN.md"
    guide.write_text(guide.read_text(encoding="utf-8") + "\n讲师用工作簿给提交评分。\n", encoding="utf-8")
    found = terminology.problems(load_course(workbook.root))
    assert len(found) == 1 and found[0].startswith("docs/instructor.zh-CN.md"), found
    assert "'工作簿' is not the course's word for 'workbook'" in found[0]
