"""Stage 11 — context as a data pipeline: versioned objects, loaded with what they need.

Contract
    A ``ContextObject`` is one piece of a call's context: its ``id``, its ``kind`` (one of
    ``KINDS``), its ``text``, the ``revision`` it was read at, the ``source`` it can be loaded
    from again ("" = not recoverable), the ids it ``depends_on``, whether it
    ``expires_on_change`` of a dependency, and — for a summary, and only for a summary — the ids
    it was ``derived_from``. ``Decision.related`` is always sorted.

    ``close_dependencies(requested_ids, objects) -> Closure`` decides each request, in request
    order, by its transitive closure over ``depends_on``:
      * ``missing_dependency`` — some id of the closure is not among the objects (related:
        every absent id of the closure);
      * else ``dependency_cycle`` — the closure reaches a cycle (related: every object that
        lies on a cycle it reaches, not the path into it);
      * else ``admitted`` (related: the dependencies it brings along).
    ``Closure.admitted`` is the sorted union of the admitted closures.

    ``invalidate(objects, changed_id, new_revision) -> tuple[Decision, ...]``: the changed
    object gets ``revision_changed``; then, until nothing more expires, an object with
    ``expires_on_change`` that depends on an expired object gets ``dependency_changed``, and a
    summary derived from an expired object gets ``source_changed`` whatever its flag (this
    reason wins). ``related`` holds its expired dependencies (only if it is flagged) and its
    expired sources. An unflagged object does not expire from a dependency, so it stops the
    chain. Decisions are ordered by distance from the change, then by id. The same revision
    again expires nothing: ``()``.

    ``cache_break_even(prefix_tokens, reuses, uncached_price, cached_price, write_price)
    -> BreakEven``: for a stable prefix of P tokens reused n times, with prices per token u
    (uncached), c (cache read) and w (cache write), caching costs ``P·w + n·P·c`` and not
    caching ``(n+1)·P·u``. Both are exact ``Fraction`` values (a float is read as the decimal it
    prints as: 0.1 is 1/10). ``cache`` only when caching is strictly cheaper, else ``no_cache``.

    ``plan_deletions(objects, over_by, needed_ids=None, stale_ids=(), count_tokens)
    -> tuple[Decision, ...]`` frees at least ``over_by`` tokens. An object goes at the first step
    of ``STEPS`` it matches:
      1. ``duplicate`` — its text equals another object's after NFKC, case folding and
         collapsing whitespace; the copy kept is the one the later steps would delete last,
         then the one with the smallest id (related: the kept copy);
      2. ``stale`` — its id is in ``stale_ids``;
      3. ``irrelevant`` — ``needed_ids`` is given, its id is not in it, and it has a source;
      4. ``memory`` — by kind, whole: once the waste is gone, memory is the first layer to go;
      5. ``tool_output``, 6. ``history`` — by kind.
    Within a step, objects with more tokens go first, then by id. Every deletion is followed by
    the remaining objects that depend on it, transitively (``dependency_deleted``, by id,
    related: the deleted object). The walk stops as soon as ``over_by`` tokens are freed;
    ``tokens`` is each object's ``count_tokens``. ``PROTECTED`` objects (goal, constraint,
    resource, pending_action, negative_result) and everything they depend on are never deleted;
    if the rest cannot free enough, ``ContextBudgetError`` states both numbers.

    ``light_index(objects) -> tuple[IndexEntry, ...]`` is what a harness loads first: per object
    its ``id``, ``source`` and ``depends_on``, no text, sorted by id. ``load_just_in_time(
    requested_ids, index, fetch) -> JitLoad`` decides each request on the index as
    ``close_dependencies`` would, then calls ``fetch(id)`` once per id of the admitted closures,
    in id order, and for nothing else; a fetched object whose id or ``depends_on`` differs from its
    index entry fails with ``ValueError`` (the index is stale). ``JitLoad.loaded`` holds the
    fetched objects, ``JitLoad.decisions`` one decision per request.

    ``reusable_prefix(previous, current, count_tokens) -> int``: a prompt cache reuses only an
    identical prefix. Of two requests, each the list of its rendered parts in order (model, tool
    schemas, system text, ...), it is the tokens of the leading parts that are equal in both, up to
    the first part that differs: a timestamp in the first part gives 0, whatever follows it.

    ``render_memory_block`` is stage 09's renderer, re-exported here: memory enters a context
    priced as the ``<recalled_memory>`` block the model reads, wrapper and provenance included.

    Invalid input fails with ``ValueError`` before anything is decided: an empty or repeated id,
    an unknown kind, an id list given as one string, a summary without ``derived_from`` (or
    another kind with it), an unknown or repeated requested, changed, needed or stale id, an
    empty new revision, ``prefix_tokens`` below 1, ``reuses`` or ``over_by`` below 0 or not an
    int, a price that is negative, NaN, infinite, a bool or a string. Inputs are never modified.

Boundary decision
    A piece of evidence enters the context only together with what it needs to be understood,
    or not at all. Under budget pressure the goal, the constraints, resource identities, actions
    whose outcome is unknown and negative results are never deleted — if what may go is not
    enough, the round has to become smaller.

Your task: implement ``check_objects``, ``close_dependencies``, ``invalidate``, ``cache_break_even``
and ``plan_deletions``. The constants, the data classes, ``ContextBudgetError`` and
``estimate_tokens`` are given; ``normalize`` and ``render_memory_block`` come from stage 09. Check
your work with ``forgelab check 11``; ask for help with ``forgelab hint 11``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

from forge.memory_selection import MemoryBlock, normalize, render_memory_block  # noqa: F401 (re-exported)

KINDS = ("goal", "constraint", "resource", "pending_action", "negative_result", "tool_schema",
         "state", "evidence", "tool_output", "history", "summary", "memory")
PROTECTED = ("goal", "constraint", "resource", "pending_action", "negative_result")  # never deleted
# the deletion order: what is waste (004), then memory, the one layer 003 lets go, then tool output and history (004)
STEPS = ("duplicate", "stale", "irrelevant", "memory", "tool_output", "history")

_UNIT = re.compile(r"[A-Za-z0-9]+|\S")


class ContextBudgetError(ValueError):
    """Deleting everything the order allows still does not free enough; protected objects stay."""


@dataclass(frozen=True)
class ContextObject:
    id: str
    kind: str  # one of KINDS
    text: str
    revision: str = ""  # the version it was read at, e.g. "r42"
    source: str = ""  # where it can be loaded again; "" = not recoverable
    depends_on: tuple[str, ...] = ()
    expires_on_change: bool = False
    derived_from: tuple[str, ...] = ()  # summaries only: what they were made from


@dataclass(frozen=True)
class Decision:
    object_id: str
    reason: str
    related: tuple[str, ...] = ()  # sorted
    tokens: int = 0


@dataclass(frozen=True)
class Closure:
    admitted: tuple[str, ...]
    decisions: tuple[Decision, ...]


@dataclass(frozen=True)
class IndexEntry:
    id: str
    source: str  # where the text can be fetched
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class JitLoad:
    loaded: tuple[ContextObject, ...]  # by id
    decisions: tuple[Decision, ...]  # one per request


@dataclass(frozen=True)
class BreakEven:
    decision: str  # "cache" or "no_cache"
    cached_cost: Fraction
    uncached_cost: Fraction


def estimate_tokens(text: str) -> int:
    """Offline teaching units: a run of ASCII letters and digits is one, any other visible character one ("café": 2)."""
    return sum(1 for _unit in _UNIT.finditer(text))


def check_objects(objects: list[ContextObject]) -> dict[str, ContextObject]:
    """The objects by id; ValueError on the first object that breaks a rule."""
    raise NotImplementedError("check_objects() is not implemented yet — see hints 1–3 (forgelab hint 11)")


def close_dependencies(requested_ids: list[str], objects: list[ContextObject]) -> Closure:
    """Admit each requested object with its dependency closure, or say why not."""
    raise NotImplementedError("close_dependencies() is not implemented yet — see hints 4–6 (forgelab hint 11)")


def invalidate(objects: list[ContextObject], changed_id: str, new_revision: str) -> tuple[Decision, ...]:
    """What a new revision of one object makes stale (see the module contract)."""
    raise NotImplementedError("invalidate() is not implemented yet — see hints 7–9 (forgelab hint 11)")


def cache_break_even(prefix_tokens: int, reuses: int, uncached_price: float | Fraction,
                     cached_price: float | Fraction, write_price: float | Fraction) -> BreakEven:
    """Whether caching a stable prefix is cheaper over n reuses: P·w + n·P·c < (n+1)·P·u."""
    raise NotImplementedError("cache_break_even() is not implemented yet — see hints 10–12 (forgelab hint 11)")


def plan_deletions(objects: list[ContextObject], over_by: int, needed_ids: Iterable[str] | None = None,
                   stale_ids: Iterable[str] = (), count_tokens: Callable[[str], int] = estimate_tokens,
                   ) -> tuple[Decision, ...]:
    """Which objects to delete, in which order, to free ``over_by`` tokens (see the module contract)."""
    raise NotImplementedError("plan_deletions() is not implemented yet — see hints 13–15 (forgelab hint 11)")


def light_index(objects: list[ContextObject]) -> tuple[IndexEntry, ...]:
    """What a harness loads first: each object's id, source and dependencies, no text, by id."""
    raise NotImplementedError("light_index() is not implemented yet — see hints 17 (forgelab hint 11)")


def load_just_in_time(requested_ids: list[str], index: list[IndexEntry],
                      fetch: Callable[[str], ContextObject]) -> JitLoad:
    """Decide the requests on the light index, then fetch the admitted closures and nothing else."""
    raise NotImplementedError("load_just_in_time() is not implemented yet — see hints 17–18 (forgelab hint 11)")


def reusable_prefix(previous: list[str], current: list[str],
                    count_tokens: Callable[[str], int] = estimate_tokens) -> int:
    """Tokens of the leading request parts equal in both requests: all a prompt cache can reuse."""
    raise NotImplementedError("reusable_prefix() is not implemented yet — see hints 19 (forgelab hint 11)")
