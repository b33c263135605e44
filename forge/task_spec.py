"""Stage 04 — strict task specification.

Contract
    ``TaskSpec.parse(payload) -> TaskSpec`` turns the model's answer (a dict decoded from
    JSON) into an immutable task specification, or raises ``ValueError``:
    * the payload must be a dict;
    * unknown fields: the message contains ``unknown fields:`` and their names, sorted;
    * ``write_allowed`` missing: the message says ``write_allowed must be explicit``;
    * ``write_allowed`` must be a real boolean — ``"false"``, ``0`` or ``1`` are rejected,
      never coerced;
    * ``goal`` a non-blank string; ``acceptance`` a non-empty list of non-blank strings
      (a bare string is rejected, not split into characters); ``inputs`` and ``outputs``
      lists of strings, empty when absent.
    Field problems are reported together in one ``ValueError``, one ``field: problem`` per
    entry, sorted. Lists are stored as tuples and the model is frozen, so a parsed spec
    cannot change. The payload is not modified.

Boundary decision
    The parser never chooses a value for a permission. A missing ``write_allowed`` is an
    error, not ``True`` and not ``False`` either: a default would hide the caller's mistake.
    Validation is strict (Pydantic strict mode, unknown fields forbidden): nothing is
    coerced, nothing is silently dropped.

Your task: the schema (fields, strict configuration, list-to-tuple conversion) and
``describe`` are given. Implement the two checks ``_goal_is_not_blank`` and
``_acceptance_is_checkable`` and the boundary itself, ``TaskSpec.parse``. Check your work
with ``forgelab check 04``; ask for help with ``forgelab hint 04``.
"""

from __future__ import annotations

import reprlib

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

# Plain-language messages for Pydantic's error types; anything else keeps Pydantic's text.
PLAIN_MESSAGES: dict[str, str] = {
    "missing": "is required",
    "string_type": "must be a string",
    "bool_type": "must be true or false (a real boolean, not a string or a number)",
    "tuple_type": "must be a list of strings",
}


class TaskSpec(BaseModel):
    """A task the agent may carry out, as the model specified it."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    goal: str
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    acceptance: tuple[str, ...]
    write_allowed: bool

    @field_validator("inputs", "outputs", "acceptance", mode="before")
    @classmethod
    def _lists_become_tuples(cls, value: object) -> object:
        """JSON has lists, a frozen spec keeps tuples. Only a real list is converted."""
        return tuple(value) if isinstance(value, list) else value

    @field_validator("goal")
    @classmethod
    def _goal_is_not_blank(cls, value: str) -> str:
        """The goal must say something: reject an empty or whitespace-only goal."""
        raise NotImplementedError("_goal_is_not_blank() is not implemented yet — see hints 1–3 (forgelab hint 04)")

    @field_validator("acceptance")
    @classmethod
    def _acceptance_is_checkable(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        """At least one criterion, and none of them blank (name the blank one's position)."""
        raise NotImplementedError("_acceptance_is_checkable() is not implemented yet — see hints 4–6 (forgelab hint 04)")

    @classmethod
    def parse(cls, payload: dict[str, object]) -> TaskSpec:
        """Validate untrusted model output (see the module contract)."""
        raise NotImplementedError("parse() is not implemented yet — see hints 7–9 (forgelab hint 04)")


def describe(error: ValidationError) -> str:
    """One readable line for all of a ValidationError's problems, sorted by field."""
    problems = []
    for problem in error.errors():
        field, *position = problem["loc"]
        where = str(field) + "".join(f"[{index}]" for index in position)
        text = PLAIN_MESSAGES.get(problem["type"], problem["msg"].removeprefix("Value error, "))
        if problem["type"] != "missing":
            text += f", got {reprlib.repr(problem['input'])}"
        problems.append(f"{where}: {text}")
    return "invalid task spec: " + "; ".join(sorted(problems))
