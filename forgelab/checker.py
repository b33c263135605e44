"""``forgelab check NN``: judge one stage for one target and write its evidence.

Four parts are judged, each from a real run:

1. the stage's required tests against the target's ``forge``;
2. the fault lab: the target test — and the rest of the stage tests — in the lab workspace;
3. the transfer challenge: the learner's own test file, run against the same ``forge``;
4. the design answer: present and long enough to be an answer.
"""

from __future__ import annotations

import datetime as _dt
import platform
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forgelab import __version__, evidence, faultlab
from forgelab.paths import Workbook
from forgelab.registry import Course, Stage
from forgelab.runner import ImportProblem, RunResult, TestResult, probe_import, run_pytest
from forgelab.targets import Target

MIN_DESIGN_WORDS = 40


@dataclass(frozen=True)
class Part:
    status: str
    detail: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckOutcome:
    stage: Stage
    target: Target
    tests: tuple[TestResult, ...]
    fault_lab: Part
    transfer: Part
    transfer_tests: tuple[TestResult, ...]
    design: Part
    document: dict[str, Any]
    path: Path | None

    @property
    def accepted(self) -> bool:
        return bool(self.document["accepted"])


def lab_dir(workbook: Workbook, stage: Stage, target: Target) -> Path:
    base = workbook.labs if target.kind == "learner" else target.home / "labs"
    return base / stage.key


def transfer_file(workbook: Workbook, stage: Stage, target: Target) -> Path:
    if target.is_reference:
        return workbook.solutions / "transfer" / Path(stage.transfer_file).name
    base = workbook.root if target.kind == "learner" else target.home
    return base / stage.transfer_file


def design_answer_file(workbook: Workbook, stage: Stage, target: Target) -> Path:
    if target.is_reference:
        return workbook.solutions / "answers" / f"{stage.key}.md"
    return target.home / stage.design_answer_file


def probe_then_run(import_dir: Path, module: str, shown_as: str, root: Path, selection: list[str],
                   expected: int) -> tuple[ImportProblem | None, RunResult]:
    """Import the module alone first; run pytest only when it imports (a hang costs one probe)."""
    problem = probe_import(import_dir, module, shown_as)
    if problem is not None:
        return problem, RunResult((), problem.cause)
    return None, run_pytest(import_dir, root, selection, expected=expected)


def _not_run(names: list[str], nodeid_base: str, cause: str) -> tuple[TestResult, ...]:
    return tuple(TestResult(f"{nodeid_base}::{name}", name, "not_run", cause, 0) for name in names)


def _required_rows(stage: Stage, run: RunResult) -> tuple[TestResult, ...]:
    """One or more rows per required test; a required test that did not run says why."""
    rows: list[TestResult] = []
    found = run.by_name()
    for name in stage.required_tests:
        if name in found:
            rows.extend(found[name])
        else:
            cause = run.problem or "this test was not found: the stage test file may have been edited"
            rows.append(TestResult(f"{stage.test_file}::{name}", name, "not_run", cause, 0))
    return tuple(rows)


def _judge_design(path: Path, shown: str) -> Part:
    if not path.is_file():
        return Part("missing", f"no answer yet: write it in the notebook (part 9) or save it to {shown}")
    text = path.read_text(encoding="utf-8", errors="replace")
    words = len(text.split())
    extra = {"words": words, "sha256": evidence.sha256_file(path)}
    if words < MIN_DESIGN_WORDS:
        return Part("too_short", f"{words} words; a real answer needs at least {MIN_DESIGN_WORDS} — cover each rubric point", extra)
    return Part("present", f"{words} words", extra)


def judge_transfer(results: tuple[TestResult, ...], problem: str | None, shown: str,
                   cause: Callable[[TestResult], str] = lambda row: row.cause) -> Part:
    """The transfer part from its test rows: not written (still skipped), failed, error or passed."""
    if problem and not results:
        return Part("error", problem)
    if not results:
        return Part("error", f"no test function found in {shown}: name it test_...")
    if all(r.outcome == "skipped" for r in results):
        return Part("not_written", f"still the starter: replace the pytest.skip line in {shown} with your test")
    bad = [r for r in results if r.outcome != "passed"]
    if bad:
        first = bad[0]
        status = "error" if first.outcome in ("error", "not_run") else "failed"
        return Part(status, f"{first.name} {first.outcome}: {cause(first)}")
    return Part("passed", f"{len(results)} transfer test(s) passed")


def _judge_lab(stage: Stage, target: Target, lab: Path, lab_run: RunResult | None,
               lab_problem: ImportProblem | None, reference_results: tuple[TestResult, ...]) -> Part:
    if target.kind == "solution":
        ok = all(r.outcome == "passed" for r in reference_results if r.name == stage.fault.target_test)
        return Part("fixed" if ok else "broken", "reference fix: the solution module is the repaired file")
    if target.kind == "fault":
        return Part("broken", "this target is the broken variant itself")
    if not lab.is_dir():
        return Part("not_started", f"start it with `forgelab fault start {stage.number}`")
    if lab_problem is not None:
        return Part("error", lab_problem.cause)
    assert lab_run is not None
    verdict = faultlab.judge(stage, lab_run)
    if verdict.status == "error":
        return Part("error", verdict.problem or "the lab's tests did not run")
    if verdict.status == "broken":
        if verdict.target is not None and verdict.target.outcome != "passed":
            return Part("broken", f"{stage.fault.target_test} still fails: {verdict.target.cause}")
        return Part("broken", f"the target test passes, but the lab fix breaks: {', '.join(verdict.failing)}")
    return Part("fixed", "the target test and the whole stage pass in the lab workspace",
                {"fixed_file_sha256": evidence.sha256_file(lab / stage.fault.fault_file)})


def run_check(course: Course, workbook: Workbook, stage: Stage, target: Target, *,
              write: bool = True, out: Path | None = None) -> CheckOutcome:
    root = workbook.root
    transfer_path = transfer_file(workbook, stage, target)
    transfer_shown = stage.transfer_file
    lab = lab_dir(workbook, stage, target)
    with target.importable() as import_dir, ThreadPoolExecutor(max_workers=2) as pool:
        selection = [stage.test_file] + ([str(transfer_path)] if transfer_path.is_file() else [])
        expected = len(stage.required_tests) + 4
        main_future = pool.submit(probe_then_run, import_dir, stage.module, "", root, selection, expected)
        lab_future = None
        if target.kind in ("learner", "path") and lab.is_dir():
            lab_future = pool.submit(probe_then_run, lab, stage.module, stage.key, root, [stage.test_file], expected)
        problem, run = main_future.result()
        lab_problem, lab_run = lab_future.result() if lab_future else (None, None)

    stage_rows = tuple(r for r in run.tests if r.nodeid.startswith(stage.test_file))
    transfer_rows = tuple(r for r in run.tests if not r.nodeid.startswith(stage.test_file))
    if problem is not None:
        tests = _not_run(list(stage.required_tests), stage.test_file, problem.cause)
        transfer_part = (Part("missing", f"{transfer_shown} does not exist: restore it from the workbook")
                         if not transfer_path.is_file() else Part("error", f"not run: {problem.cause}"))
        transfer_rows = ()
    else:
        tests = _required_rows(stage, RunResult(stage_rows, run.problem))
        if not transfer_path.is_file():
            transfer_part = Part("missing", f"{transfer_shown} does not exist: restore it from the workbook")
        else:
            transfer_part = judge_transfer(transfer_rows, run.problem, transfer_shown)
    lab_part = _judge_lab(stage, target, lab, lab_run, lab_problem, tests)
    design_path = design_answer_file(workbook, stage, target)
    design_part = _judge_design(design_path, stage.design_answer_file)

    document = build_document(course, stage, target, tests, lab_part, transfer_part, transfer_rows,
                              transfer_path, design_part, design_path)
    path = None
    if write:
        path = out or (workbook.workspace / stage.evidence_dir / evidence.FILENAME)
        evidence.write_document(path, document)
    return CheckOutcome(stage, target, tests, lab_part, transfer_part, transfer_rows, design_part, document, path)


def _summary(stage: Stage, tests: tuple[TestResult, ...]) -> dict[str, int]:
    counts = {key: 0 for key in ("passed", "failed", "error", "skipped", "timeout", "not_run")}
    for row in tests:
        counts[row.outcome] += 1
    passed_names = {
        name for name in stage.required_tests
        if (rows := [r for r in tests if r.name == name]) and all(r.outcome == "passed" for r in rows)
    }
    counts["required_passed"] = len(passed_names)
    counts["required_total"] = len(stage.required_tests)
    return counts


def build_document(course: Course, stage: Stage, target: Target, tests: tuple[TestResult, ...],
                   lab: Part, transfer: Part, transfer_rows: tuple[TestResult, ...], transfer_path: Path,
                   design: Part, design_path: Path) -> dict[str, Any]:
    from importlib.metadata import version

    summary = _summary(stage, tests)
    acceptance = {
        "required_tests_passed": summary["required_passed"] == summary["required_total"],
        "fault_lab_fixed": lab.status == "fixed",
        "transfer_passed": transfer.status == "passed",
        "design_answer_present": design.status == "present",
    }
    problems = []
    if not acceptance["required_tests_passed"]:
        failing = [name for name in stage.required_tests
                   if not all(r.outcome == "passed" for r in tests if r.name == name)]
        problems.append(f"required tests not passing: {', '.join(failing)}")
    if not acceptance["fault_lab_fixed"]:
        problems.append(f"fault lab {lab.status.replace('_', ' ')}: {lab.detail}")
    if not acceptance["transfer_passed"]:
        problems.append(f"transfer challenge {transfer.status.replace('_', ' ')}: {transfer.detail}")
    if not acceptance["design_answer_present"]:
        problems.append(f"design answer {design.status.replace('_', ' ')}: {design.detail}")
    module_file = target.module_path(stage.module)
    fault_lab: dict[str, Any] = {"status": lab.status, "target_test": stage.fault_target_nodeid,
                                 "fault_file": stage.fault.fault_file, "detail": lab.detail}
    if lab.extra.get("fixed_file_sha256"):
        fault_lab["fixed_file_sha256"] = lab.extra["fixed_file_sha256"]
    transfer_doc: dict[str, Any] = {
        "status": transfer.status, "file": stage.transfer_file, "detail": transfer.detail,
        "tests": [{"name": r.name, "outcome": r.outcome, "cause": r.cause} for r in transfer_rows],
    }
    if transfer_path.is_file():
        transfer_doc["sha256"] = evidence.sha256_file(transfer_path)
    design_doc: dict[str, Any] = {"status": design.status, "file": stage.design_answer_file,
                                  "words": int(design.extra.get("words", 0)), "detail": design.detail}
    if design.extra.get("sha256"):
        design_doc["sha256"] = design.extra["sha256"]
    document: dict[str, Any] = {
        "schema_version": evidence.SCHEMA_VERSION,
        "kind": evidence.KIND,
        "experiment_id": stage.experiment_id,
        "stage": {"number": stage.number, "slug": stage.slug, "title": stage.text().title,
                  "module": stage.module, "evidence_dir": stage.evidence_dir + "/"},
        "target": {"name": target.name if target.kind != "path" else "path", "kind": target.kind},
        "generated_by": {"tool": "forgelab", "tool_version": __version__, "course_version": course.version,
                         "python": platform.python_version(), "pytest": version("pytest"),
                         "platform": f"{platform.system()}-{platform.machine()}"},
        "checked_at": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "required_tests": list(stage.required_tests),
        "tests": [{"nodeid": r.nodeid, "name": r.name, "outcome": r.outcome, "cause": r.cause[:300],
                   "duration_ms": int(r.duration_ms)} for r in tests],
        "summary": summary,
        "fault_lab": fault_lab,
        "transfer": transfer_doc,
        "design_answer": design_doc,
        "digests": {
            "algorithm": "sha256",
            "module": {"path": stage.module, "sha256": evidence.sha256_file(module_file)},
            "tests": [{"path": stage.test_file, "sha256": evidence.sha256_file(course.root / stage.test_file)}],
        },
        "acceptance": acceptance,
        "accepted": all(acceptance.values()),
        "problems": problems,
        "disclaimer": evidence.DISCLAIMER,
    }
    return evidence.seal(document)

