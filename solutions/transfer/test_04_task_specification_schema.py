"""Transfer challenge, stage 04 — office research (reference test)."""

import pytest

from forge.task_spec import TaskSpec


def test_office_brief_with_unknown_priority_is_rejected() -> None:
    brief = {
        "goal": "compare the two vendor offers in a one-page decision brief",
        "acceptance": ["every claim cites a source", "a recommendation is stated"],
        "priority": "high",
    }
    with pytest.raises(ValueError, match=r"unknown fields:") as caught:
        TaskSpec.parse(brief)
    assert "priority" in str(caught.value)

    without_priority = {key: value for key, value in brief.items() if key != "priority"}
    with pytest.raises(ValueError, match=r"write_allowed must be explicit"):
        TaskSpec.parse(without_priority)
