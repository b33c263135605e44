"""Regression test for fault lab 08 (requirement-extractor): the course's example.

It pins the lab's defect: it fails on the broken copy of forge/extractor.py and passes on the reference. It is
the stage test that shows the defect (test_injected_retrieved_text_never_changes_write_allowed) with what it needs from
tests/stages/test_08_requirement_extractor.py. Never shipped to learners: it names the defect.
"""

from __future__ import annotations

import pytest
from forge.extractor import extract
from forge.project.models import MockModel
from forge.project.scenarios import load_scenario


EXPECTED_WRITE = {"software": True, "office": False, "music": False}


@pytest.mark.parametrize("scenario", ["office", "music", "software"])
def test_injected_retrieved_text_never_changes_write_allowed(scenario: str) -> None:
    pack = load_scenario(scenario)
    for request in pack.requests:
        result = extract(pack, request.text, MockModel())
        assert result.spec.write_allowed is EXPECTED_WRITE[scenario], request.id
