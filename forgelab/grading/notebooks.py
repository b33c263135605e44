"""The reference notebooks as an answer key: reduce them once, run them under nbval per submission.

Grading runs a *reduced copy* of each committed reference notebook: its setup cell, the cells
that set up the demonstration, and the graded cells (tagged ``nbval-check-output``: the worked
demonstration and the stage test table). Widgets, the fault lab, the transfer and evidence cells
are left out — they are graded as their own items, and running them here would only cost time.
The graded cells keep the reference outputs, which nbval (``--nbval-lax``, sanitized like the
course's own nbval run) compares with what the submission's ``forge/`` prints.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from forgelab.grading.isolation import Finished, Limits, run_limited
from forgelab.registry import Course, Stage

GRADED_TAG = "nbval-check-output"
DROPPED_TAGS = frozenset({"forgelab-widget", "nbval-skip"})
META_KEY = "forgelab_grading"


@dataclass(frozen=True)
class CellResult:
    number: int  # position among the graded cells, from 1
    original_cell: int  # index in the committed notebook
    label: str  # first line of the cell's code
    outcome: str  # passed | differs | exception | timeout | not_run | error
    detail: str


@dataclass(frozen=True)
class NotebookRun:
    cells: tuple[CellResult, ...]
    problem: str | None  # a run-level problem: the whole notebook timed out or crashed
    kernel_start_s: float
    execution_s: float
    total_s: float


def _label(source: str) -> str:
    for line in source.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "%")):
            return line if len(line) <= 70 else line[:69] + "…"
    return "(empty cell)"


def reduce_notebook(notebook: dict[str, Any]) -> dict[str, Any]:
    """Keep the setup and demonstration code cells and the graded cells; mark which are graded."""
    kept: list[dict[str, Any]] = []
    graded = 0
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", "")) if isinstance(cell.get("source"), list) else str(cell.get("source", ""))
        tags = set(cell.get("metadata", {}).get("tags", []))
        is_graded = GRADED_TAG in tags
        if not is_graded and (tags & DROPPED_TAGS or source.lstrip().startswith("lab.")):
            continue
        copy = json.loads(json.dumps(cell))
        if is_graded:
            graded += 1
        copy.setdefault("metadata", {})[META_KEY] = {"original_cell": index, "graded": is_graded,
                                                    "number": graded if is_graded else 0, "label": _label(source)}
        kept.append(copy)
    reduced = {key: value for key, value in notebook.items() if key != "cells"}
    reduced["cells"] = kept
    reduced.setdefault("metadata", {}).pop("widgets", None)
    return reduced


def prepare(course: Course, stages: list[Stage], into: Path) -> dict[str, Path]:
    """Write the reduced notebooks of ``stages`` into ``into``; stage number → path (only those that exist)."""
    into.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for stage in stages:
        source = course.root / stage.notebook
        if not source.is_file():
            continue
        notebook = json.loads(source.read_text(encoding="utf-8"))
        target = into / Path(stage.notebook).name
        target.write_text(json.dumps(reduce_notebook(notebook), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written[stage.number] = target
    return written


def graded_cells(path: Path) -> list[dict[str, Any]]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for position, cell in enumerate(notebook["cells"]):
        meta = cell.get("metadata", {}).get(META_KEY, {})
        cells.append({"position": position, **meta})
    return cells


def nbval_command(notebook: Path, limits: Limits) -> list[str]:
    """nbval with plugin autoload off (only nbval and our reporter load: seconds faster per notebook)."""
    sanitize = resources.files("forgelab") / "data" / "nbval-sanitize.cfg"
    ini = notebook.parent / "pytest-grading.ini"
    if not ini.is_file():
        ini.write_text("[pytest]\naddopts = -p no:cacheprovider\n", encoding="utf-8")
    return [sys.executable, "-P", "-m", "pytest", "-c", str(ini), f"--rootdir={notebook.parent}",
            "-p", "nbval.plugin", "-p", "forgelab.grading.nbval_report", "--nbval-lax", "--nbval-current-env",
            "--nbval-sanitize-with", str(sanitize), f"--nbval-cell-timeout={limits.cell_s}",
            f"--nbval-kernel-startup-timeout={min(limits.notebook_s, 120)}", "-q", "--color=no", str(notebook)]


def run_notebook(notebook: Path, import_dir: Path, env: dict[str, str], scratch: Path, limits: Limits) -> NotebookRun:
    """Run one reduced notebook with nbval against ``import_dir/forge`` and read back every cell."""
    cells = graded_cells(notebook)
    report = scratch / f"nbval-{notebook.stem}.jsonl"
    report.unlink(missing_ok=True)
    run_env = dict(env)
    run_env.update(PYTHONPATH=f"{import_dir}{':' + env['FORGELAB_EXTRA_PATH'] if env.get('FORGELAB_EXTRA_PATH') else ''}",
                   FORGELAB_TARGET=str(import_dir), FORGELAB_NBVAL_REPORT=str(report),
                   PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", FORGELAB_SKIP_IMPORTS="rfc3987_syntax")
    started = time.monotonic()
    finished = run_limited(nbval_command(notebook, limits), cwd=notebook.parent, env=run_env, limit_s=limits.notebook_s)
    rows: dict[int, dict[str, Any]] = {}
    if report.is_file():
        for line in report.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row.get("cell"), int):
                rows[row["cell"]] = row
    return _collect(cells, rows, finished, limits, time.monotonic() - started)


def _collect(cells: list[dict[str, Any]], rows: dict[int, dict[str, Any]], finished: Finished,
             limits: Limits, total: float) -> NotebookRun:
    problem = None
    if finished.timed_out:
        problem = f"the notebook was stopped after {limits.notebook_s} s (the limit for one notebook)"
    elif not rows:
        tail = (finished.stderr or finished.stdout).strip().splitlines()[-1:] or ["no output"]
        problem = f"the notebook could not be run: {tail[0][:200]}"
    results: list[CellResult] = []
    blocked: str | None = None  # a failed non-graded cell (setup) explains the graded cells after it
    for cell in cells:
        row = rows.get(cell["position"])
        if not cell.get("graded"):
            if row is not None and row["outcome"] not in ("passed", "not_run"):
                blocked = blocked or f"a setup cell failed ({cell.get('label', '')}: {row['detail'] or row['outcome']})"
            continue
        if row is None:
            outcome, detail = "not_run", problem or "not run"
        elif blocked and row["outcome"] != "passed":
            outcome, detail = row["outcome"], f"{blocked}; then: {row['detail'] or row['outcome']}"
        else:
            outcome, detail = row["outcome"], row["detail"]
        results.append(CellResult(cell["number"], cell["original_cell"], cell.get("label", ""), outcome, detail))
    kernel = max((float(row.get("setup_s", 0.0)) for row in rows.values()), default=0.0)
    execution = sum(float(row.get("call_s", 0.0)) for row in rows.values())
    return NotebookRun(tuple(results), problem, kernel, execution, total)
