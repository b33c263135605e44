"""Instructor checks, stage 10 — kept out of the learner bundle (``instructor/`` is not shipped).

Many random segment sets and budgets (several evidence and dialogue segments, up to three memories,
empty texts, exact fits) against an independent oracle of the contract, with the default estimate
and with an injected tokenizer that also prices the notice; random reserves and output limits for
``input_budget``; the safety margin over many windows; and validation that comes before any
placing. Graded feedback shows their names and outcomes only.
How many random cases each check draws, and why, is said where the count is set (below the imports).
"""

from __future__ import annotations

import random

import pytest

from forge.prompt_assembly import (MEMORY_NOTICE, PromptBudgetError, Segment, assemble, estimate_tokens, input_budget,
                                   safety_margin_for)
from forgelab.judge.remote import Call, each

# How many random cases: the fewest (a round number, at least 50) that is four times the case at which the last of the
# course's known-wrong versions of this stage fails (its fault lab's variant and every mutant of mutants.toml that the
# check catches at all), and never more than before; each call crosses the sandbox's boundary, and the checks are most
# of a submission's grading time. Measured: the last one fails at set 58 of the random sets (first 400) and at set 140
# with the injected tokenizer (which keeps its 300).
SEGMENT_SETS = 250
TOKENIZED_SETS = 300

KINDS = ("system", "tools", "policy", "memory", "evidence", "dialogue", "user")
MUST = {"system", "tools", "policy", "user"}
WORDS = ("add", "search", "box", "，", "测试", "v2.1", "list", "—", "ProductList.tsx", "green")


def oracle(segments: list[Segment], budget: int, count) -> tuple | None:  # type: ignore[no-untyped-def]
    """The contract, written independently: (prompt, used, decisions), or None for PromptBudgetError."""
    size = {s.name: count(s.text) for s in segments}
    frame = sum(size[s.name] for s in segments if s.kind in MUST)
    memory = [s for s in segments if s.kind == "memory"]
    notice = count(MEMORY_NOTICE) if memory else 0
    if frame + notice > budget:
        return None
    room = budget - frame - notice
    taken = set()
    for kind in ("evidence", "dialogue"):
        for s in segments:
            if s.kind == kind and size[s.name] <= room:
                taken.add(s.name)
                room -= size[s.name]
    if sum(size[m.name] for m in memory) <= room + notice:
        taken.update(m.name for m in memory)
    rows, texts = [], []
    for kind in KINDS:
        for s in segments:
            if s.kind != kind:
                continue
            if kind in MUST or s.name in taken:
                rows.append((s.name, kind, size[s.name], True, "required" if kind in MUST else "included"))
                texts.append(s.text)
            else:
                rows.append((s.name, kind, size[s.name], False, "over_budget"))
                if kind == "memory" and s is memory[-1]:
                    rows.append(("memory-notice", "memory", notice, True, "notice"))
                    texts.append(MEMORY_NOTICE)
    used = sum(row[2] for row in rows if row[3])
    return "\n\n".join(texts), used, rows


def random_text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 9)))


def random_segments(rng: random.Random) -> list[Segment]:
    kinds = ["system", "user"]
    kinds += [kind for kind in ("tools", "policy") if rng.random() < 0.7]
    kinds += ["memory"] * rng.choice([0, 1, 1, 2, 3])
    kinds += ["evidence"] * rng.randint(0, 3) + ["dialogue"] * rng.randint(0, 3)
    rng.shuffle(kinds)
    return [Segment(f"{kind}-{n}", kind, random_text(rng)) for n, kind in enumerate(kinds)]


def as_tuple(assembly) -> tuple:  # type: ignore[no-untyped-def]
    rows = [(d.name, d.kind, d.tokens, d.included, d.reason) for d in assembly.decisions]
    return assembly.prompt, assembly.used_tokens, rows


def estimates(sets: list[list[Segment]]) -> dict[str, int]:
    """The learner's ``estimate_tokens`` (the default tokenizer, the learner's to write) of every text the oracle
    prices in ``sets``, asked for in one exchange."""
    texts = list(dict.fromkeys([MEMORY_NOTICE, *(s.text for segments in sets for s in segments)]))
    return dict(zip(texts, each(estimate_tokens, [Call(text) for text in texts])))


def check(cases: list[tuple[list[Segment], int]], count, injected=None) -> None:  # type: ignore[no-untyped-def]
    """``assemble`` of every case (with ``count_tokens=injected`` if given) against the oracle pricing with ``count``."""
    kwargs = {} if injected is None else {"count_tokens": injected}
    outcomes = each(assemble, [Call(list(segments), budget, **kwargs) for segments, budget in cases], errors=True)
    for (segments, budget), assembly in zip(cases, outcomes):
        expected = oracle(segments, budget, count)
        if expected is None:
            assert isinstance(assembly, PromptBudgetError), "a frame over the budget must raise PromptBudgetError"
            continue
        assert not isinstance(assembly, Exception), f"refused: {assembly!r}"
        assert as_tuple(assembly) == expected
        assert assembly.budget == budget and assembly.used_tokens <= budget


def test_random_segment_sets_match_the_contract() -> None:
    rng = random.Random(71001)
    drawn = [(random_segments(rng), rng.randint(-3, 45)) for _ in range(SEGMENT_SETS)]
    price = estimates([segments for segments, _ in drawn])
    cases = [(segments, max(0, sum(price[s.text] for s in segments if s.kind in MUST) + extra))
             for segments, extra in drawn]
    check(cases, price.__getitem__)


def test_random_segment_sets_with_an_injected_tokenizer() -> None:
    rng = random.Random(71002)
    characters = len  # prices the notice at 46, not at the estimate's 9; crosses as itself (no exchange per text)
    cases = []
    for _ in range(TOKENIZED_SETS):
        segments = random_segments(rng)
        frame = sum(len(s.text) for s in segments if s.kind in MUST)
        cases.append((segments, max(0, frame + rng.randint(-5, 120))))
    check(cases, characters, characters)


def test_every_budget_around_the_frame_is_placed_exactly() -> None:
    segments = [Segment("s", "system", "Be careful."), Segment("t", "tools", "read_file(path)"),
                Segment("p", "policy", "Writes need approval."), Segment("m", "memory", "Ana likes Go."),
                Segment("e1", "evidence", "a b c"), Segment("e2", "evidence", "d"), Segment("d1", "dialogue", "e f"),
                Segment("u", "user", "Add a search box.")]
    check([(segments, budget) for budget in range(0, 60)], estimates([segments]).__getitem__)


def test_empty_optional_texts_always_fit() -> None:
    segments = [Segment("s", "system", "Rules."), Segment("e", "evidence", ""), Segment("d", "dialogue", " "),
                Segment("u", "user", "Go.")]
    assembly = assemble(segments, estimate_tokens("Rules.") + estimate_tokens("Go."))
    assert [(d.name, d.reason) for d in assembly.decisions] == [("s", "required"), ("e", "included"),
                                                                ("d", "included"), ("u", "required")]


def test_random_reserves_match_the_budget_formula() -> None:
    rng = random.Random(71003)
    cases = []
    for _ in range(300):
        window, output, tools, margin = (rng.randint(-5, 5000) for _ in range(4))
        cases.append((window, output, tools, margin, rng.choice([None, rng.randint(-2, 3000)])))
    outcomes = each(input_budget, [Call(window, output, tools, margin, max_output=limit)
                                   for window, output, tools, margin, limit in cases], errors=True)
    for (window, output, tools, margin, limit), budget in zip(cases, outcomes):
        wrong = min(window, output, tools, margin) < 0 or output + tools + margin > window or \
            limit is not None and (limit < 0 or output > limit)
        if wrong:
            assert isinstance(budget, ValueError), "an impossible reserve must raise ValueError"
        else:
            assert budget == window - output - tools - margin


def test_the_safety_margin_over_many_windows() -> None:
    windows = [*range(0, 2_000), 204_000, 200_000, 128_000, 10**9 + 7]
    for window, margin in zip(windows, each(safety_margin_for, [Call(window) for window in windows])):
        assert window - margin == window * 3 // 4, window


@pytest.mark.parametrize("segments", [
    [Segment("s", "system", "x"), Segment("u", "user", "y"), Segment("odd", "System", "z")],
    [Segment("s", "system", "x"), Segment("u", "user", "y"), Segment("odd", "memory ", "z")],
    [Segment("s", "system", "x"), Segment("u", "user", "y"), Segment("u", "evidence", "z")],
    [Segment("s", "system", "x"), Segment("u", "user", "y"), Segment("u2", "user", "w")],
    [Segment("u", "user", "y"), *(Segment(f"m{n}", "memory", "a") for n in range(4)), Segment("s", "system", "x")],
    [Segment("u", "user", "y"), Segment("m", "memory", "a\nb\nc\nd"), Segment("s", "system", "x")],
    [Segment("u", "user", "y"), *(Segment(f"d{n}", "dialogue", "a") for n in range(4)), Segment("s", "system", "x")],
    [Segment("u", "user", "y"), Segment("t", "tools", "x")],
])
def test_invalid_segments_fail_before_anything_is_placed(segments: list[Segment]) -> None:
    for budget in (0, 1000):  # too small or plenty: the segments are refused either way, not the budget
        with pytest.raises(ValueError) as caught:
            assemble(segments, budget)
        assert not isinstance(caught.value, PromptBudgetError)
