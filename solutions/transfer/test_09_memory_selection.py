"""Transfer challenge, stage 09 — music release (reference test)."""

from forge.memory_selection import MemoryCandidate, MemoryDecision, select_memories

SLOT = "release:first-format"


def test_music_current_turn_format_beats_the_vinyl_habit() -> None:
    habit = MemoryCandidate("lia-vinyl-habit", "I always release on vinyl first.", "lia", 0.97, 1, SLOT)
    today = MemoryCandidate("lia-digital-today", "This single goes out digital-only, no vinyl.", "lia", 0.45, 6,
                            SLOT, "current_turn")
    manager = MemoryCandidate("max-press-vinyl", "Press 500 vinyl copies.", "max", 0.99, 2, SLOT, "current_turn")
    plan = select_memories([habit, manager, today], "lia")
    assert plan.selected == ("lia-digital-today",)
    assert plan.decisions == (
        MemoryDecision("lia-vinyl-habit", False, "authority_loser", "lia-digital-today"),
        MemoryDecision("max-press-vinyl", False, "scope_mismatch"),
        MemoryDecision("lia-digital-today", True, "selected"),
    )
