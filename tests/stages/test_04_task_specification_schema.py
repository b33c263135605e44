"""Stage 04 — strict task specification.

Run these with ``forgelab check 04`` (add ``--target solution`` to see the reference pass).
"""

from __future__ import annotations

import copy

import pytest

from forge.task_spec import TaskSpec

VALID = {
    "goal": "add a search box to the product list",
    "acceptance": ["the list filters as you type", "npm test passes"],
    "write_allowed": False,
}


def payload(**changes: object) -> dict[str, object]:
    data: dict[str, object] = copy.deepcopy(VALID)
    data.update(changes)
    return data


def without(field: str) -> dict[str, object]:
    data = payload()
    del data[field]
    return data


def test_write_permission_must_be_explicit() -> None:
    with pytest.raises(ValueError, match=r"\bwrite_allowed must be explicit\b"):
        TaskSpec.parse({"goal": "add tests", "acceptance": ["pytest passes"]})


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"unknown fields: legacy_mode, shell") as caught:
        TaskSpec.parse(payload(shell="rm -rf build", legacy_mode=True))
    assert "priority" not in str(caught.value)


def test_unknown_field_names_are_sorted_and_complete() -> None:
    data = payload(zeta=1, alpha=2, mid=3)
    with pytest.raises(ValueError, match=r"unknown fields: alpha, mid, zeta"):
        TaskSpec.parse(data)


def test_unknown_fields_are_reported_before_a_missing_permission() -> None:
    data = without("write_allowed")
    data["shell"] = "rm -rf build"
    with pytest.raises(ValueError, match=r"unknown fields: shell"):
        TaskSpec.parse(data)


def test_valid_payload_is_parsed() -> None:
    spec = TaskSpec.parse(
        payload(
            inputs=["src/components/ProductList.tsx"],
            outputs=["src/components/SearchBox.tsx", "src/components/SearchBox.test.tsx"],
            write_allowed=True,
        )
    )
    assert spec.goal == "add a search box to the product list"
    assert list(spec.inputs) == ["src/components/ProductList.tsx"]
    assert list(spec.outputs) == ["src/components/SearchBox.tsx", "src/components/SearchBox.test.tsx"]
    assert list(spec.acceptance) == ["the list filters as you type", "npm test passes"]
    assert spec.write_allowed is True


def test_explicit_false_is_kept() -> None:
    assert TaskSpec.parse(payload(write_allowed=False)).write_allowed is False


def test_inputs_and_outputs_default_to_empty() -> None:
    spec = TaskSpec.parse(payload())
    assert list(spec.inputs) == []
    assert list(spec.outputs) == []


@pytest.mark.parametrize("value", ["false", "true", "False", 0, 1, None, [], "no"])
def test_write_allowed_must_be_a_real_boolean(value: object) -> None:
    with pytest.raises(ValueError, match=r"write_allowed"):
        TaskSpec.parse(payload(write_allowed=value))


@pytest.mark.parametrize("value", ["", "   ", "\n\t", None, 42, ["add tests"]])
def test_goal_must_be_a_non_blank_string(value: object) -> None:
    with pytest.raises(ValueError, match=r"goal"):
        TaskSpec.parse(payload(goal=value))


def test_goal_is_required() -> None:
    with pytest.raises(ValueError, match=r"goal"):
        TaskSpec.parse(without("goal"))


def test_acceptance_is_required_and_not_empty() -> None:
    with pytest.raises(ValueError, match=r"acceptance"):
        TaskSpec.parse(without("acceptance"))
    with pytest.raises(ValueError, match=r"acceptance"):
        TaskSpec.parse(payload(acceptance=[]))


@pytest.mark.parametrize("value", ["npm test passes", "tested"])
def test_bare_string_acceptance_is_rejected_not_split(value: str) -> None:
    # split into characters, "tested" would look like six non-blank criteria
    with pytest.raises(ValueError, match=r"acceptance"):
        TaskSpec.parse(payload(acceptance=value))


def test_blank_acceptance_criterion_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"acceptance"):
        TaskSpec.parse(payload(acceptance=["npm test passes", "   "]))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("acceptance", ["npm test passes", 3]),
        ("inputs", [None]),
        ("outputs", [b"SearchBox.tsx"]),
        ("inputs", "src/components/ProductList.tsx"),
        ("outputs", {"SearchBox.tsx"}),
        ("inputs", None),
    ],
)
def test_lists_must_hold_strings(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        TaskSpec.parse(payload(**{field: value}))


def test_field_problems_are_reported_together_in_sorted_order() -> None:
    with pytest.raises(ValueError) as caught:
        TaskSpec.parse(payload(write_allowed="false", goal="  ", acceptance=[]))
    message = str(caught.value)
    positions = [message.find(field) for field in ("acceptance", "goal", "write_allowed")]
    assert -1 not in positions, f"every problem must be named: {message}"
    assert positions == sorted(positions), f"problems must be listed in sorted order: {message}"
    assert "errors.pydantic.dev" not in message, "the message must be written for a person, not a raw ValidationError"


def test_each_problem_is_one_plain_entry_with_the_value_received() -> None:
    # parse hands a ValidationError to the given `describe`: one `field: problem` entry per issue,
    # sorted, in plain words, each followed by the value the model actually sent
    with pytest.raises(ValueError) as caught:
        TaskSpec.parse(payload(goal="  ", acceptance=["npm test passes", 3], write_allowed="false"))
    message = str(caught.value)
    assert message.startswith("invalid task spec: "), message
    assert message.removeprefix("invalid task spec: ").split("; ") == [
        "acceptance[1]: must be a string, got 3",
        "goal: must not be blank, got '  '",
        "write_allowed: must be true or false (a real boolean, not a string or a number), got 'false'",
    ]
    # a missing field has no value to show
    with pytest.raises(ValueError) as caught:
        TaskSpec.parse(without("goal"))
    assert str(caught.value) == "invalid task spec: goal: is required"


@pytest.mark.parametrize("value", [["goal", "add tests"], "goal: add tests", None, 42])
def test_payload_must_be_an_object(value: object) -> None:
    with pytest.raises(ValueError, match=r"object"):
        TaskSpec.parse(value)  # type: ignore[arg-type]


@pytest.mark.watch_arguments  # only here does the judge show the test what your code changed in its arguments
def test_payload_is_not_mutated() -> None:
    data = payload(inputs=["src/components/ProductList.tsx"])
    snapshot = copy.deepcopy(data)
    TaskSpec.parse(data)
    assert data == snapshot
    assert type(data["inputs"]) is list


def test_parsed_spec_is_immutable() -> None:
    spec = TaskSpec.parse(payload(inputs=["src/components/ProductList.tsx"]))
    with pytest.raises((TypeError, ValueError, AttributeError)):
        spec.write_allowed = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        spec.acceptance.append("anything goes")  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        spec.inputs.append("/etc/passwd")  # type: ignore[attr-defined]
    assert spec.write_allowed is False


def test_direct_construction_is_just_as_strict() -> None:
    fields = {"goal": "add tests", "acceptance": ["npm test passes"]}
    with pytest.raises(ValueError):
        TaskSpec(**fields)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        TaskSpec(**fields, write_allowed="false")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        TaskSpec(**fields, write_allowed=False, shell="rm -rf build")  # type: ignore[arg-type, call-arg]
    assert TaskSpec(**fields, write_allowed=False).write_allowed is False  # type: ignore[arg-type]
