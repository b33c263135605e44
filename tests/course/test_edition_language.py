"""Which language the tools speak: --lang, FORGE_LANG, the workbook's edition, the locale, English."""

from __future__ import annotations

import pytest

from forgelab.core.i18n import EDITION_FILE, LanguageError, resolve, workbook_edition


def test_the_order_is_flag_then_environment_then_edition_then_locale() -> None:
    assert resolve(None, {}, None) == "en"
    assert resolve(None, {"LANG": "zh_CN.UTF-8"}, None) == "zh"
    assert resolve(None, {"LANG": "en_US.UTF-8"}, "zh") == "zh"  # a Chinese bundle speaks Chinese on any machine
    assert resolve(None, {"FORGE_LANG": "en", "LANG": "zh_CN.UTF-8"}, "zh") == "en"
    assert resolve("zh", {"FORGE_LANG": "en"}, "en") == "zh"


def test_the_edition_file_is_read_and_checked(tmp_path) -> None:
    assert workbook_edition(tmp_path) is None
    (tmp_path / EDITION_FILE).parent.mkdir(parents=True)
    (tmp_path / EDITION_FILE).write_text('language = "zh-Hans"\n', encoding="utf-8")
    assert workbook_edition(tmp_path) == "zh"
    (tmp_path / EDITION_FILE).write_text('language = "fr"\n', encoding="utf-8")
    with pytest.raises(LanguageError, match=r"edition\.toml: language = 'fr' is not a known language"):
        workbook_edition(tmp_path)
    (tmp_path / EDITION_FILE).write_text("language = \n", encoding="utf-8")
    with pytest.raises(LanguageError, match="cannot read it"):
        workbook_edition(tmp_path)
