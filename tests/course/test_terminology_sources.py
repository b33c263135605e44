"""The glossary check reads every place a Chinese learner reads a word, not only the stage texts (issue 35).

A synonym planted in the zh docstrings of forge/'s finished files (course/docstrings.toml), in a demonstration's
``# [zh]`` line (what a Chinese notebook's code prints or says in a comment), in a figure's ``zh:`` line, or in one of
make's Chinese messages fails ``forgelab build --check`` as one in a stage text does. The prompt is Prompt, as the
sources write it: 提示词 is a synonym, except inside 系统提示词 (the sources' word for the system prompt).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forgelab.authoring import terminology
from forgelab.authoring.terminology import Passage
from forgelab.core.registry import load_course

from conftest import ROOT


def _plant(path: Path, old: str, new: str) -> int:
    """Replace the first ``old`` by ``new`` in ``path``; the line number it is on."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path.name} does not say {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return text[:text.index(old)].count("\n") + 1


PLANTS = {  # file, what it says, the same with a synonym planted, the place the check must name
    "docstrings": ("course/docstrings.toml", "这是学员自己的包。", "这是学习者自己的包。",
                   "course/docstrings.toml [text.zh.forge/__init__.py.module]", "学习者"),
    "demo": ("course/stages/10-prompt-assembly/demo.py", "预留不能超过输出上限。", "预留不能超过输出门槛。",
             "course/stages/10-prompt-assembly/demo.py:", "门槛"),
    "demo code": ("course/stages/09-memory-selection/demo.py", '"权限层级"', '"信任等级"',
                  "course/stages/09-memory-selection/demo.py:", "信任等级"),
    "figure": ("course/stages/09-memory-selection/figure.mmd", "1 作用域门禁", "1 作用域门槛",
               "course/stages/09-memory-selection/figure.mmd:", "门槛"),
    "make": ("Makefile", "请看上面的输出", "请看上面智能体的输出", "Makefile:", "智能体"),
}


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_a_synonym_planted_where_a_chinese_learner_reads_fails_the_check(workbook, kind: str) -> None:
    file, old, new, where, synonym = PLANTS[kind]
    line = _plant(workbook.root / file, old, new)
    found = terminology.problems(load_course(workbook.root))
    assert len(found) == 1, found
    assert found[0].startswith(where) and f"{synonym!r} is not the course's word" in found[0], found
    if where.endswith(":"):
        assert found[0].startswith(f"{where}{line}: "), found


def test_the_prompt_is_prompt_and_the_system_prompt_keeps_its_word() -> None:
    terms = terminology.load(ROOT)
    said = [Passage("x.md:1", "把提示词拼起来。"), Passage("y.md:1", "系统提示词永远不会被截断，Prompt 的其余部分可以。")]
    found = terminology.check(said, terms)
    assert len(found) == 1 and found[0].startswith("x.md:1: '提示词' is not the course's word for 'prompt'"), found


@pytest.mark.parametrize("text, synonym", [("它的可信程度最高。", "可信程度"), ("最多 80 个 token。", "个 token")])
def test_the_other_drifts_a_reader_found_are_named(text: str, synonym: str) -> None:
    found = terminology.check([Passage("x.md:1", text)], terminology.load(ROOT))
    assert len(found) == 1 and f"{synonym!r} is not the course's word" in found[0], found


def test_a_figures_label_line_is_judged_by_its_chinese_side(tmp_path: Path) -> None:
    figure = tmp_path / "figure.mmd"
    figure.write_text("%% zh: scope gate => 作用域门禁\n%% caption.zh: 两道门禁。\nflowchart TB\n", encoding="utf-8")
    assert [passage.text.strip() for passage in terminology._figure_words(figure, tmp_path)] == ["作用域门禁", "两道门禁。"]
