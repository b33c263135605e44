"""Both editions stay complete: removing one piece of the Chinese edition fails `forgelab build --check`.

Each case removes one thing from a copy of the workbook — a `[text.zh]` key, a Chinese demo cell, a
figure's Chinese caption or one of its Chinese labels, a Chinese notebook, a catalog translation — and
the check must name it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from forgelab.authoring import editions
from forgelab.core import demo
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


@pytest.mark.parametrize("damage", ["demo", "demo-computation", "caption", "notebook"])
def test_build_check_fails_on_a_missing_piece_of_the_chinese_edition(workbook, damage: str) -> None:
    root = workbook.root
    demo = root / STAGE / "demo.py"
    if damage == "demo":  # a Markdown cell of the demo left without its Chinese translation
        text = demo.read_text(encoding="utf-8")
        start = text.index("# %% [markdown] zh\n")
        demo.write_text(text[:start] + text[text.index("# %%", start + 1):], encoding="utf-8")
        expected = f"{STAGE}/demo.py: the Chinese edition has 5 cells where the English has 6"
    elif damage == "demo-computation":  # a line of the Chinese edition computes on other data
        shared = 'chosen = select_examples(library, "software", "v2", task_tags, limit=2)\n'
        text = demo.read_text(encoding="utf-8")
        assert text.count(shared) == 1
        demo.write_text(text.replace(shared, shared.replace("\n", "  # [en]\n")
                                     + shared.replace("limit=2)\n", "limit=3)  # [zh]\n")), encoding="utf-8")
        expected = (f"{STAGE}/demo.py: code cell 2: its `# [zh]` lines do more than its `# [en]` lines: an edition's own "
                    "lines may change only what the cell prints (print() calls, f-strings, wording tables named "
                    "*_ZH); move the change to the lines both editions run (no tag)")
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


def test_one_demo_file_holds_both_editions() -> None:
    """demo.py keys a Markdown cell by language and tags a code line that only one edition runs; each edition sees
    its own cells and lines, without the keys."""
    text = ("# %% [markdown] en\n# Pick two.\n\n# %% [markdown] zh\n# 选两个。\n\n# %%\nplan = select(items, 2)\n"
            "for x in plan:\n    print(\"picked\", x)  # [en]\n    print(\"选中\", x)  # 选中  # [zh]\n# [zh]\n")
    assert demo.edition(text, "en") == "# %% [markdown]\n# Pick two.\n\n# %%\nplan = select(items, 2)\nfor x in plan:\n" \
        "    print(\"picked\", x)\n"
    assert demo.edition(text, "zh") == "# %% [markdown]\n# 选两个。\n\n# %%\nplan = select(items, 2)\nfor x in plan:\n" \
        "    print(\"选中\", x)  # 选中\n\n"
    assert demo.languages(text) == {"en", "zh"}


def test_a_chinese_demo_may_change_what_it_prints_but_not_what_it_does() -> None:
    """The Chinese edition's lines print Chinese (its strings, print() calls and *_ZH wording tables are its own); its
    calls and data are the English edition's, so both editions demonstrate the same thing."""
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


# ---------------------------------------------------------------- every word a Chinese learner edits is Chinese
@pytest.mark.parametrize("plant", ["stage-comment", "stage-class", "finished-comment", "finished-docstring", "stale"])
def test_an_english_docstring_or_comment_left_for_the_chinese_edition_is_named(workbook, plant: str) -> None:
    """The Chinese bundle's forge/ carries no English prose: build --check names each place the author must translate
    (a stage module's table, or course/docstrings.toml for forge/'s finished files), and a translation whose
    English no longer matches its file."""
    root = workbook.root
    if plant == "stage-comment":
        path = root / "forge/fewshot.py"
        path.write_text(path.read_text(encoding="utf-8").replace(
            "from __future__ import annotations\n", "from __future__ import annotations  # keep types lazy\n", 1),
            encoding="utf-8")
        expected = "forge/fewshot.py line"
        detail = "comment 'keep types lazy' is still English"
    elif plant == "stage-class":
        path = root / "forge/fewshot.py"
        text = path.read_text(encoding="utf-8")
        path.write_text(text + '\n\nclass Note:\n    """A note the learner keeps."""\n', encoding="utf-8")
        expected = "stage.toml: [text.zh.docstrings.functions] lacks Note"
        detail = "forge/fewshot.py documents them"
    elif plant == "finished-comment":
        path = root / "forge/project/tokens.py"
        path.write_text(path.read_text(encoding="utf-8") + "\n# one more unit rule may follow\n", encoding="utf-8")
        expected = 'course/docstrings.toml [text.zh."forge/project/tokens.py"]'
        detail = "comment 'one more unit rule may follow' is still English"
    elif plant == "finished-docstring":
        path = root / "forge/project/tokens.py"
        path.write_text(path.read_text(encoding="utf-8") + '\n\ndef units() -> int:\n    """How many rules."""\n'
                        "    return 4\n", encoding="utf-8")
        expected = 'course/docstrings.toml [text.zh."forge/project/tokens.py"]'
        detail = "docstring of units is still English"
    else:
        path = root / "forge/project/schemas.py"
        text = path.read_text(encoding="utf-8")
        assert "# the one schema recovery mode always uses" in text
        path.write_text(text.replace("# the one schema recovery mode always uses", "# the schema of recovery mode"),
                        encoding="utf-8")
        expected = 'course/docstrings.toml [text.zh."forge/project/schemas.py"]'
        detail = "no comment reads 'the one schema recovery mode always uses'"
    found = editions.problems(load_course(root))
    assert any(expected in problem and detail in problem for problem in found), found


def test_the_finished_files_words_cover_exactly_forge(repo_root) -> None:
    from forgelab.core import course_files

    table = course_files.read(repo_root / "course/docstrings.toml", course_files.DocstringsFile)
    modules = {stage.module for stage in load_course(repo_root).stages}
    finished = {p.relative_to(repo_root).as_posix() for p in (repo_root / "forge").rglob("*.py")
                if "__pycache__" not in p.parts} - modules
    assert set(table.text["zh"]) == finished
