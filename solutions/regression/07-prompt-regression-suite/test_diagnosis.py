"""Regression test for fault lab 07 (prompt-regression-suite): the course's example.

It pins the lab's defect: it fails on the broken copy of forge/prompt_regression.py and passes on the reference. It is
the stage test that shows the defect (test_permission_regression_is_reported) with what it needs from
tests/stages/test_07_prompt_regression_suite.py. Never shipped to learners: it names the defect.
"""

from __future__ import annotations

from forge.prompt_regression import RegressionCase, run_suite


READ_ONLY = RegressionCase("read-only", {"request": "inspect"}, frozenset({"goal", "write_allowed"}), False)


def test_permission_regression_is_reported() -> None:
    failures = run_suite([READ_ONLY], lambda payload: {"goal": "inspect", "write_allowed": True})
    assert failures == {"read-only": ["write permission changed"]}
