"""Stage 07 — prompt regression suite.

Contract
    ``RegressionCase(id, payload, required_fields, write_allowed)`` is a frozen value: a fixed input
    and what must hold for every prompt version — the fields that must be present and the exact
    write permission. ``required_fields`` must be a ``frozenset`` and ``write_allowed`` a real
    ``bool``; anything else fails with ``ValueError``.

    ``run_suite(cases, invoke) -> dict[str, list[str]]`` calls ``invoke(payload)`` once per case,
    in order, with a copy of the payload, and reports the cases that fail — and only those:
    * ``"missing:<fields>"`` — required fields absent from the output, sorted, comma-joined;
    * ``"write permission changed"`` — ``output.get("write_allowed") is not case.write_allowed``:
      only the boolean itself counts; ``"false"``, ``0`` or a missing value are changes;
    * ``"error: <Type>: <message>"`` when ``invoke`` raises, or ``"error: output is <type>, expected
      a dict"`` when it returns something else. The suite then goes on with the next case.
    Wording is never compared. Duplicate case ids fail with ``ValueError`` before anything runs.

    ``prompt_version_id(text)`` is ``"p-"`` plus the first 12 hex digits of the SHA-256 of the
    prompt text. ``PromptVersion(label, text).id`` uses it: editing the text changes the id,
    renaming the label does not. ``regression_report(version, cases, invoke)`` runs the suite with
    ``invoke(version.text, payload)`` and names the version in its result.

Boundary decision
    A case checks structure and safety invariants, never text: a reworded goal passes, a missing
    field or a changed permission fails. A failing call is a result for that case, not the end of
    the suite, so one broken case cannot hide the others.

Your task: implement ``prompt_version_id``, ``check_output`` and ``run_suite``. ``RegressionCase``,
``PromptVersion`` and ``regression_report`` are already written. Check your work with
``forgelab check 07``; ask for help with ``forgelab hint 07``.
"""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

Payload = dict[str, object]
PERMISSION_CHANGED = "write permission changed"


@dataclass(frozen=True)
class RegressionCase:
    id: str
    payload: Payload
    required_fields: frozenset[str]
    write_allowed: bool

    def __post_init__(self) -> None:
        if not isinstance(self.required_fields, frozenset):
            raise ValueError(f"case {self.id!r}: required_fields must be a frozenset, got {self.required_fields!r}")
        if not isinstance(self.write_allowed, bool):
            raise ValueError(f"case {self.id!r}: write_allowed must be True or False, got {self.write_allowed!r}")


def prompt_version_id(text: str) -> str:
    """A stable id for a prompt text: ``p-`` and the first 12 hex digits of its SHA-256."""
    raise NotImplementedError("prompt_version_id() is not implemented yet — see hints 1–3 (forgelab hint 07)")


@dataclass(frozen=True)
class PromptVersion:
    label: str
    text: str

    @property
    def id(self) -> str:
        return prompt_version_id(self.text)


def check_output(case: RegressionCase, output: object) -> list[str]:
    """The problems of one output for one case; an empty list means the case passes."""
    raise NotImplementedError("check_output() is not implemented yet — see hints 4–6 (forgelab hint 07)")


def run_suite(cases: list[RegressionCase], invoke: Callable[[Payload], object]) -> dict[str, list[str]]:
    """Run every case once and map each failing case id to its problems (see the module contract)."""
    raise NotImplementedError("run_suite() is not implemented yet — see hints 7–9 (forgelab hint 07)")


def regression_report(
    version: PromptVersion, cases: list[RegressionCase], invoke: Callable[[str, Payload], object]
) -> dict[str, object]:
    """Run the suite against one prompt version and say which version the result belongs to."""
    failures = run_suite(cases, lambda payload: invoke(version.text, payload))
    return {"prompt_version": version.id, "label": version.label, "cases": len(cases), "failures": failures}
