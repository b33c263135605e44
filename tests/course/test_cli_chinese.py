"""The command line in Chinese: `--lang zh` leaves no English word outside identifiers, commands and file names.

Every help page (`forgelab --help` and each sub-command's, nested ones included) and argparse's own words — usage,
section headings, "show this help message and exit", its errors — come out in Chinese. What may stay English is
listed in ALLOWED: the names of commands, flags and their choices, metavars, file and product names.
"""

from __future__ import annotations

import argparse
import re
import shutil
from collections.abc import Iterator

import pytest

from conftest import run_cli
from released import released_zip, unzip
from forgelab.cli import language
from forgelab.cli.main import build_parser
from forgelab.grading.rubric import SPEC

# words that are names, not prose: commands and their choices, tools and formats, the product
ALLOWED = {
    "forgelab", "Forge", "Workbook", "Prompt", "Schema", "Token", "JSON", "JSONL", "CSV", "SQLite", "SVG", "HTML",
    "CPU", "zip", "git", "HEAD", "stdin", "gettext", "Babel", "bubblewrap", "nbval", "pytest", "notebook", "slug",
    "Markdown", "en", "zh", "all", "mock", "replay", "openai", "software", "office", "music", "fenced", "prose",
    "learner", "solution", "fault", "extractor", "id", "name", "number", "request", "target", "stage", "stages",
    "Python", "URL", "JupyterLab", "pip", "make", "lab", "venv", "JupyterHub", "Hub", "Canvas", "Moodle",
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


# ---------------------------------------------------------------- a Chinese class, end to end
@pytest.fixture(scope="module")
def zh_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The learner bundle released with ``--lang zh`` from the working tree under test, unzipped."""
    return unzip(released_zip(tmp_path_factory, "zh"), tmp_path_factory.mktemp("zh-bundle") / "learner")


def _copy(bundle: Path, to: Path) -> Path:
    shutil.copytree(bundle, to, ignore=shutil.ignore_patterns(".venv", ".forgelab"))
    return to


CJK = re.compile(r"[\u4e00-\u9fff]")
RAW = re.compile(r"（[^（）]*原(?:话|文)：[^（）]*(?:（[^（）]*）[^（）]*)*）")  # （Python 的原话：…）: the raw text, explained


def _english(text: str, extra: frozenset[str] = frozenset()) -> set[str]:
    """English words of a command's output outside identifiers, test names, paths, flags, ALLOWED names and the raw
    English a Chinese explanation quotes (Python's, pytest's own words after what they mean)."""
    return english_words(RAW.sub(" ", text), COMMAND_WORDS | set(extra))


COMMAND_WORDS = {"check", "status", "hint", "fault", "start", "diagnose", "diff", "reset", "restore", "backup", "page",
                 "answer", "starter", "extract", "regress", "grade", "report", "help", "watch", "submit", "feedback",
                 "FIXED", "ACCEPTED",
                 "dict", "list", "str", "int", "None", "True", "False", "assert"}


def test_i18n_and_gradebook_merge_speak_chinese(tmp_path: Path, repo_root: Path) -> None:
    """The course author's catalog check and the instructor's merge, refusals included, in Chinese."""
    outputs: dict[str, str] = {}
    done = run_cli(repo_root, "i18n", "check", "--lang", "zh")
    outputs["i18n check"] = done.stdout + done.stderr
    assert done.returncode == 0 and done.stdout.startswith("目录完整："), outputs["i18n check"]
    assert "已译成中文" in done.stdout
    (tmp_path / "empty").mkdir()
    done = run_cli(repo_root, "gradebook", "merge", str(tmp_path / "empty"), "--into", str(tmp_path / "m"), "--lang", "zh")
    outputs["gradebook merge (no gradebook)"] = done.stdout + done.stderr
    assert done.returncode != 0 and "里没有 gradebook.sqlite：请给出某次 `forgelab grade --shard` 运行的 --out 文件夹" \
        in done.stderr, done.stderr
    done = run_cli(repo_root, "gradebook", "merge", str(tmp_path / "empty"), "--into", str(tmp_path / "empty"),
                   "--lang", "zh")
    outputs["gradebook merge (into a shard)"] = done.stdout + done.stderr
    assert "是其中一个分片的文件夹" in done.stderr and "请合并到一个新的空文件夹里" in done.stderr, done.stderr
    done = run_cli(repo_root, "grade", str(tmp_path / "empty"), "--jobs", "many", "--lang", "zh")
    outputs["grade --jobs many"] = done.stdout + done.stderr
    assert "'many' 不是整数" in done.stderr, done.stderr
    for args, words in ((("grade", str(tmp_path / "nobody")), "不存在：请检查路径"),
                        (("grade", str(tmp_path / "empty")), "不是学员的练习册：里面没有 forge/ 文件夹"),
                        (("grade", str(tmp_path / "empty"), "--stages", "03-01"), "阶段范围 '03-01' 写反了：应写成 01-03"),
                        (("grade", str(tmp_path / "empty"), "--shard", "5/4"), "K 必须在 1 到 N 之间")):
        done = run_cli(repo_root, *args, "--lang", "zh")
        outputs[" ".join(args[:1] + args[2:])] = done.stdout + done.stderr
        assert done.returncode != 0 and words in done.stderr, done.stderr
    leftovers = {name: _english(text, frozenset({"gradebook", "sqlite", "merge", "shard", "into", "out", "jobs", "i18n", "nobody",
                                                 "empty"}))
                 for name, text in outputs.items()}
    assert {name: words for name, words in leftovers.items() if words} == {}, outputs


def test_the_course_authors_build_check_speaks_chinese(repo_root: Path) -> None:
    done = run_cli(repo_root, "build", "--check", "--lang", "zh", timeout=300)
    assert done.returncode == 0, done.output
    assert done.stdout.strip() == "所有生成文件都是最新的（11 个阶段）；两个语言版都完整，用词都符合术语表", done.stdout


@pytest.mark.slow
def test_a_chinese_class_meets_no_english(zh_bundle: Path, tmp_path: Path, repo_root: Path) -> None:
    outputs: dict[str, str] = {}
    learner = _copy(zh_bundle, tmp_path / "ana")
    for args in (("--help",), ("check", "--help"), ("fault", "--help"), ("status", "--help"), ("check",),
                 ("check", "01"), ("status",), ("fault", "start", "01")):
        done = run_cli(learner, *args, "--lang", "zh")
        outputs[" ".join(args)] = done.stdout + done.stderr
    broken = _copy(zh_bundle, tmp_path / "bo")
    module = broken / "forge" / "instructions.py"
    module.write_text(module.read_text(encoding="utf-8") + "\ndef oops(:\n", encoding="utf-8")
    done = run_cli(broken, "check", "01", "--lang", "zh")
    outputs["check 01 (syntax error)"] = done.stdout + done.stderr
    assert "有语法错误，Python 读不懂这一行（Python 的原话：" in outputs["check 01 (syntax error)"]
    done = run_cli(repo_root, "grade", str(learner), str(broken), "--stages", "01", "--out", str(tmp_path / "out"),
                   "--lang", "zh", timeout=900)
    outputs["grade"] = done.stdout + done.stderr
    assert done.returncode == 0, outputs["grade"]
    done = run_cli(repo_root, "gradebook", "merge", str(tmp_path / "out"), "--into", str(tmp_path / "merged"),
                   "--lang", "zh")
    outputs["gradebook merge"] = done.stdout + done.stderr
    assert done.returncode == 0 and "已合并 1 个分片：2 份提交，2 个反馈页" in done.stdout, outputs["gradebook merge"]
    done = run_cli(learner, "hint", "01", "--lang", "zh")
    outputs["hint 01"] = done.stdout + done.stderr
    leftovers = {name: _english(text, frozenset({"ana", "bo"})) for name, text in outputs.items()}  # the submissions' names
    assert {name: words for name, words in leftovers.items() if words} == {}, outputs


@pytest.mark.slow
def test_the_chinese_fault_lab_copy_says_what_it_is_in_chinese(zh_bundle: Path, tmp_path: Path, repo_root: Path) -> None:
    learner = _copy(zh_bundle, tmp_path / "ana")  # the lab ships sealed: it opens once stage 01 passes
    shutil.copyfile(repo_root / "solutions" / "forge" / "instructions.py", learner / "forge" / "instructions.py")
    done = run_cli(learner, "fault", "start", "01")
    assert done.returncode == 0 and "阶段 01 的必需测试在你的 forge/ 上全部通过：它的故障实验已经打开" in done.stdout, done.output
    variant = learner / "failure_labs" / "01-instruction-hierarchy" / "forge" / "instructions.py"
    first = variant.read_text(encoding="utf-8").splitlines()[0]
    assert first == '"""阶段 01——指令层级。（故障实验：这份副本里有一个缺陷，找到它并修好）', first
    assert "FAULT LAB" not in variant.read_text(encoding="utf-8")


@pytest.mark.slow
def test_grading_in_chinese_keeps_the_gradebooks_columns_and_codes(zh_bundle: Path, tmp_path: Path,
                                                                   repo_root: Path) -> None:
    import csv

    learner = _copy(zh_bundle, tmp_path / "ana")
    broken = _copy(zh_bundle, tmp_path / "bo")
    (broken / "forge" / "instructions.py").write_text("def oops(:\n", encoding="utf-8")
    books = {}
    for language in ("en", "zh"):
        done = run_cli(repo_root, "grade", str(learner), str(broken), "--stages", "01", "--out",
                       str(tmp_path / language), "--lang", language, timeout=900)
        assert done.returncode == 0, done.stdout + done.stderr
        with (tmp_path / language / "gradebook.csv").open(encoding="utf-8") as handle:
            books[language] = list(csv.reader(handle))
    english, chinese = books["en"], books["zh"]
    assert english[0] == chinese[0]  # the columns
    codes = [english[0].index(name) for name in ("submission", "stage", "item", "points", "max_points", "outcome", "flag")]
    assert [[row[i] for i in codes] for row in english] == [[row[i] for i in codes] for row in chinese]
    html = (tmp_path / "zh" / "feedback" / "bo.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in html and "语法错误" in html
    # the reasons are the class's language: every item kind, for both submissions, reads as Chinese
    reason = english[0].index("reason")
    assert {row[english[0].index("item")] for row in chinese[1:]} == set(SPEC)
    for en_row, zh_row in zip(english[1:], chinese[1:]):
        assert CJK.search(zh_row[reason]) and zh_row[reason] != en_row[reason], (en_row, zh_row)
