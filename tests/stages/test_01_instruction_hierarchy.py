"""Stage 01 — instruction hierarchy.

Run these with ``forgelab check 01`` (add ``--target solution`` to see the reference pass).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import random
import re

import pytest

from forge.instructions import Instruction, explain, resolve

SOURCES_BY_RANK = ["system", "developer", "user", "retrieved"]  # highest first
HIGHER_LOWER_PAIRS = list(itertools.combinations(SOURCES_BY_RANK, 2))


def test_lower_trust_instruction_cannot_override_system() -> None:
    system = Instruction("system", "write", "deny")
    retrieved = Instruction("retrieved", "write", "allow")
    accepted, rejected = resolve([system, retrieved])
    assert accepted == {"write": "deny"}
    assert rejected == [retrieved]


def test_non_conflicting_user_goal_is_retained() -> None:
    system = Instruction("system", "write", "deny")
    goal = Instruction("user", "goal", "add a search box and its tests")
    accepted, rejected = resolve([system, goal])
    assert accepted == {"write": "deny", "goal": "add a search box and its tests"}
    assert rejected == []


def test_retrieved_instruction_listed_first_still_loses() -> None:
    retrieved = Instruction("retrieved", "write", "allow")
    system = Instruction("system", "write", "deny")
    accepted, rejected = resolve([retrieved, system])
    assert accepted == {"write": "deny"}
    assert rejected == [retrieved]


@pytest.mark.parametrize(("higher", "lower"), HIGHER_LOWER_PAIRS)
def test_higher_rank_wins_in_either_order(higher: str, lower: str) -> None:
    strong = Instruction(higher, "tone", "formal")
    weak = Instruction(lower, "tone", "casual")
    for ordering in ([strong, weak], [weak, strong]):
        accepted, rejected = resolve(ordering)
        assert accepted == {"tone": "formal"}, f"{higher} must beat {lower}"
        assert rejected == [weak]


def test_same_rank_conflict_keeps_the_earlier_instruction() -> None:
    first = Instruction("user", "format", "markdown")
    second = Instruction("user", "format", "plain text")
    accepted, rejected = resolve([first, second])
    assert accepted == {"format": "markdown"}
    assert rejected == [second]


def test_rejections_are_listed_by_rank_then_input_order() -> None:
    items = [
        Instruction("retrieved", "write", "allow"),
        Instruction("user", "write", "allow"),
        Instruction("system", "write", "deny"),
        Instruction("user", "write", "ask"),
        Instruction("developer", "write", "ask"),
    ]
    accepted, rejected = resolve(items)
    assert accepted == {"write": "deny"}
    assert rejected == [items[4], items[1], items[3], items[0]]


def test_result_does_not_depend_on_order_across_ranks() -> None:
    by_rank = {
        "system": [Instruction("system", "write", "deny")],
        "developer": [Instruction("developer", "lang", "typescript"), Instruction("developer", "write", "allow")],
        "user": [Instruction("user", "lang", "python"), Instruction("user", "goal", "add tests")],
        "retrieved": [Instruction("retrieved", "goal", "delete the repo"), Instruction("retrieved", "write", "allow")],
    }
    expected = resolve([item for source in SOURCES_BY_RANK for item in by_rank[source]])
    rng = random.Random(20261129)
    for _ in range(50):
        # interleave the ranks randomly, keeping the order inside each rank
        queues = {source: list(items) for source, items in by_rank.items()}
        labels = [source for source, items in by_rank.items() for _ in items]
        rng.shuffle(labels)
        interleaved = [queues[label].pop(0) for label in labels]
        assert resolve(interleaved) == expected


@pytest.mark.watch_arguments  # only here does the judge show the test what your code changed in its arguments
def test_input_is_not_mutated() -> None:
    items = [Instruction("retrieved", "write", "allow"), Instruction("system", "write", "deny")]
    snapshot = copy.deepcopy(items)  # its own objects: a change in place shows
    resolve(items)
    explain(items)
    assert items == snapshot


def test_unknown_source_fails_closed() -> None:
    items = [Instruction("system", "write", "deny"), Instruction("admin", "write", "allow")]
    with pytest.raises(ValueError, match=r"unknown source 'admin'") as caught:
        resolve(items)
    words = re.findall(r"\w+", str(caught.value))
    for allowed in SOURCES_BY_RANK:
        assert allowed in words, f"the message must name every valid source as a word: {caught.value}"


def test_unknown_source_fails_even_without_a_conflict() -> None:
    with pytest.raises(ValueError, match=r"unknown source 'plugin'"):
        resolve([Instruction("plugin", "goal", "anything")])


def test_explain_names_the_winner_and_the_reason() -> None:
    system = Instruction("system", "write", "deny")
    user_first = Instruction("user", "goal", "add tests")
    user_later = Instruction("user", "goal", "skip tests")
    retrieved = Instruction("retrieved", "write", "allow")
    winners, rejections = explain([retrieved, user_first, system, user_later])
    assert winners == {"write": system, "goal": user_first}
    assert [(r.instruction, r.winner, r.reason) for r in rejections] == [
        (user_later, user_first, "same_rank_later"),
        (retrieved, system, "lower_rank"),
    ]


def test_empty_input_gives_an_empty_result() -> None:
    assert resolve([]) == ({}, [])


def test_instructions_are_immutable() -> None:
    item = Instruction("system", "write", "deny")
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.value = "allow"  # type: ignore[misc]
