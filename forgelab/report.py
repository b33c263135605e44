"""The test table of a check: one row per required test (used by the workbench for the CLI and the notebooks)."""

from __future__ import annotations

from forgelab.display import symbol
from forgelab.i18n import _
from forgelab.judge.outcomes import TestRow

ORDER = ["timeout", "error", "failed", "not_run", "skipped", "passed"]


def collapse(stage_required: tuple[str, ...], tests: tuple[TestRow, ...]) -> list[tuple[str, str, str]]:
    """One row per required test: worst outcome across its cases and the first cause."""
    rows = []
    for name in stage_required:
        cases = [r for r in tests if r.name == name]
        worst = min(cases, key=lambda r: ORDER.index(r.outcome))
        label = name if len(cases) == 1 else _("{name} ({count} cases)").format(name=name, count=len(cases))
        cause = "" if worst.outcome == "passed" else worst.cause
        rows.append((label, symbol(worst.outcome), cause))
    return rows
