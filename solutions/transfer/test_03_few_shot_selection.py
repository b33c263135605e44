"""Transfer challenge, stage 03 — office research (reference test)."""

from forge.fewshot import Example, select_examples


def test_office_brief_gets_the_example_with_the_largest_overlap() -> None:
    items = [
        Example("v1-brief", "office", "v1", frozenset({"table", "report", "citations"})),
        Example("memo", "office", "v2", frozenset({"report"})),
        Example("budget-table", "office", "v2", frozenset({"table", "report"})),
        Example("meeting-notes", "office", "v2", frozenset({"minutes"})),
    ]
    result = select_examples(items, "office", "v2", {"table", "report"}, limit=1)
    assert len(result) == 1
    chosen = result[0]
    assert (chosen.scenario, chosen.schema_version) == ("office", "v2")
    assert chosen.id == "budget-table"
