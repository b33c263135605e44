"""The leak check: a bundle must not reveal a reference solution. It compares the bundle against ``solutions/``
itself (:func:`reference_leaks`), never against the current ``forge/``:

* a file of ``solutions/``, or a copy of one under another name;
* the body of a reference function the learner has to write — by the AST: its starter body is
  ``raise NotImplementedError`` (at ``HEAD`` *or in any committed version of that starter*, so that
  committing the reference body into the starter does not turn it into "given" code), or the starter
  has no such function at all — matched as normalized text, as an AST dump (formatting does not
  hide it), and line by line for long lines;
* the body of every reference transfer test (``solutions/transfer/*.py``);
* every paragraph of a reference design answer (``solutions/answers/*.md``).

No exception: a stage's fault variant is its reference module with one planted defect, so it ships only sealed
(:mod:`forgelab.authoring.release.sealing`), and every other shipped file — a fault lab's module left in plain text
included — is checked like any other.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from forgelab.authoring.release.source import Committed, ReleaseError, run_git, read_blobs
from forgelab.core.i18n import _
from forgelab.core import pyast


MIN_BODY_CHARS = 20  # shorter function bodies (e.g. ``return x``) are too generic to count as a leak


MIN_LINE_CHARS = 40


MIN_PARAGRAPH_CHARS = 60


def normalize(text: str) -> str:
    return " ".join(text.split())


def _is_not_implemented(statement: ast.stmt) -> bool:
    if not isinstance(statement, ast.Raise) or statement.exc is None:
        return False
    raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


@dataclass(frozen=True)
class FunctionBody:
    text: str  # the body's source (docstring left out), whitespace normalized
    lines: tuple[str, ...]  # each source line of the body, whitespace normalized
    dump: str  # ast.dump of the body: the same code in any formatting
    shape: tuple[str, ...]  # the kinds of its top-level statements (:func:`_shape`)
    not_implemented: bool  # the body is (or contains, at its top level) ``raise NotImplementedError``


def _functions(statements: Iterable[ast.stmt], prefix: str = "") -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function defined in ``statements`` with its qualified name — methods, nested functions and functions
    inside if/with/try/for/match blocks included. Only statements are visited (a function is always one), never the
    expressions that make up most of a tree."""
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + statement.name, statement
            yield from _functions(statement.body, f"{prefix}{statement.name}.")
        elif isinstance(statement, ast.ClassDef):
            yield from _functions(statement.body, f"{prefix}{statement.name}.")
        else:
            for field in ("body", "orelse", "finalbody"):
                yield from _functions(getattr(statement, field, ()) or (), prefix)
            for handler in getattr(statement, "handlers", ()) or ():
                yield from _functions(handler.body, prefix)
            for case in getattr(statement, "cases", ()) or ():
                yield from _functions(case.body, prefix)


def _function_bodies(source: str) -> dict[str, FunctionBody]:
    """Qualified function name → its body (methods and nested functions included)."""
    tree = pyast.parse(source)
    source_lines = source.splitlines()
    encoded = [line.encode("utf-8") for line in source.splitlines(keepends=True)]  # ast offsets count UTF-8 bytes

    def segment(node: ast.stmt) -> str:  # ast.get_source_segment, without re-splitting the source each time
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        start, end = node.col_offset, node.end_col_offset if node.end_col_offset is not None else len(encoded[last])
        if first == last:
            return encoded[first][start:end].decode("utf-8", "replace")
        pieces = [encoded[first][start:], *encoded[first + 1:last], encoded[last][:end]]
        return b"".join(pieces).decode("utf-8", "replace")

    bodies: dict[str, FunctionBody] = {}
    for name, function in _functions(tree.body):
        statements = _body(function)
        if statements:
            segments = [segment(statement) for statement in statements]
            end = statements[-1].end_lineno or statements[-1].lineno
            lines = tuple(normalize(line) for line in source_lines[statements[0].lineno - 1:end])
            dump = ast.dump(ast.Module(body=list(statements), type_ignores=[]))
            bodies[name] = FunctionBody(normalize("\n".join(segments)), lines, dump, _shape(statements),
                                        any(_is_not_implemented(s) for s in statements))
    return bodies


def _unwritten_functions(data: bytes) -> set[str]:
    try:
        return {name for name, body in _function_bodies(data.decode("utf-8")).items() if body.not_implemented}
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return set()


def _given_text(source: str, learner_writes: Iterable[str]) -> str:
    """The starter's text without the bodies of the functions the learner writes (what it really gives away)."""
    names = set(learner_writes)
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        return normalize(source)
    lines = source.splitlines()
    dropped: set[int] = set()
    for name, function in _functions(tree.body):
        if name in names:
            dropped.update(range(function.body[0].lineno, (function.end_lineno or function.lineno) + 1))
    return normalize("\n".join(line for number, line in enumerate(lines, 1) if number not in dropped))


@dataclass(frozen=True)
class Secret:
    """A piece of a reference solution that must not be shipped."""

    origin: str  # e.g. "solutions/forge/instructions.py: body of explain()"
    text: str  # normalized
    dump: str = ""  # ast.dump of a function body, matched against every function in the bundle
    shape: tuple[str, ...] = ()  # the kinds of that body's top-level statements
    group: str = ""  # the secret this one is part of (a line of a body): reported only when the body is not
    note: str = ""  # why it counts as the learner's to write, when the starter at HEAD no longer says so


def reference_secrets(committed: Committed) -> list[Secret]:
    """What of ``solutions/`` (as committed) must never appear in the bundle."""
    # starter path -> functions whose body was ``raise NotImplementedError`` in some committed version of that starter
    # (HEAD included), and (starter path, function) -> a short commit id where it was
    written_by_learner, history_commits = _learner_functions_in_history(committed.root, committed.commit, committed.files)
    secrets: list[Secret] = []
    for path, data in sorted(committed.files.items()):
        if not path.startswith("solutions/") or not path.endswith(".py"):
            continue
        relative = PurePosixPath(path)
        kind = relative.parts[1] if len(relative.parts) > 2 else ""
        if kind == "regression":  # the example regression tests: never shipped as files (solutions/ is not), and built from
            continue        # the stage tests the bundle ships, so their bodies are no secret of their own
        counterpart = PurePosixPath(*relative.parts[1:]).as_posix()  # solutions/forge/x.py -> forge/x.py
        starter_data = committed.files.get(counterpart, b"")
        try:
            reference = _function_bodies(data.decode("utf-8"))
            given = _function_bodies(starter_data.decode("utf-8")) if starter_data else {}
        except (SyntaxError, UnicodeDecodeError) as error:
            raise ReleaseError(_("cannot read {path} or its starter {starter} ({error}): fix it and commit").format(
                path=path, starter=counterpart, error=error)) from None
        learner_writes = written_by_learner.get(counterpart, frozenset())
        given_normalized = _given_text(starter_data.decode("utf-8", "replace"),
                                       learner_writes | {n for n, b in given.items() if b.not_implemented})
        for name, body in sorted(reference.items()):
            if len(body.text) < MIN_BODY_CHARS or body.not_implemented:
                continue  # too generic to count, or not a real body
            starter = given.get(name)
            if kind != "transfer" and name not in learner_writes and starter is not None and starter.dump == body.dump:
                continue  # code the starter gives the learner (and never asked them to write)
            origin = f"{path}: body of {name}()"
            note = ""
            if starter is not None and not starter.not_implemented and name in learner_writes:
                where = history_commits.get((counterpart, name), "an earlier commit")
                note = f"{name}() is the learner's to write: its starter body was `raise NotImplementedError` at {where}"
            secrets.append(Secret(origin, body.text, body.dump, body.shape, note=note))
            if kind == "transfer":
                continue  # a test shares many lines with the stage tests and demos; only its whole body is secret
            for line in sorted(set(body.lines)):
                if len(line) >= MIN_LINE_CHARS and line not in given_normalized:
                    secrets.append(Secret(f"{path}: a line of {name}(): {line[:60]}", line, group=origin))
    for path, data in sorted(committed.files.items()):
        if path.startswith("solutions/") and path.endswith(".md"):
            for paragraph in re.split(r"\n\s*\n", data.decode("utf-8", "replace")):
                text = normalize(paragraph)
                if len(text) >= MIN_PARAGRAPH_CHARS:
                    secrets.append(Secret(f"{path}: a paragraph of the reference answer", text))
    return secrets


def searchable_text(path: str, data: bytes) -> str | None:
    """A bundle file's text as a reader sees it (a notebook's cell sources and outputs); None for binaries."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if path.endswith(".ipynb"):
        try:
            notebook = json.loads(text)
        except ValueError:
            return text
        pieces: list[str] = []
        for cell in notebook.get("cells", []):
            source = cell.get("source", "")
            pieces.append("".join(source) if isinstance(source, list) else str(source))
            for output in cell.get("outputs", []):
                pieces.append(json.dumps(output, ensure_ascii=False))
                text_out = output.get("text", "")
                pieces.append("".join(text_out) if isinstance(text_out, list) else str(text_out))
        return "\n".join(pieces)
    return text


def _python_sources(path: str, data: bytes) -> list[str]:
    """The Python code inside one bundle file: a module, or a notebook's code cells (magics left out)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    if path.endswith(".py"):
        return [text]
    if path.endswith(".ipynb"):
        try:
            cells = json.loads(text).get("cells", [])
        except ValueError:
            return []
        sources = ["".join(c.get("source", "")) if isinstance(c.get("source"), list) else str(c.get("source", ""))
                   for c in cells if c.get("cell_type") == "code"]
        return ["\n".join(line for line in s.splitlines() if not line.lstrip().startswith(("%", "!"))) for s in sources]
    return []


def _body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """A function's statements without its docstring."""
    first = function.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    return function.body[1:] if docstring else function.body


def _shape(statements: list[ast.stmt]) -> tuple[str, ...]:
    """The kinds of a body's top-level statements: equal dumps have equal shapes, so only a body whose shape is a
    secret's is ever dumped (dumping every function of the bundle was most of a release's time)."""
    return tuple(type(statement).__name__ for statement in statements)


def _matching_dumps(path: str, data: bytes, shapes: frozenset[tuple[str, ...]], dumps: frozenset[str]) -> set[str]:
    """The secret dumps (``dumps``, whose bodies have ``shapes``) that a function of this bundle file has as its body."""
    found: set[str] = set()
    for source in _python_sources(path, data):
        if "def " not in source:
            continue  # no function to compare: not worth parsing
        try:
            tree = pyast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for _name, function in _functions(tree.body):
            statements = _body(function)
            if statements and _shape(statements) in shapes:
                dump = ast.dump(ast.Module(body=list(statements), type_ignores=[]))
                if dump in dumps:
                    found.add(dump)
    return found


class _WordIndex:
    """Which normalized texts can hold a secret, without searching each one for it (371 secrets in 5 MB of bundle
    text were most of a release's time). A secret found inside a text has its inner words (all but its first and
    last, which may be parts of longer words) as whole words of that text, since both are normalized to single
    spaces: only the texts holding every inner word are searched."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self._every = frozenset(texts)
        self._where: dict[str, set[str]] = {}
        for path, text in texts.items():
            for word in set(text.split(" ")):
                self._where.setdefault(word, set()).add(path)

    def candidates(self, secret: str) -> set[str]:
        inner = secret.split(" ")[1:-1]
        if not inner:
            return set(self._every)  # one or two words: any text may hold it
        found: set[str] | None = None
        for word in sorted(set(inner), key=lambda word: len(self._where.get(word, ()))):
            found = set(self._where.get(word, ())) if found is None else found & self._where.get(word, set())
            if not found:
                break
        return found or set()


class LeakCheck:
    """The leak check of one commit: what of ``solutions/`` must not be shipped is worked out once (reading the
    starters' history is most of it), and :meth:`leaks` checks any set of bundle files against it. Every file is
    judged on its own, so checking a bundle in parts (the files that do not change first, then what sealing and the
    page add) refuses exactly when checking it whole would."""

    def __init__(self, committed: Committed) -> None:
        self.references = {normalize(data.decode("utf-8", "replace")): path
                           for path, data in sorted(committed.files.items())
                           if path.startswith("solutions/") and data.strip()}
        self.secrets = reference_secrets(committed)

    def leaks(self, contents: Mapping[str, bytes]) -> list[str]:
        """Every place where these bundle files would reveal a reference solution, as readable lines (sorted)."""
        return _leaks(self.references, self.secrets, contents)


def reference_leaks(committed: Committed, contents: Mapping[str, bytes]) -> list[str]:
    """Every place where the bundle would reveal a reference solution, as readable lines (sorted)."""
    return LeakCheck(committed).leaks(contents)


def _leaks(references: Mapping[str, str], secrets: list[Secret], contents: Mapping[str, bytes]) -> list[str]:
    leaks = [f"{path} is a file of solutions/" for path in sorted(contents) if path.startswith("solutions/")]
    texts = {path: normalize(text) for path, data in sorted(contents.items())
             if (text := searchable_text(path, data)) is not None}
    for path, text in texts.items():
        if text in references:
            leaks.append(f"{path} is a copy of {references[text]}")
    secret_dumps = frozenset(secret.dump for secret in secrets if secret.dump)
    shapes = frozenset(secret.shape for secret in secrets if secret.dump)
    dumps = {path: _matching_dumps(path, data, shapes, secret_dumps) for path, data in sorted(contents.items())}
    found: dict[str, list[str]] = {}  # origin -> bundle paths
    notes = {secret.origin: secret.note for secret in secrets if secret.note}
    whole: set[tuple[str, str]] = set()  # (origin, path) where the whole body was found
    words = _WordIndex(texts)
    for secret in secrets:
        holding_dump = {path for path, matched in dumps.items() if secret.dump and secret.dump in matched}
        for path in sorted(words.candidates(secret.text) | holding_dump):
            text = texts.get(path, "")
            if secret.group and (secret.group, path) in whole:
                continue  # the whole body is already reported for this file
            if secret.text in text or (secret.dump and secret.dump in dumps.get(path, set())):
                found.setdefault(secret.origin, []).append(path)
                if not secret.group:
                    whole.add((secret.origin, path))
    for origin, paths in found.items():
        note = f" ({notes[origin]})" if origin in notes else ""
        leaks.append(f"{origin} appears in {', '.join(sorted(set(paths)))}{note}")
    return sorted(leaks, key=lambda line: (" a line of " in line, line))


def _learner_functions_in_history(root: Path, commit: str, files: Mapping[str, bytes]
                                  ) -> tuple[dict[str, frozenset[str]], dict[tuple[str, str], str]]:
    """Per starter module: functions whose starter body raised NotImplementedError at HEAD or in any earlier commit."""
    versions: dict[str, list[tuple[str, str]]] = {}  # path -> [(commit, blob)]
    log = run_git(root, "log", "--root", "--format=commit %H", "--raw", "--no-abbrev", "--no-renames", "--relative",
               commit, "--", "forge").stdout.decode("utf-8", "replace")
    current = ""
    for line in log.splitlines():
        if line.startswith("commit "):
            current = line.split()[1]
        elif line.startswith(":") and "\t" in line:
            meta, path = line.split("\t", 1)
            blob = meta.split()[3]
            if path.endswith(".py") and set(blob) != {"0"}:
                versions.setdefault(path, []).append((current, blob))
    blobs = read_blobs(root, (blob for pairs in versions.values() for _, blob in pairs))
    written: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    for path, pairs in sorted(versions.items()):
        for version_commit, blob in pairs:  # newest first
            for name in _unwritten_functions(blobs.get(blob, b"")):
                written.setdefault(path, set()).add(name)
                where.setdefault((path, name), version_commit[:12])
    for path, data in files.items():  # HEAD itself, also when the history is shallow
        if path.startswith("forge/") and path.endswith(".py"):
            for name in _unwritten_functions(data):
                written.setdefault(path, set()).add(name)
                where[(path, name)] = commit[:12]
    return {path: frozenset(names) for path, names in written.items()}, where
