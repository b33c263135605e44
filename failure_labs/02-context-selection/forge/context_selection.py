"""Stage 02 — context selection under a token budget (FAULT LAB: this copy has a defect to find and fix).

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
    return item.relevance * item.trust / max(item.tokens, 1)


def check_candidates(candidates: list[ContextCandidate], budget: int) -> None:
    """Fail with ValueError on a negative budget or on the first invalid candidate."""
    if budget < 0:
        raise ValueError(f"budget must be 0 or more, got {budget}")
    seen: set[str] = set()
    for item in candidates:
        if item.id in seen:
            raise ValueError(f"duplicate candidate id {item.id!r}: every id must be unique")
        seen.add(item.id)
        if item.tokens < 0:
            raise ValueError(f"candidate {item.id!r}: tokens must be 0 or more, got {item.tokens}")
        if not 0 <= item.relevance <= 1:
            raise ValueError(f"candidate {item.id!r}: relevance must be between 0 and 1, got {item.relevance}")
        if not 0 <= item.trust <= 1:
            raise ValueError(f"candidate {item.id!r}: trust must be between 0 and 1, got {item.trust}")


def explain_choice(candidates: list[ContextCandidate], budget: int) -> list[Decision]:
    """Decide every candidate and keep the reason (see the module contract)."""
    check_candidates(candidates, budget)
    decisions: list[Decision] = []
    used = 0
    for item in sorted(candidates, key=lambda item: -item.relevance):
        if used + item.tokens <= budget:
            used += item.tokens
            decisions.append(Decision(item.id, True, "selected", value_density(item)))
        else:
            decisions.append(Decision(item.id, False, "over_budget", value_density(item)))
    return decisions


def choose(candidates: list[ContextCandidate], budget: int) -> list[str]:
    """The ids to include, required first (see the module contract)."""
    return [decision.id for decision in explain_choice(candidates, budget) if decision.included]
