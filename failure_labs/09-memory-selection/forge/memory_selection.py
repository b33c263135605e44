"""Stage 09 — memory selection: from recalled memories to a small, explained set (FAULT LAB: this copy has a defect to find and fix).

Contract
    ``select_memories(candidates, user_scope, policy, count_tokens) -> MemoryPlan`` decides
    every recalled ``MemoryCandidate``. The steps run in a fixed order, and the first step
    that turns a candidate down gives its reason code:

    1. scope gate       ``user_scope`` is not the caller's scope          -> ``out_of_scope``
    2. confidence gate  ``score < policy.min_score``                       -> ``below_min_score``
    3. precedence       the survivors are ordered by authority
                        (current_turn > workspace_override > user_default), then score
                        descending, source_rank ascending, memory_id ascending
    4. exact dedupe     same normalized text in the same slot as an earlier survivor
                        -> ``duplicate`` (winner: that earlier survivor)
    5. conflicts        another text for a slot (``conflict_key``) that is already taken
                        -> ``authority_lost`` if the holder has a higher authority,
                        ``conflict_lost`` if it has the same one (winner: the holder)
    6. top-k            ``policy.top_k`` memories are already selected      -> ``over_top_k``
    7. packing          the text would take the selected total past ``max_chars``
                        -> ``over_char_budget``; past ``max_tokens`` -> ``over_token_budget``
    Whatever is left is ``selected``. A memory is atomic: never cut. One that does not fit
    does not stop the packing; later, smaller ones are still tried. A loser of steps 4-5 is
    never brought back, even when its winner does not fit.

    Text and slot names are compared after NFKC normalization, case folding and collapsing
    whitespace. A candidate without a ``conflict_key`` has no slot: conflicts are declared by
    whoever stored the memory, never guessed from the text.

    ``plan.selected`` lists the chosen ids in precedence order; ``plan.decisions`` holds one
    ``MemoryDecision`` per candidate, in input order. ``used_chars`` and ``used_tokens`` are the
    totals of the selected texts. Tokens are counted by ``count_tokens`` (inject the target
    model's tokenizer); the default ``estimate_tokens`` is a transparent offline estimate.

    Invalid input fails with ``ValueError`` before anything is decided: a policy value out of
    range, a repeated memory_id, a score outside [0, 1], and an unknown authority (it fails
    closed — a memory cannot promote itself). The input list is never modified.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

AUTHORITY: dict[str, int] = {"current_turn": 2, "workspace_override": 1, "user_default": 0}

# one teaching unit: a run of ASCII letters and digits, or any other single visible character
_UNIT = re.compile(r"[A-Za-z0-9]+|\S")


@dataclass(frozen=True)
class MemoryCandidate:
    memory_id: str
    text: str
    user_scope: str  # whose memory this is
    score: float  # recall score from the retriever, 0.0 .. 1.0
    source_rank: int  # the retriever's stable rank, 1 = best
    conflict_key: str | None = None  # explicit fact slot, e.g. "preference:automation-language"
    authority: str = "user_default"


@dataclass(frozen=True)
class SelectionPolicy:
    min_score: float = 0.35
    top_k: int = 5
    max_chars: int = 3000
    max_tokens: int = 800


@dataclass(frozen=True)
class MemoryDecision:
    """What happened to one candidate, why, and (for duplicates and conflicts) who beat it."""

    memory_id: str
    selected: bool
    reason: str  # see the reason codes in the module contract
    winner: str | None = None


@dataclass(frozen=True)
class MemoryPlan:
    selected: tuple[str, ...]
    decisions: tuple[MemoryDecision, ...]
    used_chars: int
    used_tokens: int


def estimate_tokens(text: str) -> int:
    """Offline teaching units: each Latin word, CJK character or punctuation mark counts one."""
    return len(_UNIT.findall(text))


def normalize(text: str) -> str:
    """The form used to compare texts and slots: NFKC, case folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def precedence(item: MemoryCandidate) -> tuple[int, float, int, str]:
    """Sort key: authority first, then score descending, source_rank ascending, memory_id."""
    return (-(item.score + 0.2 * AUTHORITY[item.authority]), item.source_rank, item.memory_id)


def check_candidates(candidates: list[MemoryCandidate], policy: SelectionPolicy) -> None:
    """Fail with ValueError on an invalid policy or on the first invalid candidate."""
    if not 0 <= policy.min_score <= 1:
        raise ValueError(f"policy min_score must be between 0 and 1, got {policy.min_score}")
    if policy.top_k < 0:
        raise ValueError(f"policy top_k must be 0 or more, got {policy.top_k}")
    if policy.max_chars < 0:
        raise ValueError(f"policy max_chars must be 0 or more, got {policy.max_chars}")
    if policy.max_tokens < 0:
        raise ValueError(f"policy max_tokens must be 0 or more, got {policy.max_tokens}")
    seen: set[str] = set()
    for item in candidates:
        if item.memory_id in seen:
            raise ValueError(f"duplicate memory_id {item.memory_id!r}: every id must be unique")
        seen.add(item.memory_id)
        if item.authority not in AUTHORITY:
            allowed = ", ".join(AUTHORITY)
            raise ValueError(
                f"memory {item.memory_id!r}: unknown authority {item.authority!r}: expected one of {allowed}"
            )
        if not 0 <= item.score <= 1:
            raise ValueError(f"memory {item.memory_id!r}: score must be between 0 and 1, got {item.score}")


def select_memories(
    candidates: list[MemoryCandidate],
    user_scope: str,
    policy: SelectionPolicy = SelectionPolicy(),
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> MemoryPlan:
    """Decide every candidate and keep the reason (see the module contract)."""
    check_candidates(candidates, policy)
    decided: dict[str, MemoryDecision] = {}
    survivors: list[MemoryCandidate] = []
    for item in candidates:
        if item.user_scope != user_scope:
            decided[item.memory_id] = MemoryDecision(item.memory_id, False, "out_of_scope")
        elif item.score < policy.min_score:
            decided[item.memory_id] = MemoryDecision(item.memory_id, False, "below_min_score")
        else:
            survivors.append(item)

    first_with_text: dict[tuple[str | None, str], str] = {}
    slot_holder: dict[str, MemoryCandidate] = {}
    kept: list[MemoryCandidate] = []
    for item in sorted(survivors, key=precedence):
        slot = None if item.conflict_key is None else normalize(item.conflict_key)
        text_key = (slot, normalize(item.text))
        if text_key in first_with_text:
            decided[item.memory_id] = MemoryDecision(item.memory_id, False, "duplicate", first_with_text[text_key])
            continue
        first_with_text[text_key] = item.memory_id
        if slot is not None and slot in slot_holder:
            holder = slot_holder[slot]
            higher = AUTHORITY[holder.authority] > AUTHORITY[item.authority]
            reason = "authority_lost" if higher else "conflict_lost"
            decided[item.memory_id] = MemoryDecision(item.memory_id, False, reason, holder.memory_id)
            continue
        if slot is not None:
            slot_holder[slot] = item
        kept.append(item)

    selected: list[str] = []
    used_chars = used_tokens = 0
    for item in kept:
        chars, tokens = len(item.text), count_tokens(item.text)
        if len(selected) >= policy.top_k:
            reason = "over_top_k"
        elif used_chars + chars > policy.max_chars:
            reason = "over_char_budget"
        elif used_tokens + tokens > policy.max_tokens:
            reason = "over_token_budget"
        else:
            reason = "selected"
            selected.append(item.memory_id)
            used_chars += chars
            used_tokens += tokens
        decided[item.memory_id] = MemoryDecision(item.memory_id, reason == "selected", reason)
    decisions = tuple(decided[item.memory_id] for item in candidates)
    return MemoryPlan(tuple(selected), decisions, used_chars, used_tokens)
