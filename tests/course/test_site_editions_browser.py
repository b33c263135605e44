"""The two editions of the course page in Chromium: the language switch, progress shared by both editions and
read in each one's language, the Chinese self-check in Chinese words, numbers that do not follow the browser's
locale. Screenshots of the Chinese index, stage page and self-check report: test-artifacts/site/zh-*.png."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from browser import (  # noqa: F401  (fixtures are used by name)
    ARTIFACTS, STAGE_01, Evidence, SitePage, as_bytes, built_site, chromium, edition_base, evidence, open_tab,
)

from forgelab.site.builder import script_messages

# built_site and evidence are made once per run: both site modules share one xdist worker (--dist loadgroup)
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("course-site")]


@pytest.fixture
def tab_en(chromium: Any, built_site: Path) -> Any:
    context, tab = open_tab(chromium, edition_base(built_site, "en"), width=1024, height=900)
    yield tab
    context.close()
    assert tab.errors == [], tab.errors


def _lang(tab: SitePage) -> str:
    return tab.page.evaluate("document.documentElement.lang")


def _switch(tab: SitePage, language: str) -> None:
    with tab.page.expect_navigation():
        tab.page.click(f'.language-switch a[data-language="{language}"]')


def _english_in(text: str) -> list[str]:
    """Stretches of two or more English words of the scripts' messages that appear in ``text``."""
    found = set()
    for message in script_messages():
        for part in re.split(r"\{\w+\}|`[^`]*`", message):
            part = part.strip(" .,:;()—-…")
            if len(re.findall(r"[A-Za-z]+", part)) >= 2 and part in text:
                found.add(part)
    return sorted(found)


def test_the_language_switch_goes_to_the_same_page_and_back(tab_en: SitePage) -> None:
    tab = tab_en
    for name in ("index.html", f"{STAGE_01}.html"):
        tab.open(name)
        assert _lang(tab) == "en"
        _switch(tab, "zh")
        assert tab.page.url.endswith(f"/zh/{name}") and _lang(tab) == "zh-CN"
        assert tab.page.inner_text(".language-switch [aria-current]") == "中文"
        if name != "index.html":
            assert tab.page.title().startswith("阶段 01 · 指令层级")
            assert tab.page.inner_text("#check-state") == "状态：未开始（第 1 步，共 5 步）。"
        _switch(tab, "en")
        assert tab.page.url.endswith(f"/site/{name}") and _lang(tab) == "en"
        assert tab.page.inner_text(".language-switch [aria-current]") == "English"


def test_progress_is_shared_and_each_edition_reads_it_in_its_own_words(tab_en: SitePage, evidence: Evidence) -> None:
    tab = tab_en.open_stage()
    tab.pick_document(evidence.passing)
    assert tab.headline() == "Self-check passed"

    _switch(tab, "zh")  # the same result, in Chinese
    assert tab.state() == "self-check-passed"
    assert tab.headline() == "本地自检通过"
    assert tab.page.inner_text("#report .report-caption") == "上一次的结果，保存在这个浏览器中：verification.json"
    assert "文件自 forgelab 写出后未被改动" in tab.check("integrity")[1]
    assert "这个文件是针对参考实现（目标“solution”）生成的" in tab.check("target")[1]

    tab.pick(b"", "empty.json")  # a refused pick on the Chinese page…
    assert tab.message()[0] == "empty" and "文件是空的" in tab.message()[1] and "文件：empty.json" in tab.message()[1]
    state = tab.page.inner_text("#check-state")
    assert state.startswith("状态：测试结果已读取（第 4 步，共 5 步）。你最近选择的 empty.json 不是本阶段的结果（文件是空的）"), state
    assert tab.page.inner_text("#previous-report").startswith("上一次的结果——已不是当前结论：本地自检通过")

    _switch(tab, "en")  # …is explained in English on the English page
    problem, text = tab.message()
    assert problem == "empty" and "The file is empty" in text and "It has 0 bytes." in text and "文件" not in text
    assert "Your last pick, empty.json, is not a result for this stage (The file is empty)" in tab.page.inner_text("#check-state")
    assert tab.page.inner_text("#previous-report").startswith("Previous result — no longer the current verdict: Self-check passed")

    tab.open("zh/index.html")  # and the index of either edition shows the stage's state
    assert tab.page.inner_text('[data-progress-for="01"]') == "测试结果已读取"


def test_the_chinese_self_check_report_speaks_chinese(chromium: Any, built_site: Path, evidence: Evidence) -> None:
    context, tab = open_tab(chromium, edition_base(built_site, "zh"), width=1024, height=900, language="zh")
    try:
        tab.open("index.html")
        assert _lang(tab) == "zh-CN"
        tab.screenshot("index")
        tab.open_stage()
        tab.screenshot("stage-01")
        tab.scroll_to_read()
        tab.pick_document(evidence.starter)
        assert re.fullmatch(r"尚未通过：9 项检查中有 \d 项需要改进", tab.headline()), tab.headline()
        status, text = tab.check("required-tests")
        assert status == "fail" and "13 个必需测试中有 12 个尚未通过" in text
        assert "修改你的模块 forge/instructions.py，直到下面这些测试通过，然后重新运行 forgelab check 01：" in text
        assert re.search(r"test_lower_trust_instruction_cannot_override_system——失败：", text), text
        assert tab.check("fault-lab")[0] == "fail" and "故障实验尚未开始" in tab.check("fault-lab")[1]
        assert tab.check("diagnosis")[0] == "fail" and "尚未给出故障实验的诊断" in tab.check("diagnosis")[1]
        assert tab.page.inner_text("#report .report-meta").startswith(f"forgelab 检查于 {evidence.starter['checked_at']}")
        steps = tab.page.eval_on_selector_all("#check-steps li .step-status", "nodes => nodes.map(n => n.textContent)")
        assert steps == ["已完成", "已完成", "未在此处下载", "当前", "待完成"]
        panel = tab.page.inner_text("#local-check")
        assert _english_in(panel) == []
        tab.panel_screenshot("self-check-report")
        tab.screenshot("self-check-report")

        tab.pick(b"[1, 2, 3]", "list.json")
        text = tab.message()[1]
        assert "这个 JSON 不是 verification.json" in text and "它是合法的 JSON，但内容是列表，而不是一个装着检查结果的对象。" in text
        assert _english_in(tab.page.inner_text("#local-check")) == []
        assert tab.errors == []
    finally:
        context.close()


@pytest.mark.parametrize("language", ["en", "zh"])
def test_numbers_and_dates_do_not_follow_the_browsers_locale(chromium: Any, built_site: Path, evidence: Evidence,
                                                            language: str) -> None:
    texts = []
    for locale in ("en-US", "ar-EG", "de-DE"):
        context, tab = open_tab(chromium, edition_base(built_site, language), language=language, locale=locale)
        try:
            tab.open_stage()
            assert tab.page.evaluate("navigator.language") == locale
            tab.pick_document(evidence.starter)
            report = tab.page.inner_text("#report")
            tab.pick(b"{" + b" " * (1024 * 1024 + 10) + b"}", "big.json")
            message = tab.message()[1]
            assert "1025 KB" in message and "1024 KB" in message, message
            assert evidence.starter["checked_at"] in report
            texts.append((report, message, tab.page.inner_text("#check-state")))
            assert tab.errors == []
        finally:
            context.close()
    assert texts[0] == texts[1] == texts[2]
    assert not re.search(r"[\u0660-\u0669]", "".join(texts[1][0]))  # no Arabic-Indic digits
