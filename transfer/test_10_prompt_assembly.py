"""Transfer challenge, stage 10 — office research.

The scenario changes: a research assistant drafts a decision brief with citations. The model
has a context window of 1000 tokens; 600 are kept for the answer, 200 for the results of tool
calls (R), 100 as a safety margin. The call offers six segments:
  * system  — "You are a research assistant. Every claim in a brief needs a citation."
  * policy  — "Cite only the evidence below; never invent a source."
  * memory  — a long summary of the team's earlier briefs (about 46 units), e.g. "Earlier briefs
              for this team: in March they chose a shared spreadsheet over a BI tool because of
              licence costs; in June they asked for shorter briefs with one recommendation and at
              most three risks; the finance lead prefers numbers in euros."
  * evidence — "Team survey, May: 14 of 18 people read the weekly report on their phone."
  * evidence — "Dashboard vendor price list: 9 euros per user and month, 12 months minimum."
  * user    — "Draft a one-page decision brief: should we replace the weekly PDF report with a
              live dashboard?"

Write a test that computes the budget with ``input_budget``, builds the segments with
``Segment``, calls ``assemble`` and asserts that
  * the user's request is the last part of the prompt, word for word;
  * both pieces of evidence are included;
  * the memory summary is not in the prompt, and ``MEMORY_NOTICE`` is;
  * ``used_tokens`` does not exceed the budget.

Replace the ``pytest.skip`` line with your test, then run ``forgelab check 10``.
"""

import pytest

from forge.prompt_assembly import MEMORY_NOTICE, Segment, assemble, input_budget  # noqa: F401


def test_office_brief_keeps_the_request_whole_and_skips_memory_visibly() -> None:
    pytest.skip("not written yet: replace this line with your test (notebook part 8)")
