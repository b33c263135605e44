"""Transfer challenge, stage 02 — music release.

The scenario changes: an independent musician plans a release, and the assistant has one
model call with a budget of 60 tokens. Two candidates compete for it:
  * the label's release policy — required, 60 tokens, relevance 0.2, trust 1.0;
  * an inspiration note — optional, 40 tokens, relevance 0.9, trust 0.8.

Write a test that builds both candidates with ``ContextCandidate``, calls ``choose`` with
the budget of 60, and asserts that the result is exactly the policy: the note, although
far more relevant, must not be in it.

Replace the ``pytest.skip`` line with your test, then run ``forgelab check 02``.
"""

import pytest

from forge.context_selection import ContextCandidate, choose  # noqa: F401


def test_music_release_policy_fills_the_budget_alone() -> None:
    pytest.skip("not written yet: replace this line with your test (notebook part 8)")
