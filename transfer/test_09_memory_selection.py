"""Transfer challenge, stage 09 — music release.

The scenario changes: an assistant helps Lia, an independent musician, plan the release of a
single. Three memories are recalled for the fact slot ``release:first-format``:
  * Lia's personal default (``user_default``): "I always release on vinyl first." —
    score 0.97, source_rank 1;
  * what Lia said in this conversation (``current_turn``): "This single goes out
    digital-only, no vinyl." — score 0.45, source_rank 6;
  * a memory of her label manager Max (user scope ``max``, ``current_turn``): "Press 500
    vinyl copies." — score 0.99, source_rank 2.

Write a test that builds the three ``MemoryCandidate`` objects, calls ``select_memories``
for the user scope ``lia`` (the default ``SelectionPolicy`` is fine), and asserts that
  * only the current-turn memory is selected, although its score is the lowest;
  * the vinyl default is rejected with reason ``authority_loser`` and names the winner;
  * Max's memory is rejected as ``scope_mismatch``.

Replace the ``pytest.skip`` line with your test, then run ``forgelab check 09``.
"""

import pytest

from forge.memory_selection import MemoryCandidate, MemoryDecision, SelectionPolicy, select_memories  # noqa: F401


def test_music_current_turn_format_beats_the_vinyl_habit() -> None:
    pytest.skip("not written yet: replace this line with your test (notebook part 8)")
