"""Stage 07's seal probes: inputs the stage tests do not use, whose answers the contract fixes exactly.

The fault lab opens with a key made from these answers (forgelab.core.seal): the failures a suite reports (each
case's problems sorted: the contract fixes each problem's text, not their order), a report of a version, and ids.
"""

from __future__ import annotations

from collections.abc import Callable

from forge.prompt_regression import PromptVersion, RegressionCase, prompt_version_id, regression_report, run_suite

CASES = [RegressionCase("inspect-logs", {"request": "inspect", "path": "logs/"}, frozenset({"goal", "acceptance"}), False),
         RegressionCase("fix-typo", {"request": "change", "path": "README.md"}, frozenset({"goal"}), True),
         RegressionCase("plan-only", {"request": "plan"}, frozenset({"steps", "goal", "risks"}), False),
         RegressionCase("broken", {"request": "explode"}, frozenset(), False),
         RegressionCase("listy", {"request": "list"}, frozenset({"goal"}), False)]


def model(payload: dict[str, object]) -> object:
    request = payload["request"]
    if request == "explode":
        raise ValueError("no such tool")
    if request == "list":
        return ["goal", "steps"]
    if request == "plan":
        return {"goal": "plan", "risks": [], "write_allowed": 0}
    return {"goal": "g", "acceptance": ["a"], "write_allowed": request == "change"}


def test_failures(forgelab_record: Callable[[object], None]) -> None:
    failures = run_suite(CASES, model)
    forgelab_record({case: sorted(problems) for case, problems in failures.items()})


def test_report(forgelab_record: Callable[[object], None]) -> None:
    version = PromptVersion("release-3", "Answer with JSON only. Never set write_allowed unless asked to change a file.")
    report = regression_report(version, CASES[:3], lambda text, payload: {**model(payload), "echo": text[:6]}  # type: ignore[dict-item]
                               if payload["request"] != "plan" else {"goal": text, "steps": [], "risks": [],
                                                                      "write_allowed": False})
    forgelab_record({**report, "failures": {case: sorted(problems) for case, problems in report["failures"].items()}})  # type: ignore[union-attr]


def test_version_ids(forgelab_record: Callable[[object], None]) -> None:
    forgelab_record([prompt_version_id(text) for text in ("", "Système : réponds en JSON.", "a\nb")])
