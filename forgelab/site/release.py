"""The learner bundle: one zip with everything a learner receives and none of the reference solutions.

What goes in is an allow-list (:data:`INCLUDE`); what never goes in is ``solutions/`` and the
instructor's material (:data:`EXCLUDED_FILES`). Notebooks are shipped with every code-cell output
cleared, because the committed notebooks carry the outputs of the reference solution.

Before the zip is written, :func:`reference_leaks` looks for the reference solutions inside the
files about to be shipped — any file of ``solutions/``, the body of any reference function that the
learner has to write, any long line of such a body, any paragraph of a reference design answer — and
the release refuses to build if it finds one.

The zip is deterministic: entries sorted, fixed timestamps and permissions, fixed compression.
"""

from __future__ import annotations

import ast
import fnmatch
import io
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

BUNDLE_NAME = "forge-workbook-lab"
ZIP_NAME = f"{BUNDLE_NAME}.zip"

# What a learner receives, relative to the workbook root. Missing entries are skipped.
INCLUDE: tuple[str, ...] = (
    "forge",
    "tests/stages",
    "transfer",
    "notebooks",
    "failure_labs",
    "forgelab",
    "course",
    "pyproject.toml",
    "Makefile",
    "README.md",
    "LICENSE",
    ".gitignore",
    "evidence/README.md",
)
# Never shipped even inside an included folder (posix globs on the path relative to the root).
EXCLUDED_FILES: tuple[str, ...] = (
    "solutions/*",
    "course/stages/*/mutants.toml",  # exact lines of the reference modules, for mutation testing
)
EXCLUDED_PARTS = frozenset({"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".mypy_cache", ".DS_Store"})
EXCLUDED_SUFFIXES = (".pyc", ".pyo", ".egg-info")

FIXED_TIMESTAMP = (1980, 1, 1, 0, 0, 0)
MIN_BODY_CHARS = 20  # shorter function bodies (e.g. ``return x``) are too generic to count as a leak
MIN_LINE_CHARS = 40
MIN_PARAGRAPH_CHARS = 60


class ReleaseError(RuntimeError):
    """The bundle cannot be built; the message names the cause and what to do."""


@dataclass(frozen=True)
class Bundle:
    path: Path
    files: tuple[str, ...]  # paths inside the bundle folder, sorted
    size: int
    cleared_notebooks: tuple[str, ...]


# ---------------------------------------------------------------- choosing the files


def _excluded(relative: PurePosixPath) -> bool:
    if any(part in EXCLUDED_PARTS or part.endswith(EXCLUDED_SUFFIXES) for part in relative.parts):
        return True
    text = relative.as_posix()
    return any(fnmatch.fnmatch(text, pattern) for pattern in EXCLUDED_FILES)


def select_files(root: Path) -> list[str]:
    """Every file to ship, as sorted posix paths relative to ``root``."""
    chosen: set[str] = set()
    for entry in INCLUDE:
        path = root / entry
        candidates = [path] if path.is_file() else sorted(path.rglob("*")) if path.is_dir() else []
        for candidate in candidates:
            if not candidate.is_file() or candidate.is_symlink():
                continue
            relative = PurePosixPath(candidate.relative_to(root).as_posix())
            if not _excluded(relative):
                chosen.add(relative.as_posix())
    return sorted(chosen)


def clear_notebook(raw: bytes) -> bytes:
    """The notebook with every code-cell output and execution count removed."""
    notebook = json.loads(raw.decode("utf-8"))
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
            cell.get("metadata", {}).pop("execution", None)
    notebook.get("metadata", {}).pop("widgets", None)
    return (json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def bundle_contents(root: Path) -> tuple[dict[str, bytes], list[str]]:
    """The bundle's files (path → bytes) and the notebooks whose outputs were cleared."""
    contents: dict[str, bytes] = {}
    cleared: list[str] = []
    for relative in select_files(root):
        data = (root / relative).read_bytes()
        if relative.endswith(".ipynb"):
            try:
                data = clear_notebook(data)
            except (ValueError, UnicodeDecodeError) as error:
                raise ReleaseError(f"{relative} is not a readable notebook ({error}): rebuild it with `forgelab build`") from None
            cleared.append(relative)
        contents[relative] = data
    return contents, cleared


# ---------------------------------------------------------------- finding reference solutions


def normalize(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class FunctionBody:
    text: str  # the body's source (docstring left out), whitespace normalized
    lines: tuple[str, ...]  # each source line of the body, whitespace normalized


def _function_bodies(source: str) -> dict[str, FunctionBody]:
    """Qualified function name → its body (methods and nested functions included)."""
    tree = ast.parse(source)
    source_lines = source.splitlines()
    bodies: dict[str, FunctionBody] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                statements = child.body
                first = statements[0]
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                    statements = statements[1:]
                if statements:
                    segments = [ast.get_source_segment(source, statement) or "" for statement in statements]
                    end = statements[-1].end_lineno or statements[-1].lineno
                    lines = tuple(normalize(line) for line in source_lines[statements[0].lineno - 1:end])
                    bodies[prefix + child.name] = FunctionBody(normalize("\n".join(segments)), lines)
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return bodies


@dataclass(frozen=True)
class Secret:
    """A piece of a reference solution that must not be shipped."""

    origin: str  # e.g. "solutions/forge/instructions.py: body of explain()"
    text: str  # normalized
    allowed_in: tuple[str, ...] = ()  # globs of bundle paths that legitimately contain it


def _learner_counterpart(root: Path, relative: PurePosixPath) -> Path:
    """solutions/forge/x.py → forge/x.py; solutions/transfer/t.py → transfer/t.py."""
    return root.joinpath(*relative.parts[1:])


def reference_secrets(root: Path) -> list[Secret]:
    """What of ``solutions/`` must never appear in the bundle."""
    solutions = root / "solutions"
    secrets: list[Secret] = []
    if not solutions.is_dir():
        return secrets
    for path in sorted(solutions.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        relative = PurePosixPath(path.relative_to(root).as_posix())
        counterpart = _learner_counterpart(root, relative)
        given_text = counterpart.read_text(encoding="utf-8") if counterpart.is_file() else ""
        try:
            given = _function_bodies(given_text) if given_text else {}
            reference = _function_bodies(path.read_text(encoding="utf-8"))
        except SyntaxError as error:
            raise ReleaseError(f"cannot read {relative} or its starter ({error}): fix the syntax error first") from None
        given_normalized = normalize(given_text)
        # A stage's fault lab is, by its contract, the reference module with one planted defect:
        # the functions it leaves intact are shipped there on purpose.
        allowed = (f"failure_labs/*/{PurePosixPath(*relative.parts[1:]).as_posix()}",) if relative.parts[1] == "forge" else ()
        for name, body in sorted(reference.items()):
            starter = given.get(name)
            if len(body.text) < MIN_BODY_CHARS or (starter is not None and starter.text == body.text):
                continue  # too generic, or code the starter already gives the learner
            secrets.append(Secret(f"{relative}: body of {name}()", body.text, allowed))
            if relative.parts[1] != "forge":
                continue  # a test shares many lines with the stage tests and demos; only its whole body is secret
            for line in sorted(set(body.lines)):
                if len(line) >= MIN_LINE_CHARS and line not in given_normalized:
                    secrets.append(Secret(f"{relative}: a line of {name}(): {line[:60]}", line, allowed))
    for path in sorted(solutions.rglob("*.md")):
        answer_file = path.relative_to(root).as_posix()
        for paragraph in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
            text = normalize(paragraph)
            if len(text) >= MIN_PARAGRAPH_CHARS:
                secrets.append(Secret(f"{answer_file}: a paragraph of the reference answer", text))
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


def reference_leaks(root: Path, contents: dict[str, bytes]) -> list[str]:
    """Every place where the bundle would reveal a reference solution, as readable lines."""
    leaks = [f"{path} is a file of solutions/" for path in sorted(contents) if path.startswith("solutions/")]
    secrets = reference_secrets(root)
    if not secrets:
        return leaks
    texts = {path: normalize(text) for path, data in sorted(contents.items())
             if (text := searchable_text(path, data)) is not None}
    for secret in secrets:
        for path, text in texts.items():
            if secret.text in text and not any(fnmatch.fnmatch(path, glob) for glob in secret.allowed_in):
                leaks.append(f"{secret.origin} appears in {path}")
    return leaks


# ---------------------------------------------------------------- writing the zip


def _zip_bytes(contents: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for relative in sorted(contents):
            info = zipfile.ZipInfo(f"{BUNDLE_NAME}/{relative}", date_time=FIXED_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, so that the permission bits below are honoured
            info.external_attr = (0o100644 & 0xFFFF) << 16
            archive.writestr(info, contents[relative], compresslevel=9)
    return buffer.getvalue()


def build_bundle(root: Path, out_dir: Path) -> Bundle:
    """Write ``out_dir/forge-workbook-lab.zip`` from the workbook at ``root``."""
    if not (root / "course" / "course.toml").is_file():
        raise ReleaseError(f"{root} is not a workbook (no course/course.toml): run this inside the course repository")
    contents, cleared = bundle_contents(root)
    missing = [entry for entry in ("forge", "tests/stages", "course", "forgelab", "pyproject.toml") if not (root / entry).exists()]
    if missing:
        raise ReleaseError(f"the workbook lacks {', '.join(missing)}: a bundle without them cannot run `forgelab check`")
    leaks = reference_leaks(root, contents)
    if leaks:
        shown = "; ".join(leaks[:3]) + (f" (and {len(leaks) - 3} more)" if len(leaks) > 3 else "")
        raise ReleaseError(f"the bundle would reveal a reference solution: {shown}")
    data = _zip_bytes(contents)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / ZIP_NAME
    temporary = path.with_name(f".{ZIP_NAME}.tmp")
    temporary.write_bytes(data)
    temporary.replace(path)
    return Bundle(path, tuple(sorted(contents)), len(data), tuple(cleared))
