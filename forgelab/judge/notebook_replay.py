"""Replay a stage notebook's worked demonstration against a target, on the judge's trusted side.

The course's reference notebook is the answer key: its demonstration cells carry the reference
output. Grading replays those cells — the course's own code, never the learner's — in the judge's
trusted session, where every ``forge`` call crosses into the learner's sandbox like a stage test's
do, and compares what each graded cell prints with the reference output, after the same sanitizers
as the course's nbval run (``forgelab/data/nbval-sanitize.cfg``). No Jupyter kernel is started.

Which cells: the code cells of the demonstration (widgets, magics and ``lab.`` tool cells are left
out; they are graded as their own items), run in order in one namespace per notebook; a cell tagged
``nbval-check-output`` is a graded item. A table the demonstration shows (``lab.table``) is compared by its cells
(:class:`ReplayTools`). A cell that raises stops the cells that need it: each later
graded cell says which earlier cell failed.

The causes are worded in the judge's language (``JudgeSettings.language``, which the session plugin makes the
active one): a Chinese class reads a Chinese cause, with Python's own text of the error quoted after it.
"""

from __future__ import annotations

import ast
import configparser
import contextlib
import io
import re
import sys
import types
from importlib import resources
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from forgelab.core.i18n import _
from forgelab.judge import explain
from forgelab.core import pyast

GRADED = "nbval-check-output"
SKIPPED_TAGS = frozenset({"forgelab-widget", "nbval-skip", "nbval-ignore-output"})


def sanitizers() -> list[tuple[re.Pattern[str], str]]:
    parser = configparser.ConfigParser()
    parser.read_string((resources.files("forgelab") / "data" / "nbval-sanitize.cfg").read_text(encoding="utf-8"))
    return [(re.compile(parser[section]["regex"]), parser[section]["replace"]) for section in parser.sections()]


def sanitize(text: str, rules: list[tuple[re.Pattern[str], str]]) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


Text = str | list[str]  # nbformat writes a multi-line text as one string or as a list of lines


def _joined(text: Text) -> str:
    return "".join(text) if isinstance(text, list) else text


class _Read(BaseModel):
    """nbformat's JSON as far as the replay reads it; every other key Jupyter writes is left alone."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class CellMetadata(_Read):
    tags: list[str] = []


class Output(_Read):
    """One output of a reference cell: printed text (a stream) or shown data (``text/html`` of a ``lab.table``)."""

    output_type: str
    name: str = ""
    text: Text = ""
    data: dict[str, object] = {}  # free-form: a MIME bundle, mime type → that type's content; only text/html is read


class Cell(_Read):
    cell_type: str
    source: Text = ""
    metadata: CellMetadata = CellMetadata()
    outputs: list[Output] = []


class ReferenceNotebook(_Read):
    """A built stage notebook (the answer key): its cells, in order."""

    cells: list[Cell] = []


def read_notebook(path: Path) -> ReferenceNotebook:
    """The reference notebook at ``path``; a file that is not one is the course's fault, named with its field."""
    try:
        return ReferenceNotebook.model_validate_json(path.read_bytes())
    except ValidationError as error:
        where = ".".join(str(part) for part in error.errors()[0]["loc"]) or "(top)"
        raise ValueError(f"{path}: not a notebook the replay can read ({where}: {error.errors()[0]['msg']}); "
                         "the course's build writes it: run `forgelab build`") from None


def _source(cell: Cell) -> str:
    return _joined(cell.source)


TABLE_CLASS = "forgelab-table"  # the class of the HTML table ``lab.table`` shows (forgelab.core.display.Grid)


def table_text(rows: list[list[str]]) -> str:
    """A table as the replay compares it: its cells, a row a line — never its layout, which follows the width of
    wherever it was drawn (the reference notebook's kernel, the judge)."""
    return "".join("table | " + " | ".join(row) + "\n" for row in rows)


class _TableCells(HTMLParser):
    """The cells of each ``forgelab-table`` in a reference output's HTML, as their text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._depth = 0  # inside a forgelab table
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and TABLE_CLASS in (dict(attrs).get("class") or "").split():
            self._depth += 1
        elif self._depth and tag == "tr":
            self.rows.append([])
        elif self._depth and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._depth:
            self._depth -= 1
        elif self._cell is not None and tag in ("td", "th"):
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _shown(output: Output) -> str:
    """What one output of a reference cell holds for the replay: printed text, or a ``lab.table`` as its cells."""
    if output.output_type == "stream" and output.name == "stdout":
        return _joined(output.text)
    html = output.data.get("text/html", "") if output.output_type == "display_data" else ""
    html = "".join(str(line) for line in html) if isinstance(html, list) else str(html)
    if TABLE_CLASS not in html:
        return ""
    parser = _TableCells()
    parser.feed(html)
    return table_text(parser.rows)


class ReplayTools:
    """``lab`` in the replayed cells: the notebook's stage tools hold the tables a demonstration shows
    (``lab.table``) and the edition it speaks (``lab.language``); here a table is printed as its cells
    (:func:`table_text`), so it is compared with the reference output's table cell by cell."""

    def __init__(self, language: str) -> None:
        self.language = language

    def table(self, headers: list[str], rows: list[list[Any]] | list[tuple[Any, ...]], right: tuple[int, ...] = ()) -> None:
        print(table_text(([[str(header) for header in headers]] if headers else [])
                         + [[str(cell) for cell in row] for row in rows]), end="")


def notebook_language(notebook: ReferenceNotebook) -> str:
    """The edition the notebook's stage tools speak (its ``stage_tools(..., lang="xx")`` cell); English without one."""
    for cell in notebook.cells:
        if cell.cell_type == "code" and (found := re.search(r"stage_tools\([^)]*lang=[\"'](\w+)[\"']", _source(cell))):
            return found.group(1)
    return "en"


def demonstration_cells(notebook: ReferenceNotebook) -> list[tuple[int, str, bool, str]]:
    """(index in the notebook, source, graded?, reference output) for every replayed cell, in order."""
    found = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        source = _source(cell)
        tags = set(cell.metadata.tags)
        stripped = source.lstrip()
        if tags & SKIPPED_TAGS or stripped.startswith(("%", "lab.", "from forgelab.learner.notebook")) or not stripped:
            continue
        reference = "".join(_shown(output) for output in cell.outputs)
        found.append((index, source, GRADED in tags, reference))
    return found


def _label(source: str) -> str:
    for line in source.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line if len(line) <= 70 else line[:69] + "…"
    return _("(empty cell)")


class CellFailed(Exception):
    """A replayed cell raised, or printed something other than the reference."""


def _raised(index: int, source: str, error: BaseException) -> str:
    """"cell N `label` raised", with Python's own words for the error (as raised, never translated)."""
    return _("cell {index} `{label}` raised {error}").format(index=index, label=_label(source),
                                                             error=f"{type(error).__name__}: {error}")


# free-form: a module's namespace holds whatever the course's demonstration code defines
def run_cell(source: str, namespace: dict[str, Any], name: str) -> str:
    """Execute one cell like a notebook would: its prints, and the value of a last bare expression."""
    tree = pyast.parse(source, filename=name)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body = tree.body[:-1]
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        exec(pyast.compile_tree(tree, name, "exec"), namespace)  # noqa: S102 - the course's own demonstration code
        if last is not None:
            value = eval(pyast.compile_tree(ast.Expression(last.value), name, "eval"), namespace)  # noqa: S307 - course code
            if value is not None:
                captured.write(repr(value) + "\n")
    return captured.getvalue()


@dataclass
class ReplayState:
    """What the cells of one notebook share as they run in order: the first failure, which stops the rest."""

    failed: str | None = None


class NotebookFile(pytest.File):
    """One reference notebook: a graded item per graded demonstration cell."""

    def collect(self) -> Any:
        notebook = read_notebook(self.path)
        # the cells run in a module of their own whose file is the notebook: objects they define are the
        # test's objects (they may be handed to the learner's code as handles), like a test file's
        module = types.ModuleType(f"forgelab_notebook_{re.sub(r'[^A-Za-z0-9_]', '_', self.path.stem)}")
        module.__file__ = str(self.path)
        sys.modules[module.__name__] = module
        namespace: dict[str, Any] = module.__dict__  # free-form: see run_cell
        namespace["lab"] = ReplayTools(notebook_language(notebook))
        state = ReplayState()
        waiting: list[tuple[int, str]] = []
        cells = demonstration_cells(notebook)
        number = 0
        for index, source, graded, reference in cells:
            if not graded:
                waiting.append((index, source))
                continue
            number += 1
            yield NotebookCell.from_parent(self, name=f"cell-{index:02d}", index=index, source=source,
                                           reference=reference, before=tuple(waiting), namespace=namespace,
                                           state=state, number=number)
            waiting = []


class NotebookCell(pytest.Item):
    # free-form: the namespace, see run_cell
    def __init__(self, *, index: int, source: str, reference: str, before: tuple[tuple[int, str], ...],
                 namespace: dict[str, Any], state: ReplayState, number: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index, self.source, self.reference, self.before = index, source, reference, before
        self.namespace, self.state, self.number = namespace, state, number

    def runtest(self) -> None:
        if self.state.failed is not None:
            raise CellFailed(_("not run: an earlier cell failed ({which})").format(which=self.state.failed))
        for index, source in self.before:
            try:
                run_cell(source, self.namespace, f"{self.path}#cell-{index}")
            except BaseException as error:
                self.state.failed = _raised(index, source, error)
                raise CellFailed(_("a setup cell raised: {raised}").format(raised=_raised(index, source, error))) from error
        try:
            printed = run_cell(self.source, self.namespace, f"{self.path}#cell-{self.index}")
        except BaseException as error:
            self.state.failed = _("cell {index} raised {error}").format(index=self.index, error=type(error).__name__)
            raise
        rules = sanitizers()
        got, expected = sanitize(printed, rules), sanitize(self.reference, rules)
        if got != expected:
            where = explain.first_difference(got, expected) or _("the output differs")
            raise CellFailed(_("output differs from the reference: {where}").format(where=where))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CellFailed):
            return _("cell {index} `{label}`: {problem}").format(index=self.index, label=_label(self.source),
                                                                  problem=excinfo.value)
        return _raised(self.index, self.source, excinfo.value)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.index, f"cell {self.index}: {_label(self.source)}"
