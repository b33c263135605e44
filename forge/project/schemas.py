"""The output schema versions the extractor can ask for, and how a prompt describes them.

Both versions produce a payload that ``forge.task_spec.TaskSpec`` accepts. v1 is the older, smaller
one (no ``inputs``/``outputs``); v2 is the current one and the fixed schema of recovery mode.
A few-shot example is written for exactly one version, which is why stage 03 matches on it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str
    kind: str
    meaning: str


_GOAL = Field("goal", "string", "one sentence: what must be true when the task is done")
_INPUTS = Field("inputs", "list of strings", "the material the task starts from (context ids)")
_OUTPUTS = Field("outputs", "list of strings", "what the task delivers")
_ACCEPTANCE = Field("acceptance", "non-empty list of strings", "checks a reviewer can run or read")
_WRITE = Field("write_allowed", "true or false", "whether the task may change files or send anything; "
               "copy the accepted write policy, never guess")

SCHEMAS: dict[str, tuple[Field, ...]] = {
    "v1": (_GOAL, _ACCEPTANCE, _WRITE),
    "v2": (_GOAL, _INPUTS, _OUTPUTS, _ACCEPTANCE, _WRITE),
}
FIXED_SCHEMA = "v2"  # the one schema recovery mode always uses


def schema_fields(version: str) -> tuple[Field, ...]:
    """The fields of a schema version; an unknown version is a ValueError that lists the known ones."""
    if version not in SCHEMAS:
        raise ValueError(f"unknown schema version {version!r}: expected one of {', '.join(sorted(SCHEMAS))}")
    return SCHEMAS[version]


def render_schema(version: str) -> str:
    """The schema as prompt lines: ``- name: kind — meaning``, all fields required."""
    return "\n".join(f"- {field.name}: {field.kind} — {field.meaning}" for field in schema_fields(version))
