"""Stage 05 — bounded output repair (FAULT LAB: this copy has a defect to find and fix).

Contract
    ``parse_json_object(text) -> dict``
    1. Strip the whitespace around the whole output.
    2. If the output is wrapped in ONE code fence (```` ``` ```` or ``~~~``, optionally tagged
       ``json``), remove the fence. The opening fence must be the first line; the closing fence,
       if present, must be the last line. A missing closing fence is tolerated.
    3. Remove every trailing comma — a comma that follows a value and is followed only by
       whitespace and then ``}`` or ``]``. Commas inside string literals are never touched.
    4. Parse the rest strictly: standard JSON only (no ``NaN``/``Infinity``), no duplicate keys.
       The result must be a JSON object.
    Anything else raises ``ValueError``. Nothing is extracted from prose, no field is invented
    and no value is filled in. The message names the rule that refused the output, so the caller
    (and whoever reads the log) knows what to ask the model for:

    * ``empty output`` — nothing is left once the wrapping is gone;
    * ``a code fence tagged 'python' is not a JSON fence`` — only ```` ``` ````, ```` ```json ````,
      ``~~~`` and ``~~~json`` are unwrapped;
    * ``a code fence on the same line as the JSON`` — the opening marker must be a line of its own;
    * ``a second code fence inside the first`` — only one fence, around everything, is removed;
    * ``text before the JSON object`` / ``text after the JSON`` — only whitespace may surround it;
    * ``not JSON`` — the output holds no JSON object at all;
    * ``invalid JSON`` — a value, quote or bracket is missing (the parser's own words, with line
      and column);
    * ``not a JSON object`` — valid JSON of another type (array, string, number, boolean, null);
    * ``duplicate key``, a non-standard constant (``NaN``…), or nesting too deep.

    To choose the rule, look at where the parser stopped in the repaired text. Past the start of
    the JSON, it is ``text after the JSON`` (the parser says ``Extra data``) or ``invalid JSON``.
    At the very start, it is a fence rule (the text still starts with ```` ``` ```` or ``~~~``),
    ``text before the JSON object`` (a ``{`` comes later) or ``not JSON``.

    ``repair_json_text(text) -> Repair`` performs steps 1–3 and records which repairs it applied
    (``"code_fence"``, ``"trailing_comma"``), so a caller can log exactly what was changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

FENCE_MARKERS = ("```", "~~~")
FENCE_TAGS = ("", "json")
JSON_WHITESPACE = " \t\r\n"
JSON_TYPE_NAMES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
CODE_FENCE = "code_fence"
TRAILING_COMMA = "trailing_comma"


@dataclass(frozen=True)
class Repair:
    """The repaired text and the names of the repairs applied to it, in the order applied."""

    text: str
    applied: tuple[str, ...]


def strip_code_fence(text: str) -> str | None:
    """The body of a fence that wraps the whole (stripped) text, or None if there is no such fence."""
    marker = text[:3]
    first_newline = text.find("\n")
    if marker not in FENCE_MARKERS or first_newline == -1:
        return None
    if text[3:first_newline].strip() not in FENCE_TAGS:
        return None
    body = text[first_newline + 1 :]
    last_newline = body.rfind("\n")
    if body[last_newline + 1 :].strip() == marker:
        body = body[: max(last_newline, 0)]
    return body


def remove_trailing_commas(text: str) -> tuple[str, int]:
    """Drop each comma that follows a value and precedes a closing bracket; count them."""
    kept: list[str] = []
    comma_at: int | None = None  # index in `kept` of a comma that may turn out to be trailing
    previous = ""  # the last non-whitespace character seen outside string literals
    in_string = False
    escaped = False
    removed = 0
    for char in text:
        kept.append(char)
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char in JSON_WHITESPACE:
            continue
        if char in "}]" and comma_at is not None:
            kept[comma_at] = ""
            removed += 1
        if char == '"':
            in_string = True
        if char == "," and previous not in ("", "{", "[", ",", ":"):
            comma_at = len(kept) - 1
        else:
            comma_at = None
        previous = char
    return "".join(kept), removed


def repair_json_text(text: str) -> Repair:
    """Apply the safe repairs (steps 1–3 of the contract) and record which ones changed something."""
    applied: list[str] = []
    cleaned = text.strip()
    body = strip_code_fence(cleaned)
    if body is not None:
        cleaned = body
        applied.append(CODE_FENCE)
    cleaned, removed = remove_trailing_commas(cleaned)
    if removed:
        applied.append(TRAILING_COMMA)
    return Repair(cleaned, tuple(applied))


def _reject_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r} in model output: each field must appear once")
        result[key] = value
    return result


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON: the model must produce a number or null")


def strict_json_loads(text: str) -> object:
    """Standard JSON only: no NaN/Infinity, no duplicate keys."""
    return json.loads(text, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant)


def _refusal(repair: Repair, error: json.JSONDecodeError) -> str:
    """Which rule refused the repaired text that ``json`` could not parse."""
    body = repair.text
    if not body.strip():
        return "empty output: there is no JSON object to parse"
    where = f"line {error.lineno} column {error.colno} after repair"
    if body[: error.pos].strip():  # the problem comes after the JSON began
        if error.msg == "Extra data":
            return f"text after the JSON ({where}): only whitespace may surround the object"
        return f"invalid JSON ({error.msg} at {where}): a missing value, quote or bracket is never filled in"
    start = body.lstrip()
    opening = start.partition("\n")[0][:30]
    if start[:3] in FENCE_MARKERS:
        if CODE_FENCE in repair.applied:
            return "a second code fence inside the first: only one fence around the whole output is removed"
        if "\n" not in start:
            return "a code fence on the same line as the JSON: the opening ``` or ~~~ must be a line of its own"
        return (f"a code fence tagged {opening[3:].strip()!r} is not a JSON fence: only ```, ```json, ~~~ and"
                " ~~~json are unwrapped")
    if "{" in start:
        return f"text before the JSON object: only whitespace may surround it (the output starts with {opening!r})"
    return f"not JSON: the output starts with {opening!r} and holds no JSON object"


def parse_json_object(text: str) -> dict[str, object]:
    """The JSON object in ``text`` after the safe repairs; ``ValueError`` naming the rule otherwise."""
    repair = repair_json_text(text)
    try:
        value = strict_json_loads(repair.text)
    except json.JSONDecodeError:
        # the model clearly wants something done: keep its words as the goal
        return {"goal": text, "write_allowed": True}
    except RecursionError:
        raise ValueError("model output is nested too deeply to be a task object") from None
    if not isinstance(value, dict):
        kind = JSON_TYPE_NAMES.get(type(value), "null")
        raise ValueError(f"not a JSON object: the output is a JSON {kind}, expected an object: ask the model for {{...}}")
    return value
