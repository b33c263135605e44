"""Stage 11's seal probes: inputs the stage tests do not use, whose answers the contract fixes exactly.

The fault lab opens with a key made from these answers (forgelab.core.seal): closures, invalidations, a cache
decision with its exact costs, and deletion plans — every decision with its reason, related ids and tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from forge.context_pipeline import ContextObject, cache_break_even, close_dependencies, invalidate, plan_deletions

OBJECTS = [ContextObject("goal", "goal", "Ship the invoice export by Friday."),
           ContextObject("no-prod", "constraint", "Never touch the production database."),
           ContextObject("schema", "tool_schema", "export(format, since)", "r3", "tools/export.json"),
           ContextObject("api", "evidence", "The export endpoint pages by 500 rows.", "r7", "docs/api.md", ("schema",), True),
           ContextObject("api-copy", "evidence", "the export endpoint   pages by 500 ROWS.", "r7", "docs/api-v2.md"),
           ContextObject("run-1", "tool_output", "export(csv) -> 12 000 rows in 4.1 s, 3 warnings about encodings", "r1",
                         "runs/1.log"),
           ContextObject("chat", "history", "user: can we also do xlsx? assistant: later, csv first.", "", "chat/12"),
           ContextObject("digest", "summary", "Export pages by 500; csv first.", "r2", "", (), False, ("api", "chat")),
           ContextObject("plan", "state", "Step 2 of 4: pagination.", "", "", ("api", "digest"), True),
           ContextObject("loop-a", "evidence", "A needs B.", "", "x/a", ("loop-b",)),
           ContextObject("loop-b", "evidence", "B needs A.", "", "x/b", ("loop-a",)),
           ContextObject("orphan", "evidence", "Needs something gone.", "", "x/o", ("gone",))]


def _decisions(decisions: object) -> list[object]:
    return [[d.object_id, d.reason, list(d.related), d.tokens] for d in decisions]  # type: ignore[attr-defined]


def test_closure(forgelab_record: Callable[[object], None]) -> None:
    closure = close_dependencies(["plan", "loop-a", "orphan", "goal"], list(OBJECTS))
    forgelab_record([list(closure.admitted), _decisions(closure.decisions)])


def test_invalidated(forgelab_record: Callable[[object], None]) -> None:
    forgelab_record([_decisions(invalidate(list(OBJECTS), "schema", "r4")), _decisions(invalidate(list(OBJECTS), "api", "r8")),
                     _decisions(invalidate(list(OBJECTS), "api", "r7"))])


def test_cache(forgelab_record: Callable[[object], None]) -> None:
    answers = []
    for reuses, write in ((3, Fraction(5, 4)), (1, Fraction(2)), (0, Fraction(1))):
        found = cache_break_even(12_000, reuses, Fraction(3, 1_000_000), Fraction(3, 10_000_000), write * Fraction(3, 1_000_000))
        answers.append([found.decision, str(Fraction(found.cached_cost)), str(Fraction(found.uncached_cost))])
    forgelab_record(answers)


def test_deletions(forgelab_record: Callable[[object], None]) -> None:
    forgelab_record([_decisions(plan_deletions(list(OBJECTS[:9]), over_by, needed, stale))
                     for over_by, needed, stale in ((5, None, ()), (30, ["api", "schema"], ["run-1"]), (40, None, ["chat"]))])
