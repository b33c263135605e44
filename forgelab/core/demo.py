"""A stage's worked demonstration, ``course/stages/NN-slug/demo.py``: jupytext percent cells, both editions in one file.

``# %%`` opens a code cell and ``# %% [markdown]`` a Markdown cell (its lines start with ``# ``). A cell keyed by
language belongs to one edition: ``# %% [markdown] en`` and its translation ``# %% [markdown] zh`` right after it.
Code is written once; a line only one edition runs ends with its tag, ``  # [en]`` or ``  # [zh]`` (the English
``print()`` and the Chinese one, one under the other). :func:`edition` resolves the file for one language; the
notebook builder, the edition check and the plot scripts read its cells (:func:`parse_percent_cells`).
"""

from __future__ import annotations

import re

KEYED_CELL = re.compile(r"^(# %%(?: \[markdown\])?) ([a-z]{2})$")  # `# %% [markdown] zh`: a cell of one edition
EDITION_LINE = re.compile(r"^(.*?)\s*# \[([a-z]{2})\]$")  # `print("选中：", ids)  # [zh]`: a line of one edition


def edition(text: str, language: str) -> str:
    """The demo as the ``language`` edition has it: other editions' cells and lines left out, the keys taken off."""
    kept: list[str] = []
    ours = True
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        end = line[len(body):]
        keyed, tagged = KEYED_CELL.match(body), EDITION_LINE.match(body)
        if keyed:
            ours = keyed.group(2) == language
            body = keyed.group(1)
        elif body.startswith("# %%"):
            ours = True
        elif tagged:
            if tagged.group(2) != language:
                continue
            body = tagged.group(1)
        if ours:
            kept.append(body + end)
    return "".join(kept)


def languages(text: str) -> set[str]:
    """The languages the demo keys a cell or tags a line with."""
    found = set()
    for line in text.splitlines():
        match = KEYED_CELL.match(line) or EDITION_LINE.match(line)
        if match:
            found.add(match.group(2))
    return found


def parse_percent_cells(text: str) -> list[tuple[str, str]]:
    """Split a jupytext-percent file (one edition: see :func:`edition`) into (kind, source) cells; kind is 'code' or
    'markdown'."""
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
