"""The Chinese README keeps the English one's facts: every command and every number it quotes.

README.zh-CN.md is written, not machine-translated, so its sentences differ; what must not differ is what a reader
types or relies on. Commands are the ``forgelab …``/``make …`` lines of code spans and code blocks; numbers are
those of the prose (timings, limits, counts, stage numbers), each as often as the English README quotes it. The
Chinese README may say more (an example more), never less.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMAND = re.compile(r"(?:\.venv/bin/)?(?:forgelab|make) \S")


def commands(text: str) -> set[str]:
    found = {span.strip() for span in re.findall(r"`([^`\n]+)`", text) if COMMAND.match(span.strip())}
    for block in re.findall(r"```[^\n]*\n(.*?)```", text, re.S):
        found |= {line.split(" #")[0].strip() for line in block.splitlines() if COMMAND.match(line.strip())}
    return found


def numbers(text: str) -> Counter[str]:
    prose = re.sub(r"```.*?```|`[^`]*`|\]\([^)]*\)", " ", text, flags=re.S)
    return Counter(re.findall(r"(?<![\w.\-/])\d+(?:\.\d+)?(?![\w.]*\d)", prose))


def _readmes() -> tuple[str, str]:
    return (ROOT / "README.md").read_text(encoding="utf-8"), (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")


def test_the_chinese_readme_quotes_every_command_of_the_english_one() -> None:
    english, chinese = _readmes()
    assert len(commands(english)) > 50
    assert sorted(commands(english) - commands(chinese)) == []


def test_the_chinese_readme_quotes_every_number_of_the_english_one() -> None:
    english, chinese = _readmes()
    assert sum(numbers(english).values()) > 200
    assert dict(numbers(english) - numbers(chinese)) == {}


def test_the_comparison_notices_a_changed_number_and_a_missing_command() -> None:
    english, chinese = _readmes()
    changed = chinese.replace("10 秒", "12 秒", 1)
    assert changed != chinese and numbers(english) - numbers(changed)
    dropped = re.sub(r"`forgelab check 01`", "", chinese)
    assert "forgelab check 01" in commands(english) - commands(dropped)
