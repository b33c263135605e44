"""HTML is escaped and Markdown is parsed in one place: forgelab/core/text.py (markdown-it-py, MarkupSafe) and the
Jinja2 templates (autoescape). No other module escapes HTML or splits Markdown by hand."""

from __future__ import annotations

import re
from pathlib import Path

FORGELAB = Path(__file__).resolve().parents[2] / "forgelab"
TEXT_MODULE = FORGELAB / "core" / "text.py"
HAND_ROLLED = re.compile(r"""\bimport html\b|from html import|html\.escape|(?<!re\.)\bescape\(|&lt;|&gt;|&amp;|&quot;|&#3[49];"""
                         r"""|split\("`"\)|_with_code_spans|_inline_code""")


def test_no_module_escapes_html_or_parses_markdown_by_hand() -> None:
    found = [f"{path.relative_to(FORGELAB.parent)}:{number}: {line.strip()}"
             for path in sorted(FORGELAB.rglob("*.py")) if path != TEXT_MODULE
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if HAND_ROLLED.search(line)]
    assert found == [], "escape with forgelab.core.text.esc or a Jinja2 template:\n" + "\n".join(found)


def test_the_check_finds_a_planted_escape(tmp_path: Path) -> None:
    planted = 'import html\nprint(html.escape("<b>"))\nvalue = text.replace("<", "&lt;")\n'
    assert len([line for line in planted.splitlines() if HAND_ROLLED.search(line)]) == 3
