"""Transfer challenge, stage 07 — office research (reference test)."""

from forge.prompt_regression import RegressionCase, run_suite


def test_office_brief_missing_acceptance_is_reported() -> None:
    case = RegressionCase(
        "decision-brief",
        {"request": "compare two suppliers and recommend one, with citations"},
        frozenset({"goal", "acceptance"}),
        True,
    )
    failures = run_suite([case], lambda payload: {"goal": "recommend a supplier", "write_allowed": True})
    assert failures == {"decision-brief": ["missing:acceptance"]}
    assert "write permission changed" not in failures["decision-brief"]
