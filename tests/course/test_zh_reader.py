"""What a Chinese reader still met in English after the first pass of issue 22, each pinned by one test.

The chapter project's report (spec + audit trail) in the Chinese notebook and `forgelab extract --lang zh`; the cause
of a notebook cell that fails during `grade --lang zh`; the outcome words grading lists (literal message ids, so
the catalog has them); the Chinese enumeration comma in `lab.summary()`; release's working-tree change markers;
`forgelab i18n` and `forgelab gradebook merge` under `--lang zh`.
"""

from __future__ import annotations

import ast
import csv
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_cli
from forge.project.report import extraction_tables, format_extraction
from forgelab.core.i18n import speaking

CJK = re.compile(r"[\u4e00-\u9fff]")

DOCUMENT: dict[str, Any] = {
    "spec": {"goal": "为前端仓库增加功能", "inputs": ["repo:readme", "ticket:FE-231"],
             "outputs": ["the new control", "tests"], "acceptance": ["npm test passes"], "write_allowed": True},
    "audit": {"scenario": "software", "request": "为前端仓库增加功能", "mode": "recovery", "schema_version": "v2",
              "accepted": [{"key": "write", "value": "allow", "source": "developer"},
                           {"key": "tone", "value": "short", "source": "user"}],
              "rejected": [{"source": "user", "key": "tests", "value": "skip the tests", "reason": "lower_rank",
                            "winner": "developer"}],
              "context_chosen": ["repo:readme", "ticket:FE-231"], "context_dropped": ["notes:standup"],
              "context_tokens": 140, "context_budget": 145, "examples": ["sw-v2-a", "sw-v2-b"],
              "injection": [{"source": "wiki/guide.md", "flags": []},
                            {"source": "forum/post.md", "flags": ["ignore previous", "delete files"]}],
              "prompt_version": "p-1234", "prompt_tokens": 840, "model": "mock", "repairs": [], "output_tokens": 131},
}
# the English words the report used to print around the data (labels and sentences)
REPORT_ENGLISH = re.compile(r"\b(task spec|goal|inputs|outputs|acceptance|audit trail|instructions|accepted|rejected|"
                            r"won by|context|chosen|dropped|over budget|examples|schema|mode|retrieved|FLAGGED|"
                            r"no flags|kept as data|repairs|none|tokens|prompt|output|estimates|model)\b")


def test_the_project_report_speaks_chinese_around_the_data() -> None:
    english = format_extraction(DOCUMENT)
    chinese = format_extraction(DOCUMENT, language="zh")
    assert english.startswith("task spec · software · prompt p-1234 · model mock\n")  # the English view is unchanged
    assert "rejected: user tests='skip the tests' — lower_rank, won by developer" in english
    assert "(schema v2, recovery mode)" in english
    data = set(re.findall(r"'[^']*'", chinese))  # values quoted from the data stay as they are
    prose = re.sub(r"'[^']*'|ignore previous|delete files|the new control|npm test passes|\btests\b(?==)", " ", chinese)
    assert not REPORT_ENGLISH.search(prose.replace("write_allowed", "")), REPORT_ENGLISH.search(prose)
    assert chinese.startswith("任务规格 · software · Prompt p-1234 · 模型 mock\n")
    assert "审计记录" in chinese and "拒绝：user 的 tests='skip the tests'（lower_rank，developer 胜出）" in chinese
    assert "（Schema v2，恢复模式）" in chinese and "repo:readme、ticket:FE-231（140/145 Token）" in chinese
    assert "'allow'" in str(data)
    assert not re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]|[\u4e00-\u9fff][,;:()]", chinese), chinese
    for line in chinese.splitlines()[1:]:  # the value column starts at the same terminal cell on every row
        if line.startswith("  ") and not line.startswith("   "):
            label = line[2:].split()[0]
            cells = 2 + sum(2 if CJK.match(char) else 1 for char in label)
            assert line[2 + len(label):].startswith(" " * (17 - cells)), line


def test_the_report_as_tables_is_the_report_as_text_row_for_row() -> None:
    """The notebook shows ``extraction_tables`` (HTML tables); the terminal prints ``format_extraction``: the same
    titles, labels and lines, only the text pads its label column for a terminal."""
    for language in ("en", "zh"):
        tables = extraction_tables(DOCUMENT, language=language)
        assert [title for title, _rows in tables] == [part.split("\n")[0] for part in
                                                     format_extraction(DOCUMENT, language=language).split("\n\n")]
        rows = [(label, line) for _title, table in tables for label, line in table]
        text = [line for line in format_extraction(DOCUMENT, language=language).splitlines()
                if line.startswith("  ")]
        assert [re.fullmatch(r"  (\S*) +(.*)", line).groups() for line in text] == rows, language  # type: ignore[union-attr]
    assert ("验收标准", "1. npm test passes") in extraction_tables(DOCUMENT, language="zh")[0][1]
    assert ("", "拒绝：user 的 tests='skip the tests'（lower_rank，developer 胜出）") in \
        extraction_tables(DOCUMENT, language="zh")[1][1]  # a value's second line goes on under an empty label


def _outputs(cell: dict[str, Any]) -> str:
    return "".join("".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))
                   for output in cell.get("outputs", []))


def test_the_chinese_notebook_of_stage_08_shows_the_chinese_report(repo_root: Path) -> None:
    notebook = json.loads((repo_root / "notebooks" / "zh" / "08-requirement-extractor.ipynb").read_text(encoding="utf-8"))
    shown = "".join(_outputs(cell) for cell in notebook["cells"] if cell["cell_type"] == "code")
    assert "审计记录" in shown and "任务规格 · software" in shown and "验收标准" in shown
    assert "audit trail" not in shown and "task spec ·" not in shown


# ---------------------------------------------------------------- a notebook cell that fails during grading

def test_a_replayed_cell_that_raises_is_explained_in_chinese_with_pythons_words_after() -> None:
    from forgelab.judge import notebook_replay

    with speaking("zh"):
        raised = notebook_replay._raised(12, "winners = explain(items)", ValueError("bad rank"))
    assert raised == "第 12 个单元格 `winners = explain(items)` 抛出了异常（Python 的原话：ValueError: bad rank）"
    with speaking("en"):
        assert notebook_replay._raised(12, "x = 1", ValueError("bad")) == "cell 12 `x = 1` raised ValueError: bad"


def _planted_learner(folder: Path) -> Path:
    """A hand-in whose stage 01 functions exist but raise ValueError: every notebook cell that calls them fails."""
    shutil.copytree(ROOT / "forge", folder / "forge", ignore=shutil.ignore_patterns("__pycache__"))
    module = folder / "forge" / "instructions.py"
    module.write_text(re.sub(r'raise NotImplementedError\("[^"]*"\)', 'raise ValueError("planted")',
                             module.read_text(encoding="utf-8")), encoding="utf-8")
    return folder


@pytest.mark.slow
def test_grade_lang_zh_words_a_failing_notebook_cell_in_chinese(tmp_path: Path) -> None:
    learner = _planted_learner(tmp_path / "ana")
    done = run_cli(ROOT, "grade", str(learner), "--stages", "01", "--out", str(tmp_path / "out"), "--lang", "zh",
                   timeout=600)
    assert done.returncode == 0, done.output
    with (tmp_path / "out" / "gradebook.csv").open(encoding="utf-8") as handle:
        rows = {row["item"]: row for row in csv.DictReader(handle)}
    reason = rows["notebook"]["reason"]
    assert "抛出了异常（Python 的原话：ValueError: planted）" in reason, reason
    assert "未运行：前面的单元格出错了（第 " in reason, reason
    # the learner's own notebook is named, and its cells as a reader counts them (not "notebooks/01-…", "cell-13")
    assert "notebooks/zh/01-instruction-hierarchy.ipynb" in reason and re.search(r"第 \d+ 个单元格：", reason), reason
    assert "cell-" not in reason and "notebooks/01-" not in reason, reason
    prose = re.sub(r"`[^`]*`|（Python 的原话：[^）]*）|notebooks/\S+", " ", reason)
    assert not re.search(r"\b(cell|raised|not run|earlier|output differs)\b", prose), reason
    settings = json.loads(__import__("sqlite3").connect(tmp_path / "out" / "gradebook.sqlite").execute(
        "SELECT settings FROM runs").fetchone()[0])
    assert settings["language"] == "zh"  # the judge was told the class's language


# ---------------------------------------------------------------- the outcome words grading lists

def test_every_outcome_word_is_a_literal_message_id_the_catalog_extraction_finds() -> None:
    from forgelab.authoring.catalogs import extracted
    from forgelab.grading import items
    from forgelab.judge.outcomes import Outcome

    found = extracted()
    for outcome in Outcome:
        words = items.OUTCOME_WORDS[outcome]
        assert any(place.startswith("forgelab/grading/items.py:") for place in found.get(words, ())), (outcome, words)
        with speaking("zh"):
            assert CJK.search(items._outcome_words(_row(outcome))), outcome


def _row(outcome: Any) -> Any:
    from forgelab.judge.outcomes import TestRow

    return TestRow("tests/stages/test_01.py::test_x", "sub", outcome, "")


def test_no_gettext_call_builds_its_message_id_at_run_time() -> None:
    """A message id built by a call (``_(code.replace(...))``, ``_(f"...")``) is invisible to the extraction: the
    catalog never gets it and the Chinese edition prints English. A name, a table lookup or a literal is fine."""
    built = []
    for path in sorted((ROOT / "forgelab").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_", "ngettext"):
                for argument in node.args[:2 if node.func.id == "ngettext" else 1]:
                    lookup = (isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute)
                              and argument.func.attr == "get")  # WORDS.get(code, code): a table of N_() ids
                    if not (isinstance(argument, (ast.Constant, ast.Name, ast.Attribute, ast.Subscript, ast.IfExp))
                            or lookup):
                        built.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not built, built


# ---------------------------------------------------------------- lab.summary() in the Chinese edition

def test_the_chinese_summary_lists_what_is_open_with_the_enumeration_comma(workbook, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from forgelab.learner.notebook import stage_tools

    monkeypatch.setenv("FORGELAB_ROOT", str(workbook.root))
    monkeypatch.delenv("FORGELAB_WORKSPACE", raising=False)
    monkeypatch.delenv("FORGELAB_TARGET", raising=False)
    monkeypatch.setenv("FORGELAB_WIDTH", "110")
    with speaking("zh"):
        stage_tools("01", None, lang="zh").summary()
    out = capsys.readouterr().out
    still = next(line for line in out.splitlines() if line.startswith("尚未完成："))
    items = still.removeprefix("尚未完成：").split("。下一步：")[0]
    assert "、" in items and "," not in items and ", " not in still, still  # 阶段测试、故障实验、… not "a, b"


# ---------------------------------------------------------------- release: what is left out of the bundle

def test_release_names_working_tree_changes_in_the_active_language(tmp_path: Path) -> None:
    import subprocess

    from forgelab.authoring.release import source

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    (tmp_path / "forge").mkdir()
    (tmp_path / "forge" / "a.py").write_text("A = 1\n", encoding="utf-8")
    (tmp_path / "forge" / "gone.py").write_text("B = 1\n", encoding="utf-8")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "start")
    (tmp_path / "forge" / "a.py").write_text("A = 2\n", encoding="utf-8")
    (tmp_path / "forge" / "gone.py").unlink()
    (tmp_path / "forge" / "new.py").write_text("C = 1\n", encoding="utf-8")
    with speaking("zh"):
        chinese = source._left_out(tmp_path, "")
    with speaking("en"):
        english = source._left_out(tmp_path, "")
    assert english == ("forge/a.py (modified)", "forge/gone.py (deleted on disk)", "forge/new.py (untracked)")
    assert chinese == ("forge/a.py（已修改）", "forge/gone.py（已从磁盘删除）", "forge/new.py（未跟踪）")


# ---------------------------------------------------------------- gradebook merge across the class's languages

def _shard_book(path: Path, submission: str, shard: str, language: str) -> None:
    from forgelab.grading import gradebook, seal
    from forgelab.grading.rubric import GradeItem

    path.mkdir(parents=True)
    connection = gradebook.open_gradebook(path / gradebook.FILENAME)
    settings = json.dumps({"sandbox": "required", "test_cpu_s": 10, "language": language}, sort_keys=True)
    run = gradebook.start_run(connection, started_at="t", tool_version="v", course_version="c", stages="01", jobs=1,
                              network="none", submissions=1, sandbox="sandbox: bubblewrap", shard=shard,
                              settings=settings)
    gradebook.record(connection, run, gradebook.SubmissionRecord(submission, "0" * 64, f"/x/{submission}", "folder"),
                     [GradeItem(submission, "01", "stage_tests", 10, 40, "partial", "why")], [])
    gradebook.finish_run(connection, run, "u")
    seal.write(connection, path)
    connection.close()


def test_shards_graded_in_two_languages_merge_but_other_limits_are_still_refused(tmp_path: Path) -> None:
    from forgelab.grading import gradebook

    _shard_book(tmp_path / "a", "alice", "1/2", "zh")
    _shard_book(tmp_path / "b", "bob", "2/2", "en")  # the language words the reasons; codes and points are the same
    connection, records = gradebook.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "merged")
    connection.close()
    assert [record.submission for record in records] == ["alice", "bob"]
    with speaking("zh"):
        with pytest.raises(gradebook.GradebookError) as refused:
            gradebook._same_grading([gradebook.read_shard(tmp_path / "a"), _other_limits(tmp_path / "c")])
    assert "的评分设置不同（test_cpu_s：10 与 3）" in str(refused.value), refused.value


def _other_limits(path: Path) -> Any:
    from forgelab.grading import gradebook, seal

    _shard_book(path, "carl", "2/2", "zh")
    connection = __import__("sqlite3").connect(path / gradebook.FILENAME)
    with connection:
        connection.execute("UPDATE runs SET settings = ?", (json.dumps({"sandbox": "required", "test_cpu_s": 3,
                                                                         "language": "zh"}),))
    seal.write(connection, path)  # graded so: sealed with these settings
    connection.close()
    return gradebook.read_shard(path)


def test_no_function_hides_gettext_behind_a_local_underscore() -> None:
    """``a, _, b = …`` in a function that also calls ``_("…")`` makes ``_`` local: the call raises
    UnboundLocalError on the path that is meant to explain a problem (a merge refusal did)."""
    hidden = []
    for path in sorted((ROOT / "forgelab").rglob("*.py")):
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                nodes = list(ast.walk(function))
                binds = any(isinstance(n, ast.Name) and n.id == "_" and isinstance(n.ctx, ast.Store) for n in nodes)
                calls = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_" for n in nodes)
                if binds and calls:
                    hidden.append(f"{path.relative_to(ROOT)}:{function.lineno} {function.name}()")
    assert not hidden, hidden


# ---------------------------------------------------------------- what a native reader trips over in the catalog

def test_an_opening_mark_never_ends_a_wrapped_line() -> None:
    from forgelab.core.display import fill

    lines = fill("explain() 尚未实现——见提示 4–6（forgelab hint 01）", 39)
    assert lines == ["explain() 尚未实现——见提示 4–6", "（forgelab hint 01）"], lines
    for size in range(8, 30):
        for line in fill("一二三四五六七八九十（abc def）、甲乙丙丁“引号里”戊己", size):
            assert not line.endswith(("（", "“")), (size, line)


def _catalog() -> list[tuple[str, str]]:
    from babel.messages.pofile import read_po

    with (ROOT / "forgelab" / "locale" / "zh" / "LC_MESSAGES" / "forgelab.po").open("rb") as handle:
        catalog = read_po(handle)
    pairs = []
    for message in catalog:
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        pairs += [(ids[0], string) for string in strings if message.id and string]
    return pairs


def test_the_catalog_reads_as_one_chinese_author_wrote_it() -> None:
    found = []
    for msgid, msgstr in _catalog():
        if "instructor" in msgid and "教师" in msgstr:  # one word for the instructor: 讲师, as README.zh-CN says
            found.append(("教师", msgstr))
        if re.search(r"[\u4e00-\u9fff]", msgstr) and re.search(r"[\u4e00-\u9fff}] — |[\u4e00-\u9fff] —|— [{\u4e00-\u9fff]", msgstr):
            found.append(("spaced dash", msgstr))  # a Chinese dash is ——, with no spaces (beside a placeholder too)
        if re.search(r"\S [，。：；、（）！？]|[，。：；、（）！？] [^\s{`-]", msgstr):  # no space beside a full-width mark
            found.append(("space", msgstr))
        if "edition" in msgid and "版本" in msgstr:  # 版本 is a version; the edition is the workbook's language
            found.append(("版本", msgstr))
    assert not found, found


# ---------------------------------------------------------------- the Chinese documents, read as a native reader

ZH_DOCUMENTS = ("README.zh-CN.md", "course/learner/README.zh-CN.md", "docs/learner.zh-CN.md",
                "docs/instructor.zh-CN.md", "docs/authoring.zh-CN.md", "docs/architecture.zh-CN.md")
DOCUMENT_TYPOGRAPHY = {  # Chinese technical typography, as test_zh_text holds the stage texts and the catalog to it
    "a space after full-width punctuation": r"[。，；：！？、）」”] +(?=[^\s|])",
    "a space around a curly quote beside Chinese": r"[\u4e00-\u9fff] +“|” +[\u4e00-\u9fff]",
    "thousands grouped by a space": r"(?<![\d.])\d{1,3}(?: \d{3})+(?![\d.])",
    "a space before %": r"\d %",
    "a spaced Chinese dash": r"\S ——|—— \S",
}


def _document_prose(text: str) -> str:
    return re.sub(r"```.*?```|`[^`\n]*`", "`…`", text, flags=re.S)


@pytest.mark.parametrize("rule", sorted(DOCUMENT_TYPOGRAPHY))
def test_the_chinese_documents_follow_chinese_typography(rule: str) -> None:
    """The learner README had "（…不必加 `--lang zh`。） notebook"; docs/authoring "低于 95 % 时"; README.zh-CN's title
    "Forge Workbook —— Prompt"."""
    pattern = re.compile(DOCUMENT_TYPOGRAPHY[rule])
    broken = [f"{name}:{number}: …{line[max(0, found.start() - 12):found.end() + 12]}…"
              for name in ZH_DOCUMENTS
              for number, line in enumerate(_document_prose((ROOT / name).read_text(encoding="utf-8")).splitlines(), 1)
              for found in [pattern.search(line)] if found]
    assert broken == [], f"{rule}: {broken[:8]}"


def _zh_texts() -> list[tuple[str, str]]:
    """(where, text) of what a Chinese learner reads: the documents, each stage's and the course's [text.zh] and the
    catalog's translations."""
    from babel.messages.pofile import read_po

    texts = [(name, (ROOT / name).read_text(encoding="utf-8")) for name in ZH_DOCUMENTS]
    texts += [(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8").split("\n[text.zh]", 1)[-1])
              for path in sorted((ROOT / "course" / "stages").glob("*/stage.toml"))]
    with (ROOT / "forgelab/locale/zh/LC_MESSAGES/forgelab.po").open("rb") as handle:
        texts += [(f"forgelab.po {message.id!r:.50}", string) for message in read_po(handle, locale="zh")
                  for string in (message.string if isinstance(message.string, tuple) else (message.string,)) if string]
    return texts


def test_a_stage_is_named_one_way_in_chinese() -> None:
    """The CLI, the page and most texts say 阶段 01; stages 01–04, the learner guide and five catalog messages said
    第 01 阶段 (and 正在检查第 {number} 阶段…) beside it."""
    found = [f"{where}: {match.group(0)}" for where, text in _zh_texts()
             for match in re.finditer(r"第 ?(\d\d|\{\w+\}) ?阶段", text)]
    assert found == [], found[:8]


def test_the_self_check_states_are_the_sources_words() -> None:
    """Source 002 names the page's last two states 测试结果已读取 and 本地自检通过; the learner README and guide
    said 结果已读取 → 自检通过, and 自查页 for the page the course calls 自检."""
    for name in ("course/learner/README.zh-CN.md", "docs/learner.zh-CN.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "未开始 → 阅读中 → 实验已下载 → 测试结果已读取 → 本地自检通过" in text, name
    assert [where for where, text in _zh_texts() if re.search(r"(?<!亲)自查", text)] == []  # 亲自查看 is another word
