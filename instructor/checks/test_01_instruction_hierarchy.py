"""Instructor checks, stage 01 — kept out of the learner bundle (``instructor/`` is not shipped).

They test the contract of ``forge/instructions.py`` with inputs the learner has not seen: many
random instruction sets against an independent oracle, ``explain`` agreeing with ``resolve``,
exact duplicates, and every order of all four ranks. Graded feedback shows their names and
outcomes only.
How many random cases each check draws, and why, is said where the count is set (below the imports).
"""

from __future__ import annotations

import itertools
import random

from forge.instructions import Instruction, explain, resolve
from forgelab.judge.remote import Call, each

# How many random cases: the fewest (a round number, at least 50) that is four times the case at which the last of the
# course's known-wrong versions of this stage fails (its fault lab's variant and every mutant of mutants.toml that the
# check catches at all), and never more than before; each call crosses the sandbox's boundary, and the checks are most
# of a submission's grading time. Measured: the last one fails at case 12 of the random sets, at case 7 of the
# explained ones (first 400 and 200).
RANDOM_SETS = 50
EXPLAINED_SETS = 50

RANKS = {"system": 3, "developer": 2, "user": 1, "retrieved": 0}


def oracle(items: list[Instruction]) -> tuple[dict[str, str], list[Instruction]]:
    """The contract, written independently: per key the highest rank wins, then the earliest."""
    winners: dict[str, int] = {}
    for index, item in enumerate(items):
        best = winners.get(item.key)
        if best is None or RANKS[item.source] > RANKS[items[best].source]:
            winners[item.key] = index
    accepted = {key: items[index].value for key, index in winners.items()}
    losers = [i for i in range(len(items)) if winners[items[i].key] != i]
    losers.sort(key=lambda i: (-RANKS[items[i].source], i))
    return accepted, [items[i] for i in losers]


def random_sets(seed: int, count: int) -> list[list[Instruction]]:
    rng = random.Random(seed)
    sets = []
    for _ in range(count):
        size = rng.randint(0, 9)
        sets.append([Instruction(rng.choice(list(RANKS)), rng.choice(["write", "tone", "goal"]),
                                 rng.choice(["a", "b", "c", "d"])) for _ in range(size)])
    return sets


def test_random_instruction_sets_match_the_contract() -> None:
    sets = random_sets(7101, RANDOM_SETS)
    for items, (accepted, rejected) in zip(sets, each(resolve, [Call(list(items)) for items in sets])):
        expected_accepted, expected_rejected = oracle(items)
        assert accepted == expected_accepted
        assert rejected == expected_rejected


def test_explain_agrees_with_resolve() -> None:
    sets = random_sets(7102, EXPLAINED_SETS)
    resolved = each(resolve, [Call(list(items)) for items in sets])
    explained = each(explain, [Call(list(items)) for items in sets])
    for (accepted, rejected), (winners, rejections) in zip(resolved, explained):
        assert {key: item.value for key, item in winners.items()} == accepted
        assert [r.instruction for r in rejections] == rejected
        for rejection in rejections:
            assert winners[rejection.instruction.key] == rejection.winner
            same = RANKS[rejection.winner.source] == RANKS[rejection.instruction.source]
            assert rejection.reason == ("same_rank_later" if same else "lower_rank")


def test_exact_duplicate_is_rejected_once_as_same_rank_later() -> None:
    first = Instruction("user", "tone", "brief")
    second = Instruction("user", "tone", "brief")
    accepted, rejected = resolve([first, second])
    assert accepted == {"tone": "brief"}
    assert len(rejected) == 1
    _, rejections = explain([first, second])
    assert [r.reason for r in rejections] == ["same_rank_later"]


def test_all_four_ranks_on_one_key_in_every_order() -> None:
    items = [Instruction(source, "write", source) for source in RANKS]
    for accepted, rejected in each(resolve, [Call(list(order)) for order in itertools.permutations(items)]):
        assert accepted == {"write": "system"}
        assert [item.source for item in rejected] == ["developer", "user", "retrieved"]
