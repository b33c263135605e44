"""Instructor checks, stage 04 — kept out of the learner bundle (``instructor/`` is not shipped).

Random payloads against an independent oracle of what must be accepted and rejected, and
values that a lenient parser would coerce.
"""

from __future__ import annotations

import random

import pytest

from forge.task_spec import TaskSpec
from forgelab.judge.remote import Call, each

FIELDS = ("goal", "inputs", "outputs", "acceptance", "write_allowed")
GOOD = {"goal": "add a search box", "inputs": ["product list"], "outputs": ["component"],
        "acceptance": ["typing filters the list"], "write_allowed": False}
BAD_VALUES = {
    "goal": ["", "   ", 3, None, ["a"]],
    "inputs": ["a string", [1], None, {"a": 1}],
    "outputs": ["a string", [None], 7],
    "acceptance": [[], "typing filters", [" "], [2], None],
    "write_allowed": ["false", "true", 0, 1, None, "no"],
}


def acceptable(payload: dict) -> bool:
    """The contract, written independently."""
    if set(payload) - set(FIELDS) or "write_allowed" not in payload:
        return False
    goal, acceptance = payload.get("goal"), payload.get("acceptance")
    if not isinstance(goal, str) or not goal.strip():
        return False
    if not isinstance(acceptance, list) or not acceptance:
        return False
    if not all(isinstance(item, str) and item.strip() for item in acceptance):
        return False
    for name in ("inputs", "outputs"):
        value = payload.get(name, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return False
    return type(payload["write_allowed"]) is bool


def test_random_payloads_are_accepted_or_rejected_as_the_contract_says() -> None:
    rng = random.Random(7401)
    payloads = []
    for _ in range(300):
        payload = {key: value for key, value in GOOD.items() if rng.random() < 0.9}
        for key in list(payload):
            if rng.random() < 0.2:
                payload[key] = rng.choice(BAD_VALUES[key])
        if rng.random() < 0.15:
            payload[rng.choice(["priority", "owner", "Goal"])] = "x"
        payloads.append(payload)
    for payload, spec in zip(payloads, each(TaskSpec.parse, [Call(dict(p)) for p in payloads], errors=True)):
        if acceptable(payload):
            assert not isinstance(spec, Exception), f"a valid payload was refused: {spec!r}"
            assert spec.goal == payload["goal"]
            assert spec.write_allowed is payload["write_allowed"]
            assert tuple(spec.acceptance) == tuple(payload["acceptance"])
        else:
            assert isinstance(spec, ValueError), "an invalid payload must raise ValueError"


@pytest.mark.parametrize("value", [1.0, 0.0, "False", b"true"])
def test_write_permission_is_never_coerced(value: object) -> None:
    with pytest.raises(ValueError):
        TaskSpec.parse({**GOOD, "write_allowed": value})
