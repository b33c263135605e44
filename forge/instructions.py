"""Stage 01 — instruction hierarchy.

Contract
    ``resolve(instructions) -> (accepted, rejected)``
    * ``accepted`` maps each key to the value of its winning instruction;
    * ``rejected`` lists every losing instruction, highest rank first, then input order.
    A source's rank decides: system 3 > developer 2 > user 1 > retrieved 0.
    Within one rank the earlier instruction wins. The outcome does not depend on how
    the ranks are interleaved in the input, and the input list is never modified.
    An unknown source fails closed with ``ValueError`` before anything is decided.

    ``explain(instructions)`` returns the same decision as an audit trail: the winning
    instruction per key, and for each rejection the winner that beat it and why
    (``lower_rank`` or ``same_rank_later``).

Boundary decision
    Same key and same rank: the earlier instruction wins. Order within a rank is the
    only tie-breaker, so the result is deterministic and "whoever speaks last" never
    gains anything.

Your task: implement ``rank_of`` and ``explain``. ``resolve`` is already written on top
of ``explain``. Check your work with ``forgelab check 01``; ask for help with
``forgelab hint 01``.
"""

from __future__ import annotations

from dataclasses import dataclass

RANK: dict[str, int] = {"system": 3, "developer": 2, "user": 1, "retrieved": 0}


@dataclass(frozen=True)
class Instruction:
    source: str
    key: str
    value: str


@dataclass(frozen=True)
class Rejection:
    """One rejected instruction, the instruction that beat it, and the reason."""

    instruction: Instruction
    winner: Instruction
    reason: str  # "lower_rank" or "same_rank_later"


def rank_of(instruction: Instruction) -> int:
    """The trust rank of an instruction's source; unknown sources fail closed."""
    raise NotImplementedError("rank_of() is not implemented yet — see hints 1–3 (forgelab hint 01)")


def explain(instructions: list[Instruction]) -> tuple[dict[str, Instruction], list[Rejection]]:
    """Decide every key and keep the reason for every rejection."""
    raise NotImplementedError("explain() is not implemented yet — see hints 4–6 (forgelab hint 01)")


def resolve(instructions: list[Instruction]) -> tuple[dict[str, str], list[Instruction]]:
    """Accepted values per key, and the rejected instructions (see the module contract)."""
    winners, rejections = explain(instructions)
    accepted = {key: item.value for key, item in winners.items()}
    return accepted, [rejection.instruction for rejection in rejections]
