"""Regression test for fault lab 09 (memory-selection): the course's example.

It pins the lab's defect: it fails on the broken copy of forge/memory_selection.py and passes on the reference. It is
the stage test that shows the defect (test_current_turn_beats_higher_scoring_user_default) with what it needs from
tests/stages/test_09_memory_selection.py. Never shipped to learners: it names the defect.
"""

from __future__ import annotations

from forge.memory_selection import MemoryCandidate, MemoryDecision, SelectionPolicy, select_memories


LANGUAGE = "preference:automation-language"


WIDE = SelectionPolicy(min_score=0.35, top_k=10, max_chars=10_000, max_tokens=10_000)


def memory(memory_id: str, text: str, *, score: float = 0.8, rank: int = 1, slot: str | None = None,
           authority: str = "user_default", scope: str = "ana", source: str = "", captured_at: str = "") -> MemoryCandidate:
    return MemoryCandidate(memory_id, text, scope, score, rank, slot, authority, source, captured_at)


def decision_of(plan, memory_id: str) -> MemoryDecision:
    [found] = [d for d in plan.decisions if d.memory_id == memory_id]
    return found


def test_current_turn_beats_higher_scoring_user_default() -> None:
    default = memory("default-python", "I usually write automation in Python.", score=0.92, rank=1, slot=LANGUAGE)
    turn = memory("turn-go", "For this task, write the release script in Go.", score=0.51, rank=4,
                  slot=LANGUAGE, authority="current_turn")
    plan = select_memories([default, turn], "ana", WIDE)
    assert plan.selected == ("turn-go",)
    assert decision_of(plan, "default-python") == MemoryDecision("default-python", False, "authority_loser", "turn-go")
    assert select_memories([turn, default], "ana", WIDE).selected == ("turn-go",)
