"""Stage 03 — few-shot example selection (FAULT LAB: this copy has a defect to find and fix).

Contract
    ``select_examples(items, scenario, schema_version, task_tags, limit=2) -> list[Example]``
    * keeps only examples whose ``scenario`` and ``schema_version`` both equal the requested
      ones exactly (no case folding, no "close enough" versions);
    * ranks them by tag overlap with ``task_tags`` (how many tags they share), largest
      first, equal overlap by id ascending — an example that shares no tag is still eligible;
    * returns at most ``limit`` of them.
    ``limit`` below 0 and an id used twice in ``items`` fail with ``ValueError``; ``limit`` 0
    returns ``[]``. The input list is never modified, and shuffling it does not change the
    result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    id: str
    scenario: str  # "software", "office" or "music"
    schema_version: str  # the output schema the example's answer follows, e.g. "v2"
    tags: frozenset[str]


def check_examples(items: list[Example], limit: int) -> None:
    """Fail with ValueError on a negative limit or a repeated example id."""
    if limit < 0:
        raise ValueError(f"limit must be 0 or more, got {limit}")
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise ValueError(f"duplicate example id {item.id!r}: every id must be unique")
        seen.add(item.id)


def select_examples(
    items: list[Example],
    scenario: str,
    schema_version: str,
    task_tags: Iterable[str],
    limit: int = 2,
) -> list[Example]:
    """The best-matching examples for this task (see the module contract)."""
    check_examples(items, limit)
    return items[:limit]
