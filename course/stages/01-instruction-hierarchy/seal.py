"""Stage 01's seal probes: inputs the stage tests do not use, whose answers the contract fixes exactly.

The fault lab opens with a key made from these answers (forgelab.core.seal): the accepted values, the rejected
instructions in their order, and each rejection's winner and reason.
"""

from __future__ import annotations

from collections.abc import Callable

from forge.instructions import Instruction, explain, resolve

ITEMS = [Instruction("retrieved", "tone", "shout"), Instruction("user", "language", "fr"),
         Instruction("developer", "tone", "calm"), Instruction("system", "language", "en"),
         Instruction("user", "tone", "playful"), Instruction("developer", "tone", "terse"),
         Instruction("retrieved", "format", "html"), Instruction("user", "format", "markdown")]


def _plain(item: Instruction) -> list[str]:
    return [item.source, item.key, item.value]


def test_resolved(forgelab_record: Callable[[object], None]) -> None:
    accepted, rejected = resolve(ITEMS)
    forgelab_record([accepted, [_plain(item) for item in rejected]])


def test_explained(forgelab_record: Callable[[object], None]) -> None:
    winners, rejections = explain(list(reversed(ITEMS)))
    forgelab_record([{key: _plain(item) for key, item in winners.items()},
                     [[_plain(r.instruction), _plain(r.winner), r.reason] for r in rejections]])
