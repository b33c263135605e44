"""Regression test for fault lab 03 (few-shot-selection): the course's example.

It pins the lab's defect: it fails on the broken copy of forge/fewshot.py and passes on the reference. It is
the stage test that shows the defect (test_examples_match_scenario_and_schema_version) with what it needs from
tests/stages/test_03_few_shot_selection.py. Never shipped to learners: it names the defect.
"""

from __future__ import annotations

from forge.fewshot import Example, select_examples


def ex(id: str, scenario: str = "software", version: str = "v2", *tags: str) -> Example:
    return Example(id, scenario, version, frozenset(tags))


def ids(examples: list[Example]) -> list[str]:
    return [example.id for example in examples]


def test_examples_match_scenario_and_schema_version() -> None:
    items = [
        ex("old", "software", "v1", "ui"),
        ex("music", "music", "v2", "ui"),
        ex("right", "software", "v2", "ui"),
    ]
    assert ids(select_examples(items, "software", "v2", {"ui"})) == ["right"]
