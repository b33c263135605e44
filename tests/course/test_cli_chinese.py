"""The command line in Chinese: `--lang zh` leaves no English word outside identifiers, commands and file names.

Every help page (`forgelab --help` and each sub-command's, nested ones included) and argparse's own words — usage,
section headings, "show this help message and exit", its errors — come out in Chinese. What may stay English is
listed in ALLOWED: the names of commands, flags and their choices, metavars, file and product names.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from conftest import run_cli
from forgelab.cli import language
from forgelab.cli.main import build_parser

# words that are names, not prose: commands and their choices, tools and formats, the product
ALLOWED = {
    "forgelab", "Forge", "Workbook", "Prompt", "Schema", "Token", "JSON", "JSONL", "CSV", "SQLite", "SVG", "HTML",
    "CPU", "zip", "git", "HEAD", "stdin", "gettext", "Babel", "bubblewrap", "nbval", "pytest", "notebook", "slug",
    "Markdown", "en", "zh", "all", "mock", "replay", "openai", "software", "office", "music", "fenced", "prose",
    "learner", "solution", "fault", "extractor", "id", "name", "number", "request", "target", "stage", "stages",
    "Python", "URL", "JupyterLab", "pip", "make", "lab", "venv",
}
WORD = re.compile(r"(?<![\w./{\[<=-])[A-Za-z][A-Za-z']+(?![\w./(-])")


def english_words(text: str, commands: set[str]) -> set[str]:
    """English words of ``text`` outside code spans that are neither in :data:`ALLOWED`, a command name nor a metavar."""
    prose = re.sub(r"`[^`]*`|'[^'\s]*'|\"[^\"]*\"", " ", text)
    return {word for word in WORD.findall(prose) if word not in ALLOWED and word not in commands and not word.isupper()}


def _parsers(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, child in action.choices.items():
                yield from _parsers(child, f"{name} {command}")


@pytest.fixture
def chinese() -> Iterator[None]:
    language.speak("zh")
    try:
        yield
    finally:
        language.speak("en")


def test_every_help_page_is_chinese(chinese) -> None:
    parsers = dict(_parsers(build_parser(), "forgelab"))
    commands = {word for name in parsers for word in name.split()}
    commands |= {word for parser in parsers.values() for word in parser.prog.split()}
    commands |= {str(choice) for parser in parsers.values() for action in parser._actions
                 if isinstance(action.choices, (list, tuple)) for choice in action.choices}
    assert len(parsers) > 25  # every sub-command, and the sub-commands of site, gradebook, i18n's actions
    for name, parser in parsers.items():
        text = parser.format_help()
        assert text.startswith("用法："), (name, text[:80])
        assert "选项：" in text and "显示本帮助信息并退出" in text, name
        assert not english_words(text, commands), (name, english_words(text, commands))
        assert not re.search(r"^\s*[）。，、；]", text, re.M), (name, text)  # no line opens with a closing mark
        if name != "forgelab":
            description = text.split("\n\n")[1]  # what the command does, right under the usage
            assert re.search(r"[\u4e00-\u9fff]", description), (name, description)


def test_argparse_errors_are_chinese_in_a_real_run(tmp_path, repo_root) -> None:
    done = run_cli(repo_root, "check", "--lang", "zh")
    assert done.returncode == 2
    assert done.stderr.startswith("用法：forgelab check [-h] [--lang {en,zh}]")
    assert done.stderr.rstrip().endswith("forgelab check：错误：缺少以下必需参数：stage")
    done = run_cli(repo_root, "--lang", "zh", "fault", "open", "01")
    assert "forgelab fault：错误：参数 action：无效的选择：'open'（可选：" in done.stderr, done.stderr
    done = run_cli(repo_root, "--lang", "zh", "status", "--bogus")
    assert "forgelab：错误：无法识别的参数：--bogus" in done.stderr, done.stderr
    done = run_cli(repo_root, "--lang", "zh", "--help")
    assert done.returncode == 0 and "位置参数：" in done.stdout and "选项：" in done.stdout


def test_lang_is_one_option_before_or_after_the_command(repo_root) -> None:
    before = run_cli(repo_root, "--lang", "zh", "hint", "--help").stdout
    after = run_cli(repo_root, "hint", "--help", "--lang=zh").stdout
    assert before == after and before.startswith("用法：forgelab hint")
    english = run_cli(repo_root, "hint", "--help", "--lang", "en").stdout
    assert english.startswith("usage: forgelab hint") and "show this help message and exit" in english
    assert run_cli(repo_root, "release", "--help", "--lang", "zh").stdout.count("{en,zh,all}") == 2


def test_a_first_difference_reads_as_one_chinese_sentence() -> None:
    from forgelab.core.i18n import speaking
    from forgelab.judge.explain import MARKER, _joined, first_difference
    from forgelab.core.i18n import _

    with speaking("zh"):
        top = _joined(_(MARKER), first_difference({"a": 1}, [1]) or "")
        nested = _joined(_(MARKER), first_difference([{"reason": "x"}], [{"reason": "y"}]) or "")
    assert top == "第一处差异在顶层：实际是 dict {'a': 1}，应为 list [1]"
    assert nested == "第一处差异在 [0]['reason']：实际为 'x'，应为 'y'"
    with speaking("en"):
        assert _joined(_(MARKER), "the top level: …") == "first difference at the top level: …"


def test_pytests_did_not_raise_is_explained_in_chinese_beside_the_raw_text() -> None:
    from forgelab.core.i18n import speaking
    from forgelab.verdicts.parts import glossed

    raw = "Failed: DID NOT RAISE <class 'ValueError'>"
    with speaking("zh"):
        assert glossed(raw) == f"测试期望这里抛出 ValueError，但什么异常也没有抛出（pytest 原文：{raw}）"
        assert glossed("assert 1 == 2") == "assert 1 == 2"
    with speaking("en"):
        assert glossed(raw) == raw
