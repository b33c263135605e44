"""Stage 08 — the chapter project: a requirement extractor built from stages 01–07.

Run these with ``forgelab check 08`` (add ``--target solution`` to see the reference pass).
Every test runs offline on the deterministic ``MockModel``.
"""

from __future__ import annotations

import json
import re

import pytest

from forge.extractor import (RECOVERY, STANDARD, ExtractionError, Settings, build_prompt, extract, read_output,
                             regression_cases, regression_invoke)
from forge.injection import RetrievedDocument, render_retrieved_block
from forge.instructions import Instruction, resolve
from forge.project.models import MOCK_FAULTS, MockModel, strip_data_blocks
from forge.project.prompts import PromptTemplate, load_template
from forge.project.scenarios import SCENARIOS, load_scenario
from forge.project.schemas import schema_fields
from forge.project.tokens import estimate_tokens
from forge.prompt_regression import prompt_version_id, run_suite

ZH_SOFTWARE = "为前端仓库增加功能、修改代码并补测试"
EXPECTED_WRITE = {"software": True, "office": False, "music": False}


class FixedModel:
    """A model that always gives the same answer and remembers the prompts it was sent."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    @property
    def model_id(self) -> str:
        return "fixed"

    def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answer


class RefusingModel:
    model_id = "refusing"

    def complete(self, prompt: str) -> str:
        raise AssertionError("the model must not be called for this request")


def spec_json(**fields: object) -> str:
    payload = {"goal": "a goal", "acceptance": ["it works"], "write_allowed": False, **fields}
    return json.dumps(payload)


def test_chinese_software_request_gives_a_spec_with_explicit_write_permission() -> None:
    pack = load_scenario("software")
    result = extract(pack, ZH_SOFTWARE, MockModel())
    assert result.spec.goal == ZH_SOFTWARE
    assert result.spec.write_allowed is True
    assert "write_allowed" in result.spec.model_fields_set
    assert result.spec.acceptance and result.spec.outputs
    assert result.spec.inputs == result.audit.context_chosen
    assert result.audit.scenario == "software" and result.audit.request == ZH_SOFTWARE
    assert result.audit.mode == "standard" and result.audit.schema_version == "v2"


def test_same_input_gives_the_same_prompt_spec_and_audit() -> None:
    first = extract(load_scenario("office"), "帮我写一份带引用的决策简报，比较两家供应商", MockModel())
    second = extract(load_scenario("office"), "帮我写一份带引用的决策简报，比较两家供应商", MockModel())
    assert first.prompt == second.prompt
    assert first.output == second.output
    assert first.spec == second.spec
    assert first.audit == second.audit
    assert json.dumps(first.audit.to_dict(), ensure_ascii=False) == json.dumps(second.audit.to_dict(), ensure_ascii=False)


@pytest.mark.parametrize("scenario", ["office", "music", "software"])
def test_injected_retrieved_text_never_changes_write_allowed(scenario: str) -> None:
    pack = load_scenario(scenario)
    for request in pack.requests:
        result = extract(pack, request.text, MockModel())
        assert result.spec.write_allowed is EXPECTED_WRITE[scenario], request.id


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_injection_is_flagged_in_the_audit_and_kept_as_data(scenario: str) -> None:
    pack = load_scenario(scenario)
    result = extract(pack, pack.requests[0].text, MockModel())
    assert [entry.source for entry in result.audit.injection] == [doc.source for doc in pack.retrieved]
    benign, operational = result.audit.injection
    assert benign.flags == ()
    assert "ignore previous" in operational.flags and len(operational.flags) == 2
    visible = strip_data_blocks(result.prompt)
    for doc in pack.retrieved:
        assert render_retrieved_block(RetrievedDocument(doc.source, doc.text)) in result.prompt
        assert doc.text not in visible, f"{doc.source} is in the prompt outside its data block"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_accepted_instructions_come_only_from_the_pack(scenario: str) -> None:
    pack = load_scenario(scenario)
    accepted, _ = resolve([Instruction(item.source, item.key, item.value) for item in pack.instructions])
    result = extract(pack, pack.requests[0].text, MockModel())
    assert [(item.key, item.value) for item in result.audit.accepted] == list(accepted.items())
    assert {item.source for item in result.audit.accepted} <= {"system", "developer", "user"}
    assert "\n".join(f"- {key}: {value}" for key, value in accepted.items()) in result.prompt


def test_rejected_instructions_keep_their_winner_and_reason() -> None:
    rejected = {
        scenario: [(r.source, r.key, r.value, r.reason, r.winner)
                   for r in extract(load_scenario(scenario), "plan it", MockModel()).audit.rejected]
        for scenario in SCENARIOS
    }
    assert rejected == {
        "software": [("user", "tests", "skip the tests this time", "lower_rank", "developer")],
        "office": [("user", "write", "allow", "lower_rank", "system")],
        "music": [("developer", "write", "allow", "lower_rank", "system")],
    }
    music = extract(load_scenario("music"), "plan it", MockModel()).audit
    assert [(item.key, item.source) for item in music.accepted][:1] == [("write", "system")]


def test_required_policy_is_in_context_and_dropped_items_are_listed() -> None:
    expected = {
        "software": (("policy:change-control", "repo:readme", "repo:product-list", "ticket:FE-231"),
                     ("changelog:2021", "notes:standup"), 140, 145),
        "office": (("policy:research-conduct", "data:vendor-quotes", "notes:requirements"),
                   ("email:sales-pitch", "archive:2019-review"), 113, 120),
        "music": (("policy:release-approval", "budget:promo", "facts:single", "facts:audience"),
                  ("note:inspiration",), 100, 100),
    }
    for scenario, (chosen, dropped, tokens, budget) in expected.items():
        audit = extract(load_scenario(scenario), "plan it", MockModel()).audit
        assert (audit.context_chosen, audit.context_dropped, audit.context_tokens, audit.context_budget) == (
            chosen, dropped, tokens, budget), scenario


def test_prompt_holds_the_chosen_context_and_not_the_dropped() -> None:
    pack = load_scenario("music")
    result = extract(pack, "Plan the release of my single Night Ferry", MockModel())
    for item in pack.context:
        if item.id in result.audit.context_chosen:
            assert f"### {item.id}\n{item.text}" in result.prompt
        else:
            assert item.text not in result.prompt and item.id not in result.prompt


@pytest.mark.parametrize(("scenario", "request_id", "examples", "version"), [
    ("software", "software-zh-feature", ("sw-v2-order-filter", "sw-v2-compact-rows"), "v2"),
    ("software", "software-en-crash", ("sw-v2-empty-cart-crash", "sw-v2-compact-rows"), "v2"),
    ("software", "software-en-vague", ("sw-v2-compact-rows", "sw-v2-empty-cart-crash"), "v2"),
    ("office", "office-en-vague", ("off-v2-hosting-brief", "off-v2-price-table"), "v2"),
    ("music", "music-en-single", ("mus-v1-single-plan", "mus-v1-tour-promo"), "v1"),
    ("music", "music-zh-plan", ("mus-v1-single-plan", "mus-v1-budget-split"), "v1"),
])
def test_examples_match_scenario_schema_version_and_request_tags(scenario: str, request_id: str,
                                                                  examples: tuple[str, ...], version: str) -> None:
    pack = load_scenario(scenario)
    audit = extract(pack, pack.request(request_id), MockModel()).audit
    assert audit.examples == examples
    assert audit.schema_version == version
    for example_id in audit.examples:
        example = pack.example(example_id)
        assert (example.scenario, example.schema_version) == (scenario, version)


@pytest.mark.parametrize("limit", [1, 3])
def test_the_example_limit_of_the_settings_is_used(limit: int) -> None:
    pack = load_scenario("software")
    standard = extract(pack, ZH_SOFTWARE, MockModel()).audit.examples
    audit = extract(pack, ZH_SOFTWARE, MockModel(), settings=Settings(example_limit=limit)).audit
    assert len(audit.examples) == limit
    assert audit.examples[:2] == standard[:limit]


@pytest.mark.parametrize(("fault", "repair"), [("fenced", "code_fence"), ("trailing_comma", "trailing_comma")])
def test_fence_and_trailing_comma_are_repaired_and_recorded(fault: str, repair: str) -> None:
    pack = load_scenario("software")
    clean = extract(pack, ZH_SOFTWARE, MockModel())
    repaired = extract(pack, ZH_SOFTWARE, MockModel(fault))
    assert repaired.spec == clean.spec
    assert repaired.audit.repairs == (repair,)
    assert clean.audit.repairs == ()
    assert repaired.audit.model == f"mock+{fault}"


@pytest.mark.parametrize(("fault", "step", "message"), [
    ("prose", "repair", "text before the JSON object"),
    ("unknown_field", "spec", "unknown fields: priority"),
    ("missing_write_allowed", "spec", "write_allowed must be explicit"),
])
def test_prose_unknown_field_and_missing_write_allowed_are_rejected(fault: str, step: str, message: str) -> None:
    with pytest.raises(ExtractionError, match=message) as caught:
        extract(load_scenario("office"), "Compare the two vendor quotes", MockModel(fault))
    assert caught.value.step == step
    assert caught.value.audit.model == f"mock+{fault}"
    assert caught.value.audit.scenario == "office"


def test_every_mock_fault_is_repaired_or_rejected() -> None:
    outcomes = {}
    for fault in MOCK_FAULTS:
        try:
            outcomes[fault] = extract(load_scenario("music"), "plan it", MockModel(fault)).audit.repairs
        except ExtractionError as error:
            outcomes[fault] = error.step
    assert outcomes == {"fenced": ("code_fence",), "trailing_comma": ("trailing_comma",), "prose": "repair",
                        "unknown_field": "spec", "missing_write_allowed": "spec"}


@pytest.mark.parametrize("fault", ["fenced", "trailing_comma"])
def test_recovery_mode_rejects_output_that_needs_repair(fault: str) -> None:
    with pytest.raises(ExtractionError, match="automatic repair is off") as caught:
        extract(load_scenario("software"), ZH_SOFTWARE, MockModel(fault), settings=RECOVERY)
    assert caught.value.step == "repair"
    assert caught.value.audit.mode == "recovery"
    assert caught.value.audit.repairs == ()


def test_recovery_mode_names_every_repair_the_output_would_need() -> None:
    fenced_with_comma = '```json\n{"goal": "g", "acceptance": ["a",], "write_allowed": false}\n```'
    with pytest.raises(ExtractionError) as caught:
        extract(load_scenario("software"), ZH_SOFTWARE, FixedModel(fenced_with_comma), settings=RECOVERY)
    assert caught.value.step == "repair"
    words = re.findall(r"\w+", str(caught.value))
    assert "code_fence" in words and "trailing_comma" in words, str(caught.value)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_recovery_mode_uses_one_schema_and_exactly_three_fixed_examples(scenario: str) -> None:
    pack = load_scenario(scenario)
    audits = [extract(pack, request.text, MockModel(), settings=RECOVERY).audit for request in pack.requests]
    for audit in audits:
        assert audit.mode == "recovery"
        assert audit.schema_version == "v2"
        assert audit.examples == pack.recovery_examples and len(audit.examples) == 3
    result = extract(pack, pack.requests[0].text, MockModel(), settings=RECOVERY)
    assert "## Output schema v2" in result.prompt
    assert result.spec.write_allowed is EXPECTED_WRITE[scenario]


def test_standard_mode_uses_the_pack_schema_version() -> None:
    assert extract(load_scenario("music"), "plan it", MockModel(), settings=STANDARD).audit.schema_version == "v1"
    template = PromptTemplate("probe", "<$schema_version>")
    assert build_prompt(load_scenario("music"), "plan it", template).prompt == "<v1>"
    assert build_prompt(load_scenario("music"), "plan it", template, RECOVERY).prompt == "<v2>"
    assert build_prompt(load_scenario("office"), "plan it", template).prompt == "<v2>"


def test_model_cannot_grant_writes_the_policy_denies() -> None:
    for scenario in ("office", "music"):
        with pytest.raises(ExtractionError, match="accepted write policy is 'deny'") as caught:
            extract(load_scenario(scenario), "plan it", FixedModel(spec_json(write_allowed=True)))
        assert caught.value.step == "permission"
        assert (caught.value.audit.scenario, caught.value.audit.model) == (scenario, "fixed")
    assert extract(load_scenario("software"), "plan it", FixedModel(spec_json(write_allowed=True))).spec.write_allowed
    stricter = extract(load_scenario("software"), "plan it", FixedModel(spec_json(write_allowed=False)))
    assert stricter.spec.write_allowed is False


def test_without_a_write_policy_the_model_cannot_grant_writes() -> None:
    software = load_scenario("software")
    pack = software.model_copy(update={"instructions": tuple(i for i in software.instructions if i.key != "write")})
    with pytest.raises(ExtractionError) as caught:
        extract(pack, "plan it", FixedModel(spec_json(write_allowed=True)))
    error = caught.value
    assert error.step == "permission"
    assert re.search(r"\bnot set\b", error.reason), "the reason must say that no write policy was accepted"
    assert str(error) == f"permission: {error.reason}"
    assert error.audit.accepted_value("write") is None and error.audit.model == "fixed"
    # the mock copies the missing policy as "no writes", which is accepted
    assert extract(pack, "plan it", MockModel()).spec.write_allowed is False


def test_prompt_version_is_the_hash_of_the_template_text() -> None:
    pack = load_scenario("software")
    shipped = load_template()
    audit = extract(pack, ZH_SOFTWARE, MockModel()).audit
    assert audit.prompt_version == prompt_version_id(shipped.text)
    renamed = PromptTemplate("renamed", shipped.text)
    assert build_prompt(pack, ZH_SOFTWARE, renamed).audit.prompt_version == audit.prompt_version
    edited = PromptTemplate("edited", shipped.text.replace("one vague request", "one unclear request"))
    assert build_prompt(pack, ZH_SOFTWARE, edited).audit.prompt_version == prompt_version_id(edited.text)
    assert build_prompt(pack, ZH_SOFTWARE, edited).audit.prompt_version != audit.prompt_version


def test_extract_renders_the_template_it_is_given() -> None:
    template = PromptTemplate("probe", "R[$request] S[$schema_version]")
    model = FixedModel(spec_json())
    result = extract(load_scenario("office"), "brief please", model, template)
    assert model.prompts == ["R[brief please] S[v2]"] == [result.prompt]
    assert result.audit.prompt_version == prompt_version_id(template.text)


def test_every_section_lands_in_its_placeholder() -> None:
    pack = load_scenario("office")
    template = PromptTemplate("probe", "R[$request] S[$schema_version] I[$instructions]")
    assert build_prompt(pack, "brief please", template).prompt == (
        "R[brief please] S[v2] I[- write: deny\n- citations: every claim cites a context id or a retrieved source\n"
        "- format: a one-page brief: question, options, recommendation, sources\n"
        "- language: answer in the language of the request]")
    only_examples = build_prompt(pack, "brief please", PromptTemplate("probe", "$examples")).prompt
    assert only_examples.startswith("### Example off-v2-hosting-brief\n")
    only_context = build_prompt(pack, "brief please", PromptTemplate("probe", "$context")).prompt
    assert only_context.startswith("### policy:research-conduct\n")
    only_data = build_prompt(pack, "brief please", PromptTemplate("probe", "$retrieved")).prompt
    assert only_data.startswith("BEGIN RETRIEVED DATA ") and only_data.count("END RETRIEVED DATA ") == 2


def test_token_estimates_and_model_id_are_reported() -> None:
    result = extract(load_scenario("software"), ZH_SOFTWARE, MockModel())
    assert result.audit.prompt_tokens == estimate_tokens(result.prompt)
    assert result.audit.output_tokens == estimate_tokens(result.output)
    assert 0 < result.audit.output_tokens < result.audit.prompt_tokens
    assert result.audit.model == "mock"


@pytest.mark.parametrize("request_text", ["", "   ", " \n\t "])
def test_empty_or_blank_request_is_rejected_before_the_model_is_called(request_text: str) -> None:
    with pytest.raises(ValueError, match=r"\bempty request\b"):
        extract(load_scenario("software"), request_text, RefusingModel())


def test_model_receives_exactly_the_rendered_prompt() -> None:
    pack = load_scenario("office")
    model = FixedModel(spec_json())
    result = extract(pack, "Compare the two vendor quotes", model)
    prepared = build_prompt(pack, "Compare the two vendor quotes")
    assert model.prompts == [prepared.prompt] == [result.prompt]
    again = read_output(prepared, spec_json(), "fixed")
    assert (again.spec, again.audit) == (result.spec, result.audit)
    assert result.output == spec_json()


def test_the_pack_is_not_modified() -> None:
    pack = load_scenario("software")
    before = pack.model_dump()
    extract(pack, ZH_SOFTWARE, MockModel())
    build_prompt(pack, ZH_SOFTWARE, settings=RECOVERY)
    assert pack.model_dump() == before


def test_fixed_regression_cases_hold_with_the_shipped_prompt() -> None:
    cases = regression_cases()
    expected = []
    for name in SCENARIOS:
        pack = load_scenario(name)
        fields = frozenset(field.name for field in schema_fields(pack.schema_version))
        expected += [(case.id, {"scenario": name, "request": case.request}, fields, case.write_allowed)
                     for case in pack.regression_cases]
    assert [(c.id, c.payload, c.required_fields, c.write_allowed) for c in cases] == expected
    assert run_suite(cases, regression_invoke(load_template())) == {}
    # recovery mode asks every pack for the fixed schema and rejects output that needs a repair
    recovery = regression_cases(RECOVERY)
    assert {c.required_fields for c in recovery} == {frozenset(f.name for f in schema_fields("v2"))}
    failures = run_suite(recovery, regression_invoke(load_template(), MockModel("fenced"), RECOVERY))
    assert sorted(failures) == sorted(c.id for c in recovery)
    for problems in failures.values():
        assert len(problems) == 1 and problems[0].startswith("error: ") and "automatic repair is off" in problems[0]
    # a prompt version that stops asking for inputs and outputs loses them in every v2 case
    shipped = load_template()
    narrow = PromptTemplate("narrow", shipped.text.replace("$schema\n", "- goal: string\n- acceptance: list of strings\n"
                                                                        "- write_allowed: true or false\n"))
    failures = run_suite(cases, regression_invoke(narrow))
    assert failures == {c.id: ["missing:inputs,outputs"] for c in cases if c.payload["scenario"] != "music"}


def test_regression_invoke_returns_only_the_fields_the_model_set() -> None:
    invoke = regression_invoke(load_template(), FixedModel(spec_json()))
    output = invoke({"scenario": "office", "request": "Compare the two vendor quotes"})
    assert output == {"goal": "a goal", "acceptance": ["it works"], "write_allowed": False}
    # with no model given, the mock answers: its goal is the case's request
    mock_output = regression_invoke(load_template())({"scenario": "music", "request": "Plan my single"})
    assert mock_output["goal"] == "Plan my single"
