"""Stage 05 — bounded output repair.

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

Boundary decision
    Only changes that cannot alter the meaning of a JSON document are repairs: the wrapping
    around it and a comma with nothing after it. When the text still does not parse, the model
    did not produce the object, and the honest answer is an error — never a guess.

Your task: implement ``strip_code_fence``, ``remove_trailing_commas`` and ``parse_json_object``
(with the rule names above in its messages; a small helper of your own is welcome).
``repair_json_text`` and ``strict_json_loads`` are already written. Check your work with
``forgelab check 05``; ask for help with ``forgelab hint 05``.
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
    raise NotImplementedError("strip_code_fence() is not implemented yet — see hints 1–3 (forgelab hint 05)")


def remove_trailing_commas(text: str) -> tuple[str, int]:
    """Drop each comma that follows a value and precedes a closing bracket; count them."""
    raise NotImplementedError("remove_trailing_commas() is not implemented yet — see hints 4–6 (forgelab hint 05)")


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


def parse_json_object(text: str) -> dict[str, object]:
    """The JSON object in ``text`` after the safe repairs; ``ValueError`` naming the rule otherwise."""
    raise NotImplementedError("parse_json_object() is not implemented yet — see hints 7–9 (forgelab hint 05)")
