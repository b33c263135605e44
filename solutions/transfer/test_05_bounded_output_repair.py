"""Transfer challenge, stage 05 — music release (reference test)."""

import pytest

from forge.output_repair import parse_json_object

PLAN = '{"goal": "release the single on streaming platforms", "acceptance": ["artwork approved", "published",],}'


def test_music_release_plan_is_repaired_without_inventing_anything() -> None:
    plan = parse_json_object(f"~~~json\n{PLAN}\n~~~")
    assert plan == {
        "goal": "release the single on streaming platforms",
        "acceptance": ["artwork approved", "published"],
    }
    with pytest.raises(ValueError):
        parse_json_object(f"Sure! Here is your plan:\n~~~json\n{PLAN}\n~~~")
