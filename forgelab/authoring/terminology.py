"""One terminology in the Chinese edition: every glossary term has one rendering, and prose never leaves it in English.

``course/glossary.toml`` gives each term its English word (``en``), its one Chinese rendering (``zh``) and the
renderings that are wrong (``wrong``: words a translator reaches for and the course does not use, e.g. 合同 for
contract). :func:`problems` reads every learner-facing Chinese text — each stage's ``[text.zh]`` (docstrings
included), the Chinese words of its demonstration's code (``# [zh]`` lines: their strings and comments) and of its
figures (``zh:`` lines), the Chinese notebooks' Markdown cells, the course's ``[text.zh]`` and scenarios, the zh
docstrings and comments of ``forge/``'s finished files (``course/docstrings.toml``), the ``msgstr`` of the tools'
catalog, make's Chinese messages (the Makefile's ``ifeq ($(ZH),yes)`` block), ``README.zh-CN.md``, the Chinese role
documents ``docs/*.zh-CN.md`` and the learner bundle's Chinese README — and reports, with file and line:

* a wrong variant anywhere in the prose (a wrong variant inside another term's rendering is not one: 提示词 is
  not the course's word for prompt, 系统提示词 is its word for the system prompt);
* a term left in English where the glossary translates it (its ``zh`` does not contain the English word), e.g.
  "harness" or "passed" in a Chinese sentence.

Code is not prose: fenced blocks, ``inline code``, ``{placeholders}``, flags, file names, identifiers (a word
touching ``_ . / -``) and link targets are left out. The English word may follow its rendering in parentheses
once, as the glossary's rule for a stage's first use asks: ``框架（harness）``. ``forgelab build --check`` fails on
any problem.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from forgelab.core import course_files
from forgelab.core.registry import Course

GLOSSARY = Path("course") / "glossary.toml"
CATALOG = Path(__file__).resolve().parents[1] / "locale" / "zh" / "LC_MESSAGES" / "forgelab.po"
DOCSTRINGS = Path("course") / "docstrings.toml"
MAKEFILE = "Makefile"
READMES = ("README.zh-CN.md", "course/learner/README.zh-CN.md", "docs/learner.zh-CN.md", "docs/instructor.zh-CN.md",
           "docs/authoring.zh-CN.md", "docs/architecture.zh-CN.md")


class GlossaryError(ValueError):
    """``course/glossary.toml`` cannot be read or a term is malformed; the message names the file, term and key."""


@dataclass(frozen=True)
class Term:
    id: str
    en: str
    zh: str
    wrong: tuple[str, ...]

    @property
    def translated(self) -> bool:
        """The Chinese rendering does not keep the English word (框架 for harness, not Agent for agent)."""
        return self.en.lower() not in self.zh.lower()


@dataclass(frozen=True)
class Passage:
    """One piece of Chinese prose and where it comes from (``file:line`` or ``file [key]``)."""

    where: str
    text: str


def _read(root: Path) -> course_files.GlossaryFile:
    try:
        return course_files.read(root / GLOSSARY, course_files.GlossaryFile)
    except course_files.RegistryError as error:
        raise GlossaryError(str(error)) from None


def names(root: Path) -> tuple[str, ...]:
    """Proper names the Chinese edition writes in English (``names = ["Forge Workbook"]``)."""
    return tuple(_read(root).names)


def load(root: Path) -> list[Term]:
    """The glossary's terms; :class:`GlossaryError` names the file, the term and the key that is wrong."""
    return [Term(term.id, term.en, term.zh, tuple(term.wrong)) for term in _read(root).term]


_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
# an HTML table in Markdown is what a demonstration showed (its reference output): the program's words, like a fence
_HTML_TABLE = re.compile(r"<table\b.*?</table>", re.S)
_HAN = re.compile(r"[\u4e00-\u9fff]")
# a cited heading of a source file (``| `000_….txt` · heading |``) is the source's own words, not ours
_CITATION = re.compile(r"(?<=\.txt` · )[^|\n]*")
# a title in book-title marks (《上下文是一条数据管线》) is quoted as its author wrote it
_TITLE = re.compile(r"《[^》\n]*》")
_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1|\{[^{}\n]*\}|\]\([^)\n]*\)|<[^>\n]+>|https?://\S+")


def prose(text: str) -> str:
    """``text`` with its code replaced by spaces (line numbers kept): fences, HTML tables of output, code spans,
    placeholders, link targets."""
    blank = lambda match: re.sub(r"[^\n]", " ", match.group(0))  # noqa: E731 - keeps every line where it was
    return _CODE.sub(blank, _HTML_TABLE.sub(blank, _FENCE.sub(blank, text)))


def _english(term: Term) -> re.Pattern[str]:
    """The term's English words as prose: not part of an identifier, a path, a flag or a file name."""
    words = r"[\s-]+".join(re.escape(word) for word in term.en.split())
    return re.compile(r"(?<![\w./\\=@$%-])" + words + r"(?![\w/\\=@$%]|[.-]\w)", re.I)


def _after_rendering(text: str, start: int, term: Term) -> bool:
    """The English word stands in parentheses right after its Chinese rendering: ``框架（harness）``."""
    before = text[:start].rstrip()
    if not before.endswith(("（", "(")):
        return False
    return before[:-1].rstrip().rstrip("*_").endswith(term.zh)  # also **指令层级**（instruction hierarchy）


def check(passages: Iterable[Passage], terms: list[Term], names: tuple[str, ...] = ()) -> list[str]:
    """One line per wrong variant or untranslated term found in ``passages``; ``names`` (the product's name) are
    never translated and never judged."""
    found = []
    # longer terms first: "上下文选择（context selection）" is one term, not "context" left in English
    patterns = [(term, _english(term)) for term in sorted(terms, key=lambda term: -len(term.en)) if term.translated]
    for passage in passages:
        text = _TITLE.sub(lambda match: " " * len(match.group(0)),
                          _CITATION.sub(lambda match: " " * len(match.group(0)), passage.text))
        for name in names:
            text = text.replace(name, " " * len(name))
        text = prose(text)
        for term in terms:
            for word in term.wrong:
                for line, _column in _positions(_without(text, word, terms), word):
                    found.append(f"{_at(passage.where, line)}: {word!r} is not the course's word for "
                                 f"{term.en!r}: write {term.zh!r} (course/glossary.toml, term {term.id!r})")
        chinese = _chinese_lines(text)
        taken: list[tuple[int, int]] = []
        for term, pattern in patterns:
            for match in pattern.finditer(chinese):
                if any(start <= match.start() and match.end() <= end for start, end in taken):
                    continue
                taken.append(match.span())
                if match.group(0) in term.wrong or _after_rendering(chinese, match.start(), term):
                    continue
                line = chinese.count("\n", 0, match.start())
                found.append(f"{_at(passage.where, line)}: {match.group(0)!r} is left in English: the Chinese edition "
                             f"writes {term.zh!r} (course/glossary.toml, term {term.id!r}; code goes in backticks)")
    return found


def _without(text: str, word: str, terms: list[Term]) -> str:
    """``text`` with every other term's rendering that contains ``word`` blanked (系统提示词 holds 提示词)."""
    for term in terms:
        if word in term.zh and word != term.zh:
            text = text.replace(term.zh, " " * len(term.zh))
    return text


def _chinese_lines(text: str) -> str:
    """``text`` with every line that holds no Chinese blanked (spaces, positions kept): a line without a Chinese
    character in a Chinese text is code, data or a quoted English example (a docstring's literal block, a payload),
    """
    lines = []
    for line in text.split("\n"):
        lines.append(line if _HAN.search(line) else " " * len(line))
    return "\n".join(lines)


def _positions(text: str, word: str) -> Iterator[tuple[int, int]]:
    start = text.find(word)
    while start >= 0:
        yield text.count("\n", 0, start), start
        start = text.find(word, start + len(word))


def _at(where: str, line: int) -> str:
    """``file:line`` for a passage that starts at line 1 of its file; ``where`` as it is otherwise."""
    if re.search(r":\d+$", where):
        file, first = where.rsplit(":", 1)
        return f"{file}:{int(first) + line}"
    return where


def _strings(value: object, key: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for name, item in value.items():
            yield from _strings(item, f"{key}.{name}" if key else str(name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{key}[{index}]")


def _toml_zh(path: Path, root: Path) -> Iterator[Passage]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    shown = path.relative_to(root).as_posix()
    yield from (Passage(f"{shown} [text.zh.{key}]", text) for key, text in _strings(data.get("text", {}).get("zh", {}), ""))
    for name, scenario in data.get("scenarios", {}).items():
        yield from (Passage(f"{shown} [scenarios.{name}.zh.{key}]", text)
                    for key, text in _strings(scenario.get("zh", {}), ""))


def _notebook(path: Path, root: Path) -> Iterator[Passage]:
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    shown = path.relative_to(root).as_posix()
    for index, cell in enumerate(cells):
        if cell.get("cell_type") == "markdown":
            source = cell.get("source", "")
            yield Passage(f"{shown} (cell {index + 1})", "".join(source) if isinstance(source, list) else source)


def catalog(path: Path = CATALOG) -> Iterator[Passage]:
    """Each ``msgstr`` of a ``.po`` file, with the line it starts on."""
    lines = path.read_text(encoding="utf-8").splitlines()
    shown = "forgelab/locale/zh/LC_MESSAGES/forgelab.po"
    index = 0
    while index < len(lines):
        if lines[index].startswith("msgstr"):
            start, parts = index, [lines[index].split(" ", 1)[1]]
            index += 1
            while index < len(lines) and lines[index].startswith('"'):
                parts.append(lines[index])
                index += 1
            text = "".join(json.loads(part) for part in parts)
            if text:
                yield Passage(f"{shown}:{start + 1}", text)
        else:
            index += 1


def _demo_words(path: Path, root: Path) -> Iterator[Passage]:
    """The Chinese edition's words in a demonstration's code: the strings and comments of its ``# [zh]`` lines."""
    shown = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.rstrip().endswith("# [zh]"):
            continue
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
        except (tokenize.TokenError, SyntaxError):  # a line that continues on the next: its words as they stand
            tokens = []
        words = [token.string.removesuffix("# [zh]").lstrip("#") for token in tokens
                 if token.type in (tokenize.STRING, tokenize.COMMENT)] if tokens else [line]
        text = "  ".join(word for word in words if _HAN.search(word))
        if text:
            yield Passage(f"{shown}:{number}", text)


def _figure_words(path: Path, root: Path) -> Iterator[Passage]:
    """The Chinese words of a figure's source: its ``zh:`` lines (caption, alt text, labels)."""
    shown = path.relative_to(root).as_posix()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        head, colon, words = line.partition("zh:")
        if colon and _HAN.search(words) and head.lstrip().startswith(("%%", "#")):
            yield Passage(f"{shown}:{number}", words.split("=>")[-1])  # `%% zh: english => 中文`: the Chinese side
        elif "# [zh]" in line or ('"zh"' in line and _HAN.search(line)):
            yield from (Passage(f"{shown}:{number}", found) for found in re.findall(r'"([^"]*[\u4e00-\u9fff][^"]*)"',
                                                                                     line))


def _make_words(path: Path) -> Iterator[Passage]:
    """make's Chinese messages: the ``SAY_*`` words between ``ifeq ($(ZH),yes)`` and its ``else``."""
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("ifeq ($(ZH),yes)"):
            inside = True
        elif inside and line.startswith(("else", "endif")):
            return
        elif inside and "=" in line:
            yield Passage(f"{MAKEFILE}:{number}", line.split("=", 1)[1])


def passages(course: Course) -> Iterator[Passage]:
    """Every learner-facing Chinese text of the course (see the module's docstring)."""
    root = course.root
    for stage in course.stages:
        yield from _toml_zh(stage.source_dir / "stage.toml", root)
        if (stage.source_dir / "demo.py").is_file():
            yield from _demo_words(stage.source_dir / "demo.py", root)
        for figure in sorted([*stage.source_dir.glob("figure*.mmd"), *stage.source_dir.glob("figure*.py")]):
            yield from _figure_words(figure, root)
    if (root / "course" / "course.toml").is_file():
        yield from _toml_zh(root / "course" / "course.toml", root)
    if (root / DOCSTRINGS).is_file():
        yield from _toml_zh(root / DOCSTRINGS, root)
    if (root / MAKEFILE).is_file():
        yield from _make_words(root / MAKEFILE)
    for notebook in sorted((root / "notebooks" / "zh").glob("*.ipynb")):
        yield from _notebook(notebook, root)
    if CATALOG.is_file():
        yield from catalog()
    for name in READMES:
        if (root / name).is_file():
            yield Passage(f"{name}:1", (root / name).read_text(encoding="utf-8"))


def problems(course: Course) -> list[str]:
    """Every place where the Chinese edition departs from the glossary, one line each (empty: one terminology)."""
    try:
        terms, proper = load(course.root), names(course.root)
    except GlossaryError as error:
        return [str(error)]
    return check(passages(course), terms, proper)
