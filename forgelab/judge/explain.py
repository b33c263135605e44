"""Readable failure causes: the *first difference* between what a test got and what it expected.

pytest's own comparison output abbreviates both sides (``[(Instruction...'lower_rank')] ==
[(Instruction...'lower_rank')]``) so that they often look the same. The judge's session registers
:func:`pytest_assertrepr_compare`, which walks both values the way a person would — which element,
which field, which key, which character — and names the first place where they differ::

    first difference at [1].reason: got 'same_rank_later', expected 'lower_rank'

By pytest's convention the left side of ``assert got == expected`` is what the code produced.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from forgelab.core.i18n import N_, _

MARKER = N_("first difference at")
SHOWN = 70


def short(value: object) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        text = f"<{type(value).__name__}>"
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _fields(value: object) -> list[tuple[str, object]] | None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [(field.name, getattr(value, field.name)) for field in dataclasses.fields(value)]
    model_fields = getattr(type(value), "model_fields", None)
    if isinstance(model_fields, dict) and hasattr(value, "__pydantic_fields_set__"):
        return [(name, getattr(value, name, None)) for name in model_fields]
    return None


def _text_difference(got: str, expected: str, where: str) -> str:
    if len(got) <= SHOWN // 2 and len(expected) <= SHOWN // 2 and "\n" not in got + expected:
        return _("{at}: got {got}, expected {expected}").format(at=where, got=repr(got), expected=repr(expected))
    index = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
    start = max(0, index - 20)
    got_part, expected_part = got[start:index + 25], expected[start:index + 25]
    prefix = "…" if start else ""
    line = got.count("\n", 0, index) + 1
    at = (_("{where} (character {index}, line {line})").format(where=where, index=index, line=line)
          if "\n" in got or "\n" in expected else _("{where} (character {index})").format(where=where, index=index))
    if index == len(got):
        return _("{at}: got a shorter text that ends there; expected it to go on with {more}").format(
            at=at, more=short(expected[index:index + 40]))
    if index == len(expected):
        return _("{at}: got extra text {more}; expected the text to end there").format(
            at=at, more=short(got[index:index + 40]))
    return _("{at}: got {got}, expected {expected}").format(at=at, got=prefix + short(got_part),
                                                             expected=prefix + short(expected_part))


def _joined(marker: str, found: str) -> str:
    """``marker`` and ``found`` with a space between them, except between two Chinese characters (第一处差异在顶层)."""
    both_chinese = all("\u4e00" <= character <= "\u9fff" for character in (marker[-1:] or "a", found[:1] or "a"))
    return f"{marker}{found}" if both_chinese else f"{marker} {found}"


def first_difference(got: object, expected: object, where: str = "") -> str | None:
    """Where ``got`` and ``expected`` first differ, in words; None when they are equal."""
    try:
        if got == expected:
            return None
    except Exception:  # noqa: BLE001 - a broken __eq__ is itself a difference
        pass
    here = where or _("the top level")
    numbers = (int, float)
    if type(got) is not type(expected) and not (isinstance(got, numbers) and isinstance(expected, numbers)
                                                and not isinstance(got, bool) and not isinstance(expected, bool)):
        return _("{at}: got a {got_type} {got}, expected a {expected_type} {expected}").format(
            at=here, got_type=type(got).__name__, got=short(got), expected_type=type(expected).__name__,
            expected=short(expected))
    fields = _fields(got)
    if fields is not None:
        expected_fields = dict(_fields(expected) or [])
        for name, value in fields:
            found = first_difference(value, expected_fields.get(name), f"{where}.{name}")
            if found:
                return found
        return _("{at}: got {got}, expected {expected}").format(at=here, got=short(got), expected=short(expected))
    if isinstance(got, dict) and isinstance(expected, dict):
        missing = [key for key in expected if key not in got]
        if missing:
            key = missing[0]
            return _("{at}: missing; expected {expected}").format(at=f"{where}[{key!r}]", expected=short(expected[key]))
        extra = [key for key in got if key not in expected]
        if extra:
            key = extra[0]
            return _("{at}: got an unexpected key with value {got}").format(at=f"{where}[{key!r}]", got=short(got[key]))
        for key in expected:
            found = first_difference(got[key], expected[key], f"{where}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple)):
        for index, (left, right) in enumerate(zip(got, expected)):
            found = first_difference(left, right, f"{where}[{index}]")
            if found:
                return found
        if len(got) < len(expected):
            return _("{at}: got {got} item(s), expected {expected}; the first missing one is [{index}] = {item}").format(
                at=here, got=len(got), expected=len(expected), index=len(got), item=short(expected[len(got)]))
        return _("{at}: got {got} item(s), expected {expected}; the first extra one is [{index}] = {item}").format(
            at=here, got=len(got), expected=len(expected), index=len(expected), item=short(got[len(expected)]))
    if isinstance(got, (set, frozenset)) and isinstance(expected, (set, frozenset)):
        missing_items = sorted(map(short, expected - got))
        extra_items = sorted(map(short, got - expected))
        parts = []
        if missing_items:
            parts.append(_("missing {items}").format(items=", ".join(missing_items[:3])))
        if extra_items:
            parts.append(_("unexpected {items}").format(items=", ".join(extra_items[:3])))
        return f"{here}: " + "; ".join(parts)
    if isinstance(got, str) and isinstance(expected, str):
        return _text_difference(got, expected, here)
    return _("{at}: got {got}, expected {expected}").format(at=here, got=short(got), expected=short(expected))


def pytest_assertrepr_compare(config: Any, op: str, left: object, right: object) -> list[str] | None:
    """pytest hook: explain a failed ``==`` by its first difference (and keep pytest's detail below)."""
    if op != "==":
        return None
    try:
        found = first_difference(left, right)
    except RecursionError:
        return None
    if not found:
        return None
    lines = [f"{short(left)} == {short(right)}", _joined(_(MARKER), found)]
    try:  # keep pytest's own detailed comparison below ours (its hook has a stable signature)
        # lazy: pytest's assertion plugin is loaded in the session that calls this hook, never in the command line
        from forgelab.judge.pytest_private import pytest_default_explanation

        lines += pytest_default_explanation(config, op, left, right)[1:]
    except Exception:  # noqa: BLE001 - pytest's internals moved: our line is enough
        pass
    return lines


def explanation_from_text(text: str) -> str:
    """The first-difference line inside a failure's text, or '' when there is none."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("E"):
            stripped = stripped[1:].strip()
        if stripped.startswith(_(MARKER)):
            return stripped[0].upper() + stripped[1:]
    return ""
