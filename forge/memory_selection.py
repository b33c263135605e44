"""Stage 09 — memory selection: from recalled memories to a small, explained set.

Contract
    ``select_memories(candidates, user_scope, policy, count_tokens) -> MemoryPlan`` decides
    every recalled ``MemoryCandidate``. The steps run in a fixed order, and the first step
    that turns a candidate down gives its reason code:

    1. scope gate       ``user_scope`` is not the caller's scope          -> ``scope_mismatch``
    2. confidence gate  ``score < policy.min_score``                       -> ``low_confidence``
    3. precedence       the survivors are ordered by authority
                        (current_turn > workspace_override > user_default), then score
                        descending, source_rank ascending, captured_at descending (newest
                        first; unknown counts as oldest), memory_id ascending
    4. exact dedupe     same normalized text in the same slot as an earlier survivor
                        -> ``duplicate_content`` (winner: that earlier survivor)
    5. conflicts        another text for a slot (``conflict_key``) that is already taken
                        -> ``authority_loser`` if the holder has a higher authority,
                        ``conflict_loser`` if it has the same one (winner: the holder)
    6. top-k            ``policy.top_k`` memories are already selected    -> ``top_k_reached``
    7. packing          the packed block would grow past ``max_chars``
                        -> ``char_budget_exceeded``; past ``max_tokens`` -> ``token_budget_exceeded``
    Whatever is left is ``selected``. A memory is atomic: never cut. One that does not fit
    does not stop the packing; later, smaller ones are still tried. A loser of steps 4-5 is
    never brought back, even when its winner does not fit.

    The budgets price what the model really receives: ``render_memory_block`` of the selected
    memories, XML wrapper and provenance attributes included. ``render_memory_block(memories,
    count_tokens) -> MemoryBlock`` writes ``<recalled_memory>``, one
    ``<memory_hit id="..." source="...">text</memory_hit>`` line per memory (``source`` only
    when set; attributes escaped with ``html.escape``, the text with ``quote=False``) and
    ``</recalled_memory>``, joined by newlines; ``tokens`` is ``count_tokens`` of that text.
    No memory gives ``MemoryBlock("", 0)``: an empty wrapper would only cost tokens.

    Text and slot names are compared after NFKC normalization, case folding and collapsing
    whitespace. A candidate without a ``conflict_key`` has no slot: conflicts are declared by
    whoever stored the memory, never guessed from the text.

    ``plan.selected`` lists the chosen ids in precedence order; ``plan.decisions`` holds one
    ``MemoryDecision`` per candidate, in input order. ``used_chars`` and ``used_tokens`` are the
    size of ``plan.context``, the rendered block of the selected memories. Tokens are counted by
    ``count_tokens`` (inject the target model's tokenizer); the default ``estimate_tokens`` is a
    transparent offline estimate.

    Invalid input fails with ``ValueError`` before anything is decided: a policy value out of
    range, a repeated memory_id, a blank text, a score outside [0, 1], a ``captured_at`` that is
    not an ISO 8601 time with a time zone, and an unknown authority (it fails closed — a memory
    cannot promote itself). ``render_memory_block`` refuses anything that is not a memory, a
    blank one and a repeated ``memory_id``. The input list is never modified.

    ``memory_candidates_from_recall(hits, authority_by_memory_id=None) -> list[MemoryCandidate]``
    adapts the recall step's ``RecallHit`` objects, in order, without re-scoring anything: scope,
    score, rank, provenance and slot are copied as they are. Every memory is ``user_default``
    unless the trusted caller names its level in ``authority_by_memory_id``; a level for an id no
    hit has, or a level outside ``AUTHORITY``, fails with ``ValueError``.

Boundary decision
    Authority is a precedence level, not a score weight: a lower authority never wins a slot
    from a higher one, however high its score. But authority comes after the scope and
    confidence gates: another user's memory, or a weak one, is rejected whatever it claims.

Your task: implement ``estimate_tokens``, ``precedence``, ``check_candidates``,
``render_memory_block`` and ``select_memories``. ``normalize``, ``capture_time`` and the data
classes are given. Check your work with ``forgelab check 09``; ask for help with
``forgelab hint 09``.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

AUTHORITY: dict[str, int] = {"current_turn": 2, "workspace_override": 1, "user_default": 0}

@dataclass(frozen=True)
class MemoryCandidate:
    memory_id: str
    text: str
    user_scope: str  # whose memory this is
    score: float  # recall score from the retriever, 0.0 .. 1.0
    source_rank: int  # the retriever's stable rank, 1 = best
    conflict_key: str | None = None  # explicit fact slot, e.g. "preference:automation-language"
    authority: str = "user_default"
    source: str = ""  # provenance: where the memory was taken from, e.g. "chat:2026-03-02"
    captured_at: str = ""  # provenance: when, ISO 8601 with a time zone ("" = unknown)


@dataclass(frozen=True)
class SelectionPolicy:
    min_score: float = 0.35
    top_k: int = 3  # source 000 says 5; stage 10's MEMORY_TOP_K (source 003) is 3, and the course follows 003
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
    context: str  # the rendered <recalled_memory> block of the selected memories ("" if none)


@dataclass(frozen=True)
class MemoryBlock:
    text: str
    tokens: int


def estimate_tokens(text: str) -> int:
    """Offline teaching units: a run of ASCII letters and digits is one, any other visible character one ("café": 2)."""
    raise NotImplementedError("estimate_tokens() is not implemented yet — see hints 1–3 (forgelab hint 09)")


def normalize(text: str) -> str:
    """The form used to compare texts and slots: NFKC, case folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def capture_time(captured_at: str) -> float:
    """Seconds since the epoch of an ISO 8601 time with a zone; "" (unknown) is the oldest possible."""
    if not captured_at:
        return float("-inf")
    try:
        moment = datetime.fromisoformat(captured_at)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise ValueError(f"captured_at {captured_at!r} is not an ISO 8601 time with a time zone, "
                         "like 2026-03-02T09:15:00Z")
    return moment.timestamp()


def precedence(item: MemoryCandidate) -> tuple[int, float, int, float, str]:
    """Sort key: authority, score descending, source_rank, captured_at descending, memory_id."""
    raise NotImplementedError("precedence() is not implemented yet — see hints 4–6 (forgelab hint 09)")


def check_candidates(candidates: list[MemoryCandidate], policy: SelectionPolicy) -> None:
    """Fail with ValueError on an invalid policy or on the first invalid candidate."""
    raise NotImplementedError("check_candidates() is not implemented yet — see hints 7–9 (forgelab hint 09)")


def render_memory_block(
    memories: Sequence[MemoryCandidate],
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> MemoryBlock:
    """The <recalled_memory> block the model receives, and its token count (see the module contract)."""
    raise NotImplementedError("render_memory_block() is not implemented yet — see hints 10–12 (forgelab hint 09)")


def select_memories(
    candidates: list[MemoryCandidate],
    user_scope: str,
    policy: SelectionPolicy = SelectionPolicy(),
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> MemoryPlan:
    """Decide every candidate and keep the reason (see the module contract)."""
    raise NotImplementedError("select_memories() is not implemented yet — see hints 13–15 (forgelab hint 09)")


@dataclass(frozen=True)
class RecallHit:
    """One result of the recall step before selection: what it found, for whom, how sure, from where."""

    memory_id: str
    text: str
    scope: str
    score: float
    rank: int
    source: str = ""
    captured_at: str = ""
    conflict_key: str | None = None


def memory_candidates_from_recall(
    hits: Sequence[RecallHit],
    authority_by_memory_id: Mapping[str, str] | None = None,
) -> list[MemoryCandidate]:
    """Adapt recall hits to candidates, copying and never re-scoring; authority only from the trusted caller."""
    raise NotImplementedError("memory_candidates_from_recall() is not implemented yet — see hints 16 (forgelab hint 09)")
