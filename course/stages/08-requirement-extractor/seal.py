"""Stage 08's seal probes: inputs the stage tests do not use, whose answers the contract fixes exactly.

The fault lab opens with a key made from these answers (forgelab.core.seal): the decisions in each extraction's
audit (instructions, context, examples, flags, the template's version), the strict spec, and which step rejects a
bad answer — never the prompt's exact text or its token counts.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from forge.extractor import RECOVERY, ExtractionError, extract
from forge.project.models import MockModel
from forge.project.scenarios import load_scenario

REQUESTS = [("software", "Add a dark-mode toggle to the settings page and cover it with tests"),
            ("office", "把上周的会议纪要整理成一页摘要"),
            ("music", "Suggest a calm playlist for a rainy Sunday")]


class Answering:
    """A model that always gives one answer."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    @property
    def model_id(self) -> str:
        return "answering"

    def complete(self, prompt: str) -> str:
        return self.answer


def decisions(audit: object) -> list[object]:
    a = audit  # the audit's fields, as the contract names them
    return [a.scenario, a.request, a.mode, a.schema_version,  # type: ignore[attr-defined]
            [[i.key, i.value, i.source] for i in a.accepted],  # type: ignore[attr-defined]
            [[r.source, r.key, r.value, r.reason, r.winner] for r in a.rejected],  # type: ignore[attr-defined]
            list(a.context_chosen), list(a.context_dropped), a.context_tokens, a.context_budget,  # type: ignore[attr-defined]
            list(a.examples), [[d.source, list(d.flags)] for d in a.injection], a.prompt_version]  # type: ignore[attr-defined]


def test_standard(forgelab_record: Callable[[object], None]) -> None:
    results = [extract(load_scenario(scenario), request, MockModel()) for scenario, request in REQUESTS]
    forgelab_record([[decisions(r.audit), list(r.audit.repairs), r.spec.goal, list(r.spec.inputs), r.spec.write_allowed]
                     for r in results])


def test_recovery(forgelab_record: Callable[[object], None]) -> None:
    scenario, request = REQUESTS[1]
    answer = json.dumps({"goal": "一页摘要", "acceptance": ["不超过一页"], "write_allowed": False}, ensure_ascii=False)
    result = extract(load_scenario(scenario), request, Answering(answer), settings=RECOVERY)
    forgelab_record([decisions(result.audit), result.spec.goal, list(result.spec.acceptance)])


def test_rejected_by(forgelab_record: Callable[[object], None]) -> None:
    answers = ['{"goal": "g", "acceptance": ["a"], "write_allowed": true}',
               '{"goal": "g", "acceptance": ["a"], "write_allowed": false, "shell": "ls"}',
               'Sure! {"goal": "g"}',
               '```json\n{"goal": "g", "acceptance": ["a"], "write_allowed": false,}\n```']
    steps = []
    for answer in answers:
        try:
            extract(load_scenario("music"), "Suggest a calm playlist for a rainy Sunday", Answering(answer))
        except ExtractionError as error:
            steps.append(error.step)
        else:
            steps.append("accepted")
    forgelab_record(steps)
