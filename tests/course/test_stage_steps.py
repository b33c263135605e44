"""A guided exercise split into steps, each with its own tests and hints (issue 31: stage 11 asked for five
functions at once). A stage whose steps name their tests (stage 11) names every required test in exactly one
step, in the order of ``required_tests`` (the results table's order), the same in both editions; a step that
names its hints ("Hints 4–6", "提示 4–6") owns those rungs of the ladder, the steps' rungs follow one another
from 1 to the last hint, and every test of a step is helped only by that step's rungs ([hint_rungs])."""

from __future__ import annotations

import re

import pytest

from forgelab.core.registry import Stage

TEST_NAME = re.compile(r"`(test_\w+)`")
HINTS = {"en": re.compile(r"Hints (\d+)–(\d+)\."), "zh": re.compile(r"提示 (\d+)–(\d+)。")}


def stepped(course) -> list[Stage]:  # type: ignore[no-untyped-def]
    return [stage for stage in course.stages if any(TEST_NAME.search(step) for step in stage.text("en").steps)]


def test_stage_11_names_the_tests_of_each_step(course) -> None:
    assert "11" in {stage.number for stage in stepped(course)}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_each_step_has_its_own_tests_and_hints(course, language: str) -> None:
    for stage in stepped(course):
        steps = stage.text(language).steps
        tests = [TEST_NAME.findall(step) for step in steps]
        assert tests == [TEST_NAME.findall(step) for step in stage.text("en").steps], f"stage {stage.number}"
        assert [name for names in tests for name in names] == list(stage.required_tests), \
            f"stage {stage.number} ({language}): every required test once, in the steps' order"
        expected_first = 1
        for step, names in zip(steps, tests):
            found = HINTS[language].search(step)
            if found is None:
                continue  # a step for the whole module: its tests touch every function, so every rung may help
            first, last = int(found[1]), int(found[2])
            assert first == expected_first, f"stage {stage.number} ({language}): hints {first}–{last} leave a gap"
            expected_first = last + 1
            for name in names:
                rungs = set(stage.hint_rungs.get(name, ()))
                assert rungs <= set(range(first, last + 1)), f"{name}: rungs {sorted(rungs)} are not its step's"
        assert expected_first == len(stage.text(language).hints) + 1, f"stage {stage.number}: a hint has no step"
