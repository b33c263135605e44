"""Transfer challenge, stage 01 — office research.

The scenario changes: a research assistant drafts a decision brief. The system
instruction says ``write = deny``; this time the conflicting ``write = allow`` comes
from the *user*, not from a retrieved page.

Write a test that builds both instructions with ``Instruction``, calls ``resolve``,
and asserts that
  * ``accepted["write"]`` is ``"deny"`` (the system instruction still wins), and
  * the user's instruction is in the rejected list.

Replace the ``pytest.skip`` line with your test, then run ``forgelab check 01``.
"""

import pytest

from forge.instructions import Instruction, resolve  # noqa: F401


def test_office_user_cannot_override_system_write_policy() -> None:
    pytest.skip("not written yet: replace this line with your test (notebook part 8)")
