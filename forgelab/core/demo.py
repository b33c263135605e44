"""A stage's worked demonstration, ``course/stages/NN-slug/demo.py``: jupytext percent cells.

``# %%`` opens a code cell and ``# %% [markdown]`` a Markdown cell (its lines start with ``# ``). The
notebook builder, the edition check and the plot scripts read the same cells (:func:`parse_percent_cells`).
"""

from __future__ import annotations

import re


def parse_percent_cells(text: str) -> list[tuple[str, str]]:
    """Split a jupytext-percent file into (kind, source) cells; kind is 'code' or 'markdown'."""
    cells: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        header = re.match(r"^# %%(.*)$", line)
        if header:
            cells.append(("markdown" if "[markdown]" in header.group(1) else "code", []))
        elif cells:
            cells[-1][1].append(line)
    result = []
    for kind, lines in cells:
        if kind == "markdown":
            lines = [re.sub(r"^# ?", "", line) for line in lines]
        source = "\n".join(lines).strip("\n")
        if source.strip():
            result.append((kind, source))
    return result
