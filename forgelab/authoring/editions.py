"""Both editions complete: every text, demo cell, docstring and notebook in one edition exists in the other.

One source, two editions (English ``en`` and Simplified Chinese ``zh``). :func:`problems` lists, in
plain words, everything present in one edition and missing in the other (down to a Mermaid figure's
prose label without a ``%% zh:`` translation line) — ``forgelab build --check``
(and so ``make test``) fails on any of them. Catalog completeness of the tools' own words is
checked by :mod:`forgelab.authoring.catalogs`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel

from forgelab.core import course_files, demo, figures
from forgelab.core.registry import Course, RegistryError, Stage
from forgelab.core import pyast

EDITIONS = ("en", "zh")


WORDING_TABLE = re.compile(r"^[A-Z][A-Z0-9_]*_ZH$")  # the Chinese edition's table of words to print, e.g. CAUGHT_BY_ZH


class _WhatItDoes(ast.NodeTransformer):
    """A demo cell with what it prints taken out: every f-string is blank, every print() and lab.table() call and
    *_ZH wording table is gone. Any other string is data and stays: the Chinese edition prints Chinese, but what it computes, and on which
    data, is the English edition's."""

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return ast.Constant("")

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print":
            return None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "table" \
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "lab":
            return None  # lab.table(...) shows a table: its headers and cells are what it prints
        return self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> ast.AST | None:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and WORDING_TABLE.match(node.targets[0].id):
            return None
        return self.generic_visit(node)


def same_demo_code(source: str) -> str:
    """What a demo cell does, apart from what it prints (see :class:`_WhatItDoes`); the source itself if it does not
    parse (then the two editions must match character for character)."""
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        return source
    return ast.dump(_WhatItDoes().visit(tree))


def _shape(table: BaseModel, prefix: str = "") -> dict[str, object]:
    """The structure two editions must share: which keys, how many items in each list, the quiz answer."""
    shape: dict[str, object] = {}
    for name in type(table).model_fields:
        value = getattr(table, name)
        if name == "docstrings":
            continue
        if isinstance(value, BaseModel):
            shape.update(_shape(value, f"{prefix}{name}."))
        elif isinstance(value, list):
            shape[prefix + name] = len(value)
        elif name == "answer":
            shape[prefix + name] = value
    return shape


def _documented(path: Path) -> tuple[bool, list[str]]:
    """(has a module docstring, names of functions and methods that have a docstring) of a Python file."""
    try:
        tree = pyast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return False, []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and ast.get_docstring(node):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef):
            names += [node.name] if ast.get_docstring(node) else []
            names += [f"{node.name}.{item.name}" for item in node.body
                      if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and ast.get_docstring(item)]
    return ast.get_docstring(tree) is not None, names


def _english_left(course: Course, path: str, module: str | None, functions: Mapping[str, str],
                  comments: Mapping[str, str], table: str) -> list[str]:
    """What the Chinese edition of ``path`` would still say in English, or why it cannot be made."""
    # lazy: the release's localizer is needed only when a build checks the editions
    from forgelab.authoring.release.localize import LocalizeError, english_left, with_words

    try:
        source = (course.root / path).read_text(encoding="utf-8")
        chinese = with_words(source, module, functions, comments, where=path)
        return [f"{table}: {path} {line} is still English — translate it there" for line in
                english_left(chinese, where=path)]
    except (OSError, UnicodeDecodeError, LocalizeError) as error:
        return [f"{table}: {error}"]


def finished_problems(course: Course) -> list[str]:
    """Every file of ``forge/`` that is not a stage module needs its Chinese words in ``course/docstrings.toml``."""
    where = "course/docstrings.toml"
    path = course.root / where
    if not path.is_file():
        return [f"{where} is missing (the Chinese docstrings and comments of forge/'s finished files)"]
    try:
        table = course_files.read(path, course_files.DocstringsFile)
    except RegistryError as error:
        return [str(error)]
    words = table.text.get("zh", {})
    stage_modules = {stage.module for stage in course.stages}
    found: list[str] = []
    files = sorted(p.relative_to(course.root).as_posix() for p in (course.root / "forge").rglob("*.py")
                   if "__pycache__" not in p.parts)
    for name in sorted(set(words) - set(files)):
        found.append(f"{where} [text.zh.\"{name}\"]: no such file in forge/")
    for name in files:
        if name in stage_modules:
            continue
        entry = words.get(name, course_files.FileDocstrings())
        found += _english_left(course, name, entry.module or None, entry.functions, entry.comments,
                               f"{where} [text.zh.\"{name}\"]")
    return found


def demo_problems(course: Course, stage: Stage) -> list[str]:
    """What keeps the two editions of ``demo.py`` from demonstrating the same thing in their own words."""
    where = stage.demo_file.relative_to(course.root).as_posix()
    try:
        text = stage.demo_file.read_text(encoding="utf-8")
    except OSError:
        return [f"{where} is missing (the worked demonstration)"]
    found = [f"{where}: `[{language}]` is not an edition of the course ({', '.join(EDITIONS)})"
             for language in sorted(demo.languages(text) - set(EDITIONS))]
    ours, theirs = (demo.parse_percent_cells(demo.edition(text, language)) for language in EDITIONS)
    if [kind for kind, _ in ours] != [kind for kind, _ in theirs]:
        return found + [f"{where}: the Chinese edition has {len(theirs)} cells where the English has {len(ours)}: "
                        "each `# %% [markdown] en` cell needs its `# %% [markdown] zh` translation right after it"]
    pairs = [(kind, english, chinese) for (kind, english), (_, chinese) in zip(ours, theirs)]
    for number, (english, chinese) in enumerate([(en, zh) for kind, en, zh in pairs if kind == "code"], 1):
        if same_demo_code(english) != same_demo_code(chinese):
            found.append(f"{where}: code cell {number}: its `# [zh]` lines do more than its `# [en]` lines: an "
                         "edition's own lines may change only what the cell prints (print() calls, f-strings, "
                         "wording tables named *_ZH); move the change to the lines both editions run (no tag)")
    for number, (english, chinese) in enumerate([(en, zh) for kind, en, zh in pairs if kind == "markdown"], 1):
        if english == chinese:
            found.append(f"{where}: Markdown cell {number} is the same in both editions: key it `# %% [markdown] en` "
                         "and add its `# %% [markdown] zh` translation right after it")
    return found


def stage_problems(course: Course, stage: Stage) -> list[str]:
    found: list[str] = []
    where = f"{stage.source_dir.relative_to(course.root).as_posix()}/stage.toml"
    for language in EDITIONS:
        if language not in stage.texts:
            found.append(f"{where}: [text.{language}] is missing")
    if not all(language in stage.texts for language in EDITIONS):
        return found
    for key in stage.untranslated.get("zh", ()):
        found.append(f"{where}: [text.zh] lacks {key!r} (the Chinese edition shows the English text there)")
    english, chinese = stage.texts["en"], stage.texts["zh"]
    for key, count in _shape(english).items():
        other = _shape(chinese).get(key)
        if other != count:
            found.append(f"{where}: [text.zh] {key} has {other} where [text.en] has {count}")
    docs = chinese.docstrings
    if docs is None:
        found.append(f"{where}: [text.zh.docstrings] is missing (the Chinese starter and transfer docstrings)")
    else:
        has_doc, functions = _documented(course.root / stage.module)
        missing = sorted(set(functions) - set(docs.functions))
        extra = sorted(set(docs.functions) - set(functions))
        if missing:
            found.append(f"{where}: [text.zh.docstrings.functions] lacks {', '.join(missing)} ({stage.module} documents them)")
        if extra:
            found.append(f"{where}: [text.zh.docstrings.functions] names {', '.join(extra)}, which {stage.module} "
                         "does not document")
        if not missing and not extra:
            found += _english_left(course, stage.module, docs.starter, docs.functions, docs.comments,
                                   f"{where} [text.zh.docstrings]")
            found += _english_left(course, stage.transfer_file, docs.transfer, {}, {}, f"{where} [text.zh.docstrings]")
    found += demo_problems(course, stage)
    try:
        stage_figures = figures.stage_figures(stage.source_dir)
    except figures.FigureError:
        stage_figures = []  # reported by `forgelab build --check` with its cause
    for figure in stage_figures:
        if not figure.has_edition("zh"):
            comment = "%%" if figure.kind == "mermaid" else "#"
            found.append(f"{figure.source.relative_to(course.root).as_posix()}: no `{comment} caption.zh:` line "
                         "(the Chinese caption and, with `alt.zh:`, the text a screen reader gets)")
        figure_path = figure.source.relative_to(course.root).as_posix()
        for label in figure.untranslated("zh"):
            found.append(f"{figure_path}: label {label!r} has no Chinese: add `%% zh: {label} => <中文>` to its "
                         f"header (a label that is code keeps its words: `%% zh: {label} => {label}`)")
        for unused in figure.unused_translations("zh"):
            found.append(f"{figure_path}: `%% zh: {unused} => …` translates no label of the diagram: "
                         "remove the line or make its English side match the label")
    return found


def course_problems(course: Course) -> list[str]:
    found: list[str] = []
    missing = sorted(set(course.texts.get("en", {})) ^ set(course.texts.get("zh", {})))
    for key in missing:
        side = "zh" if key in course.texts.get("en", {}) else "en"
        found.append(f"course/course.toml: [text.{side}] lacks {key!r}")
    for scenario, by_language in course.scenarios.items():
        for language in EDITIONS:
            if language not in by_language:
                found.append(f"course/course.toml: [scenarios.{scenario}.{language}] is missing")
    glossary = course.root / "course" / "glossary.toml"
    if glossary.is_file():
        try:
            course_files.read(glossary, course_files.GlossaryFile)
        except RegistryError as error:
            found.append(str(error))
    else:
        found.append("course/glossary.toml is missing")
    if not (course.root / "README.zh-CN.md").is_file() and (course.root / "solutions").is_dir():
        found.append("README.zh-CN.md is missing (the Chinese README, linked from the top of README.md)")
    if (course.root / "solutions").is_dir():
        found += finished_problems(course)
    docs = course.root / "docs"
    if docs.is_dir() and (course.root / "solutions").is_dir():
        for english in sorted(docs.glob("*.md")):
            if english.name.endswith(".zh-CN.md"):
                if not english.with_name(english.name.removesuffix(".zh-CN.md") + ".md").is_file():
                    found.append(f"docs/{english.name} has no English edition: write docs/"
                                 f"{english.name.removesuffix('.zh-CN.md')}.md beside it")
            elif not english.with_name(english.stem + ".zh-CN.md").is_file():
                found.append(f"docs/{english.name} has no Chinese edition: write docs/{english.stem}.zh-CN.md beside it")
    return found


def problems(course: Course) -> list[str]:
    """Everything that is in one edition and not in the other, for the whole course."""
    found = course_problems(course)
    for stage in course.stages:
        found += stage_problems(course, stage)
    return found
