"""A small, safe Markdown subset for stage text: paragraphs, bullet and numbered lists,
``code`` spans, **bold** and *emphasis*. Everything else is shown as text: HTML in the source
is escaped, never interpreted, so a stage author cannot break the page by accident.
"""

from __future__ import annotations

import re
from html import escape

_BULLET = re.compile(r"^\s*[*-]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.*)$")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")


def inline(text: str) -> str:
    """Escape ``text`` and render code spans, bold and emphasis."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick stays a literal backtick
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    rendered = []
    for index, part in enumerate(parts):
        if index % 2:
            rendered.append(f"<code>{escape(part, quote=False)}</code>")
        else:
            plain = escape(part, quote=False)
            plain = _BOLD.sub(r"<strong>\1</strong>", plain)
            plain = _EMPHASIS.sub(r"<em>\1</em>", plain)
            rendered.append(plain)
    return "".join(rendered)


def _blocks(text: str) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in text.strip().splitlines():
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    return [block for block in blocks if block]


def _list_items(block: list[str], pattern: re.Pattern[str]) -> list[str]:
    """Items of a list block; indented continuation lines join the item before them."""
    items: list[str] = []
    for line in block:
        match = pattern.match(line)
        if match:
            items.append(match.group(1).strip())
        else:
            items[-1] += " " + line.strip()
    return items


def render(text: str) -> str:
    """Render a Markdown-subset ``text`` to HTML."""
    html: list[str] = []
    for block in _blocks(text):
        for tag, pattern in (("ul", _BULLET), ("ol", _NUMBERED)):
            if pattern.match(block[0]):
                items = "".join(f"<li>{inline(item)}</li>" for item in _list_items(block, pattern))
                html.append(f"<{tag}>{items}</{tag}>")
                break
        else:
            html.append(f"<p>{inline(' '.join(line.strip() for line in block))}</p>")
    return "\n".join(html)
