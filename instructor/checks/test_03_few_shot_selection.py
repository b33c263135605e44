"""Instructor checks, stage 03 — kept out of the learner bundle (``instructor/`` is not shipped).

Random libraries against an independent oracle of the contract, and task tags given as a
one-shot iterator (the signature accepts any ``Iterable[str]``).
How many random cases each check draws, and why, is said where the count is set (below the imports).
"""

from __future__ import annotations

import random

from forge.fewshot import Example, select_examples

# How many random cases: the fewest (a round number, at least 50) that is four times the case at which the last of the
# course's known-wrong versions of this stage fails (its fault lab's variant and every mutant of mutants.toml that the
# check catches at all), and never more than before; each call crosses the sandbox's boundary, and the checks are most
# of a submission's grading time. Measured: the last one fails at case 6 (first 400).
LIBRARIES = 50

TAGS = ("ui", "form", "search", "tests", "release", "brief")


def oracle(items: list[Example], scenario: str, version: str, tags: set[str], limit: int) -> list[str]:
    eligible = [e for e in items if e.scenario == scenario and e.schema_version == version]
    eligible.sort(key=lambda e: (-len(e.tags & tags), e.id))
    return [e.id for e in eligible[:limit]]


def random_library(rng: random.Random) -> list[Example]:
    ids = rng.sample([f"ex-{n:02d}" for n in range(30)], rng.randint(0, 12))
    return [Example(i, rng.choice(["software", "office", "music"]), rng.choice(["v1", "v2"]),
                    frozenset(rng.sample(TAGS, rng.randint(0, 4)))) for i in ids]


def test_random_libraries_match_the_contract() -> None:
    rng = random.Random(7301)
    for _ in range(LIBRARIES):
        items = random_library(rng)
        tags = set(rng.sample(TAGS, rng.randint(0, 3)))
        limit = rng.randint(0, 5)
        chosen = select_examples(list(items), "software", "v2", set(tags), limit=limit)
        assert [e.id for e in chosen] == oracle(items, "software", "v2", tags, limit)


def test_task_tags_from_a_one_shot_iterator() -> None:
    items = [Example("a-plain", "software", "v2", frozenset()),
             Example("b-one", "software", "v2", frozenset({"ui"})),
             Example("c-two", "software", "v2", frozenset({"ui", "form"}))]
    chosen = select_examples(items, "software", "v2", iter(["ui", "form"]), limit=3)
    assert [e.id for e in chosen] == ["c-two", "b-one", "a-plain"]
