"""The notebook runs only what is saved, and a hang costs one limit (issue 32).

After the stage module loaded once and then fails to import (a syntax, an import or a name error in the saved file),
every cell that uses it — imports it, or calls a name an earlier cell imported from it — says the module does not
import, with file, line and message, and runs nothing of the code loaded before. Once a call is stopped for CPU time,
the module is marked hanging until its file changes: Run All of notebook 01 with an endless loop in ``explain`` is
stopped once, and every later cell that would call it (the demonstration, the tests, the transfer test, the summary)
says why it skipped. A real kernel runs each case."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, WorkbookCopy
from forgelab.authoring.build import REFERENCE_OUTPUT_TAG
from test_notebook_errors import CELL_LIMIT, Kernel

MODULE = "forge/instructions.py"
GOOD = "from forge.instructions import Instruction, explain, resolve\n" \
       "system = Instruction('system', 'write', 'deny')\nprint(resolve([system])[0])"
# each edit, what the file then says at which line (found by the text of that line)
EDITS = {
    "syntax": ("def explain(", "def explain(:", "def explain(:", "invalid syntax"),
    "import": ("def rank_of(", "from forge.no_such_helper import helper\n\n\ndef rank_of(",
               "from forge.no_such_helper import helper", "ModuleNotFoundError: No module named 'forge.no_such_helper'"),
    "name": ("def rank_of(", "LIMITS = UNDEFINED_LIMITS\n\n\ndef rank_of(", "LIMITS = UNDEFINED_LIMITS",
             "NameError: name 'UNDEFINED_LIMITS' is not defined"),
}


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


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_after_a_bad_save_no_cell_runs_the_old_module(kernel: Kernel, workbook: WorkbookCopy, edit: str) -> None:
    module = workbook.root / MODULE
    assert kernel.run(GOOD) == "{'write': 'deny'}\n"
    find, replace, line_text, message = EDITS[edit]
    source = module.read_text(encoding="utf-8")
    module.write_text(source.replace(find, replace, 1), encoding="utf-8")
    said = f"forge/instructions.py does not import — line {_line_of(module, line_text)}: {message}"
    for cell, used in [("print(resolve([system])[0])", "resolve"),  # a name an earlier cell imported
                       ("print(system)", "system"),  # an instance of its class: its __repr__ is the old code
                       (GOOD, "forge.instructions"),  # importing it again
                       ("import forge.instructions as fi\nfi.resolve([])", "forge.instructions")]:
        shown = kernel.run(cell)
        assert said in shown and f"This cell uses {used} from it and ran nothing" in shown, shown
        assert "{'write'" not in shown and "Instruction(" not in shown and "ESCAPED" not in shown, shown
    assert kernel.run("print('a cell that does not use it runs')") == "a cell that does not use it runs\n"
    module.write_text(source + "\n# fixed\n", encoding="utf-8")  # saved, importing again: the saved code runs
    assert kernel.run("print(resolve([system])[0])") == "{'write': 'deny'}\n"


def test_a_module_that_never_loaded_names_its_line(kernel: Kernel, workbook: WorkbookCopy) -> None:
    """The first import fails at the module's top level: the cell says the module does not import, not 'skipped'."""
    module = workbook.root / MODULE
    module.write_text(module.read_text(encoding="utf-8").replace("def rank_of(", "LIMITS = UNDEFINED\n\n\ndef rank_of(", 1),
                      encoding="utf-8")
    shown = kernel.run(GOOD)
    assert f"forge/instructions.py does not import — line {_line_of(module, 'LIMITS = UNDEFINED')}: NameError" in shown
    shown = kernel.run("print(resolve([system]))")  # needs names the failed cell did not define
    assert "skipped — it needs resolve" in shown and "does not import" in shown, shown


def test_a_call_stopped_for_cpu_time_marks_the_module_until_it_is_saved(kernel: Kernel, workbook: WorkbookCopy) -> None:
    module = workbook.root / MODULE
    assert kernel.run(GOOD) == "{'write': 'deny'}\n"
    source = module.read_text(encoding="utf-8")
    module.write_text(source.replace("    ranks = [rank_of(item)", "    while True:\n        pass\n    ranks = [rank_of(item)",
                                     1), encoding="utf-8")
    assert f"stopped after {CELL_LIMIT} s of CPU time" in kernel.run("explain([system])")
    skipped = kernel.run("print(resolve([system])[0])")
    loop = _line_of(module, "while True:")
    assert skipped.startswith("⚠ this cell did not finish: skipped — forge/instructions.py was stopped after it ran out "
                              f"of CPU time (line {loop}: stopped after {CELL_LIMIT} s of CPU time"), skipped
    assert "this cell uses resolve from it" in skipped and "{'write'" not in skipped
    module.write_text(source, encoding="utf-8")  # saved again: the mark is lifted, the fixed code runs
    assert kernel.run("print(resolve([system])[0])") == "{'write': 'deny'}\n"


@pytest.mark.slow
def test_run_all_with_an_endless_loop_is_stopped_once(workbook: WorkbookCopy, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Notebook 01 as JupyterLab's Run All runs it (nbclient), with an endless loop in ``explain``: one call is stopped
    (the first demonstration cell); every later cell that would call the module skips with a line saying why — the
    other demonstration cells, the tests, the transfer test, the summary — so Run All costs one CPU limit. Counted by
    the stopped calls, not by a clock."""
    import nbformat
    from nbclient import NotebookClient

    from forgelab.authoring.kernels import IpcKernelManager

    module = workbook.root / MODULE
    source = (ROOT / "solutions" / MODULE).read_text(encoding="utf-8")
    module.write_text(source.replace("    ranks = [rank_of(item)", "    while True:\n        pass\n    ranks = [rank_of(item)",
                                     1), encoding="utf-8")
    notebook = nbformat.read(workbook.root / "notebooks/01-instruction-hierarchy.ipynb", as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    first = next(index for index, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    notebook.cells.insert(first + 1, nbformat.v4.new_code_cell(f"__forgelab_guard__.seconds = {CELL_LIMIT}"))
    monkeypatch.setenv("FORGELAB_ROOT", str(workbook.root))
    monkeypatch.setenv("FORGELAB_WORKSPACE", str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(workbook.root))
    monkeypatch.delenv("FORGELAB_TARGET", raising=False)
    NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=False, kernel_manager_class=IpcKernelManager,
                   resources={"metadata": {"path": str(workbook.root / "notebooks")}}).execute()
    printed = {cell.source: "".join(output.get("text", "") for output in cell.outputs)
               for cell in notebook.cells if cell.cell_type == "code"}
    stopped = [source for source, text in printed.items() if "stopped after" in text and "skipped" not in text]
    assert len(stopped) == 1 and "resolve([retrieved, system, goal])" in stopped[0], printed
    calls = [source for source in printed if source.startswith(("winners, rejections = explain", "try:\n    resolve"))]
    tools = ["lab.run_tests()\nlab.recheck_on_save()", "lab.run_transfer()", "lab.summary()"]
    assert len(calls) == 2
    for source in [*calls, *tools]:
        assert "skipped — forge/instructions.py was stopped after it ran out of CPU time" in printed[source], \
            (source, printed[source])
        assert "timeout" not in printed[source] and printed[source].count("\n") <= 2, (source, printed[source])
    assert re.search(r"line \d+", printed[tools[0]])
    # the reference output stays beside the learner's result: a Markdown cell under each demonstration cell
    references = [cell.source for cell in notebook.cells if REFERENCE_OUTPUT_TAG in cell.metadata.get("tags", [])]
    assert len(references) == 3 and "accepted: {'write': 'deny', 'goal'" in references[0], references
    assert "lost to system (lower_rank)" in references[1] and "ValueError: unknown source 'admin'" in references[2]


def test_a_reference_output_cell_that_differs_from_its_cell_is_stale(workbook: WorkbookCopy) -> None:
    import nbformat

    from forgelab.authoring.build import _stale_notebook
    from forgelab.core.registry import load_course

    course = load_course(workbook.root)
    stage = course.stage("01")
    path = workbook.root / stage.notebook
    assert _stale_notebook(course, stage, "en") is None
    notebook = nbformat.read(path, as_version=4)
    cell = next(cell for cell in notebook.cells if REFERENCE_OUTPUT_TAG in cell.metadata.get("tags", []))
    cell.source = cell.source.replace("'deny'", "'allow'")
    nbformat.write(notebook, path)
    assert "reference output differs from what the cell above printed" in str(_stale_notebook(course, stage, "en"))
