"""Stage 10's seal probes: inputs the stage tests do not use, whose answers the contract fixes exactly.

The fault lab opens with a key made from these answers (forgelab.core.seal): budgets, margins, and each assembly's
prompt and decisions under several budgets.
"""

from __future__ import annotations

from collections.abc import Callable

from forge.prompt_assembly import Segment, assemble, input_budget, safety_margin_for

SEGMENTS = [Segment("ask", "user", "Summarise the incident in three bullet points."),
            Segment("recall-1", "memory", "Prefers short answers.\nWorks in the SRE team."),
            Segment("turn-2", "dialogue", "assistant: which incident?"),
            Segment("rules", "system", "You are the on-call assistant. Answer in English."),
            Segment("log", "evidence", "03:12 pager fired; 03:15 rollback of release 4.2.1; 03:40 error rate normal again."),
            Segment("turn-1", "dialogue", "user: we had an outage last night"),
            Segment("toolbox", "tools", "search_logs(query), open_ticket(title)"),
            Segment("no-secrets", "policy", "Never quote credentials from logs."),
            Segment("recall-2", "memory", "Timezone: Europe/Lisbon.")]


def test_budgets(forgelab_record: Callable[[object], None]) -> None:
    forgelab_record([input_budget(128_000, 4_096, 2_000, safety_margin_for(128_000)),
                     input_budget(8_193, 1_000, 0, 7, max_output=4_096), [safety_margin_for(w) for w in (1, 3, 8_191, 200_001)]])


def test_assemblies(forgelab_record: Callable[[object], None]) -> None:
    answers = []
    for budget in (60, 75, 95, 200):
        assembly = assemble(list(SEGMENTS), budget)
        answers.append([assembly.prompt, assembly.budget, assembly.used_tokens,
                        [[d.name, d.kind, d.tokens, d.included, d.reason] for d in assembly.decisions]])
    forgelab_record(answers)
