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


# Chinese technical typography: no space after full-width punctuation or around curly quotes next to Chinese,
# numbers as Chinese technical text writes them (16,000 and 75%, not "16 000" and "75 %").
TYPOGRAPHY = {
    "a space after full-width punctuation": r"[。，；：！？、）」] (?=[^\s`*\-|#>])",  # (two or more: a column, aligned)
    "a space around curly quotes beside Chinese": r"[\u4e00-\u9fff] +“|” +[\u4e00-\u9fff]",
    "thousands grouped by a space": r"(?<![\d.])\d{1,3}(?: \d{3})+(?![\d.])",
    "a space before %": r"\d %",
}


def _chinese_prose(repo_root: Path) -> list[tuple[str, str]]:
    """(where, text) for the Chinese text a learner reads: stage texts, the catalog's translations, zh notebooks'
    Markdown. Code spans and fenced code are left out (they hold data as written)."""
    import re

    from babel.messages.pofile import read_po

    from forgelab.core.registry import load_course

    found: list[tuple[str, str]] = []
    for stage in load_course(repo_root).stages:
        def walk(value: object, where: str) -> None:
            if isinstance(value, str):
                found.append((where, value))
            elif isinstance(value, dict):
                for key, inner in value.items():
                    walk(inner, f"{where}.{key}")
            elif isinstance(value, list):
                for index, inner in enumerate(value):
                    walk(inner, f"{where}[{index}]")
        walk(stage.texts["zh"].model_dump(exclude={"docstrings"}), f"stage {stage.number} [text.zh]")
    with (repo_root / "forgelab/locale/zh/LC_MESSAGES/forgelab.po").open("rb") as handle:
        for message in read_po(handle, locale="zh"):
            for text in (message.string if isinstance(message.string, tuple) else (message.string,)):
                if text:
                    found.append((f"forgelab.po {message.id!r:.60}", text))
    for path in sorted((repo_root / "notebooks" / "zh").glob("*.ipynb")):
        for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "markdown":
                found.append((f"{path.name} cell {number}", "".join(cell["source"])))
    code = re.compile(r"```.*?```|`[^`\n]*`", re.S)
    return [(where, code.sub("`…`", text)) for where, text in found if re.search(r"[\u4e00-\u9fff]", text)]


@pytest.mark.parametrize("rule", sorted(TYPOGRAPHY))
def test_chinese_text_follows_chinese_typography(repo_root: Path, rule: str) -> None:
    import re

    pattern = re.compile(TYPOGRAPHY[rule])
    broken = [f"{where}: …{text[max(0, m.start() - 15):m.end() + 15]}…" for where, text in _chinese_prose(repo_root)
              for m in [pattern.search(text)] if m]
    assert broken == [], f"{rule}: {broken[:8]}"


def test_the_gap_between_two_pieces_of_a_page_is_none_after_chinese() -> None:
    from forgelab.core.text import gap

    assert gap("部分达到。") == "" and gap("进度：") == "" and gap("Partly there.") == " " and gap("13/13") == " "


def _chinese_documents(repo_root: Path) -> list[Path]:
    return [repo_root / "README.zh-CN.md", repo_root / "course/learner/README.zh-CN.md",
            *sorted((repo_root / "docs").glob("*.zh-CN.md"))]


def test_no_chinese_document_breaks_a_paragraph_between_chinese_characters(repo_root: Path) -> None:
    """The learner README was hard-wrapped at ~120 columns: 28 breaks that a browser shows as spaces."""
    assert [path.name for path in _chinese_documents(repo_root)
            if join_cjk_lines(path.read_text(encoding="utf-8")) != path.read_text(encoding="utf-8")] == []


def test_no_chinese_text_tells_the_learner_to_wait_for_an_english_word(repo_root: Path) -> None:
    """The Chinese CLI says 已修复 when a lab is fixed; the Chinese texts said '直到显示 FIXED'."""
    texts = [(path.name, path.read_text(encoding="utf-8")) for path in _chinese_documents(repo_root)]
    texts += [(f"{path.name} cell {n}", "".join(cell["source"]))
              for path in sorted((repo_root / "notebooks" / "zh").glob("*.ipynb"))
              for n, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"])]
    texts += [(where, text) for where, text in _chinese_prose(repo_root)]
    assert [where for where, text in texts if "FIXED" in text] == []
