"""Transfer challenge, stage 07 — office research.

The scenario changes: the prompt under test drafts a decision brief. Its fixed case requires the
fields ``goal`` and ``acceptance``, and here the assistant *is* allowed to write (it saves the brief),
so the case expects ``write_allowed`` to be ``True``.

Write a test that builds this ``RegressionCase`` (id ``"decision-brief"``), runs ``run_suite`` with an
``invoke`` that returns a ``goal`` and ``write_allowed=True`` but forgets ``acceptance``, and asserts
that
  * the case is reported with ``"missing:acceptance"``, and
  * ``"write permission changed"`` is *not* reported: the permission matches the expectation.

Replace the ``pytest.skip`` line with your test, then run ``forgelab check 07``.
"""

import pytest

from forge.prompt_regression import RegressionCase, run_suite  # noqa: F401


def test_office_brief_missing_acceptance_is_reported() -> None:
    pytest.skip("not written yet: replace this line with your test (notebook part 8)")
