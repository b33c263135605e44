"""Where a kept library does the work, forgelab uses it instead of a hand-written copy (issue 33).

* The class report page speaks through ``jinja2.ext.i18n`` and the project's gettext catalogs, like every other
  page: its words are messages of its template, extracted into the catalogs (no dictionary of labels in Python).
"""

from __future__ import annotations

from forgelab.authoring.catalogs import extracted
from forgelab.core.i18n import translations

REPORT_TEMPLATE = "forgelab/data/templates/class-report.html.j2"


def test_the_class_report_words_are_messages_of_its_template_translated_in_both_editions() -> None:
    found = {message for message, places in extracted().items()
             if any(place.startswith(f"{REPORT_TEMPLATE}:") for place in places)}
    assert {"Class report", "Item analysis", "Failure rates", "median time from the first check to acceptance",
            "Prediction quiz: first answers"} <= found
    assert len(found) >= 60
    chinese = translations("zh")
    untranslated = sorted(message for message in found if chinese.gettext(message) == message)
    assert untranslated == []
