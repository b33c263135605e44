"""Stage 02 — context selection under a token budget.

Contract
    ``choose(candidates, budget) -> list[str]`` returns the ids of the material that goes
    into one model call:
    * every required candidate first, in input order. If the required tokens together
      exceed the budget, ``ValueError`` states the required total and the budget — a
      partial result is never returned;
    * then the optional candidates by value density ``relevance * trust / max(tokens, 1)``,
      highest first, equal densities by id ascending. Each one is added while it fits in
      what is left of the budget; one that does not fit is skipped and the later, smaller
      ones are still tried.
    Invalid input fails with ``ValueError`` before anything is chosen: a negative budget,
    and — naming the candidate's id — negative tokens, relevance or trust outside [0, 1],
    or an id used twice. The input list is never modified. Runs in O(n log n).

    ``explain_choice(candidates, budget)`` returns the same decision with its reasons: one
    ``Decision`` per candidate, required ones first (input order), then the optional ones
    in ranking order, each with reason ``required``, ``selected`` or ``over_budget``.

Boundary decision
    Required context is never dropped to make room: if it does not fit, the call fails
    loudly instead of running without its policy. Relevance alone never decides; cost
    and trust count too.

Your task: implement ``value_density``, ``check_candidates`` and ``explain_choice``.
``choose`` is already written on top of ``explain_choice``. Check your work with
``forgelab check 02``; ask for help with ``forgelab hint 02``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ContextCandidate:
    id: str
    tokens: int
    relevance: float  # 0.0 .. 1.0: how much this material helps the current task
    trust: float  # 0.0 .. 1.0: how far we trust where it came from
    required: bool = False


@dataclass(frozen=True)
class Decision:
    """What happened to one candidate, and why."""

    id: str
    included: bool
    reason: str  # "required", "selected" or "over_budget"
    density: float


def value_density(item: ContextCandidate) -> float:
    """Value per token: relevance times trust, divided by the token cost (at least 1)."""
    raise NotImplementedError("value_density() is not implemented yet — see hints 1–3 (forgelab hint 02)")


def check_candidates(candidates: list[ContextCandidate], budget: int) -> None:
    """Fail with ValueError on a negative budget or on the first invalid candidate."""
    raise NotImplementedError("check_candidates() is not implemented yet — see hints 4–6 (forgelab hint 02)")


def explain_choice(candidates: list[ContextCandidate], budget: int) -> list[Decision]:
    """Decide every candidate and keep the reason (see the module contract)."""
    raise NotImplementedError("explain_choice() is not implemented yet — see hints 7–9 (forgelab hint 02)")


def choose(candidates: list[ContextCandidate], budget: int) -> list[str]:
    """The ids to include, required first (see the module contract)."""
    return [decision.id for decision in explain_choice(candidates, budget) if decision.included]
