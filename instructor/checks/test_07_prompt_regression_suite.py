"""Instructor checks, stage 07 — kept out of the learner bundle (``instructor/`` is not shipped).

Many random suites against an independent oracle of the contract (outputs with look-alike
permissions, missing fields, broken calls of every exception type, outputs that are not dicts),
payloads nested deeper than the stage tests go, strict case definitions with other containers,
and version ids of Unicode prompt texts. Graded feedback shows their names and outcomes only.
How many random cases each check draws, and why, is said where the count is set (below the imports).
"""

from __future__ import annotations

import hashlib
import random
from collections import OrderedDict

import pytest

from forge.prompt_regression import PromptVersion, RegressionCase, prompt_version_id, regression_report, run_suite
from forgelab.judge.remote import Call, each

# How many random cases: the fewest (a round number, at least 50) that is four times the case at which the last of the
# course's known-wrong versions of this stage fails (its fault lab's variant and every mutant of mutants.toml that the
# check catches at all), and never more than before; each call crosses the sandbox's boundary, and the checks are most
# of a submission's grading time. Measured: the last one ('passing-cases-reported-too') fails at suite 24 (first 400).
SUITES = 100

FIELDS = ("goal", "inputs", "outputs", "acceptance", "write_allowed", "files", "owner")
# values an output may carry for write_allowed; only the two booleans themselves are permissions
PERMISSIONS = (True, False, "true", "false", "True", 0, 1, 0.0, None, [], "no")
ERRORS = (ValueError, KeyError, RuntimeError, TypeError, ZeroDivisionError, LookupError)
NOT_DICTS = ('{"goal": "g"}', ["goal"], None, ("goal", "g"), 0, b"{}")
ABSENT = object()


def oracle(cases: list[RegressionCase], outcomes: dict[str, object]) -> dict[str, list[str]]:
    """The contract, written independently; an outcome is an output or an exception to raise."""
    report: dict[str, list[str]] = {}
    for case in cases:
        outcome = outcomes[case.id]
        if isinstance(outcome, BaseException):
            report[case.id] = [f"error: {type(outcome).__name__}: {outcome}"]
            continue
        if not isinstance(outcome, dict):
            report[case.id] = [f"error: output is {type(outcome).__name__}, expected a dict"]
            continue
        problems = []
        missing = [name for name in sorted(case.required_fields) if name not in outcome]
        if missing:
            problems.append("missing:" + ",".join(missing))
        value = outcome.get("write_allowed", ABSENT)
        if not (value is True and case.write_allowed is True or value is False and case.write_allowed is False):
            problems.append("write permission changed")
        if problems:
            report[case.id] = problems
    return report


def random_suite(rng: random.Random) -> tuple[list[RegressionCase], dict[str, object]]:
    ids = rng.sample([f"case-{n:02d}" for n in range(30)], rng.randint(0, 7))
    cases, outcomes = [], {}
    for case_id in ids:
        required = frozenset(rng.sample(FIELDS, rng.randint(0, 5)))
        case = RegressionCase(case_id, {"request": case_id, "n": rng.randint(0, 9)}, required, rng.random() < 0.5)
        cases.append(case)
        roll = rng.random()
        if roll < 0.12:
            error = rng.choice(ERRORS)
            outcomes[case_id] = error(f"model call {case_id} failed")
        elif roll < 0.22:
            outcomes[case_id] = rng.choice(NOT_DICTS)
        else:
            output: dict[str, object] = {name: rng.choice(["x", None, [], ""]) for name in
                                         rng.sample(FIELDS, rng.randint(0, len(FIELDS)))}
            output.pop("write_allowed", None)
            if rng.random() < 0.8:
                output["write_allowed"] = rng.choice(PERMISSIONS)
            if rng.random() < 0.2:
                output = OrderedDict(output)
            outcomes[case_id] = output
    return cases, outcomes


def invoker(outcomes: dict[str, object], calls: list[str]):  # type: ignore[no-untyped-def]
    def invoke(payload: dict[str, object]) -> object:
        case_id = str(payload["request"])
        calls.append(case_id)
        outcome = outcomes[case_id]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return invoke


def test_random_suites_match_the_contract_in_case_order() -> None:
    rng = random.Random(7701)
    suites = [random_suite(rng) for _ in range(SUITES)]
    calls: list[list[str]] = [[] for _ in suites]
    reports = each(run_suite, [Call(list(cases), invoker(outcomes, called))
                               for (cases, outcomes), called in zip(suites, calls)])
    for (cases, outcomes), called, report in zip(suites, calls, reports):
        expected = oracle(cases, outcomes)
        assert report == expected
        assert list(report) == list(expected)
        assert called == [case.id for case in cases]


def test_present_fields_count_even_when_their_value_is_empty() -> None:
    case = RegressionCase("empty-values", {}, frozenset({"goal", "acceptance", "inputs"}), False)
    output = {"goal": "", "acceptance": [], "inputs": None, "write_allowed": False}
    assert run_suite([case], lambda payload: output) == {}
    nothing_required = RegressionCase("nothing", {}, frozenset(), True)
    assert run_suite([nothing_required], lambda payload: {"write_allowed": True}) == {}
    assert run_suite([nothing_required], lambda payload: {}) == {"nothing": ["write permission changed"]}


def test_nested_payloads_reach_every_run_unchanged() -> None:
    payload = {"request": "inspect", "context": {"files": [{"path": "a.ts", "tags": ["ui"]}]}, "depth": [[1, [2]]]}
    case = RegressionCase("deep", payload, frozenset({"goal"}), False)
    seen: list[str] = []

    def invoke(given: dict[str, object]) -> dict[str, object]:
        seen.append(repr(given))
        given["context"]["files"][0]["tags"].append("write")  # type: ignore[index]
        given["context"]["files"].append({"path": "b.ts"})  # type: ignore[index]
        given["depth"][0][1].append(3)  # type: ignore[index]
        return {"goal": "g", "write_allowed": False}

    for _ in range(3):
        assert run_suite([case], invoke) == {}
    assert seen == [repr(payload)] * 3
    assert case.payload == {"request": "inspect", "context": {"files": [{"path": "a.ts", "tags": ["ui"]}]},
                            "depth": [[1, [2]]]}


def test_every_exception_type_is_reported_and_the_suite_goes_on() -> None:
    cases = [RegressionCase(f"c{n}", {"n": n}, frozenset({"goal"}), False) for n in range(len(ERRORS) + 1)]

    def invoke(payload: dict[str, object]) -> dict[str, object]:
        n = int(payload["n"])  # type: ignore[call-overload]
        if n < len(ERRORS):
            raise ERRORS[n](f"broken call {n}")
        return {"goal": "g", "write_allowed": True}

    report = run_suite(cases, invoke)
    expected = {f"c{n}": [f"error: {error.__name__}: {error(f'broken call {n}')}"] for n, error in enumerate(ERRORS)}
    expected[f"c{len(ERRORS)}"] = ["write permission changed"]
    assert report == expected


@pytest.mark.parametrize("ids", [["a", "b", "a"], ["x", "x"], ["a", "b", "c", "b", "c"]])
def test_any_repeated_id_fails_before_a_call(ids: list[str]) -> None:
    cases = [RegressionCase(case_id, {"n": n}, frozenset(), False) for n, case_id in enumerate(ids)]
    calls: list[object] = []
    with pytest.raises(ValueError):
        run_suite(cases, lambda payload: calls.append(payload))
    assert calls == []


@pytest.mark.parametrize(("fields", "write"), [
    (set(), False), (["goal"], True), (("goal",), False), ({"goal": 1}, True), ("goal", False),
    (frozenset({"goal"}), 1), (frozenset({"goal"}), None), (frozenset({"goal"}), "True"), (frozenset(), 0.0),
])
def test_case_definitions_refuse_look_alike_types(fields: object, write: object) -> None:
    with pytest.raises(ValueError):
        RegressionCase("bad", {}, fields, write)  # type: ignore[arg-type]


def test_version_ids_are_sha256_prefixes_of_the_text_alone() -> None:
    rng = random.Random(7702)
    alphabet = "abc XYZ\n\t{}$é補測試🎵"
    texts, versions = [], []
    for _ in range(200):
        texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))))
        versions.append(PromptVersion(rng.choice(["v1", "v2", "", "draft"]), texts[-1]))
    ids = each(prompt_version_id, [Call(text) for text in texts])
    version_ids = each(PromptVersion.id.fget, [Call(version) for version in versions])
    seen: dict[str, str] = {}
    for text, made, of_version in zip(texts, ids, version_ids):
        expected = "p-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
        assert made == expected
        assert of_version == expected
        assert seen.setdefault(text, expected) == expected


def test_reports_of_random_versions_name_their_version_and_use_its_text() -> None:
    rng = random.Random(7703)
    drawn = []
    for _ in range(60):
        cases, outcomes = random_suite(rng)
        drawn.append((cases, outcomes, PromptVersion(rng.choice(["v1", "v2", "next"]), f"prompt {rng.randint(0, 10**6)} ✓")))
    prompts: list[list[str]] = [[] for _ in drawn]
    reports = each(regression_report, [Call(version, list(cases), model_of(outcomes, seen))
                                       for (cases, outcomes, version), seen in zip(drawn, prompts)])
    for (cases, outcomes, version), seen, report in zip(drawn, prompts, reports):
        assert report == {"prompt_version": "p-" + hashlib.sha256(version.text.encode("utf-8")).hexdigest()[:12],
                          "label": version.label,
                          "cases": len(cases), "failures": oracle(cases, outcomes)}
        assert seen == [version.text] * len(cases)


def model_of(outcomes: dict[str, object], prompts: list[str]):  # type: ignore[no-untyped-def]
    def model(prompt: str, payload: dict[str, object]) -> object:
        prompts.append(prompt)
        outcome = outcomes[str(payload["request"])]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return model
