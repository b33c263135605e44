"""Stage hints that follow the failure: which rung of a stage's hint ladder to reveal next.

Each stage declares in its ``stage.toml`` which rungs of its ladder (``[text.<lang>] hints``, 1 = the first) address
which of its tests (``[hint_rungs]``, checked by :func:`forgelab.core.registry.check_hint_rungs`). ``forgelab hint
NN``, ``h`` in watch mode and the notebook's hint button reveal the next unrevealed rung that addresses the *first
failing test* of the stage's latest check; when no rung is left for that test (or no test is failing, or the stage
was not checked yet), the next unrevealed rung in the ladder's order. The latest check's first failing test is kept
in the workspace state by every check of the learner's own code (:meth:`forgelab.learner.workbench.Workbench.check`);
the learning record notes each rung revealed, with the failure it was shown for (:func:`forgelab.core.learning.note_hint`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from forgelab.core.registry import Stage
from forgelab.judge.outcomes import Outcome, TestRow


@dataclass(frozen=True)
class Choice:
    """The rung to reveal next, and why: ``test`` is the failing test it was chosen for (None: no failing test
    was known); ``addressed`` says whether the rung addresses that test or the ladder's order picked it."""

    rung: int
    test: str | None
    addressed: bool


def first_failing(stage: Stage, rows: Iterable[TestRow]) -> str | None:
    """The first of the stage's tests, in the order they ran, that did not pass (None: all passed, or none ran)."""
    return next((row.name for row in rows if row.outcome is not Outcome.PASSED and row.name in stage.required_tests),
                None)


def next_rung(stage: Stage, total: int, revealed: Iterable[int], failing: str | None) -> Choice | None:
    """The rung to reveal next for ``failing`` (None when every rung of the ``total`` is revealed)."""
    shown = set(revealed)
    for rung in stage.hint_rungs.get(failing or "", ()):
        if rung <= total and rung not in shown:
            return Choice(rung, failing, True)
    following = next((rung for rung in range(1, total + 1) if rung not in shown), None)
    return None if following is None else Choice(following, failing, False)
