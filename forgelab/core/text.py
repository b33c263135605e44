"""Text for people: stage text as HTML (a small, safe Markdown subset) and words counted the same in both editions.

The course page (:mod:`forgelab.site.pages`) and the notebooks (:mod:`forgelab.learner.notebook`) render stage
text with :func:`md` (paragraphs, bullet and numbered lists) and :func:`inline` (one line): ``code`` spans,
**bold** and *emphasis*. Everything else is shown as text: HTML in the source is escaped (:func:`esc`), never
interpreted, so a stage author cannot break the page by accident.

A code span opens with a run of backticks and closes with a run of the same length (CommonMark), so
```` ```json ```` shows a fence marker as code; a run that is never closed is a literal backtick.

Emphasis follows CommonMark's rules for delimiter runs (left- and right-flanking, the rule of three,
the nesting of ``***``), so it works in Chinese, where there are no spaces between words: in
``来源的*可信等级*（trust rank）`` the ``*`` touch a Chinese character on both sides and still open and
close. Intraword ``*`` emphasis is allowed; ``_`` emphasis stays word-bound, so ``snake_case_names``
keep their underscores.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape

_BULLET = re.compile(r"^\s*[*-]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.*)$")
_DELIMITER_RUN = re.compile(r"\*+|_+")


def _is_space(char: str) -> bool:
    """Unicode whitespace; the start and the end of the text count as whitespace (CommonMark)."""
    return char == "" or char.isspace()


def _is_punctuation(char: str) -> bool:
    """Unicode punctuation or symbol (CommonMark 0.31): ``（``, ``。``, ``“`` count, as ``(``, ``.``, ``"`` do."""
    return char != "" and unicodedata.category(char)[0] in "PS"


@dataclass
class _Delimiter:
    char: str
    count: int  # delimiters of the run not used yet
    length: int  # the run's original length (the rule of three looks at it)
    can_open: bool
    can_close: bool
    opens: list[str] = field(default_factory=list)  # tags this run opens, outermost first
    closes: list[str] = field(default_factory=list)  # tags this run closes, innermost first

    def html(self) -> str:
        return ("".join(f"</{tag}>" for tag in self.closes) + self.char * self.count
                + "".join(f"<{tag}>" for tag in self.opens))


def _delimiter(text: str, start: int, end: int) -> _Delimiter:
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    left = not _is_space(after) and (not _is_punctuation(after) or _is_space(before) or _is_punctuation(before))
    right = not _is_space(before) and (not _is_punctuation(before) or _is_space(after) or _is_punctuation(after))
    char = text[start]
    if char == "*":
        can_open, can_close = left, right
    else:  # "_": not inside a word
        can_open = left and (not right or _is_punctuation(before))
        can_close = right and (not left or _is_punctuation(after))
    return _Delimiter(char, end - start, end - start, can_open, can_close)


def _match(nodes: list[str | _Delimiter]) -> None:
    """CommonMark's "process emphasis": pair closers with the nearest possible opener, innermost first."""
    stack = [index for index, node in enumerate(nodes) if isinstance(node, _Delimiter)]
    bottoms: dict[tuple[str, bool, int], int] = {}  # no opener at or below this node for such a closer
    current = 0
    while current < len(stack):
        closer = nodes[stack[current]]
        assert isinstance(closer, _Delimiter)
        if not closer.can_close:
            current += 1
            continue
        key = (closer.char, closer.can_open, closer.length % 3)
        found = None
        for position in range(current - 1, -1, -1):
            if stack[position] <= bottoms.get(key, -1):
                break
            opener = nodes[stack[position]]
            assert isinstance(opener, _Delimiter)
            if opener.char != closer.char or not opener.can_open:
                continue
            odd = ((opener.can_close or closer.can_open) and (opener.length + closer.length) % 3 == 0
                   and not (opener.length % 3 == 0 and closer.length % 3 == 0))
            if not odd:
                found = position
                break
        if found is None:
            bottoms[key] = stack[current - 1] if current > 0 else -1
            if closer.can_open:
                current += 1
            else:
                del stack[current]
            continue
        opener = nodes[stack[found]]
        assert isinstance(opener, _Delimiter)
        used = 2 if opener.count >= 2 and closer.count >= 2 else 1
        tag = "strong" if used == 2 else "em"
        opener.count -= used
        closer.count -= used
        opener.opens.insert(0, tag)
        closer.closes.append(tag)
        del stack[found + 1:current]  # delimiters between the two can no longer match
        current = found + 1
        if opener.count == 0:
            del stack[found]
            current -= 1
        if closer.count == 0:
            del stack[current]


def emphasis(text: str) -> str:
    """Escape ``text`` (no code spans in it) and render ``**bold**``, ``*emphasis*`` and their ``_`` forms."""
    nodes: list[str | _Delimiter] = []
    position = 0
    for run in _DELIMITER_RUN.finditer(text):
        if run.start() > position:
            nodes.append(text[position:run.start()])
        nodes.append(_delimiter(text, run.start(), run.end()))
        position = run.end()
    if position < len(text):
        nodes.append(text[position:])
    _match(nodes)
    return "".join(node.html() if isinstance(node, _Delimiter) else escape(node, quote=False) for node in nodes)


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


def _render_blocks(text: str) -> str:
    """Paragraphs and lists of ``text`` (code spans already taken out) as HTML."""
    html: list[str] = []
    for block in _blocks(text):
        for tag, pattern in (("ul", _BULLET), ("ol", _NUMBERED)):
            if pattern.match(block[0]):
                items = "".join(f"<li>{emphasis(item)}</li>" for item in _list_items(block, pattern))
                html.append(f"<{tag}>{items}</{tag}>")
                break
        else:
            html.append(f"<p>{emphasis(' '.join(line.strip() for line in block))}</p>")
    return "\n".join(html)


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def word_count(text: str) -> int:
    """Words as the checker counts them, in either edition: whitespace-separated words, where a run of
    Chinese characters counts one word per two characters (about how much a Chinese sentence says
    per English word), so the minimum asks the same of an answer in either language."""
    total = 0
    for token in text.split():
        cjk = len(_CJK.findall(token))
        rest = _CJK.sub(" ", token).split()
        total += len(rest) + (cjk + 1) // 2
    return total


def esc(text: object) -> str:
    """Any value as HTML text: ``&``, ``<``, ``>`` and both quotes escaped."""
    return escape(str(text), quote=True)


_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_KEPT_SPAN = re.compile("\x00(\\d+)\x00")
_LITERAL_BACKTICK = "\x01"


def _with_code_spans(text: str, renderer: Callable[[str], str]) -> str:
    spans: list[str] = []

    def keep(match: re.Match[str]) -> str:
        content = match.group(2).replace("\n", " ")
        if len(content) > 2 and content.startswith(" ") and content.endswith(" ") and content.strip():
            content = content[1:-1]
        spans.append(content)
        return f"\x00{len(spans) - 1}\x00"

    protected = _CODE_SPAN.sub(keep, text.replace("\x00", "").replace(_LITERAL_BACKTICK, ""))
    rendered = renderer(protected.replace("`", _LITERAL_BACKTICK))
    rendered = rendered.replace(_LITERAL_BACKTICK, "`")
    return _KEPT_SPAN.sub(lambda m: f"<code>{escape(spans[int(m.group(1))], quote=False)}</code>", rendered)


def inline(text: str) -> str:
    """One line of stage text as HTML: escaped; code spans (any backtick run), **bold** and *emphasis*."""
    return _with_code_spans(text, emphasis)


def md(text: str) -> str:
    """A block of stage text (paragraphs, lists) as HTML, with the inline rules of :func:`inline`."""
    return _with_code_spans(text, _render_blocks)
