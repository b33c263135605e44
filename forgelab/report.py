"""Readable summaries of a check, shared by the CLI and the notebooks."""

from __future__ import annotations

from forgelab.checker import CheckOutcome
from forgelab.display import SYMBOLS, table
from forgelab.judge.outcomes import TestRow

ORDER = ["timeout", "error", "failed", "not_run", "skipped", "passed"]


def collapse(stage_required: tuple[str, ...], tests: tuple[TestRow, ...]) -> list[tuple[str, str, str]]:
    """One row per required test: worst outcome across its cases and the first cause."""
    rows = []
    for name in stage_required:
        cases = [r for r in tests if r.name == name]
        worst = min(cases, key=lambda r: ORDER.index(r.outcome))
        label = name if len(cases) == 1 else f"{name} ({len(cases)} cases)"
        cause = "" if worst.outcome == "passed" else worst.cause
        rows.append((label, SYMBOLS[worst.outcome], cause))
    return rows


def _first_next_step(outcome: CheckOutcome) -> str:
    stage = outcome.stage
    doc = outcome.document
    if not doc["acceptance"]["required_tests_passed"]:
        causes = [r.cause for r in outcome.tests if r.outcome != "passed"]
        if causes and all("not implemented yet" in c for c in causes):
            return f"implement {stage.module} (notebook part 6; `forgelab hint {stage.number}` for a hint)"
        return f"make the failing tests pass in {stage.module}, then run `forgelab check {stage.number}` again"
    if not doc["acceptance"]["fault_lab_fixed"]:
        if outcome.fault_lab.status == "not_started":
            return f"start the fault lab: `forgelab fault start {stage.number}`"
        return f"fix labs/{stage.key}/{stage.fault.fault_file}, then `forgelab fault check {stage.number}`"
    if not doc["acceptance"]["transfer_passed"]:
        return f"write your transfer test in {stage.transfer_file} (notebook part 8)"
    if not doc["acceptance"]["design_answer_present"]:
        return f"answer the design question (notebook part 9, or save it to {stage.design_answer_file})"
    return f"open the course page and pick this verification.json on the Stage {stage.number} page"


def format_check(outcome: CheckOutcome, evidence_path: str | None = None) -> str:
    stage, doc = outcome.stage, outcome.document
    header = f"Stage {stage.number} · {stage.text().title} · target: {doc['target']['name']}"
    lines = [header, ""]
    rows = collapse(stage.required_tests, outcome.tests)
    lines.append(table(["test", "outcome", "cause"], rows))
    summary = doc["summary"]
    lines.append(f"required tests: {summary['required_passed']}/{summary['required_total']} passed")
    lines.append("")
    parts = [
        ("fault lab", outcome.fault_lab.status, outcome.fault_lab.detail),
        ("transfer", outcome.transfer.status, outcome.transfer.detail),
        ("design answer", outcome.design.status, outcome.design.detail),
    ]
    lines.append(table(["part", "status", "detail"], [(p, s.replace("_", " "), d) for p, s, d in parts]))
    lines.append("")
    verdict = "ACCEPTED" if doc["accepted"] else "NOT ACCEPTED"
    where = f" — evidence: {evidence_path}" if evidence_path else ""
    lines.append(f"verdict: {verdict}{where}")
    lines.append(f"next: {_first_next_step(outcome)}")
    return "\n".join(lines)
