"""Put another edition's docstrings into a Python source file, changing nothing else.

``forgelab release --lang zh`` ships each starter module (``forge/<module>.py``) and transfer
starter (``transfer/test_NN_*.py``) with the Chinese docstrings of ``[text.zh.docstrings]`` in
place of the English ones. Only the string literals that *are* docstrings are rewritten — the
module's, and those of the functions and methods named in the table — so code, comments,
signatures and the learner's ``raise NotImplementedError`` bodies stay byte for byte as committed.

:func:`with_docstrings` checks its own result: the new file must parse, must read back exactly
the docstrings it was given, and must have the same code once docstrings are set aside. Anything
else raises :class:`LocalizeError` naming the file and the docstring.

:func:`with_comments` does the same for comments (``[text.<lang>.docstrings.comments]``: the English comment →
its translation), and :func:`english_left` lists what an edition's file still says in English, so a release can
refuse to ship a Chinese starter with an English docstring or comment in it.
"""

from __future__ import annotations

import ast
import contextvars
import inspect
import io
import re
import tokenize
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from forgelab.core.i18n import N_, _, use
from forgelab.core import pyast


# The stubs' messages, as every committed starter words them (``forgelab new-stage`` writes the same).
STUB_RAISE = N_("{function}() is not implemented yet — see hints {hints} (forgelab hint {number})")
STUB_SKIP = N_("not written yet: replace this line with your test (notebook part {part})")
_STUB_RAISE = re.compile(r'"(?P<function>[A-Za-z_][\w.]*)\(\) is not implemented yet — see hints (?P<hints>[0-9–-]+) '
                         r'\(forgelab hint (?P<number>\d\d)\)"')
_STUB_SKIP = re.compile(r'"not written yet: replace this line with your test \(notebook part (?P<part>\d+)\)"')


class LocalizeError(ValueError):
    """A docstring could not be replaced; the message names the file and the function."""


@dataclass(frozen=True)
class _Docstring:
    name: str  # "" for the module, else "function" or "Class.method"
    node: ast.Constant
    indent: str


def _owners(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    yield "", tree
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            yield node.name, node
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{node.name}.{item.name}", item


def _docstrings(tree: ast.Module, lines: list[str]) -> dict[str, _Docstring]:
    found: dict[str, _Docstring] = {}
    for name, owner in _owners(tree):
        body = getattr(owner, "body", [])
        if not body or not isinstance(body[0], ast.Expr):
            continue
        value = body[0].value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            line = lines[value.lineno - 1]
            found[name] = _Docstring(name, value, line[: len(line) - len(line.lstrip())])
    return found


def _literal(text: str, indent: str) -> str:
    """``text`` as a triple-quoted docstring literal whose first line sits after the quotes."""
    body = inspect.cleandoc(text)
    if '"""' in body or body.endswith('"'):
        raise LocalizeError('a docstring may not contain or end with a double quote next to """')
    prefix = "r" if "\\" in body else ""
    lines = body.split("\n")
    if len(lines) == 1:
        return f'{prefix}"""{body}"""'
    rest = "\n".join(f"{indent}{line}" if line.strip() else "" for line in lines[1:])
    return f'{prefix}"""{lines[0]}\n{rest}\n{indent}"""'


def _offset(line_starts: list[int], lineno: int, col: int, encoded: list[bytes]) -> int:
    """The character offset of (line, UTF-8 byte column) in the source."""
    return line_starts[lineno - 1] + len(encoded[lineno - 1][:col].decode("utf-8"))


def _without_docstrings(tree: ast.Module) -> str:
    for _, owner in _owners(tree):
        body = getattr(owner, "body", [])
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body[0] = ast.Pass()
    return ast.dump(tree)


def with_docstrings(source: str, module: str | None, functions: Mapping[str, str], *, where: str = "<source>") -> str:
    """``source`` with its module docstring replaced by ``module`` (if given) and each named docstring by its text.

    ``functions`` maps ``name`` or ``Class.method`` to the new docstring. A name that has no
    docstring in ``source`` is an error, so a renamed function cannot silently keep English words.
    """
    try:
        tree = pyast.parse(source)
    except SyntaxError as error:
        raise LocalizeError(f"{where}: not valid Python ({error.msg}, line {error.lineno})") from None
    lines = source.splitlines(keepends=True)
    present = _docstrings(tree, lines)
    wanted: dict[str, str] = dict(functions)
    if module is not None:
        wanted[""] = module
    missing = sorted(name for name in wanted if name not in present)
    if missing:
        shown = ", ".join("the module" if not name else name for name in missing)
        raise LocalizeError(f"{where}: no docstring to replace for {shown} — the source and the edition's "
                            "[text.<lang>.docstrings] table disagree")
    encoded = [line.encode("utf-8") for line in lines]
    line_starts, total = [], 0
    for line in lines:
        line_starts.append(total)
        total += len(line)
    edits = []
    for name, text in wanted.items():
        node = present[name].node
        assert node.end_lineno is not None and node.end_col_offset is not None
        start = _offset(line_starts, node.lineno, node.col_offset, encoded)
        end = _offset(line_starts, node.end_lineno, node.end_col_offset, encoded)
        try:
            edits.append((start, end, _literal(text, present[name].indent)))
        except LocalizeError as error:
            raise LocalizeError(f"{where}: {name or 'the module'}: {error}") from None
    result = source
    for start, end, literal in sorted(edits, reverse=True):
        result = result[:start] + literal + result[end:]
    _check(source, result, wanted, where)
    return result


def _check(before: str, after: str, wanted: Mapping[str, str], where: str) -> None:
    try:
        new_tree = pyast.parse(after)
    except SyntaxError as error:
        raise LocalizeError(f"{where}: the localized file does not parse ({error.msg}, line {error.lineno})") from None
    read_back = _docstrings(new_tree, after.splitlines(keepends=True))
    for name, text in wanted.items():
        got = inspect.cleandoc(str(read_back[name].node.value)) if name in read_back else None
        if got != inspect.cleandoc(text):
            raise LocalizeError(f"{where}: {name or 'the module'}: the docstring does not read back as written")
    if _without_docstrings(new_tree) != _without_docstrings(pyast.parse(before)):
        raise LocalizeError(f"{where}: localizing changed code, not only docstrings")


def with_stub_messages(source: str, language: str) -> str:
    """``source`` with the stubs' ``NotImplementedError`` and ``pytest.skip`` messages in ``language``.

    The learner reads these when a check reaches a function they have not written yet; the code
    around them is unchanged.
    """
    def translated() -> str:
        use(language)
        text = _STUB_RAISE.sub(lambda m: _json_string(_(STUB_RAISE).format(**m.groupdict())), source)
        return _STUB_SKIP.sub(lambda m: _json_string(_(STUB_SKIP).format(**m.groupdict())), text)

    return contextvars.copy_context().run(translated)


def _json_string(text: str) -> str:
    if '"' in text or "\\" in text:
        raise LocalizeError(f"a stub message may not contain a quote or a backslash: {text!r}")
    return f'"{text}"'


# A comment that only talks to a tool (``# noqa: F401``, ``# type: ignore[...]``) is not prose: it stays as it is.
_DIRECTIVE = re.compile(r"(noqa|type: ?ignore|pragma|mypy|fmt|isort)\b[\w:,\[\] -]*")
_PROSE = re.compile(r"[A-Za-z]{2,}")
_HAN = re.compile(r"[\u3400-\u9fff]")


def _comment_tokens(source: str, where: str) -> list[tokenize.TokenInfo]:
    try:
        return [token for token in tokenize.generate_tokens(io.StringIO(source).readline)
                if token.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError) as error:
        raise LocalizeError(f"{where}: not valid Python ({error})") from None


def comment_text(token: str) -> str:
    """A comment's words: the text after ``#``, stripped (the key of ``[text.<lang>.docstrings.comments]``)."""
    return token[1:].strip()


def with_comments(source: str, comments: Mapping[str, str], *, where: str = "<source>", every_key: bool = True) -> str:
    """``source`` with every comment whose words are a key of ``comments`` replaced by its translation.

    With ``every_key``, a key that no comment of ``source`` has is an error (the table is stale: the comment was
    changed or removed); a change to anything but comments always is.
    """
    tokens = _comment_tokens(source, where)
    unused = sorted(set(comments) - {comment_text(token.string) for token in tokens})
    if unused and every_key:
        raise LocalizeError(f"{where}: no comment reads {unused[0]!r} — the source and the edition's "
                            "[text.<lang>.docstrings.comments] table disagree")
    lines = source.splitlines(keepends=True)
    for token in reversed(tokens):
        words = comment_text(token.string)
        if words not in comments:
            continue
        translated = comments[words].strip()
        if "\n" in translated:
            raise LocalizeError(f"{where}: the translation of comment {words!r} spans lines; a comment is one line")
        row, col = token.start
        line = lines[row - 1]
        lines[row - 1] = line[:col] + f"# {translated}" + line[token.end[1]:]
    result = "".join(lines)
    if _without_comments(result) != _without_comments(source):
        raise LocalizeError(f"{where}: localizing changed code, not only comments")
    return result


def with_words(source: str, module: str | None, functions: Mapping[str, str], comments: Mapping[str, str], *,
               where: str = "<source>", every_key: bool = True) -> str:
    """:func:`with_docstrings`, then :func:`with_comments`: ``source`` in another edition's words, its code unchanged."""
    return with_comments(with_docstrings(source, module, functions, where=where), comments, where=where,
                         every_key=every_key)


def _without_comments(source: str) -> list[tuple[int, str]]:
    return [(token.type, token.string) for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type not in (tokenize.COMMENT, tokenize.NL)]


def english_left(source: str, *, where: str = "<source>") -> list[str]:
    """What ``source`` still says in English: ``line N: docstring of NAME`` or ``line N: comment '…'``.

    A docstring or comment counts when it has a word of Latin letters and not one Chinese character; a comment
    that only speaks to a tool (``# noqa: F401``) does not count.
    """
    try:
        tree = pyast.parse(source)
    except SyntaxError as error:
        raise LocalizeError(f"{where}: not valid Python ({error.msg}, line {error.lineno})") from None
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            text = ast.get_docstring(node, clean=False)
            if text and _PROSE.search(text) and not _HAN.search(text):
                name = getattr(node, "name", "")
                line = node.body[0].lineno if node.body else 1
                found.append((line, f"docstring of {name}" if name else "the module docstring"))
    for token in _comment_tokens(source, where):
        words = comment_text(token.string)
        prose = _DIRECTIVE.sub("", words)
        if _PROSE.search(prose) and not _HAN.search(prose):
            found.append((token.start[0], f"comment {words!r}"))
    return [f"line {line}: {what}" for line, what in sorted(found)]
