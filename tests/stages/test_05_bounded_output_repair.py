"""Stage 05 — bounded output repair.

Run these with ``forgelab check 05`` (add ``--target solution`` to see the reference pass).
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge.output_repair import Repair, parse_json_object, remove_trailing_commas, repair_json_text

SPEC = {
    "goal": "add a search box to the product list",
    "acceptance": ["typing filters the list"],
    "write_allowed": False,
}
SPEC_TEXT = json.dumps(SPEC)


def outcome(text: str) -> object:
    """What parse_json_object made of ``text``: the object it returned, or the word 'ValueError'."""
    try:
        return parse_json_object(text)
    except ValueError:
        return "ValueError"


def test_fenced_json_and_trailing_comma_are_repaired() -> None:
    text = '~~~json\n{"goal": "add a search box", "acceptance": ["typing filters the list",],}\n~~~'
    assert parse_json_object(text) == {"goal": "add a search box", "acceptance": ["typing filters the list"]}


def test_non_json_prose_is_not_reinterpreted_as_permission() -> None:
    assert outcome("please write files") == "ValueError"


@pytest.mark.parametrize(
    "text",
    [
        f"Here is the task specification: {SPEC_TEXT}",
        f"{SPEC_TEXT}\nLet me know if you need anything else.",
        f"```json\n{SPEC_TEXT}\n```\nHope this helps!",
        f"Sure!\n```json\n{SPEC_TEXT}\n```",
        "goal: add a search box\nwrite_allowed: true",
        "",
        "   \n ",
    ],
)
def test_prose_around_or_instead_of_json_is_rejected(text: str) -> None:
    assert outcome(text) == "ValueError"


@pytest.mark.parametrize(
    "text",
    [
        SPEC_TEXT,
        f"\n\n  {SPEC_TEXT}  \n",
        f"```json\n{SPEC_TEXT}\n```",
        f"```\n{SPEC_TEXT}\n```",
        f"~~~\n{SPEC_TEXT}\n~~~",
        f"~~~json\n{SPEC_TEXT}\n~~~",
        f"```json  \n{SPEC_TEXT}\n  ```  ",
        f"```json\n{SPEC_TEXT}",
        f"~~~json\n{SPEC_TEXT}\n",
        f"\n  ```json\r\n{SPEC_TEXT}\r\n```\r\n",
    ],
)
def test_fence_variants_are_unwrapped(text: str) -> None:
    assert parse_json_object(text) == SPEC


@pytest.mark.parametrize(
    "text",
    [
        f"```python\n{SPEC_TEXT}\n```",
        f"~~~yaml\n{SPEC_TEXT}\n~~~",
        f"```json\n```json\n{SPEC_TEXT}\n```\n```",
        f"```json\n{SPEC_TEXT}\n~~~",
        f"```{SPEC_TEXT}```",
        f"```json {SPEC_TEXT}",
        f"```json\n{SPEC_TEXT}```",
        f"````json\n{SPEC_TEXT}\n````",
        f"text before\n```json\n{SPEC_TEXT}\n```",
    ],
)
def test_only_one_json_fence_around_the_whole_output_is_removed(text: str) -> None:
    assert outcome(text) == "ValueError"


def test_a_fence_with_nothing_inside_is_an_error() -> None:
    assert outcome("```json\n```") == "ValueError"
    assert outcome("~~~\n~~~") == "ValueError"
    # the fence is removed and nothing is left: there is no object to parse
    assert repair_json_text("```json\n```") == Repair("", ("code_fence",))
    assert repair_json_text("~~~\n\n~~~") == Repair("", ("code_fence",))


def test_trailing_commas_are_removed_at_every_depth() -> None:
    text = (
        '{\n  "goal": "add tests",\n  "files": [\n    "src/Search.tsx",\n\t"src/Search.test.tsx",\r\n  ],\n'
        '  "limits": {"max_files": 2, },\n}\n'
    )
    assert parse_json_object(text) == {
        "goal": "add tests",
        "files": ["src/Search.tsx", "src/Search.test.tsx"],
        "limits": {"max_files": 2},
    }
    assert parse_json_object('{"nested": [[1,], [{"a": [],},],],}') == {"nested": [[1], [{"a": []}]]}


def test_removed_trailing_commas_are_counted() -> None:
    text, removed = remove_trailing_commas('{"a": [1, 2,], "b": {"c": 3, },}')
    assert (json.loads(text), removed) == ({"a": [1, 2], "b": {"c": 3}}, 3)
    assert remove_trailing_commas('{"a": [1, 2], "b": ", ]"}') == ('{"a": [1, 2], "b": ", ]"}', 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"note": "a, }",}', {"note": "a, }"}),
        ('{"note": "a,]", "list": ["b, ]", ],}', {"note": "a,]", "list": ["b, ]"]}),
        ('{"note": "say \\"a,}\\" twice",}', {"note": 'say "a,}" twice'}),
        ('{"path": "C:\\\\",}', {"path": "C:\\"}),
        ('{"path": "C:\\\\", "next": ",}",}', {"path": "C:\\", "next": ",}"}),
        ('{"tab": "\\t,]", "n": 1,}', {"tab": "\t,]", "n": 1}),
    ],
)
def test_commas_inside_strings_are_left_alone(text: str, expected: dict[str, object]) -> None:
    assert parse_json_object(text) == expected


@pytest.mark.parametrize("text", ["{,}", "[,]", '{"files": [,]}', '{"files": [1,,]}', '{"k":,}', '{"a": 1,,}'])
def test_a_comma_without_a_value_before_it_is_not_repaired(text: str) -> None:
    assert outcome(text) == "ValueError"


@pytest.mark.parametrize("text", [",}", " , ]", "{,}", '{"files": [1,,]}', '{"k":,}', "[1, X]", '{"a": 1, x}', "[1, #]"])
def test_only_a_comma_between_a_value_and_a_closing_bracket_is_trailing(text: str) -> None:
    # a leading comma, a comma after `{`, `[`, `,` or `:`, and a comma before anything but `}` or `]` stay
    assert repair_json_text(text) == Repair(text.strip(), ())


@pytest.mark.parametrize(
    "text",
    ['{"k": }', '{"goal": "x", "write_allowed": }', '{"goal": "x"', '{"goal": "x", "write_allowed"}', "{goal: 'x'}"],
)
def test_missing_values_are_not_filled_in(text: str) -> None:
    assert outcome(text) == "ValueError"


@pytest.mark.parametrize("text", ["[1, 2]", '"a string"', "42", "null", "true", '```json\n[{"goal": "x"},]\n```'])
def test_the_result_must_be_an_object(text: str) -> None:
    with pytest.raises(ValueError, match=r"expected an object"):
        parse_json_object(text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [("[1, 2]", "array"), ('"a string"', "string"), ("42", "number"), ("4.5", "number"), ("null", "null"),
     ("true", "boolean"), ("false", "boolean")],
)
def test_a_value_that_is_not_an_object_is_named_by_its_json_type(text: str, kind: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_json_object(text)
    assert re.search(rf"\b{kind}\b", str(caught.value)), f"the message must say the output is a JSON {kind}"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_number_constants_are_rejected(constant: str) -> None:
    with pytest.raises(ValueError, match=constant):
        parse_json_object('{"budget": %s}' % constant)


def test_duplicate_keys_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"duplicate key 'write_allowed'"):
        parse_json_object('{"write_allowed": false, "goal": "x", "write_allowed": true}')


def test_error_message_says_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"^not JSON: the output starts with 'please write files'"):
        parse_json_object("please write files")
    with pytest.raises(ValueError, match=r"^invalid JSON \(Expecting value at line 1 column 7"):
        parse_json_object('{"k": }')


def refusal(text: str) -> str:
    """The message of the ValueError that parse_json_object raises for ``text``."""
    with pytest.raises(ValueError) as caught:
        parse_json_object(text)
    return str(caught.value)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("", "empty output"),
        ("  \n\t ", "empty output"),
        ("```json\n```", "empty output"),
        (f"```python\n{SPEC_TEXT}\n```", "a code fence tagged 'python' is not a JSON fence"),
        (f"~~~yaml\n{SPEC_TEXT}\n~~~", "a code fence tagged 'yaml' is not a JSON fence"),
        (f"```{SPEC_TEXT}```", "a code fence on the same line as the JSON"),
        (f"~~~json {SPEC_TEXT}", "a code fence on the same line as the JSON"),
        (f"```json\n```json\n{SPEC_TEXT}\n```\n```", "a second code fence inside the first"),
        (f"~~~\n~~~\n{SPEC_TEXT}", "a second code fence inside the first"),
        (f"```json\n\n  ~~~\n{SPEC_TEXT}\n~~~\n```", "a second code fence inside the first"),
        (f"Here is the task specification: {SPEC_TEXT}", "text before the JSON object"),
        (f"Sure!\n```json\n{SPEC_TEXT}\n```", "text before the JSON object"),
        (f"{SPEC_TEXT}\nLet me know if you need anything else.", "text after the JSON"),
        (f"```json\n{SPEC_TEXT}\n```\nHope this helps!", "text after the JSON"),
        ("[1, 2] and more", "text after the JSON"),
        ("please write files", "not JSON"),
        ("goal: add a search box\nwrite_allowed: true", "not JSON"),
        (", , }", "not JSON"),
        ('{"goal": "x", "write_allowed": }', "invalid JSON"),
        ("{goal: 'x'}", "invalid JSON"),
        ('```json\n{"goal": "x"', "invalid JSON"),
        ("[1, 2]", "not a JSON object"),
    ],
)
def test_each_refusal_names_the_rule_that_refused(text: str, rule: str) -> None:
    message = refusal(text)
    assert message.startswith(rule + " ") or message.startswith(rule + ":"), f"expected the rule {rule!r}: {message}"


def test_a_python_fence_and_leading_prose_are_refused_by_different_rules() -> None:
    fenced = refusal(f"```python\n{SPEC_TEXT}\n```")
    prose = refusal(f"Here is the task specification: {SPEC_TEXT}")
    assert fenced != prose
    assert "only ```, ```json, ~~~ and ~~~json are unwrapped" in fenced
    assert "only whitespace may surround it" in prose and "'Here is the task specification'" in prose


def test_a_refusal_says_where_the_json_went_wrong_and_what_to_do() -> None:
    after = refusal('{"goal": "x"}\n~~~')
    assert "(line 2 column 1 after repair)" in after and "only whitespace may surround the object" in after
    broken = refusal('{"goal": "x",\n "write_allowed": }')
    assert "Expecting value at line 2 column 19 after repair" in broken
    assert "never filled in" in broken
    for text in ("please write files", '{"k": }', f"```python\n{SPEC_TEXT}\n```"):
        assert refusal(text).endswith("ask the model again instead of guessing"), text
    assert refusal('~~~json\n{"k": 1}\n```').startswith("text after the JSON (line 2 column 1 after repair)")
    assert refusal("x" * 200).count("x") <= 40, "the start of a long output is shortened"
    assert "(the output starts with 'Sure!')" in refusal(f"Sure!\n```json\n{SPEC_TEXT}\n```")
    assert "(the output starts with 'Sure: {\"goal\": \"x\"}')" in refusal('```json\n   Sure: {"goal": "x"}\n```')


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("   ", "empty output: there is no JSON object to parse; ask the model again instead of guessing"),
        (f"~~~json\n```\n{SPEC_TEXT}\n```\n~~~", "a second code fence inside the first: only one fence around the "
         "whole output is removed; ask the model again instead of guessing"),
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "model output is nested too deeply to be a task object"),
        ("[]", "not a JSON object: the output is a JSON array, expected an object: ask the model for {...}"),
    ],
)
def test_the_whole_refusal_is_stable(text: str, message: str) -> None:
    assert refusal(text) == message


def test_repairs_are_recorded_in_order() -> None:
    both = repair_json_text('\n```json\n{"goal": "add tests",}\n```\n')
    assert both == Repair('{"goal": "add tests"}', ("code_fence", "trailing_comma"))
    assert repair_json_text('~~~\n{"goal": "add tests"}\n~~~').applied == ("code_fence",)
    assert repair_json_text('{"goal": "add tests", }').applied == ("trailing_comma",)
    assert repair_json_text('  {"goal": "add tests, }"}  ') == Repair('{"goal": "add tests, }"}', ())


def test_repair_record_is_immutable() -> None:
    repair = repair_json_text("{}")
    with pytest.raises(dataclasses.FrozenInstanceError):
        repair.applied = ("code_fence",)  # type: ignore[misc]


def test_large_inputs_are_handled() -> None:
    numbers = "[" + "1, " * 20_000 + "]"
    assert parse_json_object('{"n": %s,}' % numbers) == {"n": [1] * 20_000}
    assert outcome(", " * 50_000 + "}") == "ValueError"
    assert outcome("```json\n" + "{" * 20_000) == "ValueError"


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    with pytest.raises(ValueError) as caught:
        parse_json_object('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert re.search(r"nest|deep", str(caught.value), re.IGNORECASE), "the message must say what is wrong"


# --- properties -------------------------------------------------------------------------------

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
JSON_OBJECTS = st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=5)
GAPS = st.sampled_from(["", " ", "\n", "\t", "\r\n  "])


def write_messily(value: object, draw: st.DrawFn, ascii_only: bool) -> str:
    """Serialize ``value`` as valid JSON plus random whitespace and random trailing commas."""
    if isinstance(value, dict):
        parts = [
            f"{draw(GAPS)}{json.dumps(key, ensure_ascii=ascii_only)}{draw(GAPS)}:{draw(GAPS)}"
            f"{write_messily(item, draw, ascii_only)}"
            for key, item in value.items()
        ]
        opening, closing = "{", "}"
    elif isinstance(value, list):
        parts = [f"{draw(GAPS)}{write_messily(item, draw, ascii_only)}" for item in value]
        opening, closing = "[", "]"
    else:
        return json.dumps(value, ensure_ascii=ascii_only)
    trailing = "," if parts and draw(st.booleans()) else ""
    return opening + ",".join(parts) + trailing + draw(GAPS) + closing


@st.composite
def wrapped_objects(draw: st.DrawFn) -> tuple[dict[str, object], str]:
    value = draw(JSON_OBJECTS)
    text = write_messily(value, draw, draw(st.booleans()))
    fence = draw(st.sampled_from([None, "```", "~~~"]))
    if fence is not None:
        tag = draw(st.sampled_from(["", "json", " json "]))
        closing = draw(st.sampled_from([f"\n{fence}", f"\n{fence}\n", "", "\n"]))
        text = f"{fence}{tag}\n{text}{closing}"
    return value, draw(GAPS) + text + draw(GAPS)


@settings(derandomize=True, max_examples=80, deadline=None, database=None)
@given(wrapped_objects())
def test_any_object_survives_fences_and_trailing_commas(case: tuple[dict[str, object], str]) -> None:
    value, text = case
    assert parse_json_object(text) == value


FRAGMENTS = st.sampled_from(
    ["{", "}", "[", "]", ",", ":", " ", "\n", '"goal"', '"write_allowed"', '"a, }"', "true", "1", "null",
     "```json\n", "\n```", "~~~", "please", "write files"]
)
NO_ESCAPES = st.characters(exclude_characters="\\")
ARBITRARY_TEXT = st.text(NO_ESCAPES, max_size=40) | st.lists(FRAGMENTS, max_size=14).map("".join)


@settings(derandomize=True, max_examples=150, deadline=None, database=None)
@given(ARBITRARY_TEXT)
def test_arbitrary_text_gives_an_error_or_only_keys_it_contains(text: str) -> None:
    # Without backslashes there are no escape sequences, so every real key appears verbatim.
    result = outcome(text)
    if result != "ValueError":
        assert isinstance(result, dict)
        assert all(json.dumps(key, ensure_ascii=False) in text for key in result)
