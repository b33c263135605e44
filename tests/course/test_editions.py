"""Both editions stay complete: removing one piece of the Chinese edition fails `forgelab build --check`.

Each case removes one thing from a copy of the workbook — a `[text.zh]` key, a Chinese demo, a
figure's Chinese caption or one of its Chinese labels, a Chinese notebook, a catalog translation — and
the check must name it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from forgelab.authoring import editions
from forgelab.core.registry import load_course

STAGE = "course/stages/03-few-shot-selection"


def _drop_zh_key(root: Path, key: str) -> None:
    path = root / STAGE / "stage.toml"
    text = path.read_text(encoding="utf-8")
    head, zh = text.split("\n[text.zh]\n", 1)
    lines = zh.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{key} = "))
    end = start + 1
    if lines[start].rstrip().endswith('"""') and lines[start].count('"""') == 1:
        while '"""' not in lines[end]:
            end += 1
        end += 1
    path.write_text(head + "\n[text.zh]\n" + "\n".join(lines[:start] + lines[end:]), encoding="utf-8")


def test_the_repository_has_both_editions_complete(repo_root) -> None:
    assert editions.problems(load_course(repo_root)) == []


def test_a_missing_zh_key_is_named(workbook) -> None:
    _drop_zh_key(workbook.root, "boundary_decision")
    found = editions.problems(load_course(workbook.root))
    assert any("stage.toml" in problem and "boundary_decision" in problem for problem in found), found


@pytest.mark.parametrize("damage", ["demo", "caption", "notebook"])
def test_build_check_fails_on_a_missing_piece_of_the_chinese_edition(workbook, damage: str) -> None:
    root = workbook.root
    if damage == "demo":
        (root / STAGE / "demo.zh.py").unlink()
        expected = "demo.zh.py is missing"
    elif damage == "caption":
        figure = root / STAGE / "figure.mmd"
        figure.write_text(re.sub(r"^%% (caption|alt)\.zh: .*\n", "", figure.read_text(encoding="utf-8"), flags=re.M),
                          encoding="utf-8")
        expected = "figure.mmd: no `%% caption.zh:` line"
    else:
        (root / "notebooks/zh/03-few-shot-selection.ipynb").unlink()
        expected = "notebooks/zh/03-few-shot-selection.ipynb — notebook missing"
    result = workbook.run("build", "--check", timeout=600)
    assert result.returncode != 0
    assert expected in result.stdout + result.stderr, result.stdout + result.stderr


def test_build_check_fails_when_a_key_is_removed_through_the_cli(workbook) -> None:
    _drop_zh_key(workbook.root, "relations")
    result = workbook.run("build", "--check", timeout=600)
    assert result.returncode != 0
    assert "[text.zh]" in result.stdout + result.stderr and "relations" in result.stdout + result.stderr


def test_verify_course_fails_on_a_stale_opening_of_either_edition(workbook) -> None:
    from forgelab.authoring.build import stale_opening
    from forgelab.authoring.verify import CourseReport

    (workbook.root / "notebooks/zh/00-opening.ipynb").unlink()
    course = load_course(workbook.root)
    assert stale_opening(course, "en") == [] and stale_opening(course, "zh") == ["notebook missing"]
    report = CourseReport([], (), ("notebooks/zh/00-opening.ipynb: notebook missing",))
    assert not report.ok and "1 opening notebook(s) out of date" in report.summary


def test_a_figure_label_without_its_chinese_line_is_named(workbook) -> None:
    figure = workbook.root / STAGE / "figure.mmd"
    text = figure.read_text(encoding="utf-8")
    line = "%% zh: example library => 示例库\n"
    assert line in text
    figure.write_text(text.replace(line, ""), encoding="utf-8")
    expected = (f"{STAGE}/figure.mmd: label 'example library' has no Chinese: add `%% zh: example library => <中文>` "
                "to its header")
    assert any(problem.startswith(expected) for problem in editions.problems(load_course(workbook.root)))
    result = workbook.run("build", "--check", timeout=600)
    assert result.returncode != 0
    assert expected in result.stdout + result.stderr, result.stdout + result.stderr


def test_a_chinese_line_for_a_label_that_is_gone_is_named(workbook) -> None:
    figure = workbook.root / STAGE / "figure.mmd"
    text = figure.read_text(encoding="utf-8")
    figure.write_text(text.replace('L["example library"]', 'L["examples"]'), encoding="utf-8")
    found = editions.problems(load_course(workbook.root))
    assert f"{STAGE}/figure.mmd: `%% zh: example library => …` translates no label of the diagram: remove the line " \
        "or make its English side match the label" in found
    assert any("label 'examples' has no Chinese" in problem for problem in found), found


def test_a_chinese_demo_may_change_what_it_prints_but_not_what_it_does() -> None:
    """demo.zh.py prints Chinese (its strings, print() calls and *_ZH wording tables are its own); its calls and data
    are demo.py's, so both editions demonstrate the same thing."""
    english = 'plan = select(items, "ana", limit=2)\nprint(f"selected: {plan}")\nfor x in plan:\n    print(x, "units")\n'
    chinese = ('WORDS_ZH = {"ana": "安娜"}\nplan = select(items, "ana", limit=2)\nprint(f"选中：{plan}", sep="")\n'
               'for x in plan:\n    print(x, "个单位")  # 单位\n    print("  原文：", WORDS_ZH)\n')
    assert editions.same_demo_code(english) == editions.same_demo_code(chinese)
    for other in ('plan = select(items, "ana", limit=3)\n',  # other data
                  'plan = select(items, "ana", limit=2)\nitems.clear()\n',  # a call the English demo does not make
                  'WORDS = {"ana": "安娜"}\nplan = select(items, "ana", limit=2)\n'):  # not a *_ZH wording table
        assert editions.same_demo_code(other) != editions.same_demo_code(english), other
    # a string that is not printed is data: translated, the demo would compute on other input
    assert editions.same_demo_code('plan = select(items, "安娜")\n') != editions.same_demo_code('plan = select(items, "ana")\n')
