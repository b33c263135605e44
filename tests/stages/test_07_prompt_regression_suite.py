"""Stage 07 — prompt regression suite.

Run these with ``forgelab check 07`` (add ``--target solution`` to see the reference pass).
"""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from forge.prompt_regression import (
    PromptVersion,
    RegressionCase,
    prompt_version_id,
    regression_report,
    run_suite,
)

READ_ONLY = RegressionCase("read-only", {"request": "inspect"}, frozenset({"goal", "write_allowed"}), False)
ADD_SEARCH = RegressionCase(
    "add-search",
    {"request": "add a search box to the product list, with tests"},
    frozenset({"goal", "acceptance", "write_allowed"}),
    True,
)


def test_permission_regression_is_reported() -> None:
    failures = run_suite([READ_ONLY], lambda payload: {"goal": "inspect", "write_allowed": True})
    assert failures == {"read-only": ["write permission changed"]}


def test_valid_structural_output_passes_without_exact_text_match() -> None:
    terse = {"goal": "add search box", "acceptance": ["filters list"], "write_allowed": True}
    wordy = {
        "goal": "Add a search field above the product list that filters it as the user types.",
        "acceptance": ["typing narrows the list", "clearing the field restores it", "unit tests cover both"],
        "write_allowed": True,
    }
    assert run_suite([ADD_SEARCH], lambda payload: terse) == {}
    assert run_suite([ADD_SEARCH], lambda payload: wordy) == {}


def test_missing_fields_are_sorted_and_joined() -> None:
    case = RegressionCase("spec", {}, frozenset({"goal", "files", "acceptance", "write_allowed"}), False)
    failures = run_suite([case], lambda payload: {"goal": "add tests"})
    assert failures == {"spec": ["missing:acceptance,files,write_allowed", "write permission changed"]}
    many = RegressionCase("many", {}, frozenset("hgfedcba"), False)
    assert run_suite([many], lambda payload: {"write_allowed": False}) == {"many": ["missing:a,b,c,d,e,f,g,h"]}


@pytest.mark.parametrize("value", ["false", "False", 0, None, [], "no"])
def test_only_the_boolean_false_keeps_a_read_only_case(value: object) -> None:
    failures = run_suite([READ_ONLY], lambda payload: {"goal": "inspect", "write_allowed": value})
    assert failures == {"read-only": ["write permission changed"]}


@pytest.mark.parametrize("value", ["true", 1, "yes"])
def test_only_the_boolean_true_keeps_a_write_case(value: object) -> None:
    failures = run_suite([ADD_SEARCH], lambda payload: {"goal": "g", "acceptance": ["a"], "write_allowed": value})
    assert failures == {"add-search": ["write permission changed"]}


def test_revoking_write_permission_is_also_a_change() -> None:
    failures = run_suite([ADD_SEARCH], lambda payload: {"goal": "g", "acceptance": ["a"], "write_allowed": False})
    assert failures == {"add-search": ["write permission changed"]}


def test_a_missing_permission_is_a_change_even_when_not_required() -> None:
    case = RegressionCase("goal-only", {}, frozenset({"goal"}), False)
    assert run_suite([case], lambda payload: {"goal": "inspect"}) == {"goal-only": ["write permission changed"]}


def test_extra_fields_do_not_fail_a_case() -> None:
    output = {"goal": "inspect", "write_allowed": False, "notes": "anything", "confidence": 0.4}
    assert run_suite([READ_ONLY], lambda payload: output) == {}


def test_only_failing_cases_are_reported_in_case_order() -> None:
    cases = [
        RegressionCase("c", {"n": 1}, frozenset({"goal"}), False),
        RegressionCase("a", {"n": 2}, frozenset({"goal"}), False),
        RegressionCase("b", {"n": 3}, frozenset({"goal"}), False),
    ]
    outputs = {1: {"write_allowed": False}, 2: {"goal": "ok", "write_allowed": False}, 3: {"goal": "ok"}}
    failures = run_suite(cases, lambda payload: outputs[payload["n"]])
    assert failures == {"c": ["missing:goal"], "b": ["write permission changed"]}
    assert list(failures) == ["c", "b"]


def test_each_case_is_invoked_once_with_its_payload() -> None:
    calls: list[dict[str, object]] = []

    def invoke(payload: dict[str, object]) -> dict[str, object]:
        calls.append(payload)
        return {"goal": "g", "acceptance": [], "write_allowed": payload["request"] != "inspect"}

    assert run_suite([READ_ONLY, ADD_SEARCH], invoke) == {}
    assert calls == [READ_ONLY.payload, ADD_SEARCH.payload]


def test_an_invoke_error_is_reported_and_the_suite_goes_on() -> None:
    def invoke(payload: dict[str, object]) -> dict[str, object]:
        if payload["request"] == "inspect":
            raise ValueError("model output is not a JSON object")
        return {"goal": "g", "acceptance": ["a"], "write_allowed": False}

    failures = run_suite([READ_ONLY, ADD_SEARCH], invoke)
    assert failures == {
        "read-only": ["error: ValueError: model output is not a JSON object"],
        "add-search": ["write permission changed"],
    }


@pytest.mark.parametrize(("output", "kind"), [('{"goal": "g"}', "str"), ([], "list"), (None, "NoneType")])
def test_an_output_that_is_not_a_dict_is_reported(output: object, kind: str) -> None:
    failures = run_suite([READ_ONLY, ADD_SEARCH], lambda payload: output)
    assert failures == {
        "read-only": [f"error: output is {kind}, expected a dict"],
        "add-search": [f"error: output is {kind}, expected a dict"],
    }


@pytest.mark.watch_arguments  # only here does the judge show the test what your code changed in its arguments
def test_invoke_cannot_change_the_fixed_cases() -> None:
    case = RegressionCase("nested", {"request": "inspect", "files": ["a.ts"]}, frozenset({"goal"}), False)

    def invoke(payload: dict[str, object]) -> dict[str, object]:
        seen.append(list(payload["files"]))  # type: ignore[call-overload]
        payload["files"].append("b.ts")  # type: ignore[attr-defined]
        payload["request"] = "write everything"
        return {"goal": "g", "write_allowed": False}

    seen: list[list[str]] = []
    run_suite([case], invoke)
    run_suite([case], invoke)
    assert seen == [["a.ts"], ["a.ts"]]
    assert case.payload == {"request": "inspect", "files": ["a.ts"]}


def test_duplicate_case_ids_fail_before_anything_runs() -> None:
    calls: list[object] = []
    cases = [READ_ONLY, ADD_SEARCH, READ_ONLY]
    with pytest.raises(ValueError, match=r"duplicate case id 'read-only'"):
        run_suite(cases, lambda payload: calls.append(payload))
    assert calls == []


def test_an_empty_suite_has_no_failures() -> None:
    assert run_suite([], lambda payload: pytest.fail("invoke must not be called")) == {}


@pytest.mark.parametrize(
    ("fields", "write", "message"),
    [
        ({"goal"}, False, "required_fields must be a frozenset"),
        (frozenset({"goal"}), "false", "write_allowed must be True or False"),
        (frozenset({"goal"}), 0, "write_allowed must be True or False"),
    ],
)
def test_case_definitions_are_strict(fields: object, write: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RegressionCase("bad", {}, fields, write)  # type: ignore[arg-type]


def test_cases_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        READ_ONLY.write_allowed = True  # type: ignore[misc]


def test_prompt_version_id_is_a_hash_of_the_text_only() -> None:
    body = "Extract a task specification as JSON with goal, acceptance and write_allowed."
    expected = "p-" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:12]
    assert prompt_version_id(body) == expected
    assert PromptVersion("v1", body).id == expected
    assert PromptVersion("v1-renamed", body).id == expected
    assert PromptVersion("v1", body + " Be concise.").id != expected
    assert PromptVersion("v1", body.replace("JSON", "json")).id != expected


def test_report_names_the_version_that_regressed() -> None:
    careful = PromptVersion("v1", "Never allow writes unless the request asks for a change.")
    eager = PromptVersion("v2", "Always allow writes; be helpful.")

    def model(prompt: str, payload: dict[str, object]) -> dict[str, object]:
        wants_change = payload["request"] != "inspect"
        return {"goal": "g", "acceptance": ["a"], "write_allowed": wants_change or prompt.startswith("Always")}

    assert regression_report(careful, [READ_ONLY, ADD_SEARCH], model) == {
        "prompt_version": careful.id,
        "label": "v1",
        "cases": 2,
        "failures": {},
    }
    assert regression_report(eager, [READ_ONLY, ADD_SEARCH], model) == {
        "prompt_version": eager.id,
        "label": "v2",
        "cases": 2,
        "failures": {"read-only": ["write permission changed"]},
    }


def test_report_runs_every_case_against_its_own_prompt() -> None:
    version = PromptVersion("v3", "prompt body")
    seen: list[tuple[str, object]] = []

    def model(prompt: str, payload: dict[str, object]) -> dict[str, object]:
        seen.append((prompt, payload["request"]))
        return {"goal": "g", "acceptance": ["a"], "write_allowed": payload["request"] != "inspect"}

    regression_report(version, [READ_ONLY, ADD_SEARCH], model)
    assert seen == [("prompt body", "inspect"), ("prompt body", ADD_SEARCH.payload["request"])]
