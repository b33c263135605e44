"""Grade one stage of one submission: seven items, each from a real run.

Runs inside the grading worker (its own process, environment and scratch copy). The stage
tests, the fault lab and the design answer are judged by the same code as ``forgelab check``
(:func:`forgelab.checker.run_check`), with the course's tests — given a home without
``transfer/``, so the learner's own tests never share the stage tests' process. The transfer
test, the instructor checks and the reference notebook each run in their own process next to
it; a transfer test that passes is run once more against the stage's known-wrong implementation
(:mod:`forgelab.grading.known_wrong`), where it must not pass. The submission's own evidence is
then compared with what was observed.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from forgelab import checker
from forgelab.checker import CheckOutcome, Part, run_check
from forgelab.grading import consistency, known_wrong
from forgelab.grading.isolation import Limits
from forgelab.grading.notebooks import NotebookRun, run_notebook
from forgelab.grading.rubric import (ERROR, FAILED, MISSING, NOT_GRADED, PASSED, REVIEW, SPEC, TIMEOUT, GradeItem,
                                     outcome_for, proportional)
from forgelab.paths import Workbook
from forgelab.registry import Course, Stage
from forgelab.runner import ImportProblem, RunResult, TestResult, probe_import, run_pytest
from forgelab.targets import Target

CHECKS_DIR = Path("instructor") / "checks"
MAX_LISTED = 4
CAUSE_CHARS = 180


@dataclass(frozen=True)
class Context:
    course: Course
    workbook: Workbook  # the course (root) with a scratch workspace
    target: Target  # the submission's forge/ (import dir) and its home without transfer/ (labs, evidence)
    home: Path  # the submission's home with transfer/
    submission: str
    scratch: Path  # the worker's scratch folder (holds the copies; never shown in a reason)
    env: dict[str, str]
    limits: Limits
    notebooks: dict[str, Path]  # stage number → reduced reference notebook


@dataclass
class StageResult:
    items: list[GradeItem]
    timings: dict[str, float] = field(default_factory=dict)


# ---------------------------------------------------------------- wording


def clean(text: str, ctx: Context) -> str:
    """One deterministic line: no scratch or course paths, no memory addresses."""
    for path, shown in ((ctx.home, ""), (ctx.target.home, ""), (ctx.target.in_place, ""),
                        (ctx.workbook.root, "<course>"), (ctx.scratch, "<scratch>")):
        if path is None:
            continue
        text = text.replace(str(path) + "/", shown).replace(str(path), shown or ".")
    text = re.sub(r"/tmp/[A-Za-z0-9_.\-/]+", "<tmp>", text)
    text = re.sub(r"\b0x[0-9a-fA-F]{6,}\b", "0x…", text)
    text = re.sub(r"\bnot[_ ]run: not run: ", "not run: ", text)
    text = " ".join(text.split())
    return text if len(text) <= 900 else text[:899] + "…"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= CAUSE_CHARS else text[: CAUSE_CHARS - 1] + "…"


def _listed(items: list[str]) -> str:
    shown = "; ".join(items[:MAX_LISTED])
    return shown + (f"; and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")


def _item(ctx: Context, stage: Stage, key: str, points: int, outcome: str, reason: str, flag: str = "",
          max_points: int | None = None) -> GradeItem:
    top = SPEC[key].max_points if max_points is None else max_points
    return GradeItem(ctx.submission, stage.number, key, points, top, outcome, clean(reason, ctx), flag)


def _problem_outcome(problem: ImportProblem) -> str:
    return {"timeout": TIMEOUT, "missing": MISSING}.get(problem.kind, ERROR)


# ---------------------------------------------------------------- stage tests


def _cause(row: TestResult) -> str:
    words = row.outcome.replace("_", " ")
    text = _short(row.cause)
    return text if text.lower().startswith(words) else f"{words}: {text}"


def _by_name(names: tuple[str, ...] | list[str], rows: tuple[TestResult, ...]) -> dict[str, list[TestResult]]:
    return {name: [r for r in rows if r.name == name] for name in names}


def grade_tests(ctx: Context, stage: Stage, outcome: CheckOutcome, problem: ImportProblem | None) -> GradeItem:
    total = len(stage.required_tests)
    if problem is not None:
        return _item(ctx, stage, "stage_tests", 0, _problem_outcome(problem),
                     f"0 of {total} required tests could run: {problem.cause}")
    grouped = _by_name(stage.required_tests, outcome.tests)
    failing: list[str] = []
    timed_out = False
    for name, rows in grouped.items():
        bad = [r for r in rows if r.outcome != "passed"]
        if not rows or bad:
            first = bad[0] if bad else None
            timed_out = timed_out or any(r.outcome == "timeout" for r in bad)
            cause = _cause(first) if first else "not found"
            failing.append(f"{name} ({cause})")
    passed = total - len(failing)
    points = proportional(SPEC["stage_tests"].max_points, passed, total)
    if not failing:
        return _item(ctx, stage, "stage_tests", points, PASSED, f"all {total} required tests pass")
    result = TIMEOUT if timed_out else outcome_for(points, SPEC["stage_tests"].max_points)
    return _item(ctx, stage, "stage_tests", points, result,
                 f"{passed} of {total} required tests pass; failing: {_listed(failing)}")


# ---------------------------------------------------------------- instructor checks


def check_files(course_root: Path, stage: Stage) -> list[Path]:
    return sorted((course_root / CHECKS_DIR).glob(f"test_{stage.number}_*.py"))


def grade_instructor_checks(ctx: Context, stage: Stage, import_dir: Path, problem: ImportProblem | None) -> GradeItem:
    """By name and outcome only: the checks' code and assertion messages never reach a reason."""
    files = check_files(ctx.workbook.root, stage)
    if not files:
        return _item(ctx, stage, "instructor_checks", 0, NOT_GRADED,
                     "the course has no instructor checks for this stage", max_points=0)
    if problem is not None:
        return _item(ctx, stage, "instructor_checks", 0, _problem_outcome(problem),
                     "not run: the stage module does not import (see the stage tests)")
    run: RunResult = run_pytest(import_dir, ctx.workbook.root, [str(f) for f in files], expected=8)
    if not run.tests:
        why = "they could not be loaded against this forge/" if run.collect_errors else "they did not run"
        return _item(ctx, stage, "instructor_checks", 0, ERROR, f"0 instructor checks ran: {why}")
    names = sorted({r.name for r in run.tests})
    grouped = _by_name(names, run.tests)
    failing = []
    for name in names:
        bad = [r for r in grouped[name] if r.outcome != "passed"]
        if bad:
            failing.append((name, bad[0].outcome))
    passed = len(names) - len(failing)
    top = SPEC["instructor_checks"].max_points
    points = proportional(top, passed, len(names))
    if not failing:
        return _item(ctx, stage, "instructor_checks", points, PASSED, f"all {len(names)} instructor checks pass")
    listed = [f"{name} ({result.replace('_', ' ')})" for name, result in failing]
    result = TIMEOUT if any(o == "timeout" for _, o in failing) else outcome_for(points, top)
    return _item(ctx, stage, "instructor_checks", points, result,
                 f"{passed} of {len(names)} instructor checks pass; not passing: {_listed(listed)}")


# ---------------------------------------------------------------- reference notebook

CELL_WORDS = {"differs": "output differs from the reference", "exception": "raised an exception",
              "timeout": "timed out", "not_run": "not run", "error": "could not run"}


def grade_notebook(ctx: Context, stage: Stage, import_dir: Path, problem: ImportProblem | None,
                   timings: dict[str, float], tests_timed_out: bool = False) -> GradeItem:
    """nbval of the reduced reference notebook.

    When the stage tests already timed out, every cell gets the per-test limit instead of the
    per-cell one: the cell that shows the test table fails either way (its table shows the
    timeouts), so the grade is the same — only the waiting is shorter.
    """
    notebook = ctx.notebooks.get(stage.number)
    if notebook is None:
        return _item(ctx, stage, "notebook", 0, NOT_GRADED,
                     f"the course has no reference notebook {stage.notebook} yet", max_points=0)
    from forgelab.grading.notebooks import graded_cells

    total = sum(1 for cell in graded_cells(notebook) if cell.get("graded"))
    if problem is not None:
        return _item(ctx, stage, "notebook", 0, _problem_outcome(problem),
                     f"0 of {total} graded cells could run: {problem.cause}")
    limits = replace(ctx.limits, cell_s=min(ctx.limits.cell_s, ctx.limits.test_s)) if tests_timed_out else ctx.limits
    run: NotebookRun = run_notebook(notebook, import_dir, ctx.env, ctx.scratch, limits)
    timings["kernel_start_s"] = round(run.kernel_start_s, 3)
    timings["notebook_execution_s"] = round(run.execution_s, 3)
    timings["notebook_total_s"] = round(run.total_s, 3)
    failing = [cell for cell in run.cells if cell.outcome != "passed"]
    passed = len(run.cells) - len(failing)
    top = SPEC["notebook"].max_points
    points = proportional(top, passed, total)
    if not failing and run.problem is None and passed == total:
        return _item(ctx, stage, "notebook", points, PASSED,
                     f"all {total} graded cells of {stage.notebook} reproduce the reference output")
    listed = []
    for cell in failing:
        words = CELL_WORDS.get(cell.outcome, cell.outcome)
        detail = cell.detail.removeprefix(f"{words}: ") if cell.detail.startswith(words) else cell.detail
        listed.append(f"cell {cell.number} of {total} (`{cell.label}`): {words}"
                      + (f" — {_short(detail)}" if detail and detail != words else ""))
    timed_out = run.problem is not None and "stopped after" in run.problem or any(c.outcome == "timeout" for c in failing)
    result = TIMEOUT if timed_out else outcome_for(points, top)
    head = f"{passed} of {total} graded cells of {stage.notebook} reproduce the reference output"
    return _item(ctx, stage, "notebook", points, result, f"{head}; {_listed(listed)}")


# ---------------------------------------------------------------- parts judged by the checker


def _timeout_in(text: str) -> bool:
    lowered = text.lower()
    return "timeout" in lowered or "timed out" in lowered or "did not finish within" in lowered


def grade_fault_lab(ctx: Context, stage: Stage, part: Part) -> GradeItem:
    top = SPEC["fault_lab"].max_points
    where = f"labs/{stage.key}/{stage.fault.fault_file}"
    if part.status == "fixed":
        return _item(ctx, stage, "fault_lab", top, PASSED,
                     f"{where}: the target test and every stage test pass in the lab workspace")
    if part.status == "not_started":
        return _item(ctx, stage, "fault_lab", 0, MISSING,
                     f"no fault lab handed in ({where} is missing): run `forgelab fault start {stage.number}`, fix it, "
                     "and hand in labs/")
    result = TIMEOUT if _timeout_in(part.detail) else (ERROR if part.status == "error" else FAILED)
    return _item(ctx, stage, "fault_lab", 0, result, f"{where} is not fixed: {part.detail}")


def judge_transfer(ctx: Context, stage: Stage, import_dir: Path, problem: ImportProblem | None) -> Part:
    """Run the learner's transfer test on its own, in a process without the stage tests.

    A transfer test that does not even collect (a typo), crashes or hangs costs the transfer item
    only; and nothing it does at import time can reach the stage tests' process.
    """
    path = ctx.home / stage.transfer_file
    shown = stage.transfer_file
    if not path.is_file():
        return Part("missing", f"{shown} was not handed in")
    if problem is not None:
        return Part("error", f"not run: {problem.cause}")
    run = run_pytest(import_dir, ctx.workbook.root, [str(path)], expected=4)
    return checker.judge_transfer(run.tests, run.problem, shown, cause=_cause)


def judge_transfer_on_known_wrong(ctx: Context, stage: Stage, part: Part) -> Part | None:
    """Run a transfer test that passed once more, against the stage's known-wrong implementation.

    ``passed`` there means the test cannot tell right from wrong; ``failed`` (any test that does not
    pass: a failure, an error, a timeout) means it can. ``None`` when there is nothing to compare:
    the test did not pass on the learner's forge/, or the course has no known-wrong variant here.
    The run is the same kind of run as the learner's own (its own process, same environment,
    network guard and per-test time limit); only its verdict is used, never its output.
    """
    if part.status != "passed":
        return None
    import_dir = known_wrong.variant(ctx.workbook.root, stage)
    if import_dir is None:
        return None
    run = run_pytest(import_dir, ctx.workbook.root, [str(ctx.home / stage.transfer_file)], expected=4)
    results = run.tests
    if results and not run.problem and all(r.outcome in ("passed", "skipped") for r in results) \
            and any(r.outcome == "passed" for r in results):
        return Part("passed", f"{sum(r.outcome == 'passed' for r in results)} transfer test(s) pass there too")
    return Part("failed", "it fails on a known-wrong implementation, as it should")


KNOWN_WRONG_PASSES = ("your transfer test also passes on a known-wrong implementation of this stage, so it cannot "
                      "tell right from wrong: assert the exact results the transfer challenge asks for")


def grade_transfer(ctx: Context, stage: Stage, part: Part, on_wrong: Part | None = None) -> GradeItem:
    """The transfer item. A test that passes on the learner's forge/ earns the points only if it does
    not also pass on the known-wrong implementation (``on_wrong``); if it does, the item is worth 0
    and flagged for review (the instructor may judge that the test checks something the fault
    does not touch)."""
    top = SPEC["transfer"].max_points
    if part.status == "passed":
        if on_wrong is not None and on_wrong.status == "passed":
            return _item(ctx, stage, "transfer", 0, FAILED,
                         f"{stage.transfer_file}: {part.detail} on your forge/, but {KNOWN_WRONG_PASSES}", REVIEW)
        checked = ("; it fails on a known-wrong implementation, as it should" if on_wrong is not None
                   else "; not checked against a known-wrong implementation (the course has none for this stage)")
        return _item(ctx, stage, "transfer", top, PASSED, f"{stage.transfer_file}: {part.detail}{checked}")
    if part.status in ("missing", "not_written"):
        return _item(ctx, stage, "transfer", 0, MISSING, f"{stage.transfer_file}: {part.detail}")
    result = TIMEOUT if _timeout_in(part.detail) else (ERROR if part.status == "error" else FAILED)
    return _item(ctx, stage, "transfer", 0, result, f"{stage.transfer_file} does not pass: {part.detail}")


def grade_design(ctx: Context, stage: Stage, part: Part) -> GradeItem:
    top = SPEC["design_answer"].max_points
    if part.status == "present":
        return _item(ctx, stage, "design_answer", top, PASSED,
                     f"{stage.design_answer_file}: handed in ({part.detail}); its content is read against the rubric "
                     "by the instructor")
    if part.status == "missing":
        return _item(ctx, stage, "design_answer", 0, MISSING, f"no design answer handed in ({stage.design_answer_file})")
    return _item(ctx, stage, "design_answer", 0, FAILED, f"{stage.design_answer_file}: {part.detail}")


def grade_evidence(ctx: Context, stage: Stage, observed: CheckOutcome, transfer: Part) -> GradeItem:
    module_file = ctx.target.module_path(stage.module)
    acceptance = {**observed.document["acceptance"], "transfer_passed": transfer.status == "passed"}
    finding = consistency.check(stage, ctx.workbook.root, ctx.home, module_file, observed.tests, acceptance)
    top = SPEC["evidence"].max_points
    return _item(ctx, stage, "evidence", top if finding.outcome == PASSED else 0, finding.outcome, finding.reason,
                 finding.flag)


# ---------------------------------------------------------------- one stage


def grade_stage(ctx: Context, stage: Stage) -> StageResult:
    timings: dict[str, float] = {}
    started = time.monotonic()
    import_dir = ctx.target.in_place
    assert import_dir is not None
    problem = probe_import(import_dir, stage.module)
    observed = run_check(ctx.course, ctx.workbook, stage, ctx.target, write=False)
    checks = grade_instructor_checks(ctx, stage, import_dir, problem)
    transfer = judge_transfer(ctx, stage, import_dir, problem)
    on_wrong = judge_transfer_on_known_wrong(ctx, stage, transfer)
    timings["tests_s"] = round(time.monotonic() - started, 3)
    items = [
        grade_tests(ctx, stage, observed, problem),
        checks,
        grade_notebook(ctx, stage, import_dir, problem, timings,
                       tests_timed_out=any(row.outcome == "timeout" for row in observed.tests)),
        grade_fault_lab(ctx, stage, observed.fault_lab),
        grade_transfer(ctx, stage, transfer, on_wrong),
        grade_design(ctx, stage, observed.design),
        grade_evidence(ctx, stage, observed, transfer),
    ]
    timings["stage_total_s"] = round(time.monotonic() - started, 3)
    return StageResult(items, timings)


def gradeable(course_root: Path, stage: Stage, notebooks: dict[str, Path]) -> dict[str, bool]:
    """Which items the course can grade for this stage (the others are worth 0 of 0)."""
    return {key: (key != "instructor_checks" or bool(check_files(course_root, stage)))
            and (key != "notebook" or stage.number in notebooks) for key in SPEC}


def failed_stage(submission: str, stage: Stage, outcome: str, reason: str, course_root: Path,
                 notebooks: dict[str, Path]) -> list[GradeItem]:
    """Every item of a stage lost for one cause (a grader crash, the submission's time limit)."""
    rows = []
    for key, can in gradeable(course_root, stage, notebooks).items():
        if can:
            rows.append(GradeItem(submission, stage.number, key, 0, SPEC[key].max_points, outcome, reason, REVIEW))
        else:
            rows.append(GradeItem(submission, stage.number, key, 0, 0, NOT_GRADED,
                                  "not graded: the course has nothing to grade this item with for this stage"))
    return rows
