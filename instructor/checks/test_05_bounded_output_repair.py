"""Instructor checks, stage 05 — kept out of the learner bundle (``instructor/`` is not shipped).

Random JSON objects, wrapped in a fence and given trailing commas at random places, must come
back exactly; commas inside strings that look like trailing commas must survive; the same objects
cut short or wrapped in prose must be refused with ``ValueError``, never turned into an object.
"""

from __future__ import annotations

import json
import random


from forge.output_repair import parse_json_object, repair_json_text
from forgelab.judge.remote import Call, each


def random_value(rng: random.Random, depth: int) -> object:
    kind = rng.choice(["str", "int", "bool", "null", "list", "dict"] if depth < 3 else ["str", "int", "bool", "null"])
    if kind == "str":
        return rng.choice(["plain", "a, }", "b,]", "quote \" inside", "comma,", ""])
    if kind == "int":
        return rng.randint(-50, 50)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {f"k{n}": random_value(rng, depth + 1) for n in range(rng.randint(0, 3))}


def with_trailing_commas(text: str, rng: random.Random) -> str:
    """Add a comma before some closing brackets that follow a value (outside strings)."""
    out, in_string, escaped, previous = [], False, False, ""
    for char in text:
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                previous = char
            continue
        if char in "}]" and previous not in ("{", "[", "") and rng.random() < 0.6:
            out.append(",")
        out.append(char)
        if char == '"':
            in_string = True
        if not char.isspace():
            previous = char
    return "".join(out)


def test_random_objects_survive_fences_and_trailing_commas() -> None:
    rng = random.Random(7501)
    cases = []
    for _ in range(300):
        value = {f"field{n}": random_value(rng, 1) for n in range(rng.randint(1, 4))}
        text = with_trailing_commas(json.dumps(value, indent=rng.choice([None, 2])), rng)
        if rng.random() < 0.5:
            marker = rng.choice(["```", "~~~"])
            text = f"{marker}{rng.choice(['', 'json'])}\n{text}\n{marker}"
        cases.append((text, value))
    for (_text, value), parsed in zip(cases, each(parse_json_object, [Call(text) for text, _ in cases])):
        assert parsed == value


def test_comma_lookalikes_inside_strings_are_kept() -> None:
    text = '{"a": "x, }", "b": ["y, ]", "z,"],}'
    assert parse_json_object(text) == {"a": "x, }", "b": ["y, ]", "z,"]}
    assert repair_json_text(text).applied == ("trailing_comma",)


def test_random_objects_cut_short_or_wrapped_in_prose_are_refused() -> None:
    rng = random.Random(7502)
    damaged = []
    for _ in range(300):
        text = json.dumps({f"field{n}": random_value(rng, 1) for n in range(rng.randint(1, 4))})
        damaged.append(rng.choice([text[:rng.randint(1, len(text) - 1)],  # a proper prefix of an object never parses
                                   f"Sure, here is the task: {text}", f"{text} Let me know if you need more."]))
    for text, outcome in zip(damaged, each(parse_json_object, [Call(text) for text in damaged], errors=True)):
        assert isinstance(outcome, ValueError), f"{text!r} must be refused with ValueError"
