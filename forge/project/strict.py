"""Strict JSON for recovery mode: the model's answer exactly as written, nothing repaired (finished
infrastructure: you use it, you do not need to change it).

Recovery mode is the chapter's minimal recovery point: one fixed schema, three fixed few-shot examples
and automatic repair switched off. Its parser is this module, not stage 05: ``parse_strict_object``
runs ``json.loads`` on the answer as the model wrote it — standard JSON only (no ``NaN``/``Infinity``,
no duplicate keys) — and insists on a JSON object. It imports no stage module, so recovery mode works
while ``forge/output_repair.py`` is still the starter.

When the answer is refused, the message says why. If the answer only needed the wrapping that standard
mode (stage 05) may remove — a ``json`` code fence around it, a trailing comma — the message names those
repairs (``code_fence``, ``trailing_comma``) and says that repair is off; they are found, never applied.
"""

from __future__ import annotations

import json

FENCE_MARKERS = ("```", "~~~")
JSON_FENCE_TAGS = ("", "json")
CODE_FENCE = "code_fence"
TRAILING_COMMA = "trailing_comma"
_TYPE_NAMES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


class NotStrictJSON(ValueError):
    """The answer is not one bare JSON object. ``needs`` lists the repairs standard mode would have tried."""

    def __init__(self, message: str, needs: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.needs = needs


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise NotStrictJSON(f"duplicate key {key!r} in the model's answer: each field must appear once")
        result[key] = value
    return result


def _no_constant(name: str) -> object:
    raise NotStrictJSON(f"{name} is not valid JSON: the model must write a number or null")


def _loads(text: str) -> object:
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def _inside_json_fence(text: str) -> str | None:
    """What a json code fence around all of ``text`` encloses, or None when there is no such fence."""
    lines = text.strip().split("\n")
    marker = lines[0][:3]
    if marker not in FENCE_MARKERS or len(lines) < 2 or lines[0][3:].strip() not in JSON_FENCE_TAGS:
        return None
    inner = lines[1:]
    if inner and inner[-1].strip() == marker:
        inner = inner[:-1]
    return "\n".join(inner)


def _trailing_comma_stops(text: str) -> bool:
    """Whether the JSON parser first stops at a closing bracket that follows a comma."""
    try:
        _loads(text)
    except json.JSONDecodeError as error:
        return error.pos < len(text) and text[error.pos] in "}]" and text[: error.pos].rstrip().endswith(",")
    except (NotStrictJSON, RecursionError):
        return False
    return False


def repairs_needed(text: str) -> tuple[str, ...]:
    """The wrapping repairs of standard mode (stage 05) that ``text`` would need — found, not applied."""
    needs: list[str] = []
    body = _inside_json_fence(text)
    if body is not None:
        needs.append(CODE_FENCE)
    else:
        body = text
    if _trailing_comma_stops(body):
        needs.append(TRAILING_COMMA)
    return tuple(needs)


def parse_strict_object(text: str) -> dict[str, object]:
    """The JSON object ``text`` is, exactly as written; ``NotStrictJSON`` (a ``ValueError``) otherwise."""
    try:
        value = _loads(text)
    except json.JSONDecodeError as error:
        needs = repairs_needed(text)
        if needs:
            raise NotStrictJSON(f"the output needs repair ({', '.join(needs)}) but automatic repair is off in "
                                "recovery mode: the model must answer with one bare JSON object", needs) from None
        raise NotStrictJSON(f"the output is not strict JSON ({error.msg} at line {error.lineno} column {error.colno}): "
                            "recovery mode takes the answer exactly as written, one bare JSON object") from None
    except RecursionError:
        raise NotStrictJSON("the output is nested too deeply to be a task object") from None
    if not isinstance(value, dict):
        kind = _TYPE_NAMES.get(type(value), "null")
        raise NotStrictJSON(f"the output is a JSON {kind}, expected an object")
    return value
