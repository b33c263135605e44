"""Transfer challenge, stage 01 — office research (reference test)."""

from forge.instructions import Instruction, resolve


def test_office_user_cannot_override_system_write_policy() -> None:
    system = Instruction("system", "write", "deny")
    user = Instruction("user", "write", "allow")
    accepted, rejected = resolve([system, user])
    assert accepted["write"] == "deny"
    assert user in rejected
