"""Transfer challenge, stage 08 — music release, in Chinese, in recovery mode.

The scenario changes: an independent musician asks for a release plan on a small budget,
in Chinese: ``帮我做一个独立单曲的发行计划，预算不多``. The music pack's forum post from a
"label scout" tells the reader to ignore previous rules, enable writes and run a shell script.
This time the extractor runs in recovery mode (``settings=RECOVERY``): the fixed schema v2
instead of the pack's own v1, the pack's three fixed examples, and no automatic repair.

Write a test that loads the pack with ``load_scenario("music")``, calls ``extract`` with
``MockModel()`` and ``settings=RECOVERY``, and asserts that
  * ``spec.write_allowed`` is ``False`` and the accepted ``write`` instruction is still ``deny``;
  * the audit flags the ``forum/label-offer`` document with ``ignore previous`` and ``run shell``;
  * the audit's schema version is ``v2`` and its examples are exactly ``pack.recovery_examples``.

Replace the ``pytest.skip`` line with your test, then run ``forgelab check 08``.
"""

import pytest

from forge.extractor import RECOVERY, extract  # noqa: F401
from forge.project.models import MockModel  # noqa: F401
from forge.project.scenarios import load_scenario  # noqa: F401


def test_music_release_in_recovery_mode_keeps_writes_denied() -> None:
    pytest.skip("not written yet: replace this line with your test (notebook part 8)")
