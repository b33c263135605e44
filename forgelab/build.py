"""``forgelab build``: generate every artefact that is derived from the stage registry.

* ``notebooks/NN-slug.ipynb`` — the ten parts of a stage notebook, executed against the ``solution``
  target with nbclient so that they carry reference outputs (nbval compares against those);
* ``failure_labs/NN-slug/fixtures/failure.json`` — the fault contract;
* ``failure_labs/NN-slug/forge/<module>`` — the broken module, from the reference and ``fault.toml``
  (:mod:`forgelab.variants`).

``--check`` regenerates the unexecuted form and compares it with what is committed, without running
anything: a notebook or contract that is out of date with its source is reported by name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forgelab.paths import Workbook
from forgelab.registry import Course, RegistryError, Stage

BUILDER_VERSION = 2


class BuildError(RuntimeError):
    """A reference notebook could not be built; the message names the cell and the cause."""
IGNORE_OUTPUT = "nbval-ignore-output"
GRADED = "nbval-check-output"  # compared even under --nbval-lax (graders use lax mode)
WIDGET = "forgelab-widget"


# ---------------------------------------------------------------- failure.json
def fault_contract(stage: Stage) -> dict[str, Any]:
    text = stage.text()
    return {
        "stage_id": stage.experiment_id,
        "stage": stage.number,
        "fault_file": stage.fault.fault_file,
        "variant": stage.fault_variant,
        "target_test": stage.fault_target_nodeid,
        "expected_symptom": stage.fault.symptom,
        "diagnosis": list(text.fault_diagnosis),
        "fix_principle": text.fault_fix_principle,
        "check_command": f"forgelab fault check {stage.number}",
    }


def fault_contract_text(stage: Stage) -> str:
    return json.dumps(fault_contract(stage), indent=2, ensure_ascii=False) + "\n"


def fault_contract_path(root: Path, stage: Stage) -> Path:
    return root / stage.fault_contract_file


# ---------------------------------------------------------------- notebook source
def source_digest(stage: Stage) -> str:
    digest = hashlib.sha256(f"builder-{BUILDER_VERSION}".encode())
    for path in stage.source_files():
        if path.name == "mutants.toml":  # course tests only; not part of the notebook
            continue
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


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


def _bullets(items: tuple[str, ...], numbered: bool = False) -> str:
    return "\n".join(f"{i}. {item}" if numbered else f"- {item}" for i, item in enumerate(items, 1))


@dataclass
class _Cells:
    cells: list[Any]

    def md(self, source: str) -> None:
        import nbformat

        self.cells.append(nbformat.v4.new_markdown_cell(source.strip()))

    def code(self, source: str, *tags: str) -> None:
        import nbformat

        cell = nbformat.v4.new_code_cell(source.strip())
        if tags:
            cell.metadata["tags"] = list(tags)
        self.cells.append(cell)


def notebook_source(course: Course, stage: Stage, language: str = "en") -> Any:
    """The unexecuted notebook for a stage, built only from the registry."""
    import nbformat

    text = stage.text(language)
    n = stage.number
    out = _Cells([])
    scenario = course.scenario(stage.scenario, language)
    chain = " → ".join(f"**{s.number}**" if s.number == n else s.number for s in course.stages)
    out.md(f"""
# Stage {n} · {text.title}

{text.capability}

*Capability chain:* {chain} · *module:* `{stage.module}` · *experiment:* `{stage.experiment_id}`

Work through the ten parts in order. Cells marked with a 🔧 talk to your own `{stage.module}`;
run them again whenever you change that file (no kernel restart needed).
""")
    out.code(f'%load_ext forgelab.notebook\nfrom forgelab.notebook import stage_tools\n\nlab = stage_tools("{n}")')
    out.md(f"## 1 · The problem: {text.problem_title}\n\n{text.problem}")
    out.md(f"## 2 · Predict first\n\n{text.prediction.question}\n\nChoose an option below and press the button; the reasoning appears after you answer.")
    out.code("lab.predict()", IGNORE_OUTPUT, WIDGET)
    out.md(f"""
## 3 · What it is, what it is not, how it relates

### What it is
{text.what_it_is}

### What it is not
{text.what_it_is_not}

### How it relates
{text.relations}

> **Boundary decision of this stage.** {text.boundary_decision}
""")
    out.md(f"## 4 · Experiment card\n\nInput scenario: *{scenario.input}*")
    out.code("lab.card()")
    out.md(f"## 5 · Worked demonstration\n\n**Goal:** {text.demo_goal}")
    for kind, source in parse_percent_cells(stage.demo_file(language).read_text(encoding="utf-8")):
        out.md(source) if kind == "markdown" else out.code(source, GRADED)
    out.md(f"""
## 6 · Guided exercise 🔧

{text.exercise}

**Steps**

{_bullets(text.steps, numbered=True)}

**Done when**

{_bullets(text.done_when)}

Stuck? Reveal the hints one at a time (the terminal command `forgelab hint {n}` shares the same counter).
""")
    out.code("lab.hint()", IGNORE_OUTPUT, WIDGET)
    out.md("Run the stage tests against your code. The table shows each required test and, for a failure, "
           "its first difference in one line; the *Why?* button below it shows a whole failure "
           f"(terminal: `forgelab check {n} --why TEST`).")
    out.code("lab.run_tests()", GRADED)
    out.code("lab.why()", IGNORE_OUTPUT, WIDGET)
    out.md(f"""
## 7 · Fault lab 🔧

Someone changed a copy of `{stage.module}`, and now a stage test fails. Your job is a diagnosis: watch
the symptom, find the cause yourself, and repair the copy. The lab is a separate workspace,
`{stage.lab_dir}/`; your own `forge/` is never touched.

1. **Start the lab** — nothing happens until you press it; *Run All* never starts a lab.
2. **Check my fix** — the first time, it shows the symptom: the target test `{stage.fault.target_test}`
   and how it fails.
3. Diagnose. Stuck? **Next diagnosis step** reveals the lab's story, then one diagnosis step at a time,
   then the fix principle (the terminal command `forgelab fault hint {n}` shares the counter).
4. Edit `{stage.lab_module}`, then **Check my fix** again until it says FIXED; a fixed lab is recorded in
   your evidence at once. **Show my changes** compares your file with the broken one.

Terminal equivalents: `forgelab fault start|check|diff|reset|hint {n}`; in a cell: `lab.fault_start()`,
`lab.fault_check()`, `lab.fault_diff()`.
""")
    out.code("lab.fault_lab()", IGNORE_OUTPUT, WIDGET)
    criteria = _bullets(text.transfer_criteria)
    out.md(f"""
## 8 · Transfer challenge 🔧

**Scenario.** {text.transfer_scenario}

**What changed.** {text.transfer_changed_condition}

**Your task.** {text.transfer_task}

**Done when**

{criteria}

Write the test in `{stage.transfer_file}` (replace the `pytest.skip` line), then run:
""")
    out.code("lab.run_transfer()")
    out.md(f"## 9 · Design question\n\n{text.design_question}\n\nWrite your answer below and save it; the rubric appears after saving. (Or type it into a cell: `lab.save_answer(\"\"\"...\"\"\")`, or in the terminal: `forgelab answer {n} --file my-answer.md`.)")
    out.code("lab.design_answer()", IGNORE_OUTPUT, WIDGET)
    out.md(f"""
## 10 · Mastery evidence

{_bullets(text.mastery)}

The button below runs every part for real, writes `{stage.evidence_file}`, and says what the course
page will show when you pick that file. Nothing is written until you press it. (In a cell:
`lab.write_evidence()`; terminal: `forgelab check {n}`.)
""")
    out.code("lab.evidence()", IGNORE_OUTPUT, WIDGET)
    out.md("Where this stage stands — what is done and what is still open (it runs the tests and writes nothing):")
    out.code("lab.summary()", IGNORE_OUTPUT)
    for index, cell in enumerate(out.cells):
        cell["id"] = f"cell-{index:02d}"  # stable ids keep rebuilds diff-friendly
    notebook = nbformat.v4.new_notebook(cells=out.cells)
    notebook.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
        "language_info": {"name": "python", "version": "3.11"},
        "forgelab": {"stage": n, "experiment_id": stage.experiment_id, "language": language,
                     "builder_version": BUILDER_VERSION, "source_digest": source_digest(stage)},
    }
    return notebook


# ---------------------------------------------------------------- execution
def execute(notebook: Any, workbook: Workbook, course: Course, target_name: str = "solution",
            timeout: int = 120) -> Any:
    """Run every cell against ``target_name`` in a fresh workspace; widget outputs are dropped."""
    from nbclient import NotebookClient

    from forgelab.targets import resolve_target

    target = resolve_target(target_name, workbook, course)
    saved = {key: os.environ.get(key) for key in ("PYTHONPATH", "FORGELAB_TARGET", "FORGELAB_WORKSPACE", "FORGELAB_ROOT")}
    with target.importable() as import_dir, tempfile.TemporaryDirectory(prefix="forgelab-build-") as workspace:
        try:
            os.environ["PYTHONPATH"] = str(import_dir)
            os.environ["FORGELAB_TARGET"] = target_name
            os.environ["FORGELAB_WORKSPACE"] = workspace
            os.environ["FORGELAB_ROOT"] = str(workbook.root)
            client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", store_widget_state=False,
                                    resources={"metadata": {"path": str(workbook.root / "notebooks")}})
            client.execute()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    from forgelab.notebook_cells import MARKER

    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and WIDGET in cell.metadata.get("tags", []):
            cell.outputs = []
            cell.execution_count = None
        printed = "".join(str(out.get("text", "")) for out in cell.get("outputs", []))
        if MARKER in printed:
            first = cell.source.strip().splitlines()[0] if cell.source.strip() else "(empty)"
            raise BuildError(f"cell {index} (`{first[:60]}`) did not finish against {target_name}: "
                             f"{printed.strip().splitlines()[0][:300]} — fix the stage source or the reference")
    return notebook


def _comparable(notebook: Any) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(c.cell_type, c.source, tuple(c.metadata.get("tags", []))) for c in notebook.cells]


def write_notebook(path: Path, notebook: Any) -> None:
    import nbformat

    from forgelab.evidence import write_atomic

    write_atomic(path, nbformat.writes(notebook) + "\n")


# ---------------------------------------------------------------- the command's work
@dataclass(frozen=True)
class Staleness:
    stage: Stage
    artefact: str
    reason: str


def stale_artefacts(course: Course, stages: list[Stage] | None = None) -> list[Staleness]:
    """What is out of date with its source, without executing anything."""
    import nbformat

    from forgelab.variants import variant_text

    problems = []
    for stage in stages or list(course.stages):
        variant = course.root / stage.fault_variant
        if (course.root / stage.solution_module).is_file():
            try:
                expected = variant_text(course.root, stage)
            except RegistryError as error:
                problems.append(Staleness(stage, stage.fault_variant, f"cannot be generated: {error}"))
            else:
                if not variant.is_file() or variant.read_text(encoding="utf-8") != expected:
                    problems.append(Staleness(stage, stage.fault_variant, "fault variant differs from solutions/ + fault.toml"))
        contract = fault_contract_path(course.root, stage)
        if not contract.is_file() or contract.read_text(encoding="utf-8") != fault_contract_text(stage):
            problems.append(Staleness(stage, str(contract.relative_to(course.root)), "fault contract differs from stage.toml"))
        path = course.root / stage.notebook
        if not path.is_file():
            problems.append(Staleness(stage, stage.notebook, "notebook missing"))
            continue
        committed = nbformat.read(path, as_version=4)
        if _comparable(committed) != _comparable(notebook_source(course, stage)):
            problems.append(Staleness(stage, stage.notebook, "cells differ from the stage source"))
        elif committed.metadata.get("forgelab", {}).get("source_digest") != source_digest(stage):
            problems.append(Staleness(stage, stage.notebook, "source digest differs"))
        elif any(c.cell_type == "code" and c.execution_count is None and WIDGET not in c.metadata.get("tags", [])
                 for c in committed.cells):
            problems.append(Staleness(stage, stage.notebook, "not executed: reference outputs are missing"))
    return problems


def build_stage(course: Course, workbook: Workbook, stage: Stage, *, run: bool = True) -> list[str]:
    from forgelab.evidence import write_atomic

    from forgelab.variants import variant_text

    written = []
    variant = course.root / stage.fault_variant
    if (course.root / stage.solution_module).is_file():
        text = variant_text(course.root, stage)
        if not variant.is_file() or variant.read_text(encoding="utf-8") != text:
            write_atomic(variant, text)
            written.append(stage.fault_variant)
    contract = fault_contract_path(course.root, stage)
    if not contract.is_file() or contract.read_text(encoding="utf-8") != fault_contract_text(stage):
        write_atomic(contract, fault_contract_text(stage))
        written.append(str(contract.relative_to(course.root)))
    notebook = notebook_source(course, stage)
    if run:
        notebook = execute(notebook, workbook, course)
    write_notebook(course.root / stage.notebook, notebook)
    written.append(stage.notebook)
    return written
