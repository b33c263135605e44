"""Stage 09's seal probes: inputs the stage tests do not use, whose answers the contract fixes exactly.

The fault lab opens with a key made from these answers (forgelab.core.seal): each plan's selected ids, every
decision (id, selected, reason, winner), the sizes, the rendered context, and a rendered block.
"""

from __future__ import annotations

from collections.abc import Callable

from forge.memory_selection import MemoryCandidate, SelectionPolicy, render_memory_block, select_memories

MEMORIES = [
    MemoryCandidate("m1", "Prefers TypeScript for scripts", "lin", 0.82, 2, "preference:script-language",
                    source="chat:2026-04-01", captured_at="2026-04-01T09:00:00+02:00"),
    MemoryCandidate("m2", "Prefers Python for scripts", "lin", 0.64, 1, "preference:Script-Language",
                    "workspace_override", "repo:.forge/settings"),
    MemoryCandidate("m3", "prefers  typescript for SCRIPTS", "lin", 0.91, 3, "preference:script-language"),
    MemoryCandidate("m4", "Works on the <billing> & invoices team", "lin", 0.77, 4, source='hr "export"',
                    captured_at="2026-01-15T12:00:00Z"),
    MemoryCandidate("m5", "Lives in Porto", "ana", 0.99, 1),
    MemoryCandidate("m6", "Uses vim keybindings", "lin", 0.2, 5),
    MemoryCandidate("m7", "Answer in Portuguese this time", "lin", 0.5, 6, "reply:language", "current_turn"),
    MemoryCandidate("m8", "Likes long, detailed explanations with many worked examples and references", "lin", 0.7, 7),
    MemoryCandidate("m9", "Reviews pull requests on Fridays", "lin", 0.7, 8, captured_at="2026-05-02T08:00:00+00:00"),
]


def plan_of(policy: SelectionPolicy) -> list[object]:
    plan = select_memories(list(MEMORIES), "lin", policy)
    return [list(plan.selected), [[d.memory_id, d.selected, d.reason, d.winner] for d in plan.decisions],
            plan.used_chars, plan.used_tokens, plan.context]


def test_plans(forgelab_record: Callable[[object], None]) -> None:
    forgelab_record([plan_of(SelectionPolicy()), plan_of(SelectionPolicy(0.5, 3, 3000, 800)),
                     plan_of(SelectionPolicy(0.35, 5, 260, 800)), plan_of(SelectionPolicy(0.35, 5, 3000, 40))])


def test_block(forgelab_record: Callable[[object], None]) -> None:
    block = render_memory_block([MEMORIES[3], MEMORIES[6]])
    forgelab_record([block.text, block.tokens, render_memory_block([]).text])
