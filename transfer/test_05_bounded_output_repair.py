"""Transfer challenge, stage 05 — music release.

The scenario changes: an independent musician's planning assistant returns a release plan. The
model wraps it in a ``~~~json`` fence and leaves trailing commas after the last acceptance item and the last field:

    ~~~json
    {"goal": "release the single on streaming platforms", "acceptance": ["artwork approved", "published",],}
    ~~~

Write a test that calls ``parse_json_object`` and asserts that
  * the fenced plan gives exactly the object above without the commas (a ``dict``, nothing added), and
  * the same plan preceded by a chatty sentence ("Sure! Here is your plan:") raises ``ValueError``:
    repair removes wrapping, it never digs an object out of prose.

Replace the ``pytest.skip`` line with your test, then run ``forgelab check 05``.
"""

import pytest

from forge.output_repair import parse_json_object  # noqa: F401


def test_music_release_plan_is_repaired_without_inventing_anything() -> None:
    pytest.skip("not written yet: replace this line with your test (notebook part 8)")
