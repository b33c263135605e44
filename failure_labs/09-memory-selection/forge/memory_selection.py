"""Stage 09 — memory selection: from recalled memories to a small, explained set (FAULT LAB: this copy has a defect to find and fix).

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
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

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
    return len(_UNIT.findall(text))


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
    return (-(item.score + 0.2 * AUTHORITY[item.authority]), item.source_rank, -capture_time(item.captured_at),
            item.memory_id)


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
        if not item.text.strip():
            raise ValueError(f"memory {item.memory_id!r}: the text is blank — a blank memory says nothing")
        try:
            capture_time(item.captured_at)
        except ValueError as error:
            raise ValueError(f"memory {item.memory_id!r}: {error}") from None


def render_memory_block(
    memories: Sequence[MemoryCandidate],
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> MemoryBlock:
    """The <recalled_memory> block the model receives, and its token count (see the module contract)."""
    lines = ["<recalled_memory>"]
    seen: set[str] = set()
    for item in memories:
        if not isinstance(item, MemoryCandidate):
            raise ValueError(f"render_memory_block takes MemoryCandidate objects, got {type(item).__name__}")
        if not item.text.strip():
            raise ValueError(f"memory {item.memory_id!r}: the text is blank — a blank memory says nothing")
        if item.memory_id in seen:
            raise ValueError(f"memory {item.memory_id!r} is given twice: a block names each memory once")
        seen.add(item.memory_id)
        source = f' source="{html.escape(item.source)}"' if item.source else ""
        text = html.escape(item.text, quote=False)
        lines.append(f'<memory_hit id="{html.escape(item.memory_id)}"{source}>{text}</memory_hit>')
    if len(lines) == 1:
        return MemoryBlock("", 0)
    lines.append("</recalled_memory>")
    block = "\n".join(lines)
    return MemoryBlock(block, count_tokens(block))


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
            decided[item.memory_id] = MemoryDecision(item.memory_id, False, "scope_mismatch")
        elif item.score < policy.min_score:
            decided[item.memory_id] = MemoryDecision(item.memory_id, False, "low_confidence")
        else:
            survivors.append(item)

    first_with_text: dict[tuple[str | None, str], str] = {}
    slot_holder: dict[str, MemoryCandidate] = {}
    kept: list[MemoryCandidate] = []
    for item in sorted(survivors, key=precedence):
        slot = None if item.conflict_key is None else normalize(item.conflict_key)
        text_key = (slot, normalize(item.text))
        if text_key in first_with_text:
            winner = first_with_text[text_key]
            decided[item.memory_id] = MemoryDecision(item.memory_id, False, "duplicate_content", winner)
            continue
        first_with_text[text_key] = item.memory_id
        if slot is not None and slot in slot_holder:
            holder = slot_holder[slot]
            higher = AUTHORITY[holder.authority] > AUTHORITY[item.authority]
            reason = "authority_loser" if higher else "conflict_loser"
            decided[item.memory_id] = MemoryDecision(item.memory_id, False, reason, holder.memory_id)
            continue
        if slot is not None:
            slot_holder[slot] = item
        kept.append(item)

    chosen: list[MemoryCandidate] = []
    block = MemoryBlock("", 0)
    for item in kept:
        if len(chosen) >= policy.top_k:
            reason = "top_k_reached"
        else:
            trial = render_memory_block([*chosen, item], count_tokens)
            if len(trial.text) > policy.max_chars:
                reason = "char_budget_exceeded"
            elif trial.tokens > policy.max_tokens:
                reason = "token_budget_exceeded"
            else:
                reason = "selected"
                chosen.append(item)
                block = trial
        decided[item.memory_id] = MemoryDecision(item.memory_id, reason == "selected", reason)
    decisions = tuple(decided[item.memory_id] for item in candidates)
    selected = tuple(item.memory_id for item in chosen)
    return MemoryPlan(selected, decisions, len(block.text), block.tokens, block.text)


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
    authority = dict(authority_by_memory_id or {})
    unknown = sorted(set(authority) - {hit.memory_id for hit in hits})
    if unknown:
        raise ValueError(f"authority_by_memory_id names {unknown}, which no recall hit has: mark only recalled memories")
    for memory_id, level in sorted(authority.items()):
        if level not in AUTHORITY:
            raise ValueError(f"memory {memory_id!r}: unknown authority {level!r}: expected one of {', '.join(AUTHORITY)}")
    return [MemoryCandidate(hit.memory_id, hit.text, hit.scope, hit.score, hit.rank, hit.conflict_key,
                            authority.get(hit.memory_id, "user_default"), hit.source, hit.captured_at) for hit in hits]
