"""Stage 11 — context as a data pipeline: versioned objects, loaded with what they need (FAULT LAB: this copy has a defect to find and fix).

Contract
    ``ContextObject``: ``id``, ``kind`` (``KINDS``), ``text``, ``revision``, ``source`` ("" = not
    recoverable), ``depends_on``, ``expires_on_change``, ``derived_from`` (summaries, and only they).

    ``close_dependencies(requested_ids, objects) -> Closure``, per request in order:
    ``missing_dependency`` (related: every absent id of its closure), else ``dependency_cycle``
    (related: every object on a cycle it reaches), else ``admitted`` (related: what it brings);
    ``admitted`` is the sorted union of the admitted closures.

    ``invalidate(objects, changed_id, new_revision)``: ``revision_changed``, then to a fixpoint
    ``dependency_changed`` (a flagged object depending on an expired one) and ``source_changed``
    (a summary derived from one, flag or not; it wins); related: its expired dependencies (if
    flagged) and sources. Unflagged objects stop the chain. By distance, then id; same revision: ().

    ``cache_break_even(prefix_tokens, reuses, uncached_price, cached_price, write_price)``: exact
    costs ``P·w + n·P·c`` against ``(n+1)·P·u``; ``cache`` only if strictly cheaper, else ``no_cache``.

    ``plan_deletions(objects, over_by, needed_ids, stale_ids, count_tokens)``: each object goes at
    its first step of ``STEPS`` — ``duplicate`` (NFKC, case-folded, whitespace-equal text; kept:
    the copy later steps delete last, then the smallest id; related: it), ``stale``,
    ``irrelevant`` (needed ids given, not among them, has a source), ``memory`` (whole: the first
    layer to go once the waste is gone), ``tool_output``, ``history`` — larger first, then id, each followed by the remaining objects that transitively depend on
    it (``dependency_deleted``, by id, related: it), until ``over_by`` is freed. ``PROTECTED``
    objects and what they depend on stay; short: ``ContextBudgetError`` with both numbers.

    ``light_index(objects)``: per object ``IndexEntry(id, source, depends_on)``, no text, by id.
    ``load_just_in_time(requested_ids, index, fetch)``: each request decided on the index as by
    ``close_dependencies``; ``fetch(id)`` once per admitted id, in id order, nothing else; a fetched
    object whose id or ``depends_on`` differs from the index: ``ValueError`` (stale index).

    ``reusable_prefix(previous, current, count_tokens)``: the tokens of the leading parts equal in both
    requests, up to the first that differs — a cache reuses only an identical prefix.

    ``ValueError`` comes first, inputs are never modified; ``render_memory_block`` is stage 09's.
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


def _ids(name: str, ids: Iterable[str], by_id: dict[str, ContextObject] | None = None) -> list[str]:
    """The ids as a list, never one string; with ``by_id``: every id known, none repeated."""
    if isinstance(ids, str):
        raise ValueError(f"{name} must be a list of ids, not one string: {ids!r}")
    found = list(ids)
    for index, object_id in enumerate(found):
        if by_id is not None and (object_id not in by_id or object_id in found[:index]):
            raise ValueError(f"{name}: {object_id!r} is {'listed twice' if object_id in found[:index] else 'unknown'}")
    return found


def check_objects(objects: list[ContextObject]) -> dict[str, ContextObject]:
    """The objects by id; ValueError on the first object that breaks a rule."""
    by_id: dict[str, ContextObject] = {}
    for item in objects:
        if not item.id.strip() or item.id in by_id:
            problem = "used twice" if item.id in by_id else "empty"
            raise ValueError(f"every object needs an id of its own: {item.id!r} is {problem}")
        if item.kind not in KINDS:
            raise ValueError(f"object {item.id!r}: unknown kind {item.kind!r}: expected one of {', '.join(KINDS)}")
        _ids(f"object {item.id!r}: depends_on", item.depends_on)
        _ids(f"object {item.id!r}: derived_from", item.derived_from)
        if (item.kind == "summary") != bool(item.derived_from):
            raise ValueError(f"object {item.id!r}: a summary must name what it was derived from (derived_from), "
                             f"and only a summary may — this one is a {item.kind}")
        by_id[item.id] = item
    return by_id


def _reach(start: Iterable[str], by_id: dict[str, ContextObject]) -> tuple[set[str], set[str]]:
    """(present ids reachable from ``start`` through depends_on, absent ids met on the way)."""
    seen, absent, stack = set[str](), set[str](), list(start)
    while stack:
        current = stack.pop()
        if current not in by_id:
            absent.add(current)
        elif current not in seen:
            seen.add(current)
            stack.extend(by_id[current].depends_on)
    return seen, absent


def close_dependencies(requested_ids: list[str], objects: list[ContextObject]) -> Closure:
    """Admit each requested object with its dependency closure, or say why not."""
    by_id = check_objects(objects)
    decisions, admitted = list[Decision](), set[str]()
    for object_id in _ids("requested_ids", requested_ids, by_id):
        closure, absent = _reach([object_id], by_id)
        on_cycle = {item for item in closure if item in _reach(by_id[item].depends_on, by_id)[0]}
        if absent:
            decisions.append(Decision(object_id, "missing_dependency", tuple(sorted(absent))))
        elif on_cycle:
            decisions.append(Decision(object_id, "dependency_cycle", tuple(sorted(on_cycle))))
        else:
            decisions.append(Decision(object_id, "admitted", tuple(sorted(closure - {object_id}))))
            admitted |= closure
    return Closure(tuple(sorted(admitted)), tuple(decisions))


def invalidate(objects: list[ContextObject], changed_id: str, new_revision: str) -> tuple[Decision, ...]:
    """What a new revision of one object makes stale (see the module contract)."""
    by_id = check_objects(objects)
    _ids("changed_id", [changed_id], by_id)
    if not new_revision.strip():
        raise ValueError("new_revision must not be empty: name the version the object moved to")
    if by_id[changed_id].revision == new_revision:
        return ()
    distance, reason = {changed_id: 0}, {changed_id: "revision_changed"}
    while True:
        found: dict[str, str] = {}
        for item in objects:
            if item.id not in distance and any(source in distance for source in item.derived_from):
                found[item.id] = "source_changed"
            elif item.id not in distance and item.expires_on_change and any(d in distance for d in item.depends_on):
                found[item.id] = "dependency_changed"
        if not found:
            break
        distance.update(dict.fromkeys(found, max(distance.values()) + 1))
        reason.update(found)

    def related(item: ContextObject) -> tuple[str, ...]:
        linked = set(item.derived_from) | (set(item.depends_on) if item.expires_on_change else set())
        return () if item.id == changed_id else tuple(sorted(linked & set(distance)))

    order = sorted(distance, key=lambda key: (distance[key], key))
    return tuple(Decision(key, reason[key], related(by_id[key])) for key in order)


def light_index(objects: list[ContextObject]) -> tuple[IndexEntry, ...]:
    """What a harness loads first: each object's id, source and dependencies, no text, by id."""
    check_objects(objects)
    return tuple(IndexEntry(item.id, item.source, item.depends_on) for item in sorted(objects, key=lambda i: i.id))


def load_just_in_time(requested_ids: list[str], index: list[IndexEntry],
                      fetch: Callable[[str], ContextObject]) -> JitLoad:
    """Decide the requests on the light index, then fetch the admitted closures and nothing else."""
    stubs = [ContextObject(entry.id, "evidence", "", source=entry.source, depends_on=entry.depends_on) for entry in index]
    closure = close_dependencies(requested_ids, stubs)
    by_id = {entry.id: entry for entry in index}
    loaded = []
    for object_id in closure.admitted:
        item = fetch(object_id)
        if item.id != object_id or tuple(item.depends_on) != by_id[object_id].depends_on:
            raise ValueError(f"fetch({object_id!r}) gave {item.id!r} depending on {list(item.depends_on)}, but the index "
                             f"says {list(by_id[object_id].depends_on)}: the index is stale — rebuild it, then load")
        loaded.append(item)
    return JitLoad(tuple(loaded), closure.decisions)


def reusable_prefix(previous: list[str], current: list[str],
                    count_tokens: Callable[[str], int] = estimate_tokens) -> int:
    """Tokens of the leading request parts equal in both requests: all a prompt cache can reuse."""
    for name, parts in (("previous", previous), ("current", current)):
        if isinstance(parts, str):
            raise ValueError(f"{name} must be the list of a request's parts, not one string: {parts[:40]!r}")
    reused = 0
    for before, now in zip(previous, current):
        if before != now:
            break
        reused += count_tokens(now)
    return reused


def _whole(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number of at least {minimum}, got {value!r}")


def _price(name: str, value: object) -> Fraction:
    """A price as an exact fraction; a float is read as the decimal it prints as (0.1 is 1/10)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise ValueError(f"{name} must be an int, a float or a Fraction, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite price of 0 or more, got {value!r}")
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)


def cache_break_even(prefix_tokens: int, reuses: int, uncached_price: float | Fraction,
                     cached_price: float | Fraction, write_price: float | Fraction) -> BreakEven:
    """Whether caching a stable prefix is cheaper over n reuses: P·w + n·P·c < (n+1)·P·u."""
    _whole("prefix_tokens", prefix_tokens, 1)
    _whole("reuses", reuses, 0)
    u, c, w = (_price(name, value) for name, value in (("uncached_price", uncached_price),
                                                        ("cached_price", cached_price), ("write_price", write_price)))
    cached, uncached = prefix_tokens * w + reuses * prefix_tokens * c, (reuses + 1) * prefix_tokens * u
    return BreakEven("cache" if cached < uncached else "no_cache", cached, uncached)


def plan_deletions(objects: list[ContextObject], over_by: int, needed_ids: Iterable[str] | None = None,
                   stale_ids: Iterable[str] = (), count_tokens: Callable[[str], int] = estimate_tokens,
                   ) -> tuple[Decision, ...]:
    """Which objects to delete, in which order, to free ``over_by`` tokens (see the module contract)."""
    by_id = check_objects(objects)
    _whole("over_by", over_by, 0)
    needed = None if needed_ids is None else set(_ids("needed_ids", needed_ids, by_id))
    stale = set(_ids("stale_ids", stale_ids, by_id))
    cost = {item.id: count_tokens(item.text) for item in objects}
    decisions, gone = list[Decision](), set[str]()
    for item in objects:  # the list is in the order the objects arrived: the oldest go first
        key = item.id
        if sum(cost[object_id] for object_id in gone) >= over_by:
            break
        if key in gone:
            continue
        decisions.append(Decision(key, "stale" if key in stale else "history", (), cost[key]))
        gone.add(key)
        for item in sorted(objects, key=lambda each: each.id):
            if item.id not in gone and key in _reach(item.depends_on, by_id)[0]:
                decisions.append(Decision(item.id, "dependency_deleted", (key,), cost[item.id]))
                gone.add(item.id)
    freed = sum(cost[object_id] for object_id in gone)
    if freed < over_by:
        raise ContextBudgetError(f"deleting all the order allows frees {freed} tokens, but the context is "
                                 f"{over_by} over its budget: narrow this round's goal or split the work")
    return tuple(decisions)
