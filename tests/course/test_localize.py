"""Another edition's docstrings go into the starters and nothing else changes."""

from __future__ import annotations

import ast

import pytest

from forgelab.authoring.release.localize import (LocalizeError, english_left, with_comments, with_docstrings,
                                                  with_stub_messages)
from forgelab.core.registry import load_course

SOURCE = '''"""Stage 99 — example.

Contract
    ``f(x)`` doubles.
"""

from __future__ import annotations


def f(x: int) -> int:
    """Twice ``x``."""
    raise NotImplementedError("f() is not implemented yet — see hints 1–3 (forgelab hint 99)")


class Box:
    def open(self) -> str:
        """Open the box.

        Returns what was inside.
        """
        return "cat"  # a comment stays


def g() -> None:
    pass
'''


def test_module_function_and_method_docstrings_are_replaced_and_code_is_not() -> None:
    result = with_docstrings(SOURCE, "阶段 99 —— 示例。\n\n契约\n    ``f(x)`` 翻倍。",
                             {"f": "``x`` 的两倍。", "Box.open": "打开盒子。\n\n返回里面的东西。"})
    tree = ast.parse(result)
    assert ast.get_docstring(tree) == "阶段 99 —— 示例。\n\n契约\n    ``f(x)`` 翻倍。"
    functions = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert ast.get_docstring(functions["f"]) == "``x`` 的两倍。"
    assert ast.get_docstring(functions["open"]) == "打开盒子。\n\n返回里面的东西。"
    assert '        """打开盒子。\n\n        返回里面的东西。\n        """\n' in result
    assert 'return "cat"  # a comment stays' in result
    assert 'raise NotImplementedError("f() is not implemented yet' in result
    assert result.endswith("def g() -> None:\n    pass\n")


def test_a_name_without_a_docstring_is_refused_by_name() -> None:
    with pytest.raises(LocalizeError, match=r"forge/x\.py: no docstring to replace for g, missing"):
        with_docstrings(SOURCE, None, {"g": "没有", "missing": "没有"}, where="forge/x.py")


def test_a_docstring_that_would_end_the_literal_is_refused() -> None:
    with pytest.raises(LocalizeError, match="f: a docstring may not contain"):
        with_docstrings(SOURCE, None, {"f": 'say """ here'})


def test_a_backslash_survives_as_written() -> None:
    result = with_docstrings(SOURCE, None, {"f": r"matches \d+ digits"})
    node = next(n for n in ast.walk(ast.parse(result)) if isinstance(n, ast.FunctionDef) and n.name == "f")
    assert ast.get_docstring(node) == r"matches \d+ digits"


def test_every_stage_edition_fits_its_starter_and_transfer_starter(repo_root) -> None:
    course = load_course(repo_root)
    for stage in course.stages:
        for language, text in stage.texts.items():
            if text.docstrings is None:
                continue
            starter = (repo_root / stage.module).read_text(encoding="utf-8")
            localized = with_docstrings(starter, text.docstrings.starter, text.docstrings.functions,
                                        where=stage.module)
            assert ast.get_docstring(ast.parse(localized)) == text.docstrings.starter.strip(), (stage.number, language)
            transfer = (repo_root / stage.transfer_file).read_text(encoding="utf-8")
            localized = with_docstrings(transfer, text.docstrings.transfer, {}, where=stage.transfer_file)
            assert ast.get_docstring(ast.parse(localized)) == text.docstrings.transfer.strip(), (stage.number, language)


def test_stub_messages_speak_the_edition_and_keep_the_hint_numbers(repo_root) -> None:
    starter = (repo_root / "forge/context_selection.py").read_text(encoding="utf-8")
    assert with_stub_messages(starter, "en") == starter
    chinese = with_stub_messages(starter, "zh")
    assert chinese != starter
    assert "value_density() is not implemented yet" not in chinese
    assert "value_density()" in chinese and "1–3" in chinese and "forgelab hint 02" in chinese
    assert ast.dump(ast.parse(chinese)).count("NotImplementedError") == ast.dump(ast.parse(starter)).count(
        "NotImplementedError")
    transfer = (repo_root / "transfer/test_06_injection_boundary.py").read_text(encoding="utf-8")
    assert "not written yet" not in with_stub_messages(transfer, "zh")


def test_comments_are_replaced_by_their_words_and_nothing_else_changes() -> None:
    result = with_comments(SOURCE, {"a comment stays": "注释也换成中文"}, where="forge/x.py")
    assert 'return "cat"  # 注释也换成中文\n' in result
    assert result.replace("注释也换成中文", "a comment stays") == SOURCE


def test_a_translation_of_a_comment_the_file_no_longer_has_is_refused() -> None:
    with pytest.raises(LocalizeError, match=r"forge/x\.py: no comment reads 'gone'"):
        with_comments(SOURCE, {"gone": "没了"}, where="forge/x.py")
    assert with_comments(SOURCE, {"gone": "没了"}, every_key=False) == SOURCE


def test_a_translation_that_spans_lines_is_refused() -> None:
    with pytest.raises(LocalizeError, match="spans lines"):
        with_comments(SOURCE, {"a comment stays": "第一行\nx = 2"})


def test_english_left_names_docstrings_and_comments_but_not_tool_directives() -> None:
    source = ('"""模块。"""\nimport os  # noqa: F401\nx: int = 1  # type: ignore[assignment]\n'
              'def f() -> None:\n    """Does a thing."""\n    # 中文注释\n    y = 2  # still English here\n')
    assert english_left(source) == ["line 5: docstring of f", "line 7: comment 'still English here'"]
    assert english_left(SOURCE)[0] == "line 1: the module docstring"


def test_the_chinese_starters_and_finished_files_carry_no_english(repo_root) -> None:
    """What the zh bundle ships in forge/ and transfer/, made here as release makes it: 0 English docstrings or
    comments (issue 35)."""
    from forgelab.authoring.release.contents import finished_docstrings, localized
    course = load_course(repo_root)
    files = {p.relative_to(repo_root).as_posix(): p.read_bytes() for folder in ("forge", "transfer")
             for p in (repo_root / folder).rglob("*.py") if "__pycache__" not in p.parts}
    committed = {"course/docstrings.toml": (repo_root / "course/docstrings.toml").read_bytes()}
    chinese = localized(dict(files), course, "zh", finished_docstrings(committed, "zh"))
    left = {path: english_left(data.decode("utf-8")) for path, data in chinese.items() if path.endswith(".py")}
    assert {path: lines for path, lines in left.items() if lines} == {}
    assert len([path for path in files if path.startswith("forge/")]) >= 19
