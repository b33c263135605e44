"""Regression test for fault lab 01 (instruction-hierarchy): the course's example.

It pins the lab's defect: it fails on the broken copy of forge/instructions.py and passes on the reference. It is
the stage test that shows the defect (test_lower_trust_instruction_cannot_override_system) with what it needs from
tests/stages/test_01_instruction_hierarchy.py. Never shipped to learners: it names the defect.
"""

from __future__ import annotations

from forge.instructions import Instruction, resolve


def test_lower_trust_instruction_cannot_override_system() -> None:
    system = Instruction("system", "write", "deny")
    retrieved = Instruction("retrieved", "write", "allow")
    accepted, rejected = resolve([system, retrieved])
    assert accepted == {"write": "deny"}
    assert rejected == [retrieved]
