"""Text for people: stage text as HTML (Markdown through markdown-it-py) and words counted the same in both editions.

The course page (:mod:`forgelab.site.pages`), the notebooks (:mod:`forgelab.learner.notebook`) and the grading
feedback (:mod:`forgelab.grading.feedback`) render stage text with :func:`md` (paragraphs, bullet and numbered
lists) and :func:`inline` (one line): ``code`` spans, **bold** and *emphasis*, by CommonMark's rules (so emphasis
works in Chinese, where no spaces separate words, and ``snake_case_names`` keep their underscores). Nothing else
is Markdown here — no headings, links, images or raw HTML: HTML in the source is shown as text, never
interpreted, so a stage author cannot break the page by accident. :func:`esc` is the one escape for HTML text
outside a template (templates escape by themselves).

:func:`templates` is the one Jinja2 environment of ``forgelab/data/templates`` (the course page, the feedback
page): autoescaped, strict about undefined names, the tools' gettext catalog of one language installed
(``jinja2.ext.i18n``, so ``{{ _("…") }}`` is extracted and translated like ``_()`` in Python), and the
filters ``md`` and ``inline`` above, and ``gap`` (the space between two pieces of text, none after Chinese).
"""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape
from typing import TYPE_CHECKING

from forgelab.core.i18n import translations

if TYPE_CHECKING:
    from jinja2 import Environment
    from markdown_it import MarkdownIt


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    """CommonMark's paragraphs, lists, code spans and emphasis; raw HTML, links, headings and the rest stay off.
    Made at the first page rendered: a command that only counts words (``check``) never loads markdown-it."""
    from markdown_it import MarkdownIt

    return MarkdownIt("zero", {"html": False}).enable(["list", "emphasis", "backticks", "newline"])


def md(text: str) -> str:
    """A block of stage text (paragraphs, lists) as HTML; a line break between two Chinese characters is joined."""
    return str(_markdown().render(join_cjk_lines(text))).rstrip("\n")


# Chinese characters and full-width punctuation: a line break between two of them is no space in Chinese text.
_WIDE = "\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_CJK_LAST = re.compile(f"[{_WIDE}]$")
_CJK_FIRST = re.compile(f"[{_WIDE}]")


@lru_cache(maxsize=1)
def _commonmark() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def join_cjk_lines(text: str) -> str:
    """``text`` with every line break inside a paragraph that falls between two Chinese characters (or full-width
    punctuation) removed, with the next line's indentation.

    Markdown renders such a break as a space, and Chinese puts no space between words ("自己找出原因， 说出它"):
    the sources may wrap their Chinese lines for the author; the learner reads them joined. Only paragraphs are
    touched (CommonMark's own reading, so list items' continuation lines too), never code blocks, headings or
    tables; a break next to a Latin letter, a digit or a code span stays, since it reads as the space Chinese
    text puts there anyway.
    """
    if "\n" not in text or not _CJK_FIRST.search(text):
        return text
    lines = text.split("\n")
    joined: set[int] = set()
    for token in _commonmark().parse(text):
        if token.type == "paragraph_open" and token.map:
            start, end = token.map
            joined.update(i for i in range(start, end - 1)
                          if _CJK_LAST.search(lines[i]) and _CJK_FIRST.match(lines[i + 1].lstrip()))
    if not joined:
        return text
    out: list[str] = []
    for number, line in enumerate(lines):
        if number - 1 in joined:
            out[-1] += line.lstrip()
        else:
            out.append(line)
    return "\n".join(out)


def inline(text: str) -> str:
    """One line of stage text as HTML: escaped; code spans (any backtick run), **bold** and *emphasis*."""
    return str(_markdown().renderInline(text))


def esc(text: object, quote: bool = True) -> str:
    """Any value as HTML text: ``&``, ``<``, ``>`` escaped, and both quotes unless ``quote`` is false."""
    return escape(str(text), quote=quote)


@lru_cache(maxsize=None)
def templates(language: str) -> Environment:
    """The templates of ``forgelab/data/templates`` speaking ``language`` (English: the message ids themselves)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined  # lazy: start-up speed of the CLI
    from markupsafe import Markup

    environment = Environment(loader=PackageLoader("forgelab", "data/templates"), autoescape=True,
                              undefined=StrictUndefined, extensions=["jinja2.ext.i18n"], trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True)
    environment.install_gettext_translations(translations(language), newstyle=False)  # type: ignore[attr-defined]
    environment.filters["md"] = lambda text: Markup(md(str(text)))
    environment.filters["inline"] = lambda text: Markup(inline(str(text)))
    environment.filters["gap"] = gap
    return environment


def gap(text: object) -> str:
    """The space to put after ``text`` before the next words: none after full-width punctuation or a Chinese
    character ("部分达到。13 个", not "部分达到。 13 个"), one space after anything else."""
    return "" if _CJK_LAST.search(str(text).rstrip()) else " "


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


