"""Regression test for fault lab 05 (bounded-output-repair): the course's example.

It pins the lab's defect: it fails on the broken copy of forge/output_repair.py and passes on the reference. It is
the stage test that shows the defect (test_non_json_prose_is_not_reinterpreted_as_permission) with what it needs from
tests/stages/test_05_bounded_output_repair.py. Never shipped to learners: it names the defect.
"""

from __future__ import annotations

from forge.output_repair import parse_json_object


def outcome(text: str) -> object:
    """What parse_json_object made of ``text``: the object it returned, or the word 'ValueError'."""
    try:
        return parse_json_object(text)
    except ValueError:
        return "ValueError"


def test_non_json_prose_is_not_reinterpreted_as_permission() -> None:
    assert outcome("please write files") == "ValueError"
