"""Stage 03's seal probes: inputs the stage tests do not use, whose answers the contract fixes exactly.

The fault lab opens with a key made from these answers (forgelab.core.seal): the ids of the selected examples, in
order, for several requests.
"""

from __future__ import annotations

from collections.abc import Callable

from forge.fewshot import Example, select_examples

ITEMS = [Example("ex-09", "office", "v2", frozenset({"calendar", "email"})),
         Example("ex-02", "office", "v2", frozenset({"email"})),
         Example("ex-17", "office", "v1", frozenset({"calendar", "email", "table"})),
         Example("ex-04", "Office", "v2", frozenset({"calendar"})),
         Example("ex-11", "music", "v2", frozenset({"playlist", "email"})),
         Example("ex-01", "office", "v2", frozenset()),
         Example("ex-07", "office", "v2", frozenset({"table", "calendar"})),
         Example("ex-13", "office", "v2 ", frozenset({"calendar", "email"}))]


def test_selected(forgelab_record: Callable[[object], None]) -> None:
    requests = [("office", "v2", ["calendar", "email"], 3), ("office", "v2", ["table"], 2),
                ("office", "v1", ["email"], 2), ("music", "v2", [], 5), ("office", "v2", ["calendar"], 0),
                ("office", "v2", ["nothing"], 10)]
    forgelab_record([[example.id for example in select_examples(ITEMS, scenario, version, tags, limit)]
                     for scenario, version, tags, limit in requests])
