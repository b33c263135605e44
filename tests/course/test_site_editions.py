"""`forgelab site build --lang en|zh|all`: the course page in both editions, as files.

With ``all``, English is at the site's root and Chinese under ``zh/``, each edition complete (its own
assets, figures and bundle); every page links to the same page in the other edition (the language
switch and hreflang alternates) and says its language in ``<html lang>``. One language builds that
edition alone at the root. The browser side (the self-check in Chinese) is in test_site_browser.py and
test_site_editions_browser.py.
"""

from __future__ import annotations

import html
import json
import re
import zipfile
from dataclasses import replace
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pytest
from markupsafe import escape  # how the templates escape (" is &#34;)

from browser import ROOT
from conftest import CliResult, OutputLines, run_cli, start_cli, wait_for_http
from released import bundles_built_once

from forgelab.core.registry import load_course
from forgelab.site.builder import SiteError, build_site, script_messages, script_strings
from forgelab.authoring.publish import publish_site

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
PO = ROOT / "forgelab" / "locale" / "zh" / "LC_MESSAGES" / "forgelab.po"
HTML_LANG = {"en": "en", "zh": "zh-CN"}


# The two published sites are module fixtures: made once per run only if the module keeps to one xdist worker (make
# test runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("site-editions")


@pytest.fixture(scope="module", autouse=True)
def bundles_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every site this module publishes gets each edition's bundle built once per run (released.py)."""
    with bundles_built_once(tmp_path_factory):
        yield


@pytest.fixture(scope="module")
def course():  # type: ignore[no-untyped-def]
    return load_course(ROOT)


@pytest.fixture(scope="module")
def site_all(tmp_path_factory: pytest.TempPathFactory, course) -> Path:  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("site-all") / "site"
    publish_site(course, out, editions=("en", "zh"))
    return out


@pytest.fixture(scope="module")
def site_zh(tmp_path_factory: pytest.TempPathFactory, course) -> Path:  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("site-zh") / "site"
    publish_site(course, out, editions=("zh",))
    return out


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _pages(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.html"))


def _visible(page: str) -> str:
    """The text a reader sees: no scripts, no tags; code spans left out (identifiers stay English)."""
    page = re.sub(r"<(script|style|head)\b.*?</\1>", " ", page, flags=re.S)
    page = re.sub(r"<code>.*?</code>", " ", page, flags=re.S)
    page = re.sub(r"<[^>]+>", " ", page)
    return " ".join(html.unescape(page).split())


def _attribute(page: str, pattern: str) -> list[str]:
    return [html.unescape(value) for value in re.findall(pattern, page)]


def _resolve(page: Path, href: str) -> Path:
    return (page.parent / PurePosixPath(href)).resolve()


# ---------------------------------------------------------------- layout and language


def test_all_puts_english_at_the_root_and_chinese_under_zh_each_complete(site_all: Path, course) -> None:  # type: ignore[no-untyped-def]
    names = ["index.html"] + [f"{stage.key}.html" for stage in course.stages]
    for folder, zip_name in ((site_all, "forge-workbook-lab.zip"), (site_all / "zh", "forge-workbook-lab-zh.zip")):
        assert sorted(p.name for p in _pages(folder)) == sorted(names)
        for asset in ("site.css", "verify.js", "page.js", "strings.js", "course-data.js"):
            assert (folder / "assets" / asset).is_file(), (folder, asset)
        assert [p.name for p in (folder / "downloads").iterdir()] == [zip_name]
        assert sorted(p.name for p in (folder / "figures").iterdir()) == sorted(p.name for p in (site_all / "figures").iterdir())
    assert (site_all / ".forgelab-site").is_file() and not (site_all / "zh" / ".forgelab-site").exists()


def test_every_page_says_its_language(site_all: Path, site_zh: Path) -> None:
    for folder, language in ((site_all, "en"), (site_all / "zh", "zh"), (site_zh, "zh")):
        for page in _pages(folder):
            text = page.read_text(encoding="utf-8")
            assert text.count("<html ") == 1 and f'<html lang="{HTML_LANG[language]}">' in text, page


def test_hreflang_alternates_name_the_same_page_in_every_edition(site_all: Path) -> None:
    for folder in (site_all, site_all / "zh"):
        for page in _pages(folder):
            text = page.read_text(encoding="utf-8")
            links = dict(re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)">', text))
            assert set(links) == {"en", "zh-CN", "x-default"}, page
            assert _resolve(page, links["en"]) == (site_all / page.name).resolve()
            assert _resolve(page, links["zh-CN"]) == (site_all / "zh" / page.name).resolve()
            assert links["x-default"] == links["en"]
            assert all(_resolve(page, href).is_file() for href in links.values())


def test_the_language_switch_goes_to_the_same_page_and_back(site_all: Path) -> None:
    for page in _pages(site_all):
        text = page.read_text(encoding="utf-8")
        switch = re.search(r'<nav class="language-switch" aria-label="([^"]+)">(.*?)</nav>', text)
        assert switch, page
        assert switch.group(1) == "This page in another language"
        assert '<span class="current-language" lang="en" aria-current="true">English</span>' in switch.group(2)
        there = re.search(r'<a href="([^"]+)" hreflang="zh-CN" lang="zh-CN" data-language="zh">中文</a>', switch.group(2))
        assert there, switch.group(2)
        chinese = _resolve(page, there.group(1))
        assert chinese == (site_all / "zh" / page.name).resolve()
        back_text = chinese.read_text(encoding="utf-8")
        back = re.search(r'<a href="([^"]+)" hreflang="en" lang="en" data-language="en">English</a>', back_text)
        assert back and _resolve(chinese, back.group(1)) == page.resolve()  # the round trip ends where it started
        assert 'aria-label="本页的其他语言版本"' in back_text
        assert '<span class="current-language" lang="zh-CN" aria-current="true">中文</span>' in back_text
        same = re.search(r'data-page="(\w+)"(?: data-stage="(\d+)")?', text)
        assert same and same.group(0) in back_text  # the same page: index, or the same stage


def test_one_language_builds_that_edition_alone_at_the_root(site_zh: Path, tmp_path: Path, course) -> None:  # type: ignore[no-untyped-def]
    assert not (site_zh / "zh").exists()
    assert [p.name for p in (site_zh / "downloads").iterdir()] == ["forge-workbook-lab-zh.zip"]
    english = tmp_path / "en"
    build_site(course, english, editions=("en",))
    for folder in (site_zh, english):
        for page in _pages(folder):
            text = page.read_text(encoding="utf-8")
            assert "language-switch" not in text and "hreflang" not in text, page  # no other edition to switch to


def test_the_zh_folder_of_all_equals_the_zh_build_but_for_the_switch(site_all: Path, site_zh: Path) -> None:
    """Each edition is complete in itself: zh/ could be published alone."""
    alone = {name: data for name, data in _files(site_zh).items() if name != ".forgelab-site"}
    inside = _files(site_all / "zh")
    assert sorted(alone) == sorted(inside)
    for name, data in alone.items():
        if not name.endswith(".html"):
            assert inside[name] == data, name
            continue
        page = inside[name].decode("utf-8")
        without = re.sub(r'<link rel="alternate" hreflang="[^"]+" href="[^"]+">\n', "", page)
        without = re.sub(r'<nav class="language-switch".*?</nav>\n', "", without)
        assert without == data.decode("utf-8"), name


def test_each_edition_downloads_its_own_bundle(site_all: Path) -> None:
    for folder, zip_name, language in ((site_all, "forge-workbook-lab.zip", None),
                                       (site_all / "zh", "forge-workbook-lab-zh.zip", "zh")):
        for page in _pages(folder):
            text = page.read_text(encoding="utf-8")
            hrefs = re.findall(r'<a class="download" href="([^"]+)" download data-bundle>', text)
            assert hrefs == [f"downloads/{zip_name}"], page
            assert _resolve(page, hrefs[0]).is_file()
        with zipfile.ZipFile(folder / "downloads" / zip_name) as archive:
            names = archive.namelist()
            edition = "forge-workbook-lab/course/edition.toml"
            if language:
                assert f'language = "{language}"' in archive.read(edition).decode("utf-8")
            else:
                assert edition not in names
    zh_index = (site_all / "zh" / "index.html").read_text(encoding="utf-8")
    assert ">下载实验包</a>" in zh_index
    assert "这是中文版实验包" in _visible(zh_index) and "notebooks/zh/" in zh_index and "course/edition.toml" in zh_index
    en_index = (site_all / "index.html").read_text(encoding="utf-8")
    assert ">Download the lab bundle</a>" in en_index and "Chinese edition" not in en_index


def test_the_chinese_pages_speak_chinese(site_all: Path, course) -> None:  # type: ignore[no-untyped-def]
    from forgelab.core import figures

    index = (site_all / "zh" / "index.html").read_text(encoding="utf-8")
    visible = _visible(index)
    assert course.text("title", "zh") in visible and "阶段 01 · " + course.stages[0].text("zh").title in visible
    for words in ("开始之前", "清除全部进度", "卡住了？最小恢复点", "进度：", "未开始", "实验包里，同样的开篇是"):
        assert words in visible, words
    assert "notebooks/zh/00-opening.ipynb" in index
    assert "进度和本地实验自检需要 JavaScript" in index  # the noscript text
    for stage in course.stages:
        page = (site_all / "zh" / f"{stage.key}.html").read_text(encoding="utf-8")
        text = _visible(page)
        assert f"<title>阶段 {stage.number} · {escape(stage.text('zh').title)}" in page
        for words in ("实验卡片", "验收标准", "本地实验自检", "状态：未开始（第 1 步，共 5 步）。", "选择你的 verification.json",
                      "清除本阶段的进度", "能力链", "完成标准", "一图看懂", f"阶段 {stage.number}"):
            assert words in text, (stage.key, words)
        assert "本地实验自检需要 JavaScript" in page
        for figure in figures.stage_figures(stage.source_dir):
            assert f'alt="{escape(figure.alt_in("zh"))}"' in page
        # the course's own Chinese texts, not the English ones
        assert escape(stage.text("zh").title) in page and escape(stage.text("en").title) not in text


NAMES = {"Forge Workbook"}  # the product's name is the same in both editions


def _english_sentences() -> set[str]:
    """Every stretch of English of two words or more in the catalog's messages (between placeholders and code)."""
    from babel.messages.pofile import read_po

    with PO.open("rb") as handle:
        catalog = read_po(handle, locale="zh")
    found = set()
    for message in catalog:
        for text in (message.id if isinstance(message.id, tuple) else (message.id,)):
            for part in re.split(r"\{[^{}]*\}|`[^`]*`|\*\*", text or ""):
                part = part.strip(" .,:;()—-")
                words = re.findall(r"[A-Za-z]+", part)  # two words or more, one of them a real word ("s in" is not)
                if len(words) >= 2 and max(map(len, words)) >= 3 and part not in NAMES:
                    found.add(part)
    return found


def test_no_chinese_page_shows_an_english_sentence_of_the_catalog(site_all: Path, site_zh: Path) -> None:
    pytest.importorskip("babel")
    sentences = _english_sentences()
    assert len(sentences) > 300
    english_index = _visible((site_all / "index.html").read_text(encoding="utf-8"))
    assert sum(sentence in english_index for sentence in sentences) >= 10  # the check sees them where they are
    for folder in (site_all / "zh", site_zh):
        for page in _pages(folder):
            text = _visible(page.read_text(encoding="utf-8"))
            assert [sentence for sentence in sentences if sentence in text] == [], page


def test_the_scripts_words_come_from_the_catalog_in_each_edition(site_all: Path) -> None:
    def strings(folder: Path) -> dict[str, str]:
        text = (folder / "assets" / "strings.js").read_text(encoding="utf-8")
        return json.loads(text.split("window.FORGE_STRINGS = ", 1)[1].rstrip().rstrip(";"))

    english, chinese = strings(site_all), strings(site_all / "zh")
    assert sorted(english) == sorted(chinese) == sorted(script_messages())
    assert len(english) > 100 and all(key == value for key, value in english.items())
    untranslated = [key for key, value in chinese.items() if value == key or not CJK.search(value)]
    assert untranslated == []
    assert chinese["Self-check passed"] == "本地自检通过" and chinese["File: {file}"] == "文件：{file}"
    for key, value in chinese.items():  # the placeholders the scripts fill are all there
        assert sorted(re.findall(r"\{\w+\}", key)) == sorted(re.findall(r"\{\w+\}", value)), key
    assert script_strings("zh") == chinese


def test_the_builders_message_list_is_what_babel_extracts_from_the_scripts() -> None:
    pytest.importorskip("babel")
    from forgelab.authoring.catalogs import extracted

    from_scripts = {key for key, places in extracted().items() if any("/site/assets/" in place for place in places)}
    assert from_scripts == set(script_messages())


def test_no_literal_asterisk_is_left_on_any_page(site_all: Path) -> None:
    for folder in (site_all, site_all / "zh"):
        for page in _pages(folder):
            text = _visible(page.read_text(encoding="utf-8"))
            assert "*" not in text, (page, text[max(0, text.find("*") - 60):text.find("*") + 60])
    stage_01 = (site_all / "zh" / "01-instruction-hierarchy.html").read_text(encoding="utf-8")
    assert "<em>可信层级</em>" in stage_01


def test_the_security_policy_is_the_same_in_both_editions(site_all: Path) -> None:
    from forgelab.site.pages import CSP

    for folder in (site_all, site_all / "zh"):
        for page in _pages(folder):
            text = page.read_text(encoding="utf-8")
            assert f'<meta http-equiv="Content-Security-Policy" content="{escape(CSP)}">' in text
            assert not re.search(r"<[^>]+\son[a-z]+\s*=", text)
            assert '<script src="assets/strings.js"></script>\n<script src="assets/course-data.js"></script>' in text


def test_all_is_reproducible_byte_for_byte(site_all: Path, tmp_path: Path, course) -> None:  # type: ignore[no-untyped-def]
    again = tmp_path / "again"
    publish_site(course, again, editions=("zh", "en"))  # the order asked for does not matter
    assert _files(again) == _files(site_all)


def test_an_edition_the_course_does_not_have_is_refused(tmp_path: Path, course) -> None:  # type: ignore[no-untyped-def]
    english_only = replace(course, languages=("en",))
    with pytest.raises(SiteError, match=r"the course has no 'zh' edition .*choose one of them with --lang"):
        build_site(english_only, tmp_path / "site", editions=("en", "zh"))
    assert not (tmp_path / "site").exists()
    with pytest.raises(SiteError, match="unknown edition fr: expected en, zh or all"):
        build_site(course, tmp_path / "site", editions=("fr",))


# ---------------------------------------------------------------- the command


def _cli(*args: str, timeout: int = 300) -> CliResult:
    return run_cli(ROOT, *args, timeout=timeout,
                   bare_env={"PATH": "/usr/bin:/bin", "FORGELAB_ROOT": str(ROOT), "LANG": "C.UTF-8"})


def test_site_build_lang_all_and_lang_zh(tmp_path: Path) -> None:
    done = _cli("site", "build", "--lang", "all", "--out", str(tmp_path / "all"))
    assert done.returncode == 0, done.stderr
    assert f"site built (English edition): {tmp_path / 'all'} (index and" in done.stdout
    assert f"site built (Chinese (zh) edition): {tmp_path / 'all' / 'zh'} (index and" in done.stdout
    assert f"lab bundle: {tmp_path / 'all' / 'zh' / 'downloads' / 'forge-workbook-lab-zh.zip'}" in done.stdout
    assert "language switch" in done.stdout
    assert (tmp_path / "all" / "zh" / "index.html").is_file()

    done = _cli("site", "build", "--out", str(tmp_path / "zh"), "--lang", "zh")  # --lang after the command too
    assert done.returncode == 0, done.stderr
    assert "网站已构建（中文版）：" in done.stdout and "English edition" not in done.stdout  # --lang zh speaks Chinese
    assert "实验包：" in done.stdout and "打开：" in done.stdout and "site built" not in done.stdout
    assert '<html lang="zh-CN">' in (tmp_path / "zh" / "index.html").read_text(encoding="utf-8")
    assert (tmp_path / "zh" / "downloads" / "forge-workbook-lab-zh.zip").is_file()

    done = _cli("site", "build", "--lang", "fr", "--out", str(tmp_path / "fr"))
    assert done.returncode == 2 and "invalid choice: 'fr'" in done.stderr


def test_site_serve_names_the_chinese_edition_and_serves_it(site_all: Path) -> None:
    process = start_cli(ROOT, "site", "serve", "--dir", str(site_all), "--port", "0",
                        bare_env={"PATH": "/usr/bin:/bin", "FORGELAB_ROOT": str(ROOT)})
    try:
        assert process.stdout is not None
        output = OutputLines(process.stdout)
        first, second = output.first(2, timeout=30)
        assert first.startswith(f"serving {site_all} at http://127.0.0.1:"), first
        url = re.search(r"Chinese \(zh\) edition: (http://127\.0\.0\.1:\d+/zh/index\.html)", second)
        assert url, second
        body = wait_for_http(url.group(1), timeout=30, process=process)
        assert '<html lang="zh-CN">' in body.decode("utf-8")
    finally:
        process.terminate()
        process.wait(timeout=10)


FULL_WIDTH_THEN_SPACE = re.compile(r"[。，；：！？、）」”][ \t]+(?=\S)")


def _flow(page: str) -> str:
    """The page's text as it flows: inline tags removed without a space, block tags as line breaks."""
    page = re.sub(r"<(script|style|head)\b.*?</\1>", "\n", page, flags=re.S)
    page = re.sub(r"</?(strong|em|span|code|a|b|i|small|abbr|kbd)\b[^>]*>", "", page)
    page = re.sub(r"<[^>]+>", "\n", page)
    return html.unescape(page)


def test_no_chinese_page_puts_a_space_after_full_width_punctuation(site_all: Path) -> None:
    """Chinese text puts no space after 。，：…; the stage pages printed '…通过：' + ' ' + the next sentence (issue 35)."""
    found = []
    for page in _pages(site_all / "zh"):
        for line in _flow(page.read_text(encoding="utf-8")).splitlines():
            if FULL_WIDTH_THEN_SPACE.search(line):
                found.append(f"{page.name}: {line.strip()[:80]}")
    assert found == []
