"""What a Chinese learner reads is Chinese and renders as written (issue 35).

A line break inside a Chinese paragraph is never shown as a space.
Markdown turns a line break inside a paragraph into a space, and Chinese puts no space between words: JupyterLab and
Chromium showed "自己找出原因， 说出它是什么". The notebooks' Markdown and the course page's stage text are joined
where a break falls between two Chinese characters (``forgelab.core.text.join_cjk_lines``); code, headings and a
break beside Latin text stay as written. The judge's own words before a learner's traceback speak the language too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forgelab.core.text import join_cjk_lines, md


@pytest.mark.parametrize(("source", "expected"), [
    ("先观察症状，\n再说出原因。", "先观察症状，再说出原因。"),
    ("1. 第一步，先看症状；\n   卡住了？再看提示。\n2. 下一步", "1. 第一步，先看症状；卡住了？再看提示。\n2. 下一步"),
    ("一行\n二行\n三行", "一行二行三行"),
    ("运行\n`forgelab check 01`", "运行\n`forgelab check 01`"),
    ("结果是 13/13\n通过", "结果是 13/13\n通过"),
    ("### 与其他部分的关系\n阶段 01 按可信度排序", "### 与其他部分的关系\n阶段 01 按可信度排序"),
    ("```\n中文\n代码\n```", "```\n中文\n代码\n```"),
    ("    缩进的代码\n    第二行", "    缩进的代码\n    第二行"),
    ("段落一。\n\n段落二。", "段落一。\n\n段落二。"),
    ("English text\nstays wrapped.", "English text\nstays wrapped."),
])
def test_breaks_between_chinese_characters_are_joined_and_nothing_else(source: str, expected: str) -> None:
    assert join_cjk_lines(source) == expected


def test_the_page_renders_a_wrapped_chinese_paragraph_without_a_space() -> None:
    assert md("自己找出原因，\n说出它是什么。") == "<p>自己找出原因，说出它是什么。</p>"


def test_no_chinese_notebook_breaks_a_paragraph_between_chinese_characters(repo_root: Path) -> None:
    found = []
    for path in sorted((repo_root / "notebooks" / "zh").glob("*.ipynb")):
        for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] == "markdown" and join_cjk_lines(source) != source:
                found.append(f"{path.name} cell {number}")
    assert found == []


def test_the_judge_names_the_learners_traceback_in_the_language_spoken() -> None:
    """`check NN --why` in Chinese said "raised in the learner's code:" in English before the learner's traceback."""
    from forgelab.core.i18n import speaking
    from forgelab.judge.channel import rebuild_error

    data = {"kind": "exception", "module": "builtins", "qualname": "ValueError", "message": "bad",
            "args": ["bad"], "traceback": '  File "forge/instructions.py", line 12, in resolve'}
    with speaking("zh"):
        error = rebuild_error(data, lambda module, name: None, lambda value: value)
    assert error.__notes__ == ['在学员的代码中抛出：\n  File "forge/instructions.py", line 12, in resolve']


@pytest.mark.parametrize("language", ["en", "zh"])
def test_make_speaks_the_bundles_edition_where_a_course_target_is_refused(repo_root: Path, tmp_path: Path,
                                                                          language: str) -> None:
    """In a learner bundle (no solutions/, no benchmarks/) the course's own targets refuse in the bundle's language:
    the Chinese bundle's make said 'the type gate checks the course's tooling…' in English."""
    import os
    import shutil
    import subprocess
    import time

    bundle = tmp_path / "bundle"
    (bundle / "course").mkdir(parents=True)
    shutil.copy(repo_root / "Makefile", bundle / "Makefile")
    (bundle / "pyproject.toml").write_text("", encoding="utf-8")
    if language == "zh":
        (bundle / "course/edition.toml").write_text('language = "zh"\n', encoding="utf-8")
    stamp = bundle / ".venv/.forge-workbook-installed"  # installed already: make goes straight to the target
    stamp.parent.mkdir()
    stamp.touch()
    later = time.time() + 5
    os.utime(stamp, (later, later))
    for target in ("typecheck", "imports", "bench", "mutation", "hub"):
        done = subprocess.run(["make", "-s", target], cwd=bundle, capture_output=True, text=True, timeout=60)
        said = done.stdout + done.stderr
        assert done.returncode == 2, (target, said)
        chinese = any("\u4e00" <= char <= "\u9fff" for char in said)
        assert chinese == (language == "zh"), (target, said)
