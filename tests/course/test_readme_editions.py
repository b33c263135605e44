"""The Chinese edition of each document keeps the English one's facts: every command and every number it quotes.

The documents are the README (the front door) and the four role documents under docs/ (learner, instructor,
authoring, architecture), each with a Chinese edition beside it (``README.zh-CN.md``, ``docs/<role>.zh-CN.md``).
They are written, not machine-translated, so their sentences differ; what must not differ is what a reader types or
relies on. Commands are the ``forgelab …``/``make …`` lines of code spans and code blocks; numbers are those of the
prose (limits, counts, stage numbers), each as often as the English edition of the same document quotes it. A
Chinese edition may say more (an example more), never less. Measured figures live in benchmarks/RESULTS.md, which
is not compared.
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


DOCUMENTS = ("README.md", "docs/learner.md", "docs/instructor.md", "docs/authoring.md", "docs/architecture.md")


def chinese_edition(name: str) -> str:
    return name.removesuffix(".md") + ".zh-CN.md"


def _editions(name: str) -> tuple[str, str]:
    return ((ROOT / name).read_text(encoding="utf-8"), (ROOT / chinese_edition(name)).read_text(encoding="utf-8"))


def test_every_document_quotes_the_commands_of_its_english_edition() -> None:
    everything: set[str] = set()
    for name in DOCUMENTS:
        english, chinese = _editions(name)
        everything |= commands(english)
        assert sorted(commands(english) - commands(chinese)) == [], chinese_edition(name)
    assert len(everything) > 50


def test_every_document_quotes_the_numbers_of_its_english_edition() -> None:
    total = 0
    for name in DOCUMENTS:
        english, chinese = _editions(name)
        total += sum(numbers(english).values())
        assert dict(numbers(english) - numbers(chinese)) == {}, chinese_edition(name)
    assert total > 100


def test_the_comparison_notices_a_changed_number_and_a_missing_command() -> None:
    english, chinese = _editions("docs/learner.md")
    changed = chinese.replace("10 秒", "12 秒", 1)
    assert changed != chinese and numbers(english) - numbers(changed)
    dropped = re.sub(r"`forgelab check 01`", "", chinese)
    assert "forgelab check 01" in commands(english) - commands(dropped)
