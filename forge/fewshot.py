"""Stage 03 — few-shot example selection.

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

Boundary decision
    Filter first, rank second, cut last. An example from another scenario or schema version
    is never shown, however many tags it shares: it would teach the model the wrong output
    shape. Ties are broken by id, so the choice is deterministic.

Your task: implement ``check_examples`` and ``select_examples``. Check your work with
``forgelab check 03``; ask for help with ``forgelab hint 03``.
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
    raise NotImplementedError("check_examples() is not implemented yet — see hints 1–3 (forgelab hint 03)")


def select_examples(
    items: list[Example],
    scenario: str,
    schema_version: str,
    task_tags: Iterable[str],
    limit: int = 2,
) -> list[Example]:
    """The best-matching examples for this task (see the module contract)."""
    raise NotImplementedError("select_examples() is not implemented yet — see hints 4–6 (forgelab hint 03)")
