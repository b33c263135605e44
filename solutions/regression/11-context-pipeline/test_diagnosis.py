"""Regression test for fault lab 11 (context-pipeline): the course's example.

It pins the lab's defect: it fails on the broken copy of forge/context_pipeline.py and passes on the reference. It is
the stage test that shows the defect (test_an_early_constraint_outlives_ten_recent_search_hits) with what it needs from
tests/stages/test_11_context_pipeline.py. Never shipped to learners: it names the defect.
"""

from __future__ import annotations

from forge.context_pipeline import ContextObject, Decision, plan_deletions


O = ContextObject


E17 = O("e17", "evidence", "if config.exclude: return skip(item)", "r42", "src/filter.py#L60-95",
        ("type-config", "skip-def"), True)


TYPE_CONFIG = O("type-config", "evidence", "exclude: Filter = Filter([])", "r42", "src/config.py", ("filter-bool",), True)


FILTER_BOOL = O("filter-bool", "evidence", "Filter.__bool__ is True while the rule list object exists.", "r42",
                "src/filter_types.py", (), True)


SKIP_DEF = O("skip-def", "evidence", "skip(item) writes the item to the audit log.", "r42", "src/skip.py", (), True)


CODE = [E17, TYPE_CONFIG, FILTER_BOOL, SKIP_DEF]


def ids(decisions) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.object_id for d in decisions]


def search_hits(count: int) -> list[ContextObject]:
    return [O(f"hit-{n:02d}", "tool_output", f"Search result {n}: a forum page about filters.", "",
              f"search:filters#{n}") for n in range(count)]  # 10 units each


def test_an_early_constraint_outlives_ten_recent_search_hits() -> None:
    goal = O("goal", "goal", "Explain why an empty exclude filter skips items.")  # 9
    keep_api = O("keep-api", "constraint", "Do not change the public API.")  # 7
    objects = [goal, keep_api, *CODE, *search_hits(10)]
    decisions = plan_deletions(objects, 30)
    kept = [item.text for item in objects if item.id not in ids(decisions)]
    assert "Do not change the public API." in kept
    assert decisions == tuple(Decision(f"hit-{n:02d}", "tool_output", (), 10) for n in range(3))
