"""Transfer challenge, stage 11 — office research (reference test)."""

from forge.context_pipeline import ContextObject, Decision, close_dependencies, invalidate, plan_deletions


def test_office_price_claim_follows_its_price_list() -> None:
    goal = ContextObject("goal", "goal", "Draft a one-page decision brief: should we replace the weekly PDF report "
                         "with a live dashboard?")
    cite = ContextObject("cite", "constraint", "Every number in the brief cites its source.")
    prices = ContextObject("prices", "evidence", "Dashboard vendor price list: 9 euros per user and month, 12 months "
                           "minimum.", "r3", "vendor/price-list.pdf")
    claim = ContextObject("claim", "state", "The dashboard costs 9 euros per user and month.",
                          depends_on=("prices",), expires_on_change=True)
    hits = [ContextObject(f"hit-{n}", "tool_output", f"Search result {n}: a comparison of BI tools from 2021.",
                          source=f"search:bi#{n}") for n in range(1, 7)]
    objects = [goal, cite, prices, claim, *hits]

    assert invalidate(objects, "prices", "r4") == (Decision("prices", "revision_changed"),
                                                    Decision("claim", "dependency_changed", ("prices",)))
    without_list = close_dependencies(["claim"], [goal, cite, claim, *hits])
    assert without_list.decisions == (Decision("claim", "missing_dependency", ("prices",)),)
    assert without_list.admitted == ()

    deleted = {decision.object_id for decision in plan_deletions(objects, 27)}
    assert deleted and deleted <= {hit.id for hit in hits}
    assert not deleted & {"goal", "cite", "prices", "claim"}
