"""Plain-text tables and short messages for the terminal and the notebook.

Nothing is ever cut: a cell too long for its column wraps onto the next lines of the same row (rich lays
the table out; :func:`fill` breaks the lines, between words and between Chinese characters). When the last
column (a cause, a detail, a next step) would be narrower than :data:`STACK_BELOW` columns — an 80-column
terminal and long test names — the table is stacked instead: one line per row with its other cells, and the
last cell under it, indented, at the full width (no cause in 16-column slivers). Widths are
display columns, not characters: a Chinese character takes two columns in a terminal, so tables line up —
and wrap — in both editions. Output is plain text (no colour, no box-drawing characters), so it reads the
same in a terminal, a pipe, a log and a notebook.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from forgelab.core.i18n import N_, _

if TYPE_CHECKING:  # rich loads when a table is drawn, not when the command line starts (a check hands the judge
    from rich.table import Table  # its job first, and draws its table while the tests run)
    from rich.text import Text

SYMBOLS = {
    "passed": N_("passed"), "failed": N_("FAILED"), "error": N_("ERROR"), "skipped": N_("skipped"),
    "timeout": N_("TIMEOUT"), "not_run": N_("not run"),
}
MIN_LAST_COLUMN = 16  # the last column (a cause, a detail) never gets narrower than this
ROOMY_LAST_COLUMN = 20  # ... and is this wide when there is room, even if its cells are shorter
GAP = 2  # spaces between two columns
STACK_BELOW = 30  # a last column narrower than this goes under its row instead (see the module's docstring)
INDENT = 4  # how far a stacked last cell is indented


def symbol(outcome: str) -> str:
    return _(SYMBOLS[outcome])


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes, as rich counts them when it lays a table out (``rich.cells``: wide
    East Asian characters and emoji take two, combining marks and zero-width characters none)."""
    from rich.cells import cell_len  # lazy: rich loads when text is laid out, not when the command line starts

    return cell_len(text)


def pad(text: str, width: int, right: bool = False) -> str:
    room = " " * max(0, width - columns(text))
    return room + text if right else text + room


def width() -> int:
    """The width to lay text out in: ``FORGELAB_WIDTH``, else the terminal's (60 to 120 columns)."""
    if os.environ.get("FORGELAB_WIDTH", "").isdigit():
        return int(os.environ["FORGELAB_WIDTH"])
    return max(60, min(120, shutil.get_terminal_size((100, 20)).columns))


def load_tables() -> None:
    """Load what draws tables (rich) now: a command that waits meanwhile — a check while its tests run — then
    draws its table without loading it first."""
    import rich.console  # noqa: F401
    import rich.table  # noqa: F401
    import rich.text  # noqa: F401


def _render(renderable: Table | Text, total: int) -> str:
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=max(total, 20), color_system=None, force_terminal=False, no_color=True,
                      markup=False, emoji=False, highlight=False, legacy_windows=False, soft_wrap=False,
                      force_jupyter=False)  # text, never a display of its own in a notebook (see the test table)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip("\n").split("\n"))


_CJK = r"\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
# what a line never breaks inside while it fits: a `code span`, a forgelab command with up to three plain words
# ("(forgelab hint 01)"); else a CJK character (each is a place to break), else a run of other non-space characters
_WHOLE = r"`[^`\n]+`|[(（]?forgelab(?: [A-Za-z0-9-][A-Za-z0-9_.-]*){1,3}[)）]?"
_TOKEN = re.compile(rf"(\s*)({_WHOLE}|[{_CJK}]|[^\s{_CJK}]+)")
_PART = re.compile(rf"(\s*)([{_CJK}]|[^\s{_CJK}]+)")  # a whole span too long for any line breaks as plain text
_NO_LINE_START = set("，。、；：！？）」』》〕】’”…—%,.;:!?)]}")  # kept with what comes before them
_NO_LINE_END = set("（「『《〔【‘“")  # an opening mark goes down with what follows it


_FOLD_AFTER = "/_-."  # where a word too long for a line is folded, if it can be: "…/01-slug/" + "design-answer.md"


def _fold(word: str, size: int) -> str:
    """The first line of ``word`` (longer than ``size`` columns): as much as fits, ending just after the last ``/``
    (else ``_``, ``-`` or ``.``) in it when that keeps at least half the line; else exactly as much as fits."""
    piece, used = "", 0
    for ch in word:
        if used + columns(ch) > size:
            break
        piece, used = piece + ch, used + columns(ch)
    for mark in _FOLD_AFTER:
        at = piece.rfind(mark) + 1
        if at and columns(piece[:at]) * 2 >= size:
            return piece[:at]
    return piece


def fill(text: str, size: int) -> list[str]:
    """``text`` broken into lines of at most ``size`` columns: between words, and between any two Chinese (or
    Japanese) characters as a Chinese reader expects — never before a closing mark such as ，or ）, never after an
    opening mark such as （; a word longer than a line is folded, after a ``/`` (or ``_``, ``-``, ``.``) where it
    can be (:func:`_fold`). Nothing is dropped; the spaces between words are kept."""
    lines: list[str] = []
    line, used = "", 0
    tokens = [(" " if match.group(1) else "", match.group(2)) for match in _TOKEN.finditer(" ".join(text.split()))]
    tokens.reverse()
    while tokens:
        space, token = tokens.pop()
        cost = columns(token)
        if " " in token and cost > size:  # a whole span longer than a line: its words break as any words do
            parts = [(" " if match.group(1) else "", match.group(2)) for match in _PART.finditer(token)]
            tokens.extend(reversed([(space, parts[0][1]), *parts[1:]]))
            continue
        if line and used + columns(space) + cost <= size:
            line, used = line + space + token, used + columns(space) + cost
            continue
        if line and token[0] in _NO_LINE_START and used + cost <= size + 2:
            if used + cost <= size:
                line, used = line + space + token, used + cost
                continue
            # the mark would start the next line: take the last character down with it
            carry = line[-1] if columns(line[-1]) == 2 else ""
            if carry:
                lines.append(line[:-1].rstrip())
                line, used = carry + token, columns(carry) + cost
                continue
        carry = ""
        if len(line) > 1 and line[-1] in _NO_LINE_END and cost + columns(line[-1]) <= size:
            carry, line = line[-1], line[:-1]  # "…见提示 4–6（" / "forgelab hint 01）" reads as a dangling mark
        if line:
            lines.append(line.rstrip())
        if carry:
            line, used = carry + token, columns(carry) + cost
            continue
        line, used = "", 0
        while cost > size:  # a word longer than a line (a long path, a test name): fold it
            piece = _fold(token, size)
            lines.append(piece)
            token, cost = token[len(piece):], columns(token[len(piece):])
        line, used = token, cost
    if line or not lines:
        lines.append(line.rstrip())
    return lines


def column_widths(rows: Sequence[Sequence[str]], total: int) -> list[int]:
    """Each column's width for ``rows`` (the header included) in ``total`` columns: every column but the last
    as wide as its widest cell while the last keeps at least :data:`MIN_LAST_COLUMN`; the last takes the rest."""
    natural = [max([columns(str(row[index])) for row in rows] + [1]) for index in range(len(rows[0]))]
    room = total - GAP * (len(natural) - 1)
    fixed = natural[:-1]
    while sum(fixed) + min(MIN_LAST_COLUMN, natural[-1]) > room and max(fixed, default=0) > 8:
        widest = fixed.index(max(fixed))
        fixed[widest] -= 1  # a very long first column (a test name) gives way, and wraps, before the cause does
    space = max(room - sum(fixed), 1)
    return [*fixed, max(min(ROOMY_LAST_COLUMN, space), min(natural[-1], space))]


def _rows(rows: Sequence[Sequence[str]], widths: Sequence[int], right: Sequence[int] = ()) -> str:
    from rich.table import Table
    from rich.text import Text

    grid = Table(box=None, show_header=False, show_edge=False, pad_edge=False, padding=(0, GAP, 0, 0), expand=False)
    for index, size in enumerate(widths):
        grid.add_column(width=size, overflow="fold", justify="right" if index in right else "left")
    for row in rows:
        grid.add_row(*(Text("\n".join(fill(str(cell), size))) for cell, size in zip(row, widths)))
    return _render(grid, sum(widths) + GAP * (len(widths) - 1))


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], total_width: int | None = None,
          right: Sequence[int] = ()) -> str:
    """A left-aligned table in ``total_width`` columns (default: :func:`width`): a header, a rule of dashes under
    each column, the rows. Long cells wrap, none is cut. Columns whose index is in ``right`` are right-aligned.
    Stacked (the last cell under its row) when the last column would be too narrow for a cell it holds."""
    total = total_width or width()
    cells = [list(map(str, headers)), *[list(map(str, row)) for row in rows]]
    widths = column_widths(cells, total)
    if _stacked(widths) and any(columns(row[-1]) > widths[-1] for row in cells[1:]):
        lead = column_widths([row[:-1] for row in cells], total)
        lead[-1] = min(lead[-1], max(columns(row[-2]) for row in cells))  # no room kept for a cell that is not there
        return "\n".join(filter(None, [_header(cells[0], lead, right),
                                        "\n".join(_stacked_row(row, lead, right, total) for row in cells[1:])]))
    return "\n".join(filter(None, [_plain_header(headers, widths, right), _rows(rows, widths, right) if rows else ""]))


def _stacked(widths: Sequence[int]) -> bool:
    return len(widths) > 1 and widths[-1] < STACK_BELOW


def _full(widths: Sequence[int]) -> int:
    return sum(widths) + GAP * (len(widths) - 1)


def _header(headers: Sequence[str], lead: Sequence[int], right: Sequence[int]) -> str:
    """The header of a stacked table: the other columns' names, the last one's name indented under them, a rule."""
    return "\n".join([_rows([headers[:-1]], lead, right), " " * INDENT + headers[-1],
                      (" " * GAP).join("-" * size for size in lead)])


def _stacked_row(cells: Sequence[str], lead: Sequence[int], right: Sequence[int], total: int) -> str:
    last = str(cells[-1])
    under = [" " * INDENT + line for line in fill(last, max(total - INDENT, 20))] if last.strip() else []
    return "\n".join([_rows([cells[:-1]], lead, right), *under])


def table_row(cells: Sequence[str], widths: Sequence[int], right: Sequence[int] = ()) -> str:
    """One row laid out in the given column widths (for tables printed a row at a time); wraps, never cuts.
    Stacked when the last width is below :data:`STACK_BELOW` (as :func:`table_header` says)."""
    if _stacked(widths):
        return _stacked_row(cells, widths[:-1], right, _full(widths))
    return _rows([cells], widths, right)


def table_header(headers: Sequence[str], widths: Sequence[int], right: Sequence[int] = ()) -> str:
    """The header and its rule, laid out like :func:`table_row`."""
    if _stacked(widths):
        return _header(headers, widths[:-1], right)
    return _plain_header(headers, widths, right)


def _plain_header(headers: Sequence[str], widths: Sequence[int], right: Sequence[int]) -> str:
    return _rows([headers], widths, right) + "\n" + (" " * GAP).join("-" * size for size in widths)


class Grid:
    """A table for a notebook cell's output: an HTML ``<table>`` where the front end shows HTML, so its columns line up
    whatever width the notebook's font gives a Chinese character (JupyterLab's monospace fallback draws them narrower
    than two columns), and the text table of :func:`table` everywhere else (a terminal, a log, nbval's text).

    ``headers`` may be empty: a table of labels and values, without a header row. Columns whose index is in ``right``
    are right-aligned (numbers). Jupyter shows it through :meth:`_repr_mimebundle_`; ``str()`` is the text."""

    def __init__(self, headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[int] = (),
                 total_width: int | None = None, indent: int = 0) -> None:
        self.headers = [str(header) for header in headers]
        self.rows = [[str(cell) for cell in row] for row in rows]
        self.right = tuple(right)
        self.total_width = total_width
        self.indent = indent

    def text(self) -> str:
        lead = " " * self.indent
        if self.headers:
            body = table(self.headers, self.rows, self.total_width, self.right)
        else:  # labels and values: each column as wide as its widest cell, the last one never wrapped
            widths = [max(columns(row[index]) for row in self.rows) for index in range(len(self.rows[0]) - 1)] \
                if self.rows else []
            body = "\n".join(" ".join(pad(cell, size + (index == len(widths) - 1), index in self.right)
                                       for index, (cell, size) in enumerate(zip(row, widths))) + row[-1]
                             for row in self.rows)
        return "\n".join(lead + line if line else line for line in body.split("\n"))

    def html(self) -> str:
        from forgelab.core.text import esc  # lazy: only a notebook asks for HTML

        def cell(tag: str, text: str, index: int) -> str:
            align = "right" if index in self.right else "left"
            return (f'<{tag} style="text-align: {align}; vertical-align: top; white-space: pre-wrap; '
                    f'padding: 0.15em 0.9em 0.15em 0">{esc(text)}</{tag}>')

        head = ("<thead><tr>" + "".join(cell("th", text, index) for index, text in enumerate(self.headers))
                + "</tr></thead>") if self.headers else ""
        body = "".join("<tr>" + "".join(cell("td", text, index) for index, text in enumerate(row)) + "</tr>"
                       for row in self.rows)
        margin = f"margin-left: {self.indent}ch; " if self.indent else ""
        return (f'<table class="forgelab-table" style="{margin}border-collapse: collapse; width: auto">'
                f"{head}<tbody>{body}</tbody></table>")

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __str__(self) -> str:
        return self.text()


def wrap(text: str, total_width: int | None = None, indent: int = 0) -> str:
    """``text`` wrapped at word boundaries (CJK between any two characters) in ``total_width`` columns. Its leading
    spaces stay; the lines after the first are indented by ``indent`` more spaces."""
    total = total_width or width()
    lead = len(text) - len(text.lstrip(" "))
    first, *rest = fill(text, max(total - lead - indent, 20))
    return "\n".join([" " * lead + first, *(" " * (lead + indent) + line for line in rest)])


def fail(message: str, next_step: str | None = None) -> int:
    """Print a one-line cause (and the next step) to stderr; return exit status 2."""
    print(f"forgelab: {message}", file=sys.stderr)
    if next_step:
        print(_("next: {step}").format(step=next_step), file=sys.stderr)
    return 2
