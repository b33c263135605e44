"""Stage 11 — context as a data pipeline.

Run these with ``forgelab check 11`` (add ``--target solution`` to see the reference pass).

Token counts in the comments use the default teaching estimate (one unit per run of Latin letters and
digits, per CJK character, per punctuation mark).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import random
import re
from fractions import Fraction

import pytest

from forge.context_pipeline import (
    KINDS,
    PROTECTED,
    STEPS,
    BreakEven,
    Closure,
    ContextBudgetError,
    ContextObject,
    Decision,
    IndexEntry,
    JitLoad,
    MemoryBlock,
    cache_break_even,
    close_dependencies,
    estimate_tokens,
    invalidate,
    light_index,
    load_just_in_time,
    plan_deletions,
    render_memory_block,
    reusable_prefix,
)
from forge.memory_selection import MemoryCandidate, select_memories
from forge.prompt_assembly import MEMORY_NOTICE, Segment, assemble, input_budget, safety_margin_for

O = ContextObject


# Q050's counter-example: one line of src/filter.py is not enough to understand the exclude branch
E17 = O("e17", "evidence", "if config.exclude: return skip(item)", "r42", "src/filter.py#L60-95",
        ("type-config", "skip-def"), True)


TYPE_CONFIG = O("type-config", "evidence", "exclude: Filter = Filter([])", "r42", "src/config.py", ("filter-bool",), True)


FILTER_BOOL = O("filter-bool", "evidence", "Filter.__bool__ is True while the rule list object exists.", "r42",
                "src/filter_types.py", (), True)


SKIP_DEF = O("skip-def", "evidence", "skip(item) writes the item to the audit log.", "r42", "src/skip.py", (), True)


CODE = [E17, TYPE_CONFIG, FILTER_BOOL, SKIP_DEF]


def ids(decisions) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.object_id for d in decisions]


def search_hits(count: int) -> list[ContextObject]:
    return [O(f"hit-{n:02d}", "tool_output", f"Search result {n}: a forum page about filters.", "",
              f"search:filters#{n}") for n in range(count)]  # 10 units each


LIBRARY = {item.id: item for item in [*CODE, *search_hits(3),
                                      O("readme", "evidence", "The README explains installation.", source="README.md")]}


def fetcher(calls: list[str]):  # type: ignore[no-untyped-def]
    def fetch(object_id: str) -> ContextObject:
        calls.append(object_id)
        return LIBRARY[object_id]
    return fetch


STABLE = ["model: coder-1", "Tools: read_file(path), run_tests().", "You are a careful coding assistant."]


QUESTION = "Why does an empty exclude filter skip every item?"


RECALLED = [  # what the retriever found for Ana's question; stage 09 decides
    MemoryCandidate("m-go", "Write the release script in Go.", "ana", 0.62, 3, "preference:automation-language",
                    "current_turn", "chat:turn-7"),
    MemoryCandidate("m-py", "I usually write automation in Python.", "ana", 0.91, 1, "preference:automation-language",
                    "user_default", "chat:2026-01-12"),
    MemoryCandidate("m-diff", "Ana reviews every diff herself before merging.", "ana", 0.8, 2, source="chat:2026-02-20"),
    MemoryCandidate("m-vitest", "Tests run with Vitest, never Jest.", "ana", 0.7, 4, source="repo:package.json"),
    MemoryCandidate("m-commits", "Commit messages follow Conventional Commits.", "ana", 0.5, 5,
                    source="repo:CONTRIBUTING.md"),
    MemoryCandidate("m-bo", "Use Rust for everything.", "bo", 0.99, 1),
]


# a stage-10 segment becomes a stage-11 context object of this kind
KIND_OF = {"system": "constraint", "tools": "tool_schema", "policy": "constraint", "memory": "memory",
           "evidence": "evidence", "dialogue": "history", "user": "goal"}


# ---------------------------------------------------------------- step 1 · check_objects (and what is given)
def test_kinds_and_steps_are_fixed() -> None:
    assert KINDS == ("goal", "constraint", "resource", "pending_action", "negative_result", "tool_schema", "state",
                     "evidence", "tool_output", "history", "summary", "memory")
    assert STEPS == ("duplicate", "stale", "irrelevant", "memory", "tool_output", "history")
    plain = O("x", "state", "t")
    assert (plain.revision, plain.source, plain.depends_on, plain.expires_on_change, plain.derived_from) == (
        "", "", (), False, ())
    assert Decision("x", "admitted") == Decision("x", "admitted", (), 0)


def test_estimate_tokens_counts_words_cjk_characters_and_punctuation() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("if config.exclude: return skip(item)") == 10
    assert estimate_tokens("本轮只改一个文件。") == 9


@pytest.mark.parametrize(("objects", "words"), [
    ([O("", "state", "t")], r"\bempty\b"),
    ([O("  ", "state", "t")], r"\bempty\b"),
    ([O("a", "state", "t"), O("a", "evidence", "u")], r"'a'.*\btwice\b"),
    ([O("a", "fact", "t")], "fact"),
    ([O("a", "State", "t")], "State"),
    ([O("a", "state", "t", depends_on="bc")], "depends_on"),  # type: ignore[arg-type]
    ([O("a", "summary", "t", derived_from="bc")], "derived_from"),  # type: ignore[arg-type]
    ([O("a", "summary", "t")], "derived_from"),
    ([O("b", "state", "s"), O("a", "evidence", "t", derived_from=("b",))], "derived_from"),
])
def test_invalid_objects_fail_naming_the_rule_before_anything_is_decided(objects: list[ContextObject], words: str) -> None:
    calls = [lambda: close_dependencies([], objects), lambda: plan_deletions(objects, 0),
             lambda: invalidate([*objects, O("zz-changed", "state", "c")], "zz-changed", "v2")]
    for call in calls:
        with pytest.raises(ValueError, match=words) as caught:
            call()
        assert not isinstance(caught.value, ContextBudgetError)
    assert "fact" not in words or "goal, constraint, resource" in str(caught.value)


# ---------------------------------------------------------------- step 2 · close_dependencies
def test_e17_is_admitted_with_its_whole_dependency_closure() -> None:
    closure = close_dependencies(["e17"], CODE)
    assert closure == Closure(("e17", "filter-bool", "skip-def", "type-config"),
                              (Decision("e17", "admitted", ("filter-bool", "skip-def", "type-config")),))
    # asking for a leaf brings nothing else along
    assert close_dependencies(["skip-def"], CODE) == Closure(("skip-def",), (Decision("skip-def", "admitted"),))


def test_a_fragment_without_its_dependencies_is_a_missing_dependency() -> None:
    # only the line itself and its config type were loaded: the Filter semantics are absent, two levels down
    closure = close_dependencies(["e17"], [E17, TYPE_CONFIG])
    assert closure == Closure((), (Decision("e17", "missing_dependency", ("filter-bool", "skip-def")),))
    # every absent id of the transitive closure is named, not just the first one met
    alone = close_dependencies(["e17"], [E17])
    assert alone.decisions == (Decision("e17", "missing_dependency", ("skip-def", "type-config")),)
    deep = close_dependencies(["e17"], [E17, SKIP_DEF, TYPE_CONFIG])
    assert deep.decisions[0].related == ("filter-bool",)


def test_a_diamond_is_admitted_once_and_is_not_a_cycle() -> None:
    objects = [O("top", "evidence", "t", depends_on=("left", "right")), O("left", "evidence", "l", depends_on=("base",)),
               O("right", "evidence", "r", depends_on=("base",)), O("base", "state", "b")]
    closure = close_dependencies(["top"], objects)
    assert closure == Closure(("base", "left", "right", "top"), (Decision("top", "admitted", ("base", "left", "right")),))
    assert close_dependencies(["left", "right"], objects).admitted == ("base", "left", "right")


def test_a_cycle_is_refused_naming_every_object_on_it() -> None:
    objects = [O("entry", "evidence", "e", depends_on=("a",)), O("a", "evidence", "a", depends_on=("b",)),
               O("b", "evidence", "b", depends_on=("c",)), O("c", "evidence", "c", depends_on=("a", "leaf")),
               O("leaf", "state", "l"), O("self", "evidence", "s", depends_on=("self",))]
    closure = close_dependencies(["entry", "b", "self", "leaf"], objects)
    assert closure.decisions == (
        Decision("entry", "dependency_cycle", ("a", "b", "c")),  # the path into the cycle is not on it
        Decision("b", "dependency_cycle", ("a", "b", "c")),
        Decision("self", "dependency_cycle", ("self",)),
        Decision("leaf", "admitted"),
    )
    assert closure.admitted == ("leaf",)


def test_missing_beats_cycle_and_each_request_is_decided_on_its_own() -> None:
    objects = [O("x", "evidence", "x", depends_on=("y", "ghost")), O("y", "evidence", "y", depends_on=("x",)),
               *CODE]
    closure = close_dependencies(["skip-def", "x", "e17"], objects)
    assert closure.decisions == (Decision("skip-def", "admitted"), Decision("x", "missing_dependency", ("ghost",)),
                                 Decision("e17", "admitted", ("filter-bool", "skip-def", "type-config")))
    assert closure.admitted == ("e17", "filter-bool", "skip-def", "type-config")
    assert close_dependencies([], objects) == Closure((), ())


# ---------------------------------------------------------------- step 3 · invalidate
def test_a_new_revision_expires_the_chain_of_flagged_dependents() -> None:
    test = O("test-exclude", "evidence", "test_empty_exclude_keeps_items", "r42", "tests/test_filter.py", ("e17",), True)
    decisions = invalidate([test, *CODE], "filter-bool", "r43")
    assert decisions == (
        Decision("filter-bool", "revision_changed"),
        Decision("type-config", "dependency_changed", ("filter-bool",)),
        Decision("e17", "dependency_changed", ("type-config",)),
        Decision("test-exclude", "dependency_changed", ("e17",)),
    )
    # within one distance, by id
    twins = [O("changed", "state", "c", "v1"), O("b", "state", "b", depends_on=("changed",), expires_on_change=True),
             O("a", "state", "a", depends_on=("changed",), expires_on_change=True)]
    assert ids(invalidate(twins, "changed", "v2")) == ["changed", "a", "b"]


def test_an_unflagged_object_stops_the_chain() -> None:
    objects = [O("config", "evidence", "timeout = 60", "r1"),
               O("note", "state", "We rely on the 60 s timeout.", depends_on=("config",)),  # not flagged
               O("plan", "state", "Retry after the timeout.", depends_on=("note",), expires_on_change=True)]
    assert invalidate(objects, "config", "r2") == (Decision("config", "revision_changed"),)
    flagged = [*objects[:1], dataclasses.replace(objects[1], expires_on_change=True), objects[2]]
    assert ids(invalidate(flagged, "config", "r2")) == ["config", "note", "plan"]


def test_a_summary_expires_with_its_source_whatever_its_flag() -> None:
    summary = O("summary", "summary", "Option B was ruled out because of the audit log.", derived_from=("skip-def",),
                depends_on=("e17",), expires_on_change=True)
    loose = O("loose-summary", "summary", "The filter skips everything.", derived_from=("e17",))  # not flagged
    after = O("after", "state", "Plan: keep option A.", depends_on=("loose-summary",), expires_on_change=True)
    decisions = invalidate([*CODE, summary, loose, after], "skip-def", "r43")
    assert decisions == (
        Decision("skip-def", "revision_changed"),
        Decision("e17", "dependency_changed", ("skip-def",)),
        Decision("summary", "source_changed", ("e17", "skip-def")),
        Decision("loose-summary", "source_changed", ("e17",)),
        Decision("after", "dependency_changed", ("loose-summary",)),
    )


def test_related_lists_every_expired_dependency_and_source() -> None:
    objects = [O("root", "evidence", "r", "1"), O("mid", "evidence", "m", depends_on=("root",), expires_on_change=True),
               O("both", "evidence", "b", depends_on=("root", "mid", "fresh"), expires_on_change=True),
               O("fresh", "evidence", "f"),
               O("digest", "summary", "d", depends_on=("mid",), derived_from=("fresh", "root"))]
    assert invalidate(objects, "root", "2") == (
        Decision("root", "revision_changed"),
        Decision("both", "dependency_changed", ("mid", "root")),
        Decision("digest", "source_changed", ("root",)),  # unflagged: its dependency on mid does not count
        Decision("mid", "dependency_changed", ("root",)),
    )


def test_the_changed_object_names_nothing_even_on_a_cycle() -> None:
    loop = [O("a", "evidence", "a", "1", depends_on=("b",), expires_on_change=True),
            O("b", "evidence", "b", depends_on=("a",), expires_on_change=True)]
    assert invalidate(loop, "a", "2") == (Decision("a", "revision_changed"), Decision("b", "dependency_changed", ("a",)))


def test_the_same_revision_expires_nothing() -> None:
    assert invalidate(CODE, "type-config", "r42") == ()
    assert ids(invalidate(CODE, "type-config", "r42 ")) == ["type-config", "e17"]
    unknown = [O("doc", "evidence", "d"), O("user", "state", "u", depends_on=("doc",), expires_on_change=True)]
    assert ids(invalidate(unknown, "doc", "v1")) == ["doc", "user"]  # an unknown revision moving to v1 is a change


# ---------------------------------------------------------------- step 4 · cache_break_even
def test_cache_pays_only_when_strictly_cheaper_the_threshold() -> None:
    # P·w + n·P·c = (n+1)·P·u exactly at n = 2 for u = 1, c = 1/2, w = 2: a tie does not pay for a cache
    assert cache_break_even(1000, 2, 1, Fraction(1, 2), 2) == BreakEven("no_cache", Fraction(3000), Fraction(3000))
    assert cache_break_even(1000, 3, 1, Fraction(1, 2), 2) == BreakEven("cache", Fraction(3500), Fraction(4000))
    assert cache_break_even(1000, 1, 1, Fraction(1, 2), 2) == BreakEven("no_cache", Fraction(2500), Fraction(2000))
    # without reuse a cache never pays; with a write price equal to the plain price, the first reuse does
    assert cache_break_even(6000, 0, 3, Fraction(3, 10), Fraction(15, 4)).decision == "no_cache"
    assert cache_break_even(6000, 1, 3, Fraction(3, 10), Fraction(15, 4)) == BreakEven("cache", Fraction(24300), Fraction(36000))
    assert cache_break_even(1, 0, 5, 0, 5).decision == "no_cache"
    assert cache_break_even(1, 1, 5, 0, 5).decision == "cache"


def test_cache_costs_are_exact_fractions_and_floats_read_as_decimals() -> None:
    # 0.35 + 0.05 is 0.39999999999999997 in float arithmetic, under 2 · 0.2 = 0.4: a cache "wins" a tie
    result = cache_break_even(1, 1, 0.2, 0.05, 0.35)
    assert result == BreakEven("no_cache", Fraction(2, 5), Fraction(2, 5))
    assert isinstance(result.cached_cost, Fraction) and isinstance(result.uncached_cost, Fraction)
    assert cache_break_even(1, 2, 0.2, 0.05, 0.5) == BreakEven("no_cache", Fraction(3, 5), Fraction(3, 5))
    assert cache_break_even(3, 1, 0.3, 0.1, 0.2) == BreakEven("cache", Fraction(9, 10), Fraction(9, 5))
    tie = cache_break_even(10, 1, 0.15, 0.05, 0.25)  # 2.5 + 0.5 = 3.0 = 2 · 1.5
    assert tie == BreakEven("no_cache", Fraction(3), Fraction(3))
    assert cache_break_even(7, 4, 3, 0.3, 3.75).cached_cost == Fraction(7 * 375, 100) + 4 * 7 * Fraction(3, 10)
    assert cache_break_even(7, 4, 3, 0.3, 3.75).uncached_cost == 5 * 7 * 3


@pytest.mark.parametrize(("p", "n", "u", "c", "w"), [(1, 0, 1, 0, 0), (2, 5, 7, 1, 9), (1000, 9, 3, 2, 100),
                                                     (4096, 1, 10, 1, 12), (5, 3, 1, 1, 1), (9, 2, 0, 0, 0)])
def test_cache_break_even_follows_the_formula(p: int, n: int, u: int, c: int, w: int) -> None:
    cached, uncached = p * w + n * p * c, (n + 1) * p * u
    assert cache_break_even(p, n, u, c, w) == BreakEven("cache" if cached < uncached else "no_cache",
                                                       Fraction(cached), Fraction(uncached))


def test_automatic_caching_without_a_write_price_pays_from_the_first_reuse() -> None:
    # a service that caches on its own charges no separate write: the first call pays the plain price, w = u
    assert cache_break_even(6000, 0, 3, 0.3, 3).decision == "no_cache"  # nothing reused yet: a tie
    assert [cache_break_even(6000, n, 3, 0.3, 3).decision for n in range(1, 4)] == ["cache"] * 3
    assert cache_break_even(6000, 3, 3, 3, 3).decision == "no_cache"  # no cheaper read: it never pays


@pytest.mark.parametrize(("args", "name"), [
    ((0, 1, 1, 1, 1), "prefix_tokens"), ((-5, 1, 1, 1, 1), "prefix_tokens"), ((1.0, 1, 1, 1, 1), "prefix_tokens"),
    ((True, 1, 1, 1, 1), "prefix_tokens"), ((10, -1, 1, 1, 1), "reuses"), ((10, 1.5, 1, 1, 1), "reuses"),
    ((10, True, 1, 1, 1), "reuses"), ((10, "3", 1, 1, 1), "reuses"),
    ((10, 1, -1, 1, 1), "uncached_price"), ((10, 1, 1, -0.5, 1), "cached_price"), ((10, 1, 1, 1, Fraction(-1, 3)), "write_price"),
    ((10, 1, math.nan, 1, 1), "uncached_price"), ((10, 1, 1, math.inf, 1), "cached_price"),
    ((10, 1, 1, 1, -math.inf), "write_price"), ((10, 1, True, 1, 1), "uncached_price"), ((10, 1, 1, False, 1), "cached_price"),
    ((10, 1, 1, 1, "0.3"), "write_price"), ((10, 1, 1, None, 1), "cached_price"),
])
def test_bad_counts_and_prices_fail_naming_the_parameter(args: tuple, name: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        cache_break_even(*args)


# ---------------------------------------------------------------- step 5 · plan_deletions
def test_an_early_constraint_outlives_ten_recent_search_hits() -> None:
    goal = O("goal", "goal", "Explain why an empty exclude filter skips items.")  # 9
    keep_api = O("keep-api", "constraint", "Do not change the public API.")  # 7
    objects = [goal, keep_api, *CODE, *search_hits(10)]
    decisions = plan_deletions(objects, 30)
    kept = [item.text for item in objects if item.id not in ids(decisions)]
    assert "Do not change the public API." in kept
    assert decisions == tuple(Decision(f"hit-{n:02d}", "tool_output", (), 10) for n in range(3))


def test_deletion_order_duplicate_stale_irrelevant_tool_output_history() -> None:
    objects = [
        O("goal", "goal", "Fix the exclude branch."),
        O("turn-1", "history", "Ana: the filter skips everything."),  # 7
        O("turn-2", "history", "Bot: I will read src/filter.py."),  # 11
        O("hit", "tool_output", "Search result: a blog post about filters.", source="search:blog"),  # 9
        O("old-config", "evidence", "exclude: list[str]", "r40", "src/config.py"),  # 6
        O("readme", "evidence", "The README explains installation.", source="README.md"),  # 5, needed
        O("notes", "state", "The README explains  installation.", source="notes.md"),  # 5: the same text
        O("changelog", "evidence", "The changelog lists release 2.3.", source="CHANGELOG.md"),  # 8
        O("scratch", "state", "A thought about caching.", source=""),  # not recoverable: never irrelevant
        *CODE,
    ]
    needed = ["goal", "turn-1", "turn-2", "hit", "old-config", "readme", *[item.id for item in CODE]]
    decisions = plan_deletions(objects, 46, needed_ids=needed, stale_ids=["old-config"])
    assert [(d.object_id, d.reason, d.related) for d in decisions] == [
        ("notes", "duplicate", ("readme",)), ("old-config", "stale", ()), ("changelog", "irrelevant", ()),
        ("hit", "tool_output", ()), ("turn-2", "history", ()), ("turn-1", "history", ()),
    ]
    assert [d.tokens for d in decisions] == [5, 6, 8, 9, 11, 7]
    with pytest.raises(ContextBudgetError):
        plan_deletions(objects, 47, needed_ids=needed, stale_ids=["old-config"])
    assert list(STEPS) == ["duplicate", "stale", "irrelevant", "memory", "tool_output", "history"]


def test_memory_goes_whole_after_the_waste_and_before_tool_output_and_history() -> None:
    # source 003: memory is the one layer that may be sacrificed; stage 10 drops it first. Source 004: duplicates,
    # stale and irrelevant-but-recoverable material go first — they carry nothing this round needs.
    block = render_memory_block([MemoryCandidate("m-go", "Use Go.", "ana", 0.9, 1, source="chat:2026-03-02")])
    goal = O("goal", "goal", "Fix the exclude branch.")
    memory = O("memory", "memory", block.text)  # 43
    history = O("turn-1", "history", "Ana: the filter skips everything.")  # 7
    hit = O("hit", "tool_output", "Search result: a blog post about filters.", source="search:blog")  # 9
    evidence = O("e17", "evidence", "if config.exclude: return skip(item)", source="src/filter.py")  # 10
    # the case: goal, memory, history, evidence, 12 over — the memory goes, whole, and that is enough
    assert plan_deletions([goal, memory, history, evidence], 12) == (Decision("memory", "memory", (), 43),)
    objects = [goal, memory, history, hit, evidence, O("pasted", "tool_output", "search result: a blog post about FILTERS.")]
    assert [(d.object_id, d.reason) for d in plan_deletions(objects, 9)] == [("pasted", "duplicate")]
    assert [(d.object_id, d.reason) for d in plan_deletions(objects, 10)] == [("pasted", "duplicate"), ("memory", "memory")]
    assert [(d.object_id, d.reason) for d in plan_deletions(objects, 53)] == [
        ("pasted", "duplicate"), ("memory", "memory"), ("hit", "tool_output")]
    assert ids(plan_deletions(objects, 62)) == ["pasted", "memory", "hit", "turn-1"]
    # an irrelevant, recoverable object is waste: it goes before the memory
    assert ids(plan_deletions(objects, 10, needed_ids=["goal", "memory", "turn-1", "hit", "pasted"])) == ["pasted", "e17"]


def test_within_a_step_larger_first_then_id() -> None:
    objects = [O("goal", "goal", "g"), O("b", "tool_output", "one two three"), O("a", "tool_output", "one two three"
               " four"), O("c", "tool_output", "uno dos tres"), O("d", "tool_output", "x")]
    assert [(d.object_id, d.tokens) for d in plan_deletions(objects, 100 - 90)] == [("a", 4), ("b", 3), ("c", 3)]
    assert ids(plan_deletions(objects, 11)) == ["a", "b", "c", "d"]


def test_the_kept_duplicate_is_the_one_later_steps_delete_last() -> None:
    objects = [O("z-state", "state", "Use  Filter([]) for none."), O("a-hit", "tool_output", "use filter([]) for NONE."),
               O("m-turn", "history", "Use Filter([]) for none."), O("goal", "goal", "g")]
    # the state object is never deleted by a later step, so it is the copy kept, although its id sorts last
    decisions = plan_deletions(objects, 12)
    assert [(d.object_id, d.reason, d.related) for d in decisions] == [
        ("a-hit", "duplicate", ("z-state",)), ("m-turn", "duplicate", ("z-state",))]
    # between a tool output and a history turn, the history turn is deleted later: it is kept
    assert [(d.object_id, d.related) for d in plan_deletions(objects[1:], 6)] == [("a-hit", ("m-turn",))]
    # same later step: the smallest id is kept; a protected copy is always the one kept
    same = [O("b", "history", "Same words."), O("a", "history", "same  words."), O("c", "constraint", "SAME WORDS.")]
    assert [(d.object_id, d.related) for d in plan_deletions(same, 6)] == [("a", ("c",)), ("b", ("c",))]
    assert [(d.object_id, d.related) for d in plan_deletions(same[:2], 3)] == [("b", ("a",))]


def test_irrelevant_means_not_needed_and_recoverable() -> None:
    objects = [O("goal", "goal", "g"), O("doc", "evidence", "A page we can fetch again.", source="wiki:page"),
               O("draft", "state", "A draft that exists only here."),
               O("needed-doc", "evidence", "The page this round needs.", source="wiki:needed")]
    decisions = plan_deletions(objects, 1, needed_ids=["goal", "needed-doc"])
    assert [(d.object_id, d.reason) for d in decisions] == [("doc", "irrelevant")]
    with pytest.raises(ContextBudgetError):
        plan_deletions(objects, 8, needed_ids=["goal", "needed-doc"])  # the draft cannot be fetched again
    with pytest.raises(ContextBudgetError):
        plan_deletions(objects, 1)  # no needed_ids: nothing is judged irrelevant
    assert ids(plan_deletions(objects, 8, needed_ids=[])) == ["doc", "needed-doc"]


def test_a_deletion_takes_its_dependents_with_it() -> None:
    objects = [O("goal", "goal", "g"),
               O("z-old", "tool_output", "Search output from yesterday about the exclude branch."),  # 9
               O("c-reading", "state", "Reading: exclude is truthy.", depends_on=("z-old",)),  # 6
               O("b-plan", "state", "Plan: patch the Filter.", depends_on=("c-reading",)),  # 6
               O("a-other", "state", "Unrelated note.", depends_on=("goal",))]
    decisions = plan_deletions(objects, 1)
    assert decisions == (Decision("z-old", "tool_output", (), 9), Decision("b-plan", "dependency_deleted", ("z-old",), 6),
                         Decision("c-reading", "dependency_deleted", ("z-old",), 6))
    # a dependent already deleted is not deleted twice, and the walk goes on past it
    hits = [O("goal", "goal", "g"), O("h1", "tool_output", "one two three"),
            O("h2", "tool_output", "one two", depends_on=("h1",)), O("h3", "tool_output", "one")]
    assert [(d.object_id, d.reason) for d in plan_deletions(hits, 6)] == [
        ("h1", "tool_output"), ("h2", "dependency_deleted"), ("h3", "tool_output")]


def test_protected_objects_and_what_they_depend_on_stay() -> None:
    objects = [
        O("goal", "goal", "Explain the exclude branch."),
        O("keep-api", "constraint", "Do not change the public API.", depends_on=("api-doc",)),
        O("api-doc", "history", "The public API is in docs/api.md."),  # a protected object needs it: it stays
        O("repo", "resource", "repo github.com/acme/shop at r42"),
        O("deploy", "pending_action", "deploy-preview started; outcome unknown"),
        O("ruled-out", "negative_result", "Option B breaks test_exclude_none."),
        O("chatter", "history", "Bot: looking into it now."),  # 7
    ]
    assert PROTECTED == KINDS[:5] == ("goal", "constraint", "resource", "pending_action", "negative_result")
    assert ids(plan_deletions(objects, 7)) == ["chatter"]
    with pytest.raises(ContextBudgetError) as caught:
        plan_deletions(objects, 8)
    words = str(caught.value).replace(",", " ").split()
    assert "7" in words and "8" in words, "the error states what can be freed and what is needed"
    assert isinstance(caught.value, ValueError)


def test_deletion_stops_once_enough_is_freed() -> None:
    objects = [O("goal", "goal", "g"), *search_hits(3)]
    assert plan_deletions(objects, 0) == ()
    assert ids(plan_deletions(objects, 10)) == ["hit-00"]
    assert ids(plan_deletions(objects, 11)) == ["hit-00", "hit-01"]
    assert ids(plan_deletions(objects, 30)) == ["hit-00", "hit-01", "hit-02"]
    with pytest.raises(ContextBudgetError):
        plan_deletions(objects, 31)


def test_an_injected_token_counter_prices_the_deletions() -> None:
    seen: list[str] = []

    def characters(text: str) -> int:
        seen.append(text)
        return len(text)

    objects = [O("goal", "goal", "g"), O("long", "tool_output", "x" * 40), O("short", "tool_output", "y y y y y y")]
    decisions = plan_deletions(objects, 41, count_tokens=characters)
    assert [(d.object_id, d.tokens) for d in decisions] == [("long", 40), ("short", 11)]
    assert set(seen) == {item.text for item in objects}
    assert ids(plan_deletions(objects, 3)) == ["short"]  # the estimate counts "y y y y y y" as 6, the 40 x's as 1


def test_memory_enters_priced_as_the_block_with_its_wrapper() -> None:
    from forge import memory_selection

    assert render_memory_block is memory_selection.render_memory_block and MemoryBlock is memory_selection.MemoryBlock
    hit = MemoryCandidate("m-go", "Use Go.", "ana", 0.9, 1, source="chat:2026-03-02")
    block = render_memory_block([hit])
    assert block == MemoryBlock('<recalled_memory>\n<memory_hit id="m-go" source="chat:2026-03-02">Use Go.</memory_hit>'
                                "\n</recalled_memory>", 43)
    assert estimate_tokens(hit.text) == 3, "the text alone is 3 units: the wrapper and provenance cost the other 40"
    memory = O("memory", "memory", block.text)
    assert [(d.object_id, d.tokens) for d in plan_deletions([memory, O("g", "goal", "g")], 1, needed_ids=["g"],
                                                            stale_ids=["memory"])] == [("memory", 43)]
    assert render_memory_block([]) == MemoryBlock("", 0)


@pytest.mark.parametrize("over_by", [-1, True, 2.0, "3", None])
def test_a_bad_over_by_fails(over_by: object) -> None:
    with pytest.raises(ValueError, match=r"\bover_by\b") as caught:
        plan_deletions([O("goal", "goal", "g"), *search_hits(2)], over_by)  # type: ignore[arg-type]
    assert not isinstance(caught.value, ContextBudgetError)


def test_a_readme_that_deploys_never_outranks_the_users_no_production_deploy() -> None:
    """004 Q052: the user's "no production deploy" against a README that says it deploys automatically is a conflict
    of authority, not of facts. The README is tool output however new it is and wherever it stands; the user's
    constraint is never deleted, and the README goes first because it is the largest tool output."""
    readme = O("readme", "tool_output", "After a green build this repository deploys to production automatically.",
               "", "README.md")  # 11 units
    objects = [O("no-deploy", "constraint", "No production deploy."), O("goal", "goal", "Fix the exclude bug."),
               *search_hits(2), readme]
    assert estimate_tokens(readme.text) == 11
    assert ids(plan_deletions(objects, 11)) == ["readme"]
    assert ids(plan_deletions(objects, 12)) == ["readme", "hit-00"]
    with pytest.raises(ContextBudgetError):
        plan_deletions(objects, 32)  # the two hits and the README free 31; the constraint is not on offer


def test_one_turn_runs_through_selection_assembly_and_the_context_pipeline() -> None:
    # stage 09, with its defaults: the gates, the authority ladder and top_k = 3 give one rendered block
    plan = select_memories(RECALLED, "ana")
    assert plan.selected == ("m-go", "m-diff", "m-vitest")
    assert {d.memory_id: d.reason for d in plan.decisions if not d.selected} == {
        "m-py": "authority_loser", "m-commits": "top_k_reached", "m-bo": "scope_mismatch"}
    # stage 10, with its defaults: stage 09's block is one memory segment, as it is
    segments = [
        Segment("system", "system", "You are a careful coding assistant for a front-end repository."),
        Segment("tools", "tools", "Tools: read_file(path), run_tests(), write_file(path, text) - write_file needs approval."),
        Segment("policy", "policy", "Write policy: deny until a human approves the plan."),
        Segment("memory", "memory", plan.context),
        Segment("e17", "evidence", "if config.exclude: return skip(item)"),
        Segment("turn-1", "dialogue", "Ana: the list skips every item once exclude is empty."),
        Segment("request", "user", "Explain why an empty exclude filter skips items; do not change the public API."),
    ]
    budget = input_budget(1000, 400, 100, safety_margin_for(1000))  # B = 1000 - 400 - 100 - 250
    turn = assemble(segments, budget)
    tokens = {d.name: d.tokens for d in turn.decisions}
    assert all(d.included for d in turn.decisions) and plan.context in turn.prompt.split("\n\n")
    assert tokens["memory"] == plan.used_tokens, "stage 10 prices the block as stage 09 did"
    # the same turn on a tighter budget: the safety valve lets the whole block go, and says so
    tight = assemble(segments, turn.used_tokens - 1)
    assert [(d.name, d.reason) for d in tight.decisions if d.kind == "memory"] == [
        ("memory", "over_budget"), ("memory-notice", "notice")]
    assert MEMORY_NOTICE in tight.prompt and plan.context not in tight.prompt

    # stage 11: the session keeps the turn's segments as context objects; the next turn brings ten search hits
    objects = [O(d.name, KIND_OF[d.kind], item.text) for d in turn.decisions for item in segments if item.name == d.name]
    objects += [*search_hits(10), O("turn-2", "history", "Bot: reading src/filter.py now.")]
    grown = sum(estimate_tokens(item.text) for item in objects[len(segments):])  # 10 hits of 10 units, 10 for turn-2
    next_budget = input_budget(1000, 400, 200, safety_margin_for(1000))  # more room kept for tool results
    over_by = turn.used_tokens + grown - next_budget
    deletions = plan_deletions(objects, over_by)
    # nothing is waste, so the memory goes first, whole, priced as stage 10 priced it; then the largest tool output
    assert deletions[0] == Decision("memory", "memory", (), tokens["memory"])
    assert [d.reason for d in deletions[1:]] == ["tool_output"] * (len(deletions) - 1)
    gone = {d.object_id for d in deletions}
    assert {"system", "policy", "request", "e17", "turn-1", "turn-2"}.isdisjoint(gone)
    # what is left fits the next call: stage 10 assembles it whole, within the smaller budget
    left = [item for item in segments if item.name not in gone] + [
        Segment(item.id, "dialogue" if item.kind == "history" else "evidence", item.text)
        for item in objects[len(segments):] if item.id not in gone]
    after = assemble(left, next_budget)
    assert all(d.included for d in after.decisions) and after.used_tokens <= next_budget
    assert after.used_tokens == turn.used_tokens + grown - sum(d.tokens for d in deletions)


# ---------------------------------------------------------------- step 6 · just-in-time loading and reusable_prefix
def test_jit_shows_a_light_index_and_loads_the_closure_on_demand() -> None:
    index = light_index(list(LIBRARY.values()))
    assert [entry.id for entry in index] == sorted(LIBRARY)
    assert index[0] == IndexEntry("e17", "src/filter.py#L60-95", ("type-config", "skip-def"))
    calls: list[str] = []
    load = load_just_in_time(["e17"], list(index), fetcher(calls))
    assert calls == ["e17", "filter-bool", "skip-def", "type-config"], "the closure, once each, and nothing else"
    assert load == JitLoad(tuple(LIBRARY[object_id] for object_id in calls),
                           (Decision("e17", "admitted", ("filter-bool", "skip-def", "type-config")),))
    shared: list[str] = []
    load_just_in_time(["type-config", "hit-01", "e17"], list(index), fetcher(shared))
    assert shared == ["e17", "filter-bool", "hit-01", "skip-def", "type-config"]
    nothing: list[str] = []
    assert load_just_in_time([], list(index), fetcher(nothing)) == JitLoad((), ()) and nothing == []


def test_jit_reports_a_missing_dependency_before_fetching_it() -> None:
    index = light_index([E17, TYPE_CONFIG, *search_hits(2)])
    calls: list[str] = []
    load = load_just_in_time(["e17", "hit-01"], list(index), fetcher(calls))
    assert load.decisions == (Decision("e17", "missing_dependency", ("filter-bool", "skip-def")),
                              Decision("hit-01", "admitted"))
    assert calls == ["hit-01"] and load.loaded == (LIBRARY["hit-01"],)


def test_jit_refuses_an_object_that_disagrees_with_its_index_entry() -> None:
    index = [IndexEntry("e17", "src/filter.py#L60-95", ("type-config",)), IndexEntry("type-config", "src/config.py")]
    changed = {"e17": E17, "type-config": O("type-config", "evidence", "exclude: Filter")}

    def fetch_changed(object_id: str) -> ContextObject:
        return changed[object_id]

    with pytest.raises(ValueError, match="stale") as caught:
        load_just_in_time(["e17"], index, fetch_changed)  # e17 now also needs skip-def
    assert "'e17'" in str(caught.value) and "skip-def" in str(caught.value)
    with pytest.raises(ValueError, match="stale"):
        load_just_in_time(["type-config"], index, lambda object_id: O("other", "evidence", "x"))
    assert load_just_in_time(["type-config"], index, fetch_changed).loaded == (changed["type-config"],)


def test_jit_cannot_complete_a_skill_that_names_team_rules_it_does_not_index() -> None:
    """004 Q050: a skill that says "review by the team rules" without saying where they are is a closure the loader
    cannot complete: the request is a missing dependency, named, and nothing is fetched until the rules are indexed."""
    skill = O("review-skill", "constraint", "Review every change by the team rules.", "v1", "skills/review/SKILL.md",
              ("team-rules",))
    rules = O("team-rules", "evidence", "Team rules: one reviewer per change; no merge on red.", "v3", "docs/team-rules.md")
    calls: list[str] = []
    load = load_just_in_time(["review-skill"], list(light_index([skill])), fetcher(calls))
    assert load == JitLoad((), (Decision("review-skill", "missing_dependency", ("team-rules",)),)) and calls == []
    library = {item.id: item for item in (skill, rules)}

    def fetch(object_id: str) -> ContextObject:
        return library[object_id]

    load = load_just_in_time(["review-skill"], list(light_index([skill, rules])), fetch)
    assert load == JitLoad((skill, rules), (Decision("review-skill", "admitted", ("team-rules",)),))


def test_a_timestamp_in_front_breaks_the_cached_prefix() -> None:
    stable = sum(estimate_tokens(part) for part in STABLE)
    assert reusable_prefix([*STABLE, "Explain e17."], [*STABLE, QUESTION]) == stable
    assert reusable_prefix([*STABLE, QUESTION], [*STABLE, QUESTION]) == stable + estimate_tokens(QUESTION)
    # the same request with the time at the front: every part after it is a new prefix
    assert reusable_prefix(["Now: 09:15", *STABLE, QUESTION], ["Now: 09:16", *STABLE, QUESTION]) == 0
    # the same time at the end costs only itself
    assert reusable_prefix([*STABLE, QUESTION, "Now: 09:15"], [*STABLE, QUESTION, "Now: 09:16"]) == (
        stable + estimate_tokens(QUESTION))


def test_identical_text_can_still_miss_the_cache() -> None:
    # another model, or the same tools listed in another order: the visible text is the same, the prefix is not
    assert reusable_prefix([*STABLE, QUESTION], ["model: coder-2", *STABLE[1:], QUESTION]) == 0
    reordered = [STABLE[0], "Tools: run_tests(), read_file(path).", *STABLE[2:], QUESTION]
    assert reusable_prefix([*STABLE, QUESTION], reordered) == estimate_tokens(STABLE[0])
    def characters(text: str) -> int:
        return len(text)

    assert reusable_prefix([*STABLE, QUESTION], reordered, count_tokens=characters) == len(STABLE[0])
    assert reusable_prefix([], [*STABLE]) == 0
    with pytest.raises(ValueError, match="previous"):
        reusable_prefix("model: coder-1", STABLE)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the whole module: bad ids, input order, values
@pytest.mark.parametrize(("call", "name", "words"), [
    (lambda: close_dependencies(["ghost"], CODE), "requested_ids", ("'ghost'", "unknown")),
    (lambda: close_dependencies(["e17", "e17"], CODE), "requested_ids", ("'e17'", "twice")),
    (lambda: close_dependencies("e17", CODE), "requested_ids", ("one string",)),  # type: ignore[arg-type]
    (lambda: invalidate(CODE, "ghost", "r43"), "changed_id", ("'ghost'", "unknown")),
    (lambda: invalidate(CODE, "e17", ""), "new_revision", ("empty",)),
    (lambda: invalidate(CODE, "e17", "  "), "new_revision", ("empty",)),
    (lambda: plan_deletions(CODE, 1, needed_ids=["ghost"]), "needed_ids", ("'ghost'", "unknown")),
    (lambda: plan_deletions(CODE, 1, needed_ids=["e17", "e17"]), "needed_ids", ("'e17'", "twice")),
    (lambda: plan_deletions(CODE, 1, needed_ids="e17"), "needed_ids", ("one string",)),  # type: ignore[arg-type]
    (lambda: plan_deletions(CODE, 1, stale_ids=["ghost"]), "stale_ids", ("'ghost'", "unknown")),
    (lambda: plan_deletions(CODE, 1, stale_ids=["e17", "e17"]), "stale_ids", ("'e17'", "twice")),
    (lambda: plan_deletions(CODE, 1, stale_ids="e17"), "stale_ids", ("one string",)),  # type: ignore[arg-type]
])
def test_unknown_repeated_or_string_ids_fail_naming_the_argument(call, name: str, words: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=rf"\b{name}\b") as caught:
        call()
    assert not isinstance(caught.value, ContextBudgetError)
    message = str(caught.value)
    assert all(re.search(rf"(?<!\w){re.escape(word)}(?!\w)", message) for word in words), message
    assert ("twice" in message) == ("twice" in words) and ("unknown" in message) == ("unknown" in words)


def test_results_do_not_depend_on_input_order() -> None:
    summary = O("summary", "summary", "Filter truthiness explains the skip.", derived_from=("e17", "filter-bool"))
    objects = [O("goal", "goal", "g"), O("keep-api", "constraint", "Do not change the public API."), *CODE, summary,
               *search_hits(6), O("dup", "history", "Search result 2: a forum page about filters.")]
    closure = close_dependencies(["e17", "summary"], objects)
    expired = invalidate(objects, "filter-bool", "r43")
    deletions = plan_deletions(objects, 50)
    rng = random.Random(20261211)
    for _ in range(20):
        shuffled = list(objects)
        rng.shuffle(shuffled)
        assert close_dependencies(["e17", "summary"], shuffled) == closure
        assert invalidate(shuffled, "filter-bool", "r43") == expired
        assert plan_deletions(shuffled, 50) == deletions


@pytest.mark.watch_arguments  # only here does the judge show the test what your code changed in its arguments
def test_inputs_are_not_mutated() -> None:
    objects = [O("goal", "goal", "g"), *CODE, *search_hits(3)]
    requested, needed, stale = ["e17"], ["goal", "e17"], ["hit-01"]
    snapshot = copy.deepcopy((objects, requested, needed, stale))  # its own objects: a change in place shows
    close_dependencies(requested, objects)
    invalidate(objects, "skip-def", "r50")
    plan_deletions(objects, 20, needed_ids=needed, stale_ids=stale)
    assert (objects, requested, needed, stale) == snapshot


def test_values_are_immutable() -> None:
    closure = close_dependencies(["e17"], CODE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        E17.revision = "r43"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        closure.decisions[0].reason = "missing_dependency"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cache_break_even(1, 1, 1, 1, 1).decision = "cache"  # type: ignore[misc]
