"""Regression test for fault lab 04 (task-specification-schema): the course's example.

It pins the lab's defect: it fails on the broken copy of forge/task_spec.py and passes on the reference. It is
the stage test that shows the defect (test_write_permission_must_be_explicit) with what it needs from
tests/stages/test_04_task_specification_schema.py. Never shipped to learners: it names the defect.
"""

from __future__ import annotations

import pytest
from forge.task_spec import TaskSpec


def test_write_permission_must_be_explicit() -> None:
    with pytest.raises(ValueError, match=r"\bwrite_allowed must be explicit\b"):
        TaskSpec.parse({"goal": "add tests", "acceptance": ["pytest passes"]})
