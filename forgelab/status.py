"""``forgelab status``: every stage at a glance, from one quick test run.

All stage test files and transfer files run in a single pytest subprocess against the learner's
``forge/``; a module that is broken only spoils its own stage's row. Fault-lab status comes from
the last ``fault check``; evidence from the verification.json files on disk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from forgelab import evidence, state
from forgelab.answers import answer_path
from forgelab.checker import MIN_DESIGN_WORDS
from forgelab.paths import Workbook
from forgelab.registry import Course, Stage
from forgelab.runner import RunResult, run_pytest


@dataclass(frozen=True)
class StatusReport:
    rows: list[tuple[str, ...]]
    next_step: str
    problem: str | None


def _tests_cell(stage: Stage, run: RunResult) -> tuple[str, bool]:
    for nodeid, cause in run.collect_errors:
        if nodeid.startswith(stage.test_file):
            return "cannot import: see `forgelab check " + stage.number + "`", False
    found = run.by_name()
    passed = sum(1 for name in stage.required_tests
                 if found.get(name) and all(r.outcome == "passed" for r in found[name]))
    return f"{passed}/{len(stage.required_tests)}", passed == len(stage.required_tests)


def _transfer_cell(workbook: Workbook, stage: Stage, run: RunResult) -> tuple[str, bool]:
    path = workbook.root / stage.transfer_file
    if not path.is_file():
        return "missing", False
    rows = [r for r in run.tests if r.nodeid.startswith(stage.transfer_file)]
    if any(nodeid.startswith(stage.transfer_file) for nodeid, _ in run.collect_errors):
        return "error", False
    if not rows or all(r.outcome == "skipped" for r in rows):
        return "not written", False
    ok = all(r.outcome == "passed" for r in rows)
    return ("passed" if ok else "failing"), ok


def _lab_cell(workbook: Workbook, stage: Stage) -> tuple[str, bool]:
    lab_module = workbook.labs / stage.key / stage.fault.fault_file
    if not lab_module.is_file():
        return "not started", False
    last = state.get(workbook, "fault_lab", stage.number)
    if not last:
        return "started", False
    if last.get("file_sha256") != evidence.sha256_file(lab_module):
        return "edited, not checked", False
    return str(last.get("status", "started")), last.get("status") == "fixed"


def _design_cell(workbook: Workbook, stage: Stage) -> tuple[str, bool]:
    path = answer_path(workbook, stage)
    if not path.is_file():
        return "missing", False
    words = len(path.read_text(encoding="utf-8", errors="replace").split())
    return (f"{words} words", True) if words >= MIN_DESIGN_WORDS else (f"too short ({words})", False)


def _evidence_cell(workbook: Workbook, stage: Stage) -> str:
    path = workbook.workspace / stage.evidence_dir / evidence.FILENAME
    if not path.is_file():
        return "none"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return "unreadable: run check again"
    module_now = evidence.sha256_file(workbook.root / stage.module)
    stale = document.get("digests", {}).get("module", {}).get("sha256") != module_now
    verdict = "accepted" if document.get("accepted") else "not accepted"
    return f"{verdict} (stale: code changed)" if stale and document.get("target", {}).get("kind") == "learner" else verdict


def collect_status(workbook: Workbook, course: Course) -> StatusReport:
    selection = [s.test_file for s in course.stages]
    selection += [s.transfer_file for s in course.stages if (workbook.root / s.transfer_file).is_file()]
    expected = sum(len(s.required_tests) for s in course.stages) + len(course.stages)
    run = run_pytest(workbook.root, workbook.root, selection, expected=expected)
    rows: list[tuple[str, ...]] = []
    next_step = ""
    for stage in course.stages:
        tests, tests_ok = _tests_cell(stage, run)
        lab, lab_ok = _lab_cell(workbook, stage)
        transfer, transfer_ok = _transfer_cell(workbook, stage, run)
        design, design_ok = _design_cell(workbook, stage)
        rows.append((stage.number, stage.text().title, tests, lab, transfer, design, _evidence_cell(workbook, stage)))
        if next_step:
            continue
        if not tests_ok:
            next_step = f"stage {stage.number}: open {stage.notebook} and implement {stage.module}; then `forgelab check {stage.number}`"
        elif not lab_ok:
            next_step = f"stage {stage.number}: `forgelab fault start {stage.number}` then `forgelab fault check {stage.number}`"
        elif not transfer_ok:
            next_step = f"stage {stage.number}: write your transfer test in {stage.transfer_file}"
        elif not design_ok:
            next_step = f"stage {stage.number}: answer the design question (notebook part 9 or `forgelab answer {stage.number}`)"
        elif _evidence_cell(workbook, stage) != "accepted":
            next_step = f"stage {stage.number}: `forgelab check {stage.number}` to write your evidence"
    problem = None if not run.problem or run.tests else run.problem
    return StatusReport(rows, next_step or "every stage is accepted: open the course page and self-check your evidence", problem)
