"""Transfer challenge, stage 02 — music release (reference test)."""

from forge.context_selection import ContextCandidate, choose


def test_music_release_policy_fills_the_budget_alone() -> None:
    policy = ContextCandidate("release-policy", tokens=60, relevance=0.2, trust=1.0, required=True)
    note = ContextCandidate("inspiration-note", tokens=40, relevance=0.9, trust=0.8)
    assert choose([policy, note], 60) == ["release-policy"]
    assert choose([note, policy], 60) == ["release-policy"]
