"""Regression test for fault lab 02 (context-selection): the course's example.

It pins the lab's defect: it fails on the broken copy of forge/context_selection.py and passes on the reference. It is
the stage test that shows the defect (test_required_policy_is_kept_over_high_relevance_note) with what it needs from
tests/stages/test_02_context_selection.py. Never shipped to learners: it names the defect.
"""

from __future__ import annotations

from forge.context_selection import ContextCandidate, choose


def test_required_policy_is_kept_over_high_relevance_note() -> None:
    policy = ContextCandidate("policy", tokens=60, relevance=0.2, trust=1.0, required=True)
    note = ContextCandidate("note", tokens=60, relevance=1.0, trust=1.0)
    assert choose([note, policy], 60) == ["policy"]
    assert choose([policy, note], 60) == ["policy"]
