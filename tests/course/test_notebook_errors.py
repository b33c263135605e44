"""Errors in the notebook point at the right line (issue 20, items 6 and 7): after an edit without a kernel restart
the traceback names the line as the file reads now; every error names file and line, a learner's own cell too;
an endless loop in learner code called from a cell stops after its stated CPU time, names the line, and Run All
goes on. A real kernel runs each case, with the workbook copy's ``forge`` first on its path."""

from __future__ import annotations

import os
import queue
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, WorkbookCopy

MODULE = "forge/instructions.py"
CELL_LIMIT = 2  # CPU seconds for these tests (the notebooks state and use 10)


class Kernel:
    def __init__(self, root: Path) -> None:
        from forgelab.authoring.kernels import start_kernel

        env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGELAB_", "PYTEST_", "PYTHONPATH"))}
        env.update(FORGELAB_ROOT=str(root), PYTHONPATH=str(root), FORGELAB_WIDTH="200")
        self.manager, self.client = start_kernel(cwd=str(root / "notebooks"), env=env, startup_timeout=180)

    def run(self, code: str, timeout: float = 180) -> str:
        """Run one cell; what it printed and showed (an error that escaped the cell is returned as ESCAPED …)."""
        msg_id = self.client.execute(code)
        out: list[str] = []
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"the cell did not finish within {timeout} s: {code!r}; so far: {''.join(out)}")
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind in ("execute_result", "display_data"):
                out.append(str(content["data"].get("text/plain", "")) + "\n")
            elif kind == "error":
                out.append(f"ESCAPED {content['ename']}: {content['evalue']}\n")
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(out)

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


@pytest.fixture
def kernel(workbook: WorkbookCopy) -> Iterator[Kernel]:
    (workbook.root / MODULE).write_bytes((ROOT / "solutions" / MODULE).read_bytes())
    running = Kernel(workbook.root)
    try:
        assert "ESCAPED" not in running.run(f"%load_ext forgelab.learner.notebook\n__forgelab_guard__.seconds = {CELL_LIMIT}")
        yield running
    finally:
        running.close()


def _line_of(path: Path, text: str) -> int:
    return next(number for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


def test_after_an_edit_without_restart_the_traceback_names_the_right_line(kernel: Kernel, workbook: WorkbookCopy) -> None:
    module = workbook.root / MODULE
    call = "from forge.instructions import Instruction, resolve\nresolve([Instruction('admin', 'write', 'allow')])"
    first = kernel.run(call)
    raised = 'raise ValueError(f"unknown source'
    assert f"forge/instructions.py, line {_line_of(module, raised)}, in rank_of" in first, first
    source = module.read_text(encoding="utf-8")
    module.write_text(source.replace("def rank_of(", "# two lines more\n# above rank_of\ndef rank_of(", 1),
                      encoding="utf-8")
    again = kernel.run("resolve([Instruction('admin', 'write', 'allow')])")  # the name from the earlier cell
    line = _line_of(module, raised)
    assert f"forge/instructions.py, line {line}, in rank_of: {raised}" in again, again
    assert f"line {_line_of(module, 'winners, rejections = explain(instructions)')}, in resolve: winners" in again
    assert "loaded before your last edit" not in again
    assert "this cell, line 1: resolve(" in again


def test_a_learners_own_cell_error_shows_its_line(kernel: Kernel) -> None:
    shown = kernel.run("x = 1\ny = 0\nx / y")
    assert "ZeroDivisionError: division by zero" in shown and "this cell, line 3: x / y" in shown
    assert "ESCAPED" not in shown
    unfinished = kernel.run("from forge.context_selection import ContextCandidate, choose\n"
                            "choose([ContextCandidate('a', 10, 1.0, 1.0)], 100)")
    assert "not implemented yet" in unfinished and re.search(r"forge/context_selection\.py, line \d+", unfinished)


def test_an_endless_loop_stops_with_its_line_and_the_notebook_goes_on(kernel: Kernel, workbook: WorkbookCopy) -> None:
    module = workbook.root / MODULE
    source = module.read_text(encoding="utf-8")
    module.write_text(source.replace("    ranks = [rank_of(item)", "    while True:\n        pass\n    ranks = [rank_of(item)",
                                     1), encoding="utf-8")
    looped = kernel.run("from forge.instructions import Instruction, explain\n"
                        "winners, rejections = explain([Instruction('system', 'write', 'deny')])")
    assert f"stopped after {CELL_LIMIT} s of CPU time" in looped, looped
    assert f"forge/instructions.py, line {_line_of(module, 'while True:')}, in explain: while True:" in looped
    assert "this cell, line 2: winners, rejections = explain(" in looped and "ESCAPED" not in looped
    assert kernel.run("print('the next cell runs')") == "the next cell runs\n"
    swallowed = kernel.run("try:\n    explain([Instruction('system', 'write', 'deny')])\nexcept Exception:\n"
                           "    print('a learner except does not catch it')")
    assert "stopped after" in swallowed and "does not catch it" not in swallowed
    module.write_text(source, encoding="utf-8")
    fixed = kernel.run("winners, rejections = explain([Instruction('system', 'write', 'deny')])\nsorted(winners)")
    assert fixed.strip() == "['write']"


def test_run_all_reaches_the_last_cell_past_a_loop(workbook: WorkbookCopy) -> None:
    """The way JupyterLab's Run All runs a notebook (nbclient, stop on error): every cell runs."""
    import nbformat
    from nbclient import NotebookClient

    from forgelab.authoring.kernels import IpcKernelManager

    module = workbook.root / MODULE
    source = (ROOT / "solutions" / MODULE).read_text(encoding="utf-8")
    module.write_text(source.replace("    ranks = [rank_of(item)", "    while True:\n        pass\n    ranks = [rank_of(item)",
                                     1), encoding="utf-8")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(f"%load_ext forgelab.learner.notebook\n__forgelab_guard__.seconds = {CELL_LIMIT}"),
        nbformat.v4.new_code_cell("from forge.instructions import Instruction, resolve\n"
                                  "resolve([Instruction('system', 'write', 'deny')])"),
        nbformat.v4.new_code_cell("print('the last cell ran')"),
    ])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    saved = dict(os.environ)
    os.environ.update(FORGELAB_ROOT=str(workbook.root), PYTHONPATH=str(workbook.root))
    try:
        NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=False,
                       kernel_manager_class=IpcKernelManager,
                       resources={"metadata": {"path": str(workbook.root / "notebooks")}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    texts = ["".join(output.get("text", "")) for cell in notebook.cells for output in cell.get("outputs", [])]
    assert any("stopped after" in text and "while True" in text for text in texts), texts
    assert texts[-1] == "the last cell ran\n"
    assert sys.executable  # the kernel is this environment's python
