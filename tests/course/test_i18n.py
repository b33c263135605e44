"""The tools' own words in two editions: how the language is chosen, the Chinese catalog, and the
commands a learner runs, in Chinese (``--lang zh`` or ``FORGE_LANG=zh``).

Stage texts (hints, titles) come from the stage sources and may still be English while the translators
work; these tests assert on the tools' own words (table headers, verdicts, next steps).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, WorkbookCopy
from forgelab.core import i18n

PO = ROOT / "forgelab" / "locale" / "zh" / "LC_MESSAGES" / "forgelab.po"
# The locale variables are cleared so that the machine's own locale never decides a test.
NEUTRAL = {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "C.UTF-8", "FORGE_LANG": ""}
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")  # Chinese characters and full-width punctuation
# Messages that are commands or code only: their translation may be the same text.
SAME_IN_BOTH = {"`forgelab check {number}`", "`forgelab fault check {number}`", "`forgelab fault start {number}`",
                "{question} [y/N] ", "Agent", "notebook"}  # glossary: these two terms stay as they are


@pytest.fixture
def speaking() -> Iterator[None]:
    """Restore English after a test that switches the language of this process."""
    yield
    i18n.use("en")


# ---------------------------------------------------------------- choosing the language


def test_lang_beats_forge_lang_which_beats_the_locale_and_english_is_the_default() -> None:
    everything = {"FORGE_LANG": "en", "LC_ALL": "en_US.UTF-8", "LANG": "en_GB.UTF-8"}
    assert i18n.resolve("zh", everything) == "zh"
    assert i18n.resolve("zh_CN.UTF-8", {}) == "zh" and i18n.resolve("zh-Hans", {}) == "zh"
    assert i18n.resolve(None, {"FORGE_LANG": "zh", "LC_ALL": "en_US.UTF-8"}) == "zh"
    assert i18n.resolve(None, {"FORGE_LANG": "en", "LANG": "zh_CN.UTF-8"}) == "en"
    assert i18n.resolve(None, {"LANG": "zh_CN.UTF-8"}) == "zh"
    assert i18n.resolve(None, {"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"  # LC_ALL before LANG
    assert i18n.resolve(None, {"LC_MESSAGES": "zh_TW", "LANG": "en_US"}) == "zh"
    assert i18n.resolve(None, {"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}) == "zh"  # C and POSIX say nothing
    assert i18n.resolve(None, {"LANG": "de_DE.UTF-8"}) == "en"  # a locale we have no edition for
    assert i18n.resolve(None, {}) == "en"
    assert i18n.resolve(None, {"FORGE_LANG": ""}) == "en"


def test_an_unknown_language_is_a_clear_error() -> None:
    with pytest.raises(i18n.LanguageError, match=r"unknown language 'fr': expected one of en, zh"):
        i18n.resolve("fr", {})
    with pytest.raises(i18n.LanguageError, match=r"FORGE_LANG='klingon' is not a known language: expected one of en, zh"):
        i18n.resolve(None, {"FORGE_LANG": "klingon"})
    with pytest.raises(i18n.LanguageError, match="unknown language 'de'"):
        i18n.use("de")


def test_the_command_line_refuses_an_unknown_language_and_names_the_choices(workbook: WorkbookCopy) -> None:
    done = workbook.run("status", "--lang", "fr", env=NEUTRAL)  # --lang is an option of every command: argparse refuses
    assert done.returncode == 2
    assert "forgelab status: error: argument --lang: invalid choice: 'fr' (choose from 'en', 'zh')" in done.stderr
    done = workbook.run("--lang=fr", "status", env={**NEUTRAL, "FORGE_LANG": "zh"})  # in the language it speaks
    assert done.returncode == 2
    assert "forgelab：错误：参数 --lang：无效的选择：'fr'（可选：'en', 'zh'）" in done.stderr, done.stderr
    done = workbook.run("hint", "01", env={**NEUTRAL, "FORGE_LANG": "xx"})
    assert done.returncode == 2 and "FORGE_LANG='xx' is not a known language" in done.stderr


def test_lang_may_stand_anywhere_and_wins_over_the_environment(workbook: WorkbookCopy) -> None:
    before = workbook.run("--lang", "zh", "hint", "01", env={**NEUTRAL, "FORGE_LANG": "en"})
    assert before.returncode == 0, before.output
    assert re.search(r"^提示 1/\d+（新）：", before.stdout, re.M), before.stdout
    after = workbook.run("hint", "01", "--lang=en", env={**NEUTRAL, "FORGE_LANG": "zh", "LANG": "zh_CN.UTF-8"})
    assert after.returncode == 0, after.output
    assert re.search(r"^hint 1/\d+: ", after.stdout, re.M) and re.search(r"^hint 2/\d+ \(new\): ", after.stdout, re.M), \
        after.stdout
    by_locale = workbook.run("hint", "01", "--reset", env={**NEUTRAL, "LANG": "zh_CN.UTF-8"})
    assert "提示已重新隐藏" in by_locale.stdout, by_locale.output


# ---------------------------------------------------------------- the commands in Chinese


@pytest.mark.slow
def test_check_speaks_chinese_with_forge_lang(workbook: WorkbookCopy) -> None:
    done = workbook.run("check", "01", env={**NEUTRAL, "FORGE_LANG": "zh"}, timeout=900)
    assert done.returncode == 1, done.output
    out = done.stdout
    assert out.startswith("阶段 01 · "), out
    # what was judged, in words; the --target value that names it stays as typed
    assert out.splitlines()[0].endswith(" · 目标：你自己的 forge/（learner）"), out.splitlines()[0]
    assert re.search(r"^测试\s+结果\s+原因$", out, re.M), out
    assert re.search(r"^部分\s+状态\s+详情$", out, re.M), out
    assert re.search(r"^必需测试：\d+/\d+ 通过$", out, re.M), out
    assert re.search(r"^故障实验\s+未开始\s+用 `forgelab fault start 01` 开始$", out, re.M), out
    assert re.search(r"^迁移挑战\s+未编写\s+", out, re.M) and re.search(r"^设计题回答\s+缺失\s+", out, re.M), out
    assert "结论：未验收——证据：evidence/prompt-context-output/01-instruction-hierarchy/verification.json" in out
    assert re.search(r"^下一步：实现 forge/instructions\.py（notebook 第 6 部分；`forgelab hint 01` 可获取提示）$", out, re.M), out
    for english in ("verdict:", "required tests:", "next:", "NOT ACCEPTED", "fault lab", "outcome"):
        assert english not in out, english
    # the evidence itself is language-free: codes and test names, the same in both editions
    document = workbook.evidence("01-instruction-hierarchy")
    assert document["accepted"] is False and document["fault_lab"]["status"] == "not_started"


def test_hint_speaks_chinese_with_lang(workbook: WorkbookCopy) -> None:
    first = workbook.run("hint", "01", "--lang", "zh", env=NEUTRAL)
    assert first.returncode == 0, first.output
    # the hint, then one line that says why this rung came next (hints follow the first failing test)
    assert re.fullmatch(r"提示 1/(\d+)（新）：.+\n提示 1 是提示阶梯上的下一条；.+\n", first.stdout), first.stdout
    total = int(re.match(r"提示 1/(\d+)", first.stdout).group(1))  # type: ignore[union-attr]
    last = first
    for _round in range(total):
        last = workbook.run("hint", "01", "--lang", "zh", env=NEUTRAL)
    assert f"全部 {total} 条提示都已显示" in last.stdout, last.stdout
    hidden = workbook.run("hint", "01", "--reset", "--lang", "zh", env=NEUTRAL)
    assert hidden.stdout == f"阶段 01：提示已重新隐藏（已显示 0/{total}）\n"


def test_fault_hints_and_the_reset_mistake_speak_chinese(workbook: WorkbookCopy) -> None:
    shown = workbook.run("fault", "hint", "01", "--lang", "zh", env=NEUTRAL)
    assert shown.returncode == 0, shown.output
    assert re.match(r"1/\d+ 你观察到的现象（新）：", shown.stdout), shown.stdout
    assert "下一步：运行 `forgelab fault start 01`，观察目标测试失败，然后开始诊断" in shown.stdout
    again = workbook.run("fault", "hint", "01", "--lang", "zh", env=NEUTRAL)
    assert re.search(r"^1/\d+ 你观察到的现象：", again.stdout, re.M), again.stdout  # shown, and no box around it
    assert re.search(r"^2/\d+ 诊断 1/\d+（新）：", again.stdout, re.M), again.stdout
    wrong = workbook.run("fault", "reset", "01", "--reset", "--lang", "zh", env=NEUTRAL)
    assert wrong.returncode == 2
    assert "forgelab: --reset 属于 `forgelab fault hint 01`（它会隐藏已显示的提示）" in wrong.stderr
    assert "下一步：要放回有缺陷的模块，请运行 `forgelab fault reset 01`" in wrong.stderr


@pytest.mark.slow
def test_status_speaks_chinese_and_its_table_lines_up(workbook: WorkbookCopy) -> None:
    from forgelab.core.display import columns

    done = workbook.run("status", "--lang", "zh", env=NEUTRAL, timeout=900)
    assert done.returncode == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Forge Workbook——") and "（练习册：" in lines[0], lines[0]
    header = next(index for index, line in enumerate(lines) if line.startswith("阶段"))
    assert lines[header].split() == ["阶段", "标题", "测试", "故障实验", "迁移挑战", "设计题", "证据"]
    rule, rows = lines[header + 1], [line for line in lines[header + 2:] if re.match(r"\d\d  ", line)]
    assert len(rows) >= 10, done.stdout
    assert all("未开始" in row and "未编写" in row and "缺失" in row for row in rows), done.stdout
    assert re.search(r"^下一步：阶段 01：打开 notebooks/zh/01-instruction-hierarchy\.ipynb，实现 forge/instructions\.py；"
                     r"然后运行 `forgelab check 01`$", done.stdout, re.M), done.stdout
    # every cell starts where the rule's segment starts, counted in display columns (a Chinese character is two)
    starts = [match.start() for match in re.finditer(r"-+", rule)]
    for line in [lines[header], *rows]:
        cells = [match for match in re.finditer(r"\S+(?: \S+)*", line)]
        assert [columns(line[: cell.start()]) for cell in cells] == starts[: len(cells)], line


# ---------------------------------------------------------------- the catalog


def _catalog():  # type: ignore[no-untyped-def]
    from babel.messages.pofile import read_po

    with PO.open("rb") as handle:
        return read_po(handle, locale="zh", domain="forgelab")


def _fields(text: str) -> list[str]:
    """The placeholders of a format string, as written (``{name}``, ``{name!r}``), in order."""
    return [f"{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}"
            for _literal, name, spec, conversion in string.Formatter().parse(text) if name is not None]


def _is_format_string(text: str) -> bool:
    try:
        list(string.Formatter().parse(text))
    except ValueError:
        return False
    return True


def test_every_translation_keeps_exactly_the_placeholders_of_its_message() -> None:
    messages = [message for message in _catalog() if message.id]
    assert len(messages) > 300
    for message in messages:
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if not _is_format_string(ids[0]):  # a plain text with a brace in it (the page's JSON errors): never .format()ted
            assert "python-brace-format" not in message.flags, ids[0]
            for translated in strings:
                assert translated and [translated.count(brace) for brace in "{}"] == [ids[0].count(brace) for brace in "{}"], (
                    ids[0], translated)
            continue
        wanted = sorted(set(_fields(ids[0])) | set(_fields(ids[-1])))
        for translated in strings:
            assert translated, f"no translation for {ids[0]!r}"
            assert sorted(set(_fields(translated))) == wanted, (ids[0], translated)
            values = {name: "x" for name in re.findall(r"\{(\w+)", ids[0] + ids[-1])}
            translated.format(**values)  # and it formats with the message's own values
            for span in re.findall(r"`[^`]+`", ids[0]):
                assert span in translated, f"{span} is lost in the translation of {ids[0]!r}: {translated!r}"


def test_every_translation_is_chinese_with_full_width_punctuation() -> None:
    for message in _catalog():
        if not message.id:
            continue
        source = message.id if isinstance(message.id, str) else message.id[0]
        translated = message.string if isinstance(message.string, str) else message.string[0]
        if source in SAME_IN_BOTH:
            assert translated == source
            continue
        assert CJK.search(translated) or translated in ("Prompt",), (source, translated)
        assert not re.search(r"[\u4e00-\u9fff][,;:?!]|[,;:?!][\u4e00-\u9fff]", translated), (source, translated)


def test_the_repository_catalog_is_complete_and_compiled() -> None:
    from forgelab.authoring.catalogs import problems

    assert [str(problem) for problem in problems()] == []


def test_plurals_follow_each_language(speaking: None) -> None:
    singular, plural = "forge/ ({count} file)", "forge/ ({count} files)"
    assert i18n.ngettext(singular, plural, 1).format(count=1) == "forge/ (1 file)"
    assert i18n.ngettext(singular, plural, 3).format(count=3) == "forge/ (3 files)"
    i18n.use("zh")
    assert i18n.ngettext(singular, plural, 1).format(count=1) == "forge/（1 个文件）"
    assert i18n.ngettext(singular, plural, 3).format(count=3) == "forge/（3 个文件）"


def test_the_catalog_check_fails_when_one_translation_is_removed(workbook: WorkbookCopy) -> None:
    po = workbook.root / "forgelab" / "locale" / "zh" / "LC_MESSAGES" / "forgelab.po"
    text = po.read_text(encoding="utf-8")
    entry = 'msgid "cancelled: nothing was changed"\nmsgstr "已取消：没有做任何改动"\n'
    assert entry in text
    po.write_text(text.replace(entry, 'msgid "cancelled: nothing was changed"\nmsgstr ""\n'), encoding="utf-8")
    assert PO.read_text(encoding="utf-8") == text  # the repository's own catalog is untouched

    check = workbook.run("i18n", "check", env=NEUTRAL, timeout=300)
    assert check.returncode == 2, check.output
    assert ("incomplete: catalog zh: message 'cancelled: nothing was changed' (forgelab/cli/starters.py"
            in check.stdout), check.stdout
    assert "has no translation in forgelab/locale/zh/LC_MESSAGES/forgelab.po" in check.stdout
    assert "forgelab.mo is out of date: run `forgelab i18n compile`" in check.stdout
    assert "the Chinese edition of the tools' words is incomplete or stale" in check.stderr

    build = workbook.run("build", "--check", env=NEUTRAL, timeout=900)
    assert build.returncode == 2, build.output
    assert ("out of date: forgelab/locale/zh/LC_MESSAGES/forgelab.po — message 'cancelled: nothing was changed'"
            in build.stdout), build.stdout
    assert "exist in one edition and not in the other" in build.stderr

    # without a translation the tools say it in English rather than fail
    compiled = workbook.run("i18n", "compile", env=NEUTRAL, timeout=300)
    assert compiled.returncode == 0 and "wrote forgelab/locale/zh/LC_MESSAGES/forgelab.mo" in compiled.stdout
    assert "still have 1 problem(s)" in compiled.stdout, compiled.stdout


def test_the_catalog_tools_refuse_in_a_learner_bundle(workbook: WorkbookCopy) -> None:
    import shutil

    shutil.rmtree(workbook.root / "solutions")
    done = workbook.run("i18n", "extract", env=NEUTRAL)
    assert done.returncode == 2
    assert "`forgelab i18n` is a tool of the course repository" in done.stderr and "learner bundle" in done.stderr


def test_extract_keeps_every_translation_and_changes_nothing_when_the_code_has_not_changed(workbook: WorkbookCopy) -> None:
    po = workbook.root / "forgelab" / "locale" / "zh" / "LC_MESSAGES" / "forgelab.po"
    before = po.read_text(encoding="utf-8")
    done = workbook.run("i18n", "extract", env=NEUTRAL, timeout=300)
    assert done.returncode == 0, done.output
    assert re.search(r"catalog zh: forgelab/locale/zh/LC_MESSAGES/forgelab\.po — \d+ messages, 0 without a translation",
                     done.stdout), done.stdout

    def body(text: str) -> str:  # the header carries the extraction date
        return text.split("\n\n", 1)[1]

    assert body(po.read_text(encoding="utf-8")) == body(before)


# ---------------------------------------------------------------- tables in display columns


def test_chinese_lines_up_in_tables_by_display_columns(speaking: None) -> None:
    from forgelab.core.display import columns, table, table_header, table_row

    rows = [("01", "指令层级", "通过"), ("02", "Few-shot 示例选择", "失败"), ("03", "context", "ok")]
    lines = table(["阶段", "标题", "结果"], rows, total_width=80).splitlines()
    starts = [match.start() for match in re.finditer(r"-+", lines[1])]
    assert [columns(segment) for segment in re.findall(r"-+", lines[1])] == [4, 17, 20]
    for line in [lines[0], *lines[2:]]:
        cells = list(re.finditer(r"\S+(?: \S+)*", line))
        assert [columns(line[: cell.start()]) for cell in cells] == starts, line

    # `check all` prints its rows one at a time in fixed widths: they line up with the header in display columns
    i18n.use("zh")
    widths = [24, 5, 6, 8, 4, 30]
    header = table_header(["阶段", "测试", "实验", "迁移挑战", "回答", "第一个未完成项"], widths, right=[1]).splitlines()[0]
    row = table_row(["08 需求抽取器", "0/28", "已修复", "待完成", "太短", "实现 forge/extractor.py"], widths,
                    right=[1]).splitlines()[0]
    marks = [(columns(line[: line.index(cell)]), columns(cell)) for line, cell in
             ((header, "实验"), (row, "已修复"), (header, "迁移挑战"), (row, "待完成"))]
    assert marks[0][0] == marks[1][0] and marks[2][0] == marks[3][0], (header, row)
    assert columns(header[: header.index("第一个")]) == columns(row[: row.index("实现")])
    assert columns(header[: header.index("测试") + 2]) == columns(row[: row.index("0/28") + 4])  # right-aligned


def test_a_long_chinese_cell_wraps_by_display_columns_and_loses_nothing(speaking: None) -> None:
    from forgelab.core.display import columns, table

    cause = "明显的中文原因，它非常长，需要折行显示才能在八十列的终端里读完整个句子。" * 2
    text = table(["测试", "结果", "原因"], [("test_一个很长的测试名称", "失败", cause)], total_width=60)
    lines = text.splitlines()
    assert max(columns(line) for line in lines) <= 60
    # a cause this long goes under its row (stacked layout of core.display), indented, at the table's full width
    rule = next(index for index, line in enumerate(lines) if set(line) <= {"-", " "})
    row = lines[rule + 1]
    assert row.split() == ["test_一个很长的测试名称", "失败"], text
    under = lines[rule + 2:]
    assert len(under) > 1 and all(line.startswith("    ") and not line.startswith("     ") for line in under), text
    assert "".join(line.strip() for line in under) == cause  # nothing lost, not a character


def test_the_english_words_are_unchanged_by_the_catalog(speaking: None) -> None:
    from forgelab.core.display import symbol

    i18n.use("en")
    assert symbol("failed") == "FAILED" and i18n._("next: {step}") == "next: {step}"
    i18n.use("zh")
    assert symbol("failed") == "失败" and i18n._("next: {step}").format(step="x") == "下一步：x"
    assert i18n._("a message that is not in the catalog") == "a message that is not in the catalog"
