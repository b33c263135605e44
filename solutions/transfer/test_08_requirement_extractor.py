"""Transfer challenge, stage 08 — music release, in Chinese, in recovery mode (reference test)."""

from forge.extractor import RECOVERY, extract
from forge.project.models import MockModel
from forge.project.scenarios import load_scenario


def test_music_release_in_recovery_mode_keeps_writes_denied() -> None:
    pack = load_scenario("music")
    result = extract(pack, "帮我做一个独立单曲的发行计划，预算不多", MockModel(), settings=RECOVERY)
    assert result.spec.write_allowed is False
    assert result.audit.accepted_value("write") == "deny"
    flags = {entry.source: entry.flags for entry in result.audit.injection}
    assert flags["forum/label-offer"] == ("ignore previous", "run shell")
    assert result.audit.schema_version == "v2"
    assert result.audit.examples == pack.recovery_examples
