"""Transfer challenge, stage 04 — office research.

The scenario changes: a research assistant turns a request into a decision brief. The model's
answer looks like this — it invented a ``priority`` field and never said whether the task may
write anything:

    {"goal": "compare the two vendor offers in a one-page decision brief",
     "acceptance": ["every claim cites a source", "a recommendation is stated"],
     "priority": "high"}

Write a test that calls ``TaskSpec.parse`` on this payload and asserts that
  * it raises ``ValueError`` whose message contains ``unknown fields:`` and names ``priority``;
  * after removing ``priority``, parsing still fails — now because ``write_allowed`` is missing
    (the message mentions ``write_allowed must be explicit``). Fixing one problem must not let
    the other one through.

Replace the ``pytest.skip`` line with your test, then run ``forgelab check 04``.
"""

import pytest

from forge.task_spec import TaskSpec  # noqa: F401


def test_office_brief_with_unknown_priority_is_rejected() -> None:
    pytest.skip("not written yet: replace this line with your test (notebook part 8)")
