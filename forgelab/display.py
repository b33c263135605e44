"""Plain-text tables and short messages for the terminal and the notebook."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence

SYMBOLS = {
    "passed": "passed", "failed": "FAILED", "error": "ERROR", "skipped": "skipped",
    "timeout": "TIMEOUT", "not_run": "not run",
}


def width() -> int:
    if os.environ.get("FORGELAB_WIDTH", "").isdigit():
        return int(os.environ["FORGELAB_WIDTH"])
    return max(60, min(120, shutil.get_terminal_size((100, 20)).columns))


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 1)] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], total_width: int | None = None) -> str:
    """A left-aligned table; the last column is shortened to fit the width."""
    total = total_width or width()
    columns = list(zip(*([list(headers)] + [list(map(str, row)) for row in rows]))) if rows else [[h] for h in headers]
    widths = [max(len(cell) for cell in column) for column in columns]
    fixed = sum(widths[:-1]) + 2 * (len(widths) - 1)
    widths[-1] = max(20, min(widths[-1], total - fixed))
    def line(cells: Sequence[str]) -> str:
        padded = [str(cell).ljust(w) for cell, w in zip(cells[:-1], widths[:-1])]
        return "  ".join([*padded, shorten(str(cells[-1]), widths[-1])]).rstrip()
    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in rows]
    return "\n".join(out)


def fail(message: str, next_step: str | None = None) -> int:
    """Print a one-line cause (and the next step) to stderr; return exit status 2."""
    print(f"forgelab: {message}", file=sys.stderr)
    if next_step:
        print(f"next: {next_step}", file=sys.stderr)
    return 2
