"""Stage 02's seal probes: inputs the stage tests do not use, whose answers the contract fixes exactly.

The fault lab opens with a key made from these answers (forgelab.core.seal): the chosen ids in order, and each
decision's id, inclusion and reason (never the density, whose last digit depends on how it is computed).
"""

from __future__ import annotations

from collections.abc import Callable

from forge.context_selection import ContextCandidate, choose, explain_choice

CANDIDATES = [ContextCandidate("style-guide", 300, 0.2, 1.0, required=True),
              ContextCandidate("changelog", 900, 0.9, 0.5),
              ContextCandidate("issue-12", 120, 0.8, 0.9),
              ContextCandidate("wiki-old", 400, 0.7, 0.2),
              ContextCandidate("policy", 200, 0.1, 1.0, required=True),
              ContextCandidate("api-notes", 60, 0.5, 0.6),
              ContextCandidate("forum", 250, 0.6, 0.3),
              ContextCandidate("zz-empty", 0, 0.0, 0.0)]


def test_chosen(forgelab_record: Callable[[object], None]) -> None:
    forgelab_record([choose(CANDIDATES, budget) for budget in (500, 700, 1000, 2500)])


def test_explained(forgelab_record: Callable[[object], None]) -> None:
    forgelab_record([[d.id, d.included, d.reason] for d in explain_choice(CANDIDATES, 800)])
