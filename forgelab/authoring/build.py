"""``forgelab build``: generate every artefact that is derived from the stage registry.

* ``notebooks/NN-slug.ipynb`` — the ten parts of a stage notebook, executed against the ``solution``
  target with nbclient so that they carry reference outputs (nbval compares against those);
* ``failure_labs/NN-slug/fixtures/failure.json`` — the fault contract;
* ``failure_labs/NN-slug/forge/<module>`` — the broken module, from the reference and ``fault.toml``
  (:mod:`forgelab.verdicts.variants`);
* ``course/stages/NN-slug/figure*.svg`` — the stage's figures (:mod:`forgelab.authoring.figures`): Mermaid
  sources rendered for the course page, plot scripts run against the reference;
* ``notebooks/00-opening.ipynb`` — the chapter's opening, from the ``opening`` texts of
  ``course/course.toml`` (:data:`OPENING_KEYS`).

``--check`` regenerates the unexecuted form and compares it with what is committed, without running
anything: a notebook or contract that is out of date with its source is reported by name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forgelab.verdicts import diagnosis, jobs
from forgelab.authoring import figures
from forgelab.core import demo, verification
from forgelab.core.figures import Figure, FigureError, stage_figures
from forgelab.core.opening import (CONCEPT_PARTS, CONCEPTS, OPENING_KEYS, OpeningError, is_project, missing_opening_keys,
                                   opening_texts)
from forgelab.learner.notebook_cells import CELL_CPU_SECONDS, markers
from forgelab.core.i18n import N_, _, speaking
from forgelab.core.paths import Workbook
from forgelab.core.course_files import StageTexts
from forgelab.core.registry import Course, RegistryError, Stage, edition_notebook
from forgelab.verdicts.mutants import load_mutants
from forgelab.verdicts.variants import variant_text
from forgelab.judge import core
from forgelab.judge.core import CourseTests
from forgelab.judge.outcomes import Outcome
from forgelab.judge.settings import DEFAULT
from forgelab.core.targets import resolve_target
from forgelab.core.evidence import write_atomic
from forgelab.core.text import join_cjk_lines
from forgelab.site.builder import BUNDLE_PAGE
from forgelab.site.pages import stage_page

BUILDER_VERSION = 6  # 6: each demonstration cell's reference output kept in a Markdown cell under it
OPENING_NOTEBOOK = "notebooks/00-opening.ipynb"
REFERENCE_OUTPUT_NOTE = N_("Under each cell, a box keeps its **reference output**: what the reference solution prints. "
                           "Running a cell (Run All too) replaces only the cell's own output, so the reference stays "
                           "beside your result. Once your `{module}` works, run the cells and compare.")
REFERENCE_OUTPUT_HEAD = N_("**Reference output** of the cell above (what the reference solution prints):")
REFERENCE_OUTPUT_TAG = "forgelab-reference-output"  # a Markdown cell that holds the demonstration cell's output above
FAULT_LAB_TEXT = N_("""Someone changed a copy of `{module}`, and now stage tests fail. Your job is a diagnosis before
a repair: watch the symptom, find the cause yourself, say what it is, then repair the copy. The lab is a separate
workspace, `{lab_dir}/`; your own `forge/` is never touched.

1. **Start the lab** — nothing happens until you press it; *Run All* never starts a lab.
2. **Check my fix** — the first time, it shows the symptom: the target test `{target}`
   and how it fails.
3. **Diagnose** in the cell below: which test shows the defect, in which function it lies, which defect it
   is, and a sentence in your own words. Stuck? **Next diagnosis step** reveals the lab's story, then one
   diagnosis step at a time; the last one, which names the defect, opens once your diagnosis is right (the
   terminal command `forgelab fault hint {number}` shares the counter). This diagnosis is self-reported: a
   learning aid that earns no points.
4. **Write the lab's regression test** in `{regression}` (starting the lab wrote its starter): a test that
   fails on the broken copy and passes once it is repaired. **Check my fix** runs it on both and says which.
   It is the diagnosis that earns points: grading runs it on the course's reference implementation, where it
   must pass, and on the broken module, where it must fail.
5. Edit `{lab_module}`, then **Check my fix** again until it says FIXED. The lab counts in your evidence
   when both hold — the diagnosis right and the file fixed. **Show my changes** compares your file with the
   broken one.

Terminal equivalents: `forgelab fault start|check|diagnose|diff|reset|hint {number}`; in a cell:
`lab.fault_start()`, `lab.fault_check()`, `lab.fault_diagnose(test, function, defect, because)`,
`lab.fault_diff()`.""")
PAGE_TEXT = N_("""**Self-check in your browser.** Your workbook carries the course page in `page/`; this stage's page
is `{page}`. The button below opens it in your web browser (straight from the file: it works offline, nothing is
uploaded), as `forgelab page {number}` does in a terminal. Pick `{evidence}` there: the page checks it
and says, item by item, what holds and what to do next.""")


class BuildError(RuntimeError):
    """A reference notebook could not be built; the message names the cell and the cause."""


HAND_IN_TEXT = N_("**Hand in.** On the class's hub, the button below submits this stage — what grading reads: "
                  "`forge/`, `transfer/`, `labs/` and `evidence/` — and shows your receipt (digest, time, contents), "
                  "kept in `.forgelab/receipts/`; once your instructor publishes your feedback, a link to it appears "
                  "here too (terminal: `forgelab submit {number}`, `forgelab feedback`). Anywhere else it says how to "
                  "hand in instead.")
IGNORE_OUTPUT = "nbval-ignore-output"
GRADED = "nbval-check-output"  # compared even under --nbval-lax (graders use lax mode)
WIDGET = "forgelab-widget"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _digest_text(text: StageTexts) -> dict[str, object]:
    """The text as the digest has always read it — ``[text.<lang>.fault]``, ``.transfer`` and ``.design`` keys
    flattened to ``fault_story`` … — so the committed notebooks stay current across the change of model."""
    table = text.model_dump()
    table["docstrings"] = None  # the starters' words in another edition never enter a notebook
    for part in ("fault", "transfer", "design"):
        table.update({f"{part}_{key}": value for key, value in table.pop(part).items()})
    return table


# ---------------------------------------------------------------- failure.json
def fault_contract(stage: Stage) -> dict[str, object]:
    text = stage.text("en")  # one committed contract, whatever language the author's tools speak (LANG=zh_CN too)
    return {
        "stage_id": stage.experiment_id,
        "stage": stage.number,
        "fault_file": stage.fault.fault_file,
        "variant": stage.fault_variant,
        "target_test": stage.fault_target_nodeid,
        "expected_symptom": stage.fault.symptom,
        "diagnosis": list(text.fault.diagnosis),  # the open steps; the last one, which names the defect, is sealed
        "diagnosis_key": diagnosis.key_file(stage),  # ... in the answer key the learner's own diagnosis opens
        "diagnose_command": f"forgelab fault diagnose {stage.number}",
        "fix_principle": text.fault.fix_principle,
        "check_command": f"forgelab fault check {stage.number}",
    }


# ---------------------------------------------------------------- the diagnosis answer key
def _key_sources(course: Course, stage: Stage) -> tuple[str, str, str] | None:
    """The reference module, the broken variant (as generated) and the stage tests; None without solutions/."""
    reference = course.root / stage.solution_module
    if not reference.is_file():
        return None
    return (reference.read_text(encoding="utf-8"), variant_text(course.root, stage),
            (course.root / stage.test_file).read_text(encoding="utf-8"))


def stale_diagnosis_key(course: Course, stage: Stage) -> str | None:
    """Why the stage's answer key is out of date with its sources, or None (nothing is run to know it)."""
    from pydantic import ValidationError

    try:
        sources = _key_sources(course, stage)
    except RegistryError:
        return None  # the variant cannot be generated: reported as such, the key waits for it
    if sources is None:
        return None
    path = diagnosis.key_path(course.root, stage)
    if not path.is_file():
        return "diagnosis answer key missing"
    try:
        key = diagnosis.AnswerKey.model_validate_json(path.read_bytes())
    except ValidationError:
        return "diagnosis answer key unreadable"
    if key.source_digest != diagnosis.source_digest(stage, *sources):
        return "diagnosis answer key differs from fault.toml, the reference, the variant or the stage tests"
    languages = editions(course)
    try:
        answer, choices, steps = diagnosis.declared(stage, languages)
    except RegistryError as error:
        return f"cannot be generated: {error}"
    if {choice.id for choice in key.defect.choices} != {choice.id for choice in choices} or set(key.confirm) != set(steps):
        return "diagnosis answer key differs from fault.toml"
    return None


def failing_on_variant(course: Course, stage: Stage) -> list[str]:
    """The stage tests that fail on ``fault:NN`` — each one shows the defect (one judge run)."""
    workbook = Workbook(course.root, course.root)
    label = f"fault:{stage.number}"
    job = jobs.job(course, workbook, [jobs.spec(resolve_target(label, workbook, course), label, stage)],
                   [CourseTests(label, (stage.test_file,))])
    report = core.run(job, DEFAULT)
    if report.problem or label in report.import_problems:
        raise BuildError(f"stage {stage.number}: the broken variant's tests did not run "
                         f"({report.problem or report.import_problems[label].cause})")
    rows = report.in_file(label, stage.test_file)
    return sorted({row.name for row in rows if row.outcome is not Outcome.PASSED})


def build_diagnosis_key(course: Course, stage: Stage) -> str | None:
    """Write the stage's answer key when it is out of date; the path written, or None."""
    sources = _key_sources(course, stage)
    if sources is None or stale_diagnosis_key(course, stage) is None:
        return None
    try:
        key = diagnosis.make_key(stage, editions(course), *sources, failing_on_variant(course, stage))
    except RegistryError as error:
        raise BuildError(str(error)) from None
    write_atomic(diagnosis.key_path(course.root, stage), diagnosis.key_text(key))
    return diagnosis.key_file(stage)


def fault_contract_text(stage: Stage) -> str:
    return json.dumps(fault_contract(stage), indent=2, ensure_ascii=False) + "\n"


def fault_contract_path(root: Path, stage: Stage) -> Path:
    return root / stage.fault_contract_file


# ---------------------------------------------------------------- notebook source
def source_digest(stage: Stage, language: str = "en") -> str:
    """What one edition's notebook is made of: the stage's facts, that edition's text and demo, the figures.

    ``stage.toml`` enters as the parsed facts and this edition's text, so editing another edition's text
    leaves this notebook current; ``mutants.toml`` and other editions' lines of ``demo.py`` do not enter at all.
    """
    import dataclasses

    digest = hashlib.sha256(f"builder-{BUILDER_VERSION}".encode())
    facts = {"number": stage.number, "slug": stage.slug, "module": stage.module, "scenario": stage.scenario,
             "builds_on": stage.builds_on, "required_tests": stage.required_tests,
             "fault": dataclasses.asdict(stage.fault), "transfer_scenario": stage.transfer_scenario,
             "text": _digest_text(stage.text(language)),
             "source_facts": [dataclasses.asdict(fact) for fact in stage.source_facts]}
    digest.update(json.dumps(facts, sort_keys=True, ensure_ascii=False).encode() + b"\0")
    for path in stage.source_files():
        if path.name in ("stage.toml", "mutants.toml", "seal.py"):  # seal.py: probes for the lab's seal, not the notebook
            continue
        if path == stage.demo_file:  # this edition's demo, named as when each edition had its own file
            name = "demo.py" if language == "en" else f"demo.{language}.py"
            text = demo.edition(path.read_text(encoding="utf-8"), language)
            digest.update(name.encode() + b"\0" + text.encode() + b"\0")
            continue
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _bullets(items: Sequence[str], numbered: bool = False) -> str:
    return "\n".join(f"{i}. {item}" if numbered else f"- {item}" for i, item in enumerate(items, 1))


@dataclass
class _Cells:
    cells: list[Any]

    def md(self, source: str) -> None:
        import nbformat

        self.cells.append(nbformat.v4.new_markdown_cell(join_cjk_lines(source.strip())))

    def code(self, source: str, *tags: str) -> None:
        import nbformat

        cell = nbformat.v4.new_code_cell(source.strip())
        if tags:
            cell.metadata["tags"] = list(tags)
        self.cells.append(cell)


def reference_cell(shown: Sequence[tuple[str, str]] | None) -> Any:
    """The Markdown cell under a demonstration cell that keeps what the reference showed there (``None``: not
    executed yet): its printed text in a fenced block, its tables as the HTML tables the cell showed (Markdown keeps
    HTML; a Chinese table lines up in it as it does under the cell). The learner's run replaces the code cell's
    output; this one stays."""
    import nbformat

    if shown is None:
        body = _("(filled in when `forgelab build` runs the notebook)")
    elif not any(content.strip() for _kind, content in shown):
        body = _("(it prints nothing)")
    else:
        blocks = []
        for kind, content in shown:
            if kind == "html":
                blocks.append(content)
            elif content.strip():
                fence = "`" * max([3, *(len(run) + 1 for run in re.findall(r"`+", content))])
                blocks.append(f"{fence}text\n{content.rstrip()}\n{fence}")
        body = "\n\n".join(blocks)
    cell = nbformat.v4.new_markdown_cell(_(REFERENCE_OUTPUT_HEAD) + "\n\n" + body)
    cell.metadata["tags"] = [REFERENCE_OUTPUT_TAG]
    return cell


def _shown(cell: Any) -> list[tuple[str, str]]:
    """What a code cell showed, in order: ``("text", …)`` for printed text (one piece per run of printing) and
    ``("html", …)`` for a table (a display with HTML, such as ``lab.table``)."""
    pieces: list[tuple[str, str]] = []
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        if out.get("output_type") == "stream":
            kind, content = "text", str(out.get("text", ""))
        elif "text/html" in data:
            kind, content = "html", "".join(data["text/html"]) if isinstance(data["text/html"], list) \
                else str(data["text/html"])
        else:  # a value the cell ends on, a widget: not what it prints
            continue
        if kind == "text" and pieces and pieces[-1][0] == "text":
            pieces[-1] = ("text", pieces[-1][1] + content)
        else:
            pieces.append((kind, content))
    return pieces


def _options(options: Sequence[str]) -> str:
    return "\n".join(f"- **{chr(ord('A') + index)}.** {option}" for index, option in enumerate(options))


def figure_markdown(figure: Figure, notebook_dir: Path, language: str = "en") -> str:
    """A figure as notebook Markdown: a mermaid block (JupyterLab renders it), or the plot's committed SVG
    by its path relative to the notebook (JupyterLab does not render SVG attachments; the bundle ships
    ``course/stages/``, so the path holds there too)."""
    caption = figure.caption_in(language)
    if figure.kind == "mermaid":
        return f"```mermaid\n{figure.diagram(language)}```\n\n*{caption}*"
    alt = figure.alt_in(language).replace("[", "(").replace("]", ")")
    return f"![{alt}]({Path(os.path.relpath(figure.svg_in(language), notebook_dir)).as_posix()})\n\n*{caption}*"


SOURCE_FACT_KIND_WORDS = {"code": N_("literal"), "constant": N_("constant"), "name": N_("name")}


def _python_literal(value: object) -> str:
    """A source fact's value the way the module writes it (TOML lists become tuples)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "(" + ", ".join(_python_literal(item) for item in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_python_literal(key)}: {_python_literal(item)}" for key, item in value.items()) + "}"
    return repr(value)


def _table_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def sources_markdown(stage: Stage, text: StageTexts) -> str:
    """Part 3's "From the sources": the stage's words on its sources, then its table of source facts."""
    lines = ["### " + _("From the sources")]
    if text.from_the_sources:
        lines += ["", text.from_the_sources]
    if stage.source_facts:
        lines += ["", _("Each name below is the curriculum's own, as this stage's code uses it; a course test "
                        "compares every row with the code."), "",
                  "| " + " | ".join((_("in forge"), _("kind"), _("the source says"), _("where in the curriculum")))
                  + " |", "|---|---|---|---|"]
        for fact in stage.source_facts:
            shown = fact.name if fact.value is None else f"{fact.name} = {_python_literal(fact.value)}"
            says = fact.says or _("the same")
            lines.append(f"| `{_table_cell(shown)}` | {_(SOURCE_FACT_KIND_WORDS[fact.kind])} | {_table_cell(says)} | "
                         f"`{fact.source}` · {_table_cell(fact.section)} |")
    return "\n".join(lines)


def page_in_workbook(stage: Stage, language: str) -> str:
    """The stage's page in the workbook's copy of the course page (``page/``; another edition in ``page/<lang>/``)."""
    return f"{BUNDLE_PAGE}/{'' if language == 'en' else language + '/'}{stage_page(stage)}"


def notebook_source(course: Course, stage: Stage, language: str = "en") -> Any:
    """The unexecuted notebook for a stage in one edition, built only from the registry."""
    with speaking(language):
        return _notebook_source(course, stage, language)


def _notebook_source(course: Course, stage: Stage, language: str) -> Any:
    import nbformat

    text = stage.text(language)
    n = stage.number
    out = _Cells([])
    scenario = course.scenario(stage.scenario, language)
    chain = " → ".join(f"**{s.number}**" if s.number == n else s.number for s in course.stages)
    opening = Path(edition_notebook(Path(OPENING_NOTEBOOK).name, language)).name
    out.md(_("# Stage {number} · {title}").format(number=n, title=text.title) + "\n\n" + text.capability + "\n\n"
           + _("*Capability chain:* {chain} · *module:* `{module}` · *experiment:* `{experiment}`").format(
               chain=chain, module=stage.module, experiment=stage.experiment_id) + "\n\n"
           + _("Work through the ten parts in order. Parts 6, 7 and 8 run code you write — your `{module}`, the "
               "fault lab's copy and your transfer test; run their cells again whenever you change a file (no "
               "kernel restart needed). A cell whose code runs for more than {seconds} s of CPU time is stopped and "
               "says on which line (an endless loop); the notebook goes on. New here? Start with `{opening}`.").format(
               module=stage.module, opening=opening, seconds=CELL_CPU_SECONDS))
    out.code(f'%load_ext forgelab.learner.notebook\nfrom forgelab.learner.notebook import stage_tools\n\nlab = stage_tools("{n}", lang="{language}")')
    out.md(_("## 1 · The problem: {title}").format(title=text.problem_title) + "\n\n" + text.problem)
    out.md(_("## 2 · Predict first") + "\n\n" + text.prediction.question + "\n\n" + _options(text.prediction.options)
           + "\n\n" + _("Decide before you read on. In JupyterLab, press the letter of your choice below, then the "
                         "button: the reasoning appears after you answer."))
    out.code("lab.predict()", IGNORE_OUTPUT, WIDGET)
    out.md(_("## 3 · What it is, what it is not, how it relates") + "\n\n"
           + _("### What it is") + "\n" + text.what_it_is + "\n\n"
           + _("### What it is not") + "\n" + text.what_it_is_not + "\n\n"
           + _("### How it relates") + "\n" + text.relations + "\n\n"
           + "> " + _("**Boundary decision of this stage.**") + " " + text.boundary_decision)
    notebook_dir = course.root / Path(stage.notebook_in(language)).parent
    for index, figure in enumerate(stage_figures(stage.source_dir)):
        out.md(("### " + _("In a picture") + "\n\n" if index == 0 else "") + figure_markdown(figure, notebook_dir, language))
    if stage.source_facts or text.from_the_sources:
        out.md(sources_markdown(stage, text))
    out.md(_("## 4 · Experiment card") + "\n\n" + _("Input scenario: *{input}*").format(input=scenario.input))
    out.code("lab.card()")
    out.md(_("## 5 · Worked demonstration") + "\n\n" + _("**Goal:** {goal}").format(goal=text.demo_goal) + "\n\n"
           + _(REFERENCE_OUTPUT_NOTE).format(module=stage.module))
    for kind, source in demo.parse_percent_cells(demo.edition(stage.demo_file.read_text(encoding="utf-8"), language)):
        if kind == "markdown":
            out.md(source)
        else:
            out.code(source, GRADED)
            out.cells.append(reference_cell(None))  # filled in by execute(): Run All never replaces a Markdown cell
    out.md(_("## 6 · Guided exercise (your code)") + "\n\n" + text.exercise + "\n\n"
           + _("**Steps**") + "\n\n" + _bullets(text.steps, numbered=True) + "\n\n"
           + _("**Done when**") + "\n\n" + _bullets(text.done_when) + "\n\n"
           + _("Stuck? Reveal the hints one at a time. Each one is chosen for the first failing test of your latest "
               "test run (the test cell below, `forgelab check {number}` or `forgelab watch {number}`); when no hint "
               "is left for that test, the next one in the ladder's order comes. The terminal command `forgelab hint "
               "{number}` reveals the same hints.").format(number=n))
    if is_project(stage):
        out.md("### " + _("The recovery point") + "\n\n" + course.text("recovery_point", language))
    out.code("lab.hint()", IGNORE_OUTPUT, WIDGET)
    out.md(_("Run the stage tests against your code. The table shows each required test and, for a failure, its "
             "first difference in one line; the *Why?* button below it shows a whole failure (terminal: "
             "`forgelab check {number} --why TEST`). Turn on **Re-check on save** under the table, and every save "
             "of {module} runs the tests again and updates the table under the toggle in place (terminal: "
             "`forgelab watch {number}`).").format(number=n, module=stage.module))
    out.code("lab.run_tests()\nlab.recheck_on_save()", GRADED)
    out.code("lab.why()", IGNORE_OUTPUT, WIDGET)
    out.md(_("## 7 · Fault lab (a broken copy to diagnose)") + "\n\n" + _(FAULT_LAB_TEXT).format(
        module=stage.module, lab_dir=stage.lab_dir, target=stage.fault.target_test, number=n,
        lab_module=stage.lab_module, regression=stage.regression_test))
    out.code("lab.fault_lab()", IGNORE_OUTPUT, WIDGET)
    out.md(_("**Your diagnosis (self-reported)** — state it before you repair the lab; it is checked at once and saved "
             "with your evidence (`{file}`). A learning aid: it earns no points (the regression test does).").format(
                 file=f"{stage.evidence_dir}/diagnosis.json"))
    out.code("lab.diagnose()", IGNORE_OUTPUT, WIDGET)
    out.md(_("## 8 · Transfer challenge (your own test)") + "\n\n"
           + _("**Scenario.** {text}").format(text=text.transfer.scenario) + "\n\n"
           + _("**What changed.** {text}").format(text=text.transfer.changed_condition) + "\n\n"
           + _("**Your task.** {text}").format(text=text.transfer.task) + "\n\n"
           + _("**Done when**") + "\n\n" + _bullets(text.transfer.criteria) + "\n\n"
           + _("Write the test in `{file}` (replace the `pytest.skip` line), then run:").format(file=stage.transfer_file))
    out.code("lab.run_transfer()")
    out.md(_("## 9 · Design question") + "\n\n" + text.design.question + "\n\n"
           + _("Write your answer below and save it; the rubric appears after saving. (Or type it into a cell: "
               "`lab.save_answer(\"\"\"...\"\"\")`, or in the terminal: `forgelab answer {number} --file "
               "my-answer.md`.)").format(number=n))
    out.code("lab.design_answer()", IGNORE_OUTPUT, WIDGET)
    out.md(_("## 10 · Mastery evidence") + "\n\n" + _bullets(text.mastery) + "\n\n"
           + _("The button below runs every part for real, writes `{file}`, and says what the course page will show "
               "when you pick that file. Nothing is written until you press it. (In a cell: `lab.write_evidence()`; "
               "terminal: `forgelab check {number}`.)").format(file=stage.evidence_file, number=n))
    out.code("lab.evidence()", IGNORE_OUTPUT, WIDGET)
    out.md(_("Where this stage stands — what is done and what is still open (it runs the tests and writes nothing):"))
    out.code("lab.summary()", IGNORE_OUTPUT)
    out.md(_(HAND_IN_TEXT).format(number=n))
    out.code("from forgelab.hub.handin import hand_in\n\nhand_in(lab)", IGNORE_OUTPUT, WIDGET)
    out.md(_(PAGE_TEXT).format(page=page_in_workbook(stage, language), number=n, evidence=stage.evidence_file))
    out.code("lab.page()", IGNORE_OUTPUT, WIDGET)
    for index, cell in enumerate(out.cells):
        cell["id"] = f"cell-{index:02d}"  # stable ids keep rebuilds diff-friendly
    notebook = nbformat.v4.new_notebook(cells=out.cells)
    notebook.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
        "language_info": {"name": "python", "version": "3.11"},
        "forgelab": {"stage": n, "experiment_id": stage.experiment_id, "language": language,
                     "builder_version": BUILDER_VERSION, "source_digest": source_digest(stage, language)},
    }
    return notebook


def opening_digest(course: Course, language: str = "en") -> str:
    """The texts the opening is made of (not the whole course.toml: another edition's edits leave it current)."""
    digest = hashlib.sha256(f"builder-{BUILDER_VERSION}".encode())
    texts = {key: course.text(key, language) for key in OPENING_KEYS if key not in missing_opening_keys(course, language)}
    texts["title"] = course.text("title", language)
    digest.update(json.dumps(texts, sort_keys=True, ensure_ascii=False).encode())
    for stage in course.stages:  # the chain lists every stage's title, capability and module
        text = stage.text(language)
        digest.update(f"{stage.number}\0{text.title}\0{text.capability}\0{stage.module}\0".encode())
    return digest.hexdigest()


CHAIN_CELL = """from forgelab.core.display import Grid
from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course

course = load_course(Workbook.locate().root)
Grid([], [(stage.number, stage.text('LANGUAGE').title, stage.module) for stage in course.stages])"""

# the words the standing cell prints, in the kernel, through the catalog
STANDING_WORDS = (N_("still to write: {functions}"), N_("no starter stub left"))
STANDING_CELL = """from forgelab.core.i18n import speaking, _
from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.core.starters import unfinished_functions

root = Workbook.locate().root
with speaking("LANGUAGE"):
    for stage in load_course(root).stages:
        left = unfinished_functions(root / stage.module)
        print(f"{stage.number}  {stage.module:<32}",
              _("still to write: {functions}").format(functions=", ".join(left)) if left else _("no starter stub left"))"""


def opening_source(course: Course, language: str = "en") -> Any:
    """The unexecuted opening notebook, built only from course.toml and the stage registry."""
    with speaking(language):
        return _opening_source(course, language)


def _opening_source(course: Course, language: str) -> Any:
    import nbformat

    text = opening_texts(course, language)
    out = _Cells([])
    out.md(f"# {course.text('title', language)} · {text['opening_title']}\n\n{text['opening_intro']}\n\n"
           + _("This notebook is the chapter's opening: where the chapter sits, what it assumes, three concepts to "
               "calibrate before the code, the chain of capabilities you will build, and what to do when you are "
               "stuck. The stages follow in `01-…` to `{last}.ipynb`.").format(last=course.stages[-1].key))
    out.md(_("## Where this chapter sits") + "\n\n" + text["opening_position"])
    out.md(_("## What you need") + "\n\n" + text["opening_prerequisites"])
    out.md(_("## Three concepts, calibrated") + "\n\n" + _("Each concept in four parts: what it is, what it is "
                                                          "not, its place in Forge, and the misuse to watch for."))
    for concept, title in CONCEPTS:
        parts = "\n\n".join(_("**{label}.** {text}").format(label=_(label), text=text[f"concept_{concept}_{part}"])
                              for part, label in CONCEPT_PARTS)
        out.md(f"### {_(title)}\n\n{parts}")
    rows = "\n".join(f"| {stage.number} | [{stage.text(language).title}]({Path(stage.notebook_in(language)).name}) | "
                     f"`{stage.module}` | {stage.text(language).capability} |" for stage in course.stages)
    header = "| " + " | ".join((_("stage"), _("notebook"), _("you write"), _("capability"))) + " |"
    out.md(_("## The capability chain: {first} → {last}").format(first=course.stages[0].number,
                                                                  last=course.stages[-1].number)
           + f"\n\n{text['capability_chain']}\n\n{header}\n|---|---|---|---|\n{rows}")
    out.md(_("The same chain, read from the course registry that every tool uses:"))
    out.code(CHAIN_CELL.replace("LANGUAGE", language))
    out.md(_("## The chapter project") + "\n\n" + text["opening_outcome"])
    out.md(_("## How each stage works") + "\n\n" + text["opening_how_to_work"])
    out.md(_("## Stuck? The recovery point") + "\n\n" + text["recovery_point"])
    out.md(_("## Where you stand") + "\n\n" + _("Which of your stage modules still hold starter stubs (`raise "
                                                  "NotImplementedError`). It reads your files and runs nothing; "
                                                  "`forgelab status` in a terminal runs the tests and names the next "
                                                  "step."))
    out.code(STANDING_CELL.replace("LANGUAGE", language), IGNORE_OUTPUT)
    for index, cell in enumerate(out.cells):
        cell["id"] = f"cell-{index:02d}"
    notebook = nbformat.v4.new_notebook(cells=out.cells)
    notebook.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
        "language_info": {"name": "python", "version": "3.11"},
        "forgelab": {"opening": True, "language": language, "builder_version": BUILDER_VERSION,
                     "source_digest": opening_digest(course, language)},
    }
    return notebook


def opening_notebook(language: str = "en") -> str:
    return edition_notebook(Path(OPENING_NOTEBOOK).name, language)


def stale_opening(course: Course, language: str = "en") -> list[str]:
    """Why one edition's opening notebook is out of date (empty when it is current)."""
    import nbformat

    try:
        expected = opening_source(course, language)
    except OpeningError as error:
        return [str(error)]
    path = course.root / opening_notebook(language)
    if not path.is_file():
        return ["notebook missing"]
    committed = nbformat.read(path, as_version=4)
    if _comparable(committed) != _comparable(expected):
        return ["cells differ from course/course.toml"]
    if committed.metadata.get("forgelab", {}).get("source_digest") != opening_digest(course, language):
        return ["source digest differs"]
    if any(c.cell_type == "code" and c.execution_count is None for c in committed.cells):
        return ["not executed: outputs are missing"]
    if (split := _printed_in_pieces(committed)) is not None:
        return [split]
    return []


def build_opening(course: Course, workbook: Workbook, *, run: bool = True, language: str = "en") -> list[str]:
    try:
        notebook = opening_source(course, language)
    except OpeningError as error:
        raise BuildError(str(error)) from None
    if run:
        notebook = execute(notebook, workbook, course, language=language)
    write_notebook(course.root / opening_notebook(language), notebook)
    return [opening_notebook(language)]


# ---------------------------------------------------------------- execution
def execute(notebook: Any, workbook: Workbook, course: Course, target_name: str = "solution",
            timeout: int = 120, language: str = "en") -> Any:
    """Run every cell against ``target_name`` in a fresh workspace, from the folder of ``language``'s
    notebooks; widget outputs are dropped."""
    from nbclient import NotebookClient
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    from forgelab.authoring.kernels import IpcKernelManager  # lazy: jupyter_client loads only when notebooks run

    target = resolve_target(target_name, workbook, course)
    saved = {key: os.environ.get(key) for key in ("PYTHONPATH", "FORGELAB_TARGET", "FORGELAB_WORKSPACE", "FORGELAB_ROOT",
                                                  "FORGE_LANG")}
    folder = workbook.root / Path(edition_notebook("notebook.ipynb", language)).parent
    with target.importable() as import_dir, tempfile.TemporaryDirectory(prefix="forgelab-build-") as workspace:
        try:
            os.environ["PYTHONPATH"] = str(import_dir)
            os.environ["FORGELAB_TARGET"] = target_name
            os.environ["FORGELAB_WORKSPACE"] = workspace
            os.environ["FORGELAB_ROOT"] = str(workbook.root)
            os.environ.pop("FORGE_LANG", None)  # each notebook names its own language
            folder.mkdir(parents=True, exist_ok=True)
            client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", store_widget_state=False,
                                    kernel_manager_class=IpcKernelManager,  # no TCP port to lose (see kernels)
                                    resources={"metadata": {"path": str(folder)}})
            client.execute()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    coalesce = CoalesceStreamsPreprocessor()
    for index, cell in enumerate(notebook.cells):
        cell.metadata.pop("execution", None)  # kernel timestamps: a rebuild without changes changes nothing
        # printed text arrives in as many pieces as the kernel flushed, which moves with the machine's load: one
        # output per run of printing keeps a rebuild byte for byte the same (nbval compares it coalesced too)
        coalesce.preprocess_cell(cell, {}, index)
        if cell.cell_type == "code" and WIDGET in cell.metadata.get("tags", []):
            cell.outputs = []
            cell.execution_count = None
        for out in cell.get("outputs", []):  # a widget's model id is new on every run (nbval does not compare it)
            out.get("data", {}).pop(WIDGET_VIEW, None)
        if REFERENCE_OUTPUT_TAG in cell.metadata.get("tags", []) and index:
            with speaking(language):
                cell.source = reference_cell(_shown(notebook.cells[index - 1])).source
        printed = "".join(str(out.get("text", "")) for out in cell.get("outputs", []))
        if any(marker in printed for marker in markers()):
            first = cell.source.strip().splitlines()[0] if cell.source.strip() else "(empty)"
            raise BuildError(f"cell {index} (`{first[:60]}`) did not finish against {target_name}: "
                             f"{printed.strip().splitlines()[0][:300]} — fix the stage source or the reference")
    return notebook


def _comparable(notebook: Any) -> list[tuple[str, str, tuple[str, ...], str]]:
    """The cells as the source makes them (a reference-output cell's text comes from running: see
    :func:`_stale_reference`)."""
    import json

    return [(c.cell_type, "" if REFERENCE_OUTPUT_TAG in c.metadata.get("tags", []) else c.source,
             tuple(c.metadata.get("tags", [])), json.dumps(c.get("attachments", {}), sort_keys=True))
            for c in notebook.cells]


def _stale_reference(notebook: Any) -> str | None:
    """Why a reference-output cell does not hold what the demonstration cell above it printed, or None."""
    for index, cell in enumerate(notebook.cells):
        if REFERENCE_OUTPUT_TAG in cell.metadata.get("tags", []) and index and \
                cell.source != reference_cell(_shown(notebook.cells[index - 1])).source:
            return f"cell {index}'s reference output differs from what the cell above printed"
    return None


def write_notebook(path: Path, notebook: Any) -> None:
    import nbformat


    write_atomic(path, nbformat.writes(notebook) + "\n")


# ---------------------------------------------------------------- the command's work
SCHEMA_FILE = "forgelab/data/verification.schema.json"


def stale_schema(course: Course) -> str | None:
    """Why the course's verification.schema.json differs from the one its model generates, or None (also None in
    a tree without ``forgelab/``, such as a learner's bundle)."""
    path = course.root / SCHEMA_FILE
    if not path.parent.is_dir():
        return None
    if not path.is_file():
        return "schema missing"
    return None if path.read_text(encoding="utf-8") == verification.schema_text() else \
        "differs from the model in forgelab/core/verification.py"


def build_schema(course: Course) -> str | None:
    """Write verification.schema.json from its model when it is out of date; the path written, or None."""
    if stale_schema(course) is None:
        return None
    write_atomic(course.root / SCHEMA_FILE, verification.schema_text())
    return SCHEMA_FILE


@dataclass(frozen=True)
class Staleness:
    stage: Stage
    artefact: str
    reason: str


def stale_artefacts(course: Course, stages: list[Stage] | None = None) -> list[Staleness]:
    """What is out of date with its source, without executing anything."""


    problems = []
    chosen = stages or list(course.stages)
    for stage, figure, reason in stale_figures(course, chosen):
        problems.append(Staleness(stage, figure, reason))
    for stage in chosen:
        variant = course.root / stage.fault_variant
        if (course.root / stage.solution_module).is_file():
            try:
                expected = variant_text(course.root, stage)
            except RegistryError as error:
                problems.append(Staleness(stage, stage.fault_variant, f"cannot be generated: {error}"))
            else:
                if not variant.is_file() or variant.read_text(encoding="utf-8") != expected:
                    problems.append(Staleness(stage, stage.fault_variant, "fault variant differs from solutions/ + fault.toml"))
        try:
            load_mutants(stage)
        except RegistryError as error:
            problems.append(Staleness(stage, str(stage.mutants_file.relative_to(course.root)), f"cannot be read: {error}"))
        contract = fault_contract_path(course.root, stage)
        if not contract.is_file() or contract.read_text(encoding="utf-8") != fault_contract_text(stage):
            problems.append(Staleness(stage, str(contract.relative_to(course.root)), "fault contract differs from stage.toml"))
        stale_key = stale_diagnosis_key(course, stage)
        if stale_key:
            problems.append(Staleness(stage, diagnosis.key_file(stage), stale_key))
        for language in editions(course):
            stale = _stale_notebook(course, stage, language)
            if stale:
                problems.append(Staleness(stage, stage.notebook_in(language), stale))
    return problems


def editions(course: Course) -> tuple[str, ...]:
    """The languages the course is built in (``languages`` in course.toml; English always first)."""
    return ("en", *(language for language in course.languages if language != "en"))


def _stale_notebook(course: Course, stage: Stage, language: str) -> str | None:
    import nbformat

    path = course.root / stage.notebook_in(language)
    if not path.is_file():
        return "notebook missing"
    committed = nbformat.read(path, as_version=4)
    try:
        expected = notebook_source(course, stage, language)
    except FigureError as error:
        return f"cannot be generated: {error}"
    if _comparable(committed) != _comparable(expected):
        return "cells differ from the stage source"
    if committed.metadata.get("forgelab", {}).get("source_digest") != source_digest(stage, language):
        return "source digest differs"
    if any(c.cell_type == "code" and c.execution_count is None and WIDGET not in c.metadata.get("tags", [])
           for c in committed.cells):
        return "not executed: reference outputs are missing"
    with speaking(language):
        return _printed_in_pieces(committed) or _stale_reference(committed)


def _printed_in_pieces(notebook: Any) -> str | None:
    """Why a notebook's printed output is not as :func:`execute` writes it (one output per run of printing), or
    None. Pieces are how the kernel happened to flush under load: a notebook holding them was not built here."""
    for index, cell in enumerate(notebook.cells):
        outputs = cell.get("outputs", [])
        for first, second in zip(outputs, outputs[1:]):
            if first.output_type == second.output_type == "stream" and first.get("name") == second.get("name"):
                return f"cell {index}'s printed output is split in pieces (not written by this build)"
    return None


# ---------------------------------------------------------------- figures
def _relative(course: Course, path: Path) -> str:
    return path.relative_to(course.root).as_posix()


def _plot_outputs(course: Course, plots: list[Figure]) -> dict[Path, str]:
    """Each plot script's SVG in every edition, drawn from the reference (one ``solution`` target for all)."""
    if not plots:
        return {}

    target = resolve_target("solution", Workbook(course.root, course.root), course)
    jobs = [(figure, language) for figure in plots for language in editions(course)]
    with target.importable() as import_dir:
        drawn = figures.run_plots(jobs, import_dir)
    return {figure.svg_in(language): svg for (figure, language), svg in zip(jobs, drawn, strict=True)}


def stale_figures(course: Course, stages: list[Stage]) -> list[tuple[Stage, str, str]]:
    """(stage, figure SVG, reason) for every figure of every edition that is missing, out of date or has no source.

    Plots are drawn again from the reference to compare (only where ``solutions/`` exists: a learner
    bundle has no reference to draw them from). A stage without any figure is reported too.
    """
    found: list[tuple[Stage, str, str]] = []
    owner: dict[Path, Stage] = {}
    plots: list[Figure] = []
    languages = editions(course)
    for stage in stages:
        try:
            here = stage_figures(stage.source_dir)
        except FigureError as error:
            found.append((stage, _relative(course, stage.source_dir), str(error)))
            continue
        if not here:
            found.append((stage, _relative(course, stage.source_dir),
                          "no figure: add figure.mmd (or a figure-NAME.py plot) to the stage's folder"))
        for figure in here:
            owner[figure.svg] = stage
            if figure.kind == "plot":
                plots.append(figure)
                continue
            for language in languages:
                reason = figures.stale_reason(figure, language=language)
                if reason:
                    found.append((stage, _relative(course, figure.svg_in(language)), reason))
        sources = {figure.svg_in(language) for figure in here for language in languages}
        for svg in sorted(stage.source_dir.glob("figure*.svg")):
            if svg not in sources:
                found.append((stage, _relative(course, svg), "figure SVG without a source (.mmd or .py): delete it"))
    if plots and (course.root / "solutions" / "forge").is_dir():
        try:
            drawn = _plot_outputs(course, plots)
        except FigureError as error:
            return found + [(owner[plots[0].svg], _relative(course, plots[0].source), str(error))]
        for figure in plots:
            for language in languages:
                reason = figures.stale_reason(figure, drawn[figure.svg_in(language)], language)
                if reason:
                    found.append((owner[figure.svg], _relative(course, figure.svg_in(language)), reason))
    return found


def build_figures(course: Course, stages: list[Stage]) -> list[str]:
    """Render the Mermaid figures whose SVG (of any edition) is stale and draw every plot again; the paths written."""
    mermaid: dict[str, list[Figure]] = {language: [] for language in editions(course)}
    plots: list[Figure] = []
    for stage in stages:
        for figure in stage_figures(stage.source_dir):
            if figure.kind == "plot":
                plots.append(figure)
                continue
            for language in mermaid:
                if figures.stale_reason(figure, language=language):
                    mermaid[language].append(figure)
    rendered: dict[Path, str] = {}
    for language, stale in mermaid.items():
        rendered.update(figures.render_mermaid(course.root, stale, language))
    rendered.update(_plot_outputs(course, plots))
    return figures.write_figures(course.root, rendered)


def build_stage(course: Course, workbook: Workbook, stage: Stage, *, run: bool = True) -> list[str]:
    try:
        written = build_figures(course, [stage])
    except FigureError as error:
        raise BuildError(str(error)) from None
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
    key = build_diagnosis_key(course, stage)
    if key:
        written.append(key)
    for language in editions(course):
        notebook = notebook_source(course, stage, language)
        if run:
            notebook = execute(notebook, workbook, course, language=language)
        write_notebook(course.root / stage.notebook_in(language), notebook)
        written.append(stage.notebook_in(language))
    return written
