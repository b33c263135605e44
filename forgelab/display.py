"""Plain-text tables and short messages for the terminal and the notebook.

Widths are display columns, not characters: a Chinese character takes two columns in a terminal,
so tables line up in both editions.
"""

from __future__ import annotations

import os
import shutil
import sys
import unicodedata
from collections.abc import Sequence

from forgelab.i18n import N_, _

SYMBOLS = {
    "passed": N_("passed"), "failed": N_("FAILED"), "error": N_("ERROR"), "skipped": N_("skipped"),
    "timeout": N_("TIMEOUT"), "not_run": N_("not run"),
}


def symbol(outcome: str) -> str:
    return _(SYMBOLS[outcome])


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes (wide East Asian characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 0 if unicodedata.combining(ch) else 1
               for ch in text)


def pad(text: str, width: int, right: bool = False) -> str:
    room = " " * max(0, width - columns(text))
    return room + text if right else text + room


def width() -> int:
    if os.environ.get("FORGELAB_WIDTH", "").isdigit():
        return int(os.environ["FORGELAB_WIDTH"])
    return max(60, min(120, shutil.get_terminal_size((100, 20)).columns))


def shorten(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` columns, cut with "…"."""
    text = " ".join(text.split())
    if columns(text) <= limit:
        return text
    kept, used = [], 0
    for ch in text:
        size = columns(ch)
        if used + size > max(limit - 1, 1):
            break
        kept.append(ch)
        used += size
    return "".join(kept) + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], total_width: int | None = None) -> str:
    """A left-aligned table; the last column is shortened to fit the width."""
    total = total_width or width()
    cells_by_column = list(zip(*([list(headers)] + [list(map(str, row)) for row in rows]))) if rows else [[h] for h in headers]
    widths = [max(columns(cell) for cell in column) for column in cells_by_column]
    fixed = sum(widths[:-1]) + 2 * (len(widths) - 1)
    widths[-1] = max(20, min(widths[-1], total - fixed))

    def line(cells: Sequence[str]) -> str:
        padded = [pad(str(cell), w) for cell, w in zip(cells[:-1], widths[:-1])]
        return "  ".join([*padded, shorten(str(cells[-1]), widths[-1])]).rstrip()
    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in rows]
    return "\n".join(out)


def fail(message: str, next_step: str | None = None) -> int:
    """Print a one-line cause (and the next step) to stderr; return exit status 2."""
    print(f"forgelab: {message}", file=sys.stderr)
    if next_step:
        print(_("next: {step}").format(step=next_step), file=sys.stderr)
    return 2
