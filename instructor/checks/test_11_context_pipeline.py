"""Instructor checks, stage 11 — kept out of the learner bundle (``instructor/`` is not shipped).

Many random object graphs (chains, diamonds, cycles of every length, absent dependencies,
summaries with and without the flag, duplicates that differ only in case, width or spacing)
against independent oracles of the four steps; many random prices against the break-even
formula in exact arithmetic; an injected tokenizer; and a graph of a few thousand objects. Graded
feedback shows their names and outcomes only.
How many random cases each check draws, and why, is said where the count is set (below the imports).
"""

from __future__ import annotations

import random
import unicodedata
from fractions import Fraction


from forge.context_pipeline import (
    KINDS,
    PROTECTED,
    ContextBudgetError,
    ContextObject,
    cache_break_even,
    close_dependencies,
    estimate_tokens,
    invalidate,
    plan_deletions,
)
from forgelab.judge.remote import Call, each

# How many random cases: the fewest (a round number, at least 50) that is four times the case at which the last of the
# course's known-wrong versions of this stage fails (its fault lab's variant and every mutant of mutants.toml that the
# check catches at all), and never more than before; each call crosses the sandbox's boundary, and the checks are most
# of a submission's grading time. Measured, the last failure (first count): closed graphs 44 (400), invalidated graphs
# 263 (400, kept), trimmed contexts 58 (400), the injected tokenizer 49 (200, kept), prices 38 (2000).
CLOSED_GRAPHS = 200
INVALIDATED_GRAPHS = 400
TRIMMED_CONTEXTS = 250
TOKENIZED_CONTEXTS = 200
PRICES = 200

TEXTS = ("Use Go.", "use  go.", "ＵＳＥ Go.", "Sign commits.", "sign\ncommits.", "Keep the API.", "读配置。",
         "exclude is a Filter.", "skip() logs.", "A long search result about filters and their truthiness.")


def canon(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def reachable(start: list[str], graph: dict[str, ContextObject]) -> tuple[set[str], set[str]]:
    """Breadth-first, written apart from the module: (present ids reached, absent ids met)."""
    present, absent, frontier = set(), set(), list(start)
    while frontier:
        nxt = []
        for name in frontier:
            if name not in graph:
                absent.add(name)
            elif name not in present:
                present.add(name)
                nxt += list(graph[name].depends_on)
        frontier = nxt
    return present, absent


def closure_oracle(requested: list[str], objects: list[ContextObject]) -> tuple:  # type: ignore[type-arg]
    graph = {item.id: item for item in objects}
    rows, union = [], set()
    for name in requested:
        present, absent = reachable([name], graph)
        cyclic = sorted(node for node in present if node in reachable(list(graph[node].depends_on), graph)[0])
        if absent:
            rows.append((name, "missing_dependency", tuple(sorted(absent))))
        elif cyclic:
            rows.append((name, "dependency_cycle", tuple(cyclic)))
        else:
            rows.append((name, "admitted", tuple(sorted(present - {name}))))
            union |= present
    return tuple(sorted(union)), rows


def invalidate_oracle(objects: list[ContextObject], changed: str, revision: str) -> list:  # type: ignore[type-arg]
    graph = {item.id: item for item in objects}
    if graph[changed].revision == revision:
        return []
    level = {changed: 0}
    why = {changed: "revision_changed"}
    round_ = 0
    while True:
        round_ += 1
        fresh = {}
        for item in objects:
            if item.id in level:
                continue
            by_source = [s for s in item.derived_from if s in level]
            by_dep = [d for d in item.depends_on if d in level] if item.expires_on_change else []
            if by_source:
                fresh[item.id] = "source_changed"
            elif by_dep:
                fresh[item.id] = "dependency_changed"
        if not fresh:
            break
        for name, reason in fresh.items():
            level[name], why[name] = round_, reason
    rows = []
    for name in sorted(level, key=lambda key: (level[key], key)):
        item = graph[name]
        linked = set(item.derived_from) | (set(item.depends_on) if item.expires_on_change else set())
        rows.append((name, why[name], () if name == changed else tuple(sorted(linked & set(level)))))
    return rows


def deletion_oracle(objects: list[ContextObject], over_by: int, needed: set[str] | None, stale: set[str],
                    count) -> list | None:  # type: ignore[no-untyped-def, type-arg]
    graph = {item.id: item for item in objects}
    keep = reachable([item.id for item in objects if item.kind in PROTECTED], graph)[0]
    size = {item.id: count(item.text) for item in objects}

    def later(item: ContextObject) -> int:
        if item.id in keep:
            return 9
        if item.id in stale:
            return 1
        if needed is not None and item.id not in needed and item.source:
            return 2
        return {"memory": 3, "tool_output": 4, "history": 5}.get(item.kind, 9)

    rank: dict[str, int] = {}
    kept_copy: dict[str, str] = {}
    for item in objects:
        twins = sorted((t for t in objects if canon(t.text) == canon(item.text)), key=lambda t: t.id)
        best = max(later(t) for t in twins)
        keeper = next(t for t in twins if later(t) == best)
        if item.id in keep:
            continue
        if keeper.id != item.id:
            rank[item.id], kept_copy[item.id] = 0, keeper.id
        elif later(item) < 9:
            rank[item.id] = later(item)
    rows: list[tuple[str, str, tuple[str, ...], int]] = []
    gone: list[str] = []
    steps = ("duplicate", "stale", "irrelevant", "memory", "tool_output", "history")
    for name in sorted(rank, key=lambda key: (rank[key], -size[key], key)):
        if sum(size[g] for g in gone) >= over_by:
            break
        if name in gone:
            continue
        rows.append((name, steps[rank[name]], (kept_copy[name],) if name in kept_copy else (), size[name]))
        gone.append(name)
        for other in sorted(graph):
            if other not in gone and name in reachable(list(graph[other].depends_on), graph)[0]:
                rows.append((other, "dependency_deleted", (name,), size[other]))
                gone.append(other)
    return rows if sum(size[g] for g in gone) >= over_by else None


def random_objects(rng: random.Random, count: int, names: int = 14) -> list[ContextObject]:
    pool = [f"o{n:02d}" for n in range(names)]
    chosen = rng.sample(pool, count)
    objects = []
    for name in chosen:
        kind = rng.choice(KINDS)
        deps = tuple(rng.sample(pool, rng.choice([0, 0, 1, 1, 2, 3])))
        derived = tuple(rng.sample(pool, rng.randint(1, 2))) if kind == "summary" else ()
        objects.append(ContextObject(name, kind, rng.choice(TEXTS), rng.choice(["", "r1", "r2"]),
                                     rng.choice(["", "", "src/a.py", "search:x"]), deps, rng.random() < 0.6, derived))
    return objects


def rows_of(decisions) -> list:  # type: ignore[no-untyped-def, type-arg]
    return [(d.object_id, d.reason, d.related, d.tokens) for d in decisions]


def deletions(cases: list[tuple[list[ContextObject], int, dict[str, object]]], count) -> None:  # type: ignore[no-untyped-def]
    """``plan_deletions(objects, over_by, **kwargs)`` of every case against the oracle pricing with ``count``."""
    outcomes = each(plan_deletions, [Call(list(objects), over_by, **kwargs) for objects, over_by, kwargs in cases],
                    errors=True)
    for (objects, over_by, kwargs), plan in zip(cases, outcomes):
        needed = kwargs.get("needed_ids")
        expected = deletion_oracle(objects, over_by, None if needed is None else set(needed),  # type: ignore[arg-type]
                                   set(kwargs.get("stale_ids", ())), count)  # type: ignore[call-overload]
        if expected is None:
            assert isinstance(plan, ContextBudgetError), "a context that cannot shrink enough must raise ContextBudgetError"
        else:
            assert not isinstance(plan, Exception), f"refused: {plan!r}"
            assert rows_of(plan) == expected


def test_random_graphs_are_closed_like_the_contract() -> None:
    rng = random.Random(11001)
    cases = []
    for _ in range(CLOSED_GRAPHS):
        objects = random_objects(rng, rng.randint(1, 12))
        cases.append((rng.sample([item.id for item in objects], rng.randint(0, min(4, len(objects)))), objects))
    closures = each(close_dependencies, [Call(list(requested), list(objects)) for requested, objects in cases])
    for (requested, objects), closure in zip(cases, closures):
        admitted, rows = closure_oracle(requested, objects)
        assert closure.admitted == admitted
        assert [(d.object_id, d.reason, d.related) for d in closure.decisions] == rows


def test_random_graphs_are_invalidated_like_the_contract() -> None:
    rng = random.Random(11002)
    cases = []
    for _ in range(INVALIDATED_GRAPHS):
        objects = random_objects(rng, rng.randint(1, 12))
        cases.append((objects, rng.choice(objects).id, rng.choice(["r1", "r2", "r9"])))
    found = each(invalidate, [Call(list(objects), changed, revision) for objects, changed, revision in cases])
    for (objects, changed, revision), decisions in zip(cases, found):
        assert [(d.object_id, d.reason, d.related) for d in decisions] == invalidate_oracle(objects, changed, revision)


def test_random_contexts_are_trimmed_like_the_contract() -> None:
    rng = random.Random(11003)
    cases = []
    for _ in range(TRIMMED_CONTEXTS):
        objects = random_objects(rng, rng.randint(1, 12))
        ids = [item.id for item in objects]
        needed = set(rng.sample(ids, rng.randint(0, len(ids)))) if rng.random() < 0.6 else None
        stale = set(rng.sample(ids, rng.randint(0, min(3, len(ids)))))
        over_by = rng.randint(0, 40)
        cases.append((objects, over_by, {"needed_ids": sorted(needed) if needed is not None else None,
                                         "stale_ids": sorted(stale)}))
    # the learner's estimate_tokens (the default tokenizer, the learner's to write) of every text, in one exchange
    deletions(cases, dict(zip(TEXTS, each(estimate_tokens, [Call(text) for text in TEXTS]))).__getitem__)


def test_an_injected_tokenizer_decides_the_sizes() -> None:
    rng = random.Random(11004)
    weights = {text: rng.randint(0, 9) for text in TEXTS}
    tokenizer = weights.__getitem__  # crosses as the table itself: the learner's side looks prices up without an exchange
    cases = []
    for _ in range(TOKENIZED_CONTEXTS):
        objects = random_objects(rng, rng.randint(1, 10))
        cases.append((objects, rng.randint(0, 25), {"count_tokens": tokenizer}))
    deletions(cases, tokenizer)


def test_random_prices_follow_the_formula_exactly() -> None:
    rng = random.Random(11005)
    decimals = [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.5, 0.7, 1.25, 3, 3.75]
    cases = []
    for _ in range(PRICES):
        p, n = rng.randint(1, 5000), rng.randint(0, 30)
        cases.append((p, n, *(rng.choice(decimals) for _ in range(3))))
    for (p, n, u, c, w), result in zip(cases, each(cache_break_even, [Call(*case) for case in cases])):
        exact = [Fraction(str(x)) for x in (u, c, w)]
        cached, uncached = p * exact[2] + n * p * exact[1], (n + 1) * p * exact[0]
        assert (result.cached_cost, result.uncached_cost) == (cached, uncached)
        assert result.decision == ("cache" if cached < uncached else "no_cache")


def test_a_large_graph_is_handled_like_the_small_ones() -> None:
    rng = random.Random(11006)
    objects = [ContextObject(f"n{i:04d}", "evidence", f"fact {i % 50}", "r1", "src/x.py",
                             tuple(f"n{j:04d}" for j in rng.sample(range(i + 1, 2000), 2)) if i < 1990 else (), True)
               for i in range(2000)]
    admitted, rows = closure_oracle(["n1500", "n1980"], objects)
    closure = close_dependencies(["n1500", "n1980"], objects)
    assert closure.admitted == admitted and [(d.object_id, d.reason, d.related) for d in closure.decisions] == rows
    assert [(d.object_id, d.reason, d.related) for d in invalidate(objects, "n1995", "r2")] == \
        invalidate_oracle(objects, "n1995", "r2")
