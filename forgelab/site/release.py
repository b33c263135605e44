"""The learner bundle: one zip with everything a learner receives and none of the reference solutions.

**From the committed course, never from the working tree.** Every file is read from git ``HEAD``
(``git ls-tree`` + ``git cat-file``), so whatever sits in the folder right now — reference modules
laid into ``forge/`` by ``forgelab restore``, a finished transfer test, an uncommitted edit — is not
shipped; such working-tree changes are only listed (:attr:`Bundle.left_out`). A folder that is not
a git repository, a repository without a commit, or a course whose needed files are not committed
is refused with the file names and the ``git`` command to run.

What goes in is an allow-list (:data:`INCLUDE`); what never goes in is ``solutions/`` and the
instructor's material (:data:`EXCLUDED_FILES`). Notebooks are shipped with their code-cell outputs
cleared — the committed notebooks carry the outputs of the reference solution — except the worked
demonstration's (:func:`keeps_reference_output`): those are outputs, not code, and the notebook marks them
as the reference output, so the learner sees the capability work before writing it. A pristine copy
of every starter is shipped as course data under ``course/starters/`` (:data:`STARTERS`): all of
``forge/`` and ``transfer/`` as committed, read by ``forgelab starter`` and the grader.

**The leak check compares the bundle against ``solutions/`` itself** (:func:`reference_leaks`), never
against the current ``forge/``:

* a file of ``solutions/``, or a copy of one under another name;
* the body of a reference function the learner has to write — by the AST: its starter body is
  ``raise NotImplementedError`` (at ``HEAD`` *or in any committed version of that starter*, so that
  committing the reference body into the starter does not turn it into "given" code), or the starter
  has no such function at all — matched as normalized text, as an AST dump (formatting does not
  hide it), and line by line for long lines;
* the body of every reference transfer test (``solutions/transfer/*.py``);
* every paragraph of a reference design answer (``solutions/answers/*.md``).

One exception, by the fault contract: a stage's fault variant is its reference module with one
planted defect, so it ships the functions it leaves intact — in ``failure_labs/<its stage>/`` only.

The zip is deterministic: entries sorted, fixed timestamps and permissions, fixed compression; the
same commit gives the same bytes.
"""

from __future__ import annotations

import ast
import fnmatch
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forgelab.registry import Course

BUNDLE_NAME = "forge-workbook-lab"
ZIP_NAME = f"{BUNDLE_NAME}.zip"
EDITION_FILE = "course/edition.toml"  # written into a bundle of another edition: the language its tools speak


def zip_name(language: str = "en") -> str:
    """``forge-workbook-lab.zip`` for the English bundle, ``forge-workbook-lab-zh.zip`` for the Chinese one."""
    return ZIP_NAME if language == "en" else f"{BUNDLE_NAME}-{language}.zip"

# What a learner receives, relative to the workbook root. Entries not committed are skipped.
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
    "README.zh-CN.md",
    "LICENSE",
    ".gitignore",
    "evidence/README.md",
)
# Never shipped even inside an included folder (posix globs on the path relative to the root).
EXCLUDED_FILES: tuple[str, ...] = (
    "solutions/*",
    "course/learner/*",  # the bundle's own README files: shipped as README.md and README.zh-CN.md at its root
    "course/stages/*/mutants.toml",  # exact lines of the reference modules, for mutation testing
    "course/stages/*/fault.toml",  # the fault lab's defect as edits of the reference module (reference lines)
)
EXCLUDED_PARTS = frozenset({"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".mypy_cache", ".DS_Store"})
EXCLUDED_SUFFIXES = (".pyc", ".pyo", ".egg-info")
# Without these a bundle cannot run `forgelab check`.
NEEDED: tuple[str, ...] = ("forge", "tests/stages", "course/course.toml", "forgelab", "pyproject.toml")

# Pristine starters, shipped as course data: learner folder -> folder inside the bundle.
STARTERS_DIR = "course/starters"
STARTERS: tuple[tuple[str, str], ...] = (("forge", f"{STARTERS_DIR}/forge"), ("transfer", f"{STARTERS_DIR}/transfer"))

FIXED_TIMESTAMP = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip can hold (a commit without a date)
MIN_BODY_CHARS = 20  # shorter function bodies (e.g. ``return x``) are too generic to count as a leak
MIN_LINE_CHARS = 40
MIN_PARAGRAPH_CHARS = 60
GIT_TIMEOUT = 300  # seconds; generous, the machine may be busy


class ReleaseError(RuntimeError):
    """The bundle cannot be built; the message names the cause and what to do."""


@dataclass(frozen=True)
class Bundle:
    path: Path
    files: tuple[str, ...]  # paths inside the bundle folder, sorted
    size: int
    cleared_notebooks: tuple[str, ...]
    commit: str = ""  # the commit the bundle was built from
    left_out: tuple[str, ...] = ()  # working-tree changes under the shipped folders that are not in the bundle
    starters: tuple[str, ...] = ()  # the pristine starter copies under course/starters/


# ---------------------------------------------------------------- reading the committed course


@dataclass(frozen=True)
class Committed:
    """The course as committed at one commit: the files a release may read, and the starters' history."""

    root: Path
    commit: str
    files: Mapping[str, bytes]  # path relative to root -> content (regular files only)
    written_by_learner: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # starter path -> qualified names of functions whose body was ``raise NotImplementedError`` in some
    # committed version of that starter (HEAD included)
    history_commits: Mapping[tuple[str, str], str] = field(default_factory=dict)
    # (starter path, function) -> a short commit id where that starter body raised NotImplementedError
    left_out: tuple[str, ...] = ()
    committed_at: int = 0  # the commit's time (seconds since the epoch): the date of every file in the bundle


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE")}
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def _git(root: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    try:
        done = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=root, input=stdin, capture_output=True,
                              env=_git_env(), timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise ReleaseError("git is not installed: `forgelab release` builds the bundle from the committed course "
                           "(git HEAD); install git and run it in the course repository") from None
    except subprocess.TimeoutExpired:
        raise ReleaseError(f"`git {' '.join(args[:2])}` did not finish within {GIT_TIMEOUT} s in {root}: "
                           "check the repository with `git status`") from None
    if check and done.returncode != 0:
        message = " ".join(done.stderr.decode("utf-8", "replace").split()) or f"exit status {done.returncode}"
        raise ReleaseError(f"`git {' '.join(args)}` failed in {root}: {message}")
    return done


def _read_blobs(root: Path, object_ids: Iterable[str]) -> dict[str, bytes]:
    """Object id -> content, with one ``git cat-file --batch``."""
    wanted = sorted(set(object_ids))
    if not wanted:
        return {}
    out = _git(root, "cat-file", "--batch", stdin=("\n".join(wanted) + "\n").encode("ascii")).stdout
    blobs: dict[str, bytes] = {}
    position = 0
    for object_id in wanted:
        end = out.index(b"\n", position)
        header = out[position:end].decode("ascii").split()
        if len(header) != 3:
            raise ReleaseError(f"git could not read object {object_id} ({' '.join(header)}): run `git fsck` in {root}")
        size = int(header[2])
        blobs[header[0]] = out[end + 1:end + 1 + size]
        position = end + 1 + size + 1
    return blobs


def _wanted(relative: str) -> bool:
    """Whether a committed file may be read by a release (shipped, or compared against)."""
    return relative.startswith("solutions/") or _included(relative)


def _included(relative: str) -> bool:
    return any(relative == entry or relative.startswith(entry + "/") for entry in INCLUDE)


def _not_a_repository(root: Path) -> ReleaseError:
    return ReleaseError(
        f"{root} is not a git repository: `forgelab release` builds the bundle from the committed course "
        "(git HEAD), never from the files on disk. Run it in a clone of the course repository, or commit this "
        "folder first (`git init && git add -A && git commit -m 'course'`)")


def read_committed(root: Path, *, with_history: bool = True) -> Committed:
    """The files of the workbook at ``root`` as committed at ``HEAD`` (see the module docstring)."""
    inside = _git(root, "rev-parse", "--is-inside-work-tree", check=False)
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        raise _not_a_repository(root)
    prefix = _git(root, "rev-parse", "--show-prefix").stdout.decode("utf-8").strip()
    head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    if head.returncode != 0:
        raise ReleaseError(f"the git repository at {root} has no commit yet: commit the course "
                           "(`git add -A && git commit -m 'course'`), then run `forgelab release` again")
    commit = head.stdout.decode("ascii").strip()
    tree = _git(root, "ls-tree", "-r", "-z", "--full-tree", f"{commit}:{prefix}", check=False)
    if tree.returncode != 0:
        top = _git(root, "rev-parse", "--show-toplevel").stdout.decode("utf-8").strip()
        raise ReleaseError(f"the workbook folder {prefix.rstrip('/')} is not committed in the git repository at {top} "
                           f"(HEAD {commit[:12]}): commit it (`git add -A {prefix.rstrip('/')} && git commit`), "
                           "then run `forgelab release` again")
    listing = tree.stdout
    ids: dict[str, str] = {}
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, kind, object_id = meta.decode("ascii").split()
        relative = name.decode("utf-8")
        if kind == "blob" and mode in ("100644", "100755") and _wanted(relative):  # no symlinks, no submodules
            ids[relative] = object_id
    blobs = _read_blobs(root, ids.values())
    files = {relative: blobs[object_id] for relative, object_id in sorted(ids.items())}
    written: dict[str, frozenset[str]] = {}
    where: dict[tuple[str, str], str] = {}
    if with_history:
        written, where = _learner_functions_in_history(root, commit, files)
    stamp = _git(root, "show", "-s", "--format=%ct", commit, check=False).stdout.decode("ascii", "replace").strip()
    return Committed(root, commit, files, written, where, _left_out(root, prefix),
                     int(stamp) if stamp.isdigit() else 0)


def _learner_functions_in_history(root: Path, commit: str, files: Mapping[str, bytes]
                                  ) -> tuple[dict[str, frozenset[str]], dict[tuple[str, str], str]]:
    """Per starter module: functions whose starter body raised NotImplementedError at HEAD or in any earlier commit."""
    versions: dict[str, list[tuple[str, str]]] = {}  # path -> [(commit, blob)]
    log = _git(root, "log", "--root", "--format=commit %H", "--raw", "--no-abbrev", "--no-renames", "--relative",
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
    blobs = _read_blobs(root, (blob for pairs in versions.values() for _, blob in pairs))
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


def _left_out(root: Path, prefix: str) -> tuple[str, ...]:
    """Working-tree changes under the shipped folders: they are not in the bundle, and the instructor is told."""
    done = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *INCLUDE, check=False)
    if done.returncode != 0:
        return ()
    entries = done.stdout.split(b"\0")
    found: list[str] = []
    index = 0
    while index < len(entries):
        entry = entries[index].decode("utf-8", "replace")
        index += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code[0] in "RC":
            index += 1  # the rename's source path follows
        relative = path[len(prefix):] if prefix and path.startswith(prefix) else path
        if _excluded(PurePosixPath(relative)):
            continue
        what = {"??": "untracked", " D": "deleted on disk", "D ": "deleted on disk"}.get(code, "modified")
        found.append(f"{relative} ({what})")
    return tuple(sorted(found))


# ---------------------------------------------------------------- choosing the files


def _excluded(relative: PurePosixPath) -> bool:
    if any(part in EXCLUDED_PARTS or part.endswith(EXCLUDED_SUFFIXES) for part in relative.parts):
        return True
    text = relative.as_posix()
    return any(fnmatch.fnmatch(text, pattern) for pattern in EXCLUDED_FILES)


def _shipped(committed: Committed) -> list[str]:
    return sorted(path for path in committed.files if _included(path) and not _excluded(PurePosixPath(path)))


def select_files(root: Path) -> list[str]:
    """Every committed file to ship from the workbook at ``root`` (starter copies aside), as sorted posix paths."""
    return _shipped(read_committed(root, with_history=False))


REFERENCE_OUTPUT_TAG = "nbval-check-output"  # the worked demonstration's cells (forgelab.build.GRADED)


def keeps_reference_output(cell: Mapping[str, object]) -> bool:
    """A worked-demonstration cell: graded by nbval and not one of the notebook's ``lab.`` tool cells."""
    metadata = cell.get("metadata")
    tags = metadata.get("tags", []) if isinstance(metadata, dict) else []
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else str(source)
    return cell.get("cell_type") == "code" and REFERENCE_OUTPUT_TAG in tags and not text.lstrip().startswith("lab.")


def clear_notebook(raw: bytes) -> bytes:
    """The notebook with every code-cell output and execution count removed, except the reference output
    of the worked demonstration (:func:`keeps_reference_output`)."""
    notebook = json.loads(raw.decode("utf-8"))
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code" and not keeps_reference_output(cell):
            cell["outputs"] = []
            cell["execution_count"] = None
            cell.get("metadata", {}).pop("execution", None)
    notebook.get("metadata", {}).pop("widgets", None)
    return (json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def starter_copies(committed: Committed) -> dict[str, bytes]:
    """``course/starters/forge/...`` and ``course/starters/transfer/...``: every committed starter file, untouched."""
    copies: dict[str, bytes] = {}
    for source, destination in STARTERS:
        for path in _shipped(committed):
            if path.startswith(source + "/"):
                copies[f"{destination}/{path.removeprefix(source + '/')}"] = committed.files[path]
    return copies


def localized(contents: dict[str, bytes], course: Course, language: str) -> dict[str, bytes]:
    """The bundle in another edition: each starter and transfer starter (and their pristine copies under
    ``course/starters/``) with that edition's docstrings and stub messages, and ``course/edition.toml``
    so the tools and ``make lab`` speak it. Code is unchanged (:mod:`forgelab.localize` checks that)."""
    from forgelab.localize import LocalizeError, with_docstrings, with_stub_messages

    if language == "en":
        return contents
    result = dict(contents)
    for stage in course.stages:
        docs = stage.texts[language].docstrings if language in stage.texts else None
        if docs is None:
            raise ReleaseError(f"stage {stage.number} has no [text.{language}.docstrings]: the {language} bundle would "
                               "ship English starters — translate them (forgelab build --check lists what is missing)")
        for shipped, module_doc, functions in ((stage.module, docs.starter, docs.functions),
                                               (stage.transfer_file, docs.transfer, {})):
            for path in (shipped, f"{STARTERS_DIR}/{shipped}"):
                if path not in result:
                    continue
                try:
                    source = result[path].decode("utf-8")
                    text = with_stub_messages(with_docstrings(source, module_doc, functions, where=path), language)
                except (LocalizeError, UnicodeDecodeError) as error:
                    raise ReleaseError(f"cannot make the {language} edition of {path}: {error}") from None
                result[path] = text.encode("utf-8")
    result[EDITION_FILE] = (f'# This bundle is the "{language}" edition: forgelab and `make lab` speak it\n'
                            f'# (--lang en or FORGE_LANG=en switches the tools back to English).\n'
                            f'language = "{language}"\n').encode("utf-8")
    return result


def bundle_contents(committed: Committed) -> tuple[dict[str, bytes], list[str]]:
    """The bundle's files (path → bytes) and the notebooks whose outputs were cleared."""
    contents: dict[str, bytes] = {}
    cleared: list[str] = []
    generated = [path for path in committed.files if path.startswith(STARTERS_DIR + "/")]
    if generated:
        raise ReleaseError(f"{STARTERS_DIR}/ is committed ({generated[0]}…), but release writes it itself from forge/ "
                           f"and transfer/: remove it (`git rm -r {STARTERS_DIR}` and commit)")
    for relative in _shipped(committed):
        data = committed.files[relative]
        if relative.endswith(".ipynb"):
            try:
                data = clear_notebook(data)
            except (ValueError, UnicodeDecodeError) as error:
                raise ReleaseError(f"{relative} is not a readable notebook ({error}): rebuild it with `forgelab build`") from None
            cleared.append(relative)
        contents[relative] = data
    contents.update(starter_copies(committed))
    return contents, cleared


# ---------------------------------------------------------------- what a learner reads first: README and the page

LEARNER_READMES = {"README.md": ("course/learner/README.md", "en"),
                   "README.zh-CN.md": ("course/learner/README.zh-CN.md", "zh")}
STAGES_PLACEHOLDER = "<!-- forgelab release: the stages -->"


def stage_table(course: Course, language: str) -> str:
    """The stages as a Markdown table in one edition (the learner README's list, made from the registry)."""
    from forgelab.i18n import _, speaking

    with speaking(language):
        head = f"| # | {_('stage')} | {_('you write')} | {_('capability')} |"
        rows = [f"| {stage.number} | {stage.text(language).title} | `{stage.module}` | {stage.text(language).capability} |"
                for stage in course.stages]
    return "\n".join([head, "|---|---|---|---|", *rows])


def learner_readmes(committed: Committed, course: Course) -> dict[str, bytes]:
    """``README.md`` and ``README.zh-CN.md`` of the bundle: the learner's own (``course/learner/``), with the stage
    table filled in from the registry — not the course repository's README, which is the instructor's."""
    readmes: dict[str, bytes] = {}
    for shipped, (source, language) in LEARNER_READMES.items():
        data = committed.files.get(source)
        if data is None:
            raise ReleaseError(f"{source} is not committed at HEAD ({committed.commit[:12]}): the bundle's {shipped} is "
                               f"the learner's README, written there; add it (`git add {source} && git commit`)")
        text = data.decode("utf-8")
        if STAGES_PLACEHOLDER not in text:
            raise ReleaseError(f"{source} has no {STAGES_PLACEHOLDER} line: put it where the list of stages goes")
        readmes[shipped] = text.replace(STAGES_PLACEHOLDER, stage_table(course, language)).encode("utf-8")
    return readmes


def bundle_page(contents: Mapping[str, bytes]) -> dict[str, bytes]:
    """The course page as it ships inside the bundle (``page/``, every edition), built from the bundle's own files
    — exactly what ``forgelab page`` builds in an unzipped bundle, where there is no git."""
    from forgelab.registry import RegistryError, load_course
    from forgelab.site.builder import BUNDLE_PAGE, SiteError, build_site

    with tempfile.TemporaryDirectory(prefix="forgelab-bundle-page-") as scratch:
        base = Path(scratch) / "workbook"
        for path, data in contents.items():
            if path.startswith(("course/", "tests/stages/")) or path == "pyproject.toml":
                (base / path).parent.mkdir(parents=True, exist_ok=True)
                (base / path).write_bytes(data)
        try:
            course = load_course(base)
            build_site(course, base / BUNDLE_PAGE, editions=course.languages, in_bundle=True)
        except (RegistryError, SiteError) as error:
            raise ReleaseError(f"the course page for the bundle cannot be built ({error}): fix that and commit") from None
        return {f"{BUNDLE_PAGE}/{path.relative_to(base / BUNDLE_PAGE).as_posix()}": path.read_bytes()
                for path in sorted((base / BUNDLE_PAGE).rglob("*")) if path.is_file()}


# ---------------------------------------------------------------- what the bundle needs, committed


def _committed_course(committed: Committed) -> Course:
    """The stage registry as committed (read from a scratch copy of ``course/`` and ``pyproject.toml``)."""
    from forgelab.registry import RegistryError, load_course

    with tempfile.TemporaryDirectory(prefix="forgelab-release-") as scratch:
        base = Path(scratch)
        for path, data in committed.files.items():
            if path.startswith("course/") or path == "pyproject.toml":
                (base / path).parent.mkdir(parents=True, exist_ok=True)
                (base / path).write_bytes(data)
        try:
            return load_course(base)
        except (RegistryError, OSError, ValueError) as error:
            raise ReleaseError(f"the committed stage registry cannot be read ({error}): fix course/ and commit it") from None


def _missing_needed(committed: Committed, course: Course) -> list[str]:
    needed = list(NEEDED)
    for stage in course.stages:
        needed += [stage.module, stage.test_file, stage.transfer_file, stage.notebook,
                   stage.fault_variant, stage.fault_contract_file]
    missing = []
    for entry in needed:
        if not any(path == entry or path.startswith(entry + "/") for path in committed.files):
            on_disk = (committed.root / entry).exists()
            missing.append(f"{entry} ({'on disk, not committed' if on_disk else 'missing'})")
    return sorted(set(missing))


# ---------------------------------------------------------------- finding reference solutions


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
    not_implemented: bool  # the body is (or contains, at its top level) ``raise NotImplementedError``


def _function_bodies(source: str) -> dict[str, FunctionBody]:
    """Qualified function name → its body (methods and nested functions included)."""
    tree = ast.parse(source)
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

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                statements = child.body
                first = statements[0]
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                    statements = statements[1:]
                if statements:
                    segments = [segment(statement) for statement in statements]
                    end = statements[-1].end_lineno or statements[-1].lineno
                    lines = tuple(normalize(line) for line in source_lines[statements[0].lineno - 1:end])
                    dump = ast.dump(ast.Module(body=list(statements), type_ignores=[]))
                    bodies[prefix + child.name] = FunctionBody(normalize("\n".join(segments)), lines, dump,
                                                               any(_is_not_implemented(s) for s in statements))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)  # functions defined inside if/with/try/for blocks count too

    visit(tree, "")
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
        tree = ast.parse(source)
    except SyntaxError:
        return normalize(source)
    lines = source.splitlines()
    dropped: set[int] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if prefix + child.name in names:
                    dropped.update(range(child.body[0].lineno, (child.end_lineno or child.lineno) + 1))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return normalize("\n".join(line for number, line in enumerate(lines, 1) if number not in dropped))


@dataclass(frozen=True)
class Secret:
    """A piece of a reference solution that must not be shipped."""

    origin: str  # e.g. "solutions/forge/instructions.py: body of explain()"
    text: str  # normalized
    allowed_in: tuple[str, ...] = ()  # globs of bundle paths that legitimately contain it
    dump: str = ""  # ast.dump of a function body, matched against every function in the bundle
    group: str = ""  # the secret this one is part of (a line of a body): reported only when the body is not
    note: str = ""  # why it counts as the learner's to write, when the starter at HEAD no longer says so


def _fault_labs_of(course: Course, relative: PurePosixPath) -> tuple[str, ...]:
    """solutions/forge/x.py → the fault variant of the stage whose module is forge/x.py (its own stage only)."""
    learner_path = PurePosixPath(*relative.parts[1:]).as_posix()
    return tuple(f"{stage.failure_lab}/{learner_path}" for stage in course.stages if stage.module == learner_path)


def reference_secrets(committed: Committed, course: Course | None = None) -> list[Secret]:
    """What of ``solutions/`` (as committed) must never appear in the bundle."""
    course = course if course is not None else _committed_course(committed)
    secrets: list[Secret] = []
    for path, data in sorted(committed.files.items()):
        if not path.startswith("solutions/") or not path.endswith(".py"):
            continue
        relative = PurePosixPath(path)
        kind = relative.parts[1] if len(relative.parts) > 2 else ""
        counterpart = PurePosixPath(*relative.parts[1:]).as_posix()  # solutions/forge/x.py -> forge/x.py
        starter_data = committed.files.get(counterpart, b"")
        try:
            reference = _function_bodies(data.decode("utf-8"))
            given = _function_bodies(starter_data.decode("utf-8")) if starter_data else {}
        except (SyntaxError, UnicodeDecodeError) as error:
            raise ReleaseError(f"cannot read {path} or its starter {counterpart} ({error}): fix it and commit") from None
        learner_writes = committed.written_by_learner.get(counterpart, frozenset())
        given_normalized = _given_text(starter_data.decode("utf-8", "replace"),
                                       learner_writes | {n for n, b in given.items() if b.not_implemented})
        allowed = _fault_labs_of(course, relative) if kind == "forge" else ()
        for name, body in sorted(reference.items()):
            if len(body.text) < MIN_BODY_CHARS or body.not_implemented:
                continue  # too generic to count, or not a real body
            starter = given.get(name)
            if kind != "transfer" and name not in learner_writes and starter is not None and starter.dump == body.dump:
                continue  # code the starter gives the learner (and never asked them to write)
            origin = f"{path}: body of {name}()"
            note = ""
            if starter is not None and not starter.not_implemented and name in learner_writes:
                where = committed.history_commits.get((counterpart, name), "an earlier commit")
                note = f"{name}() is the learner's to write: its starter body was `raise NotImplementedError` at {where}"
            secrets.append(Secret(origin, body.text, allowed, body.dump, note=note))
            if kind == "transfer":
                continue  # a test shares many lines with the stage tests and demos; only its whole body is secret
            for line in sorted(set(body.lines)):
                if len(line) >= MIN_LINE_CHARS and line not in given_normalized:
                    secrets.append(Secret(f"{path}: a line of {name}(): {line[:60]}", line, allowed, group=origin))
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


def _function_dumps(path: str, data: bytes) -> set[str]:
    dumps: set[str] = set()
    for source in _python_sources(path, data):
        try:
            dumps |= {body.dump for body in _function_bodies(source).values()}
        except (SyntaxError, ValueError):
            continue
    return dumps


def reference_leaks(committed: Committed, contents: Mapping[str, bytes], course: Course | None = None) -> list[str]:
    """Every place where the bundle would reveal a reference solution, as readable lines (sorted)."""
    leaks = [f"{path} is a file of solutions/" for path in sorted(contents) if path.startswith("solutions/")]
    references = {normalize(data.decode("utf-8", "replace")): path for path, data in sorted(committed.files.items())
                  if path.startswith("solutions/") and data.strip()}
    texts = {path: normalize(text) for path, data in sorted(contents.items())
             if (text := searchable_text(path, data)) is not None}
    for path, text in texts.items():
        if text in references:
            leaks.append(f"{path} is a copy of {references[text]}")
    secrets = reference_secrets(committed, course)
    dumps = {path: _function_dumps(path, data) for path, data in sorted(contents.items())}
    found: dict[str, list[str]] = {}  # origin -> bundle paths
    notes = {secret.origin: secret.note for secret in secrets if secret.note}
    whole: set[tuple[str, str]] = set()  # (origin, path) where the whole body was found
    for secret in secrets:
        for path, text in texts.items():
            if any(fnmatch.fnmatch(path, glob) for glob in secret.allowed_in):
                continue
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


# ---------------------------------------------------------------- writing the zip


def zip_date(committed_at: int) -> tuple[int, int, int, int, int, int]:
    """Every file's date in the bundle: the commit's (UTC), so the same commit gives the same bytes and an
    unzipped bundle shows when the course was made, not 1980."""
    if committed_at <= 0:
        return FIXED_TIMESTAMP
    stamp = time.gmtime(committed_at)
    return max((stamp.tm_year, stamp.tm_mon, stamp.tm_mday, stamp.tm_hour, stamp.tm_min, stamp.tm_sec - stamp.tm_sec % 2),
               FIXED_TIMESTAMP)


def _zip_bytes(contents: Mapping[str, bytes], committed_at: int = 0) -> bytes:
    buffer = io.BytesIO()
    date = zip_date(committed_at)
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for relative in sorted(contents):
            info = zipfile.ZipInfo(f"{BUNDLE_NAME}/{relative}", date_time=date)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, so that the permission bits below are honoured
            info.external_attr = (0o100644 & 0xFFFF) << 16
            archive.writestr(info, contents[relative], compresslevel=9)
    return buffer.getvalue()


def _shown(items: list[str], limit: int = 3) -> str:
    return "; ".join(items[:limit]) + (f" (and {len(items) - limit} more)" if len(items) > limit else "")


def build_bundle(root: Path, out_dir: Path, language: str = "en") -> Bundle:
    """Write ``out_dir/forge-workbook-lab.zip`` (or ``…-zh.zip`` for another edition, :func:`zip_name`) from the
    workbook committed at ``root``'s git HEAD."""
    if not (root / "course" / "course.toml").is_file():
        raise ReleaseError(f"{root} is not a workbook (no course/course.toml): run this inside the course repository")
    if shutil.which("git") is None:
        raise ReleaseError("git is not installed: `forgelab release` builds the bundle from the committed course "
                           "(git HEAD); install git and run it in the course repository")
    committed = read_committed(root)
    short = committed.commit[:12]
    absent = [entry for entry in NEEDED if not any(p == entry or p.startswith(entry + "/") for p in committed.files)]
    if absent:
        raise ReleaseError(f"not committed at HEAD ({short}): {', '.join(absent)} — a bundle without them cannot run "
                           f"`forgelab check`; commit them (`git add {' '.join(absent)} && git commit`)")
    course = _committed_course(committed)
    missing = _missing_needed(committed, course)
    if missing:
        raise ReleaseError(f"the committed course (HEAD {short}) lacks files its stages need: {_shown(missing, 6)}; "
                           "commit them (`git add <file> && git commit`) or fix the stage registry, then release again")
    if language != "en" and language not in course.languages:
        raise ReleaseError(f"the course has no {language!r} edition (course.toml languages = "
                           f"{list(course.languages)}): choose one of them")
    contents, cleared = bundle_contents(committed)
    contents = localized(contents, course, language)
    contents.update(learner_readmes(committed, course))
    contents.update(bundle_page(contents))
    leaks = reference_leaks(committed, contents, course)
    if leaks:
        raise ReleaseError(f"the bundle (HEAD {short}) would reveal a reference solution: {_shown(leaks)}")
    data = _zip_bytes(contents, committed.committed_at)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / zip_name(language)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    temporary.replace(path)
    starters = tuple(sorted(p for p in contents if p.startswith(STARTERS_DIR + "/")))
    return Bundle(path, tuple(sorted(contents)), len(data), tuple(cleared), committed.commit, committed.left_out, starters)


# ---------------------------------------------------------------- checkpoint packs


@dataclass(frozen=True)
class CheckpointBuild:
    path: Path
    checkpoint: str
    modules: tuple[str, ...]  # forge/<module>.py, in stage order
    size: int
    commit: str
    left_out: tuple[str, ...] = ()  # working-tree changes of solutions/ that are not in the pack


def _solution_changes(root: Path) -> tuple[str, ...]:
    done = _git(root, "status", "--porcelain=v1", "--untracked-files=all", "--", "solutions/forge", check=False)
    if done.returncode != 0:
        return ()
    return tuple(sorted(line[3:] for line in done.stdout.decode("utf-8", "replace").splitlines() if len(line) > 3))


def build_checkpoint(root: Path, out_dir: Path, number: str) -> CheckpointBuild:
    """Write ``out_dir/forge-workbook-checkpoint-NN.zip``: the committed reference modules of stages 01..NN."""
    from forgelab.checkpoint import manifest_for, pack_bytes, pack_name
    from forgelab.registry import RegistryError

    if not (root / "course" / "course.toml").is_file():
        raise ReleaseError(f"{root} is not a workbook (no course/course.toml): run this inside the course repository")
    if shutil.which("git") is None:
        raise ReleaseError("git is not installed: `forgelab release --checkpoint` builds the pack from the committed "
                           "course (git HEAD); install git and run it in the course repository")
    committed = read_committed(root, with_history=False)
    course = _committed_course(committed)
    try:
        last = course.stage(number)
    except RegistryError as error:
        raise ReleaseError(str(error)) from None
    modules: dict[str, tuple[str, bytes]] = {}
    for stage in course.stages:
        if stage.number > last.number:
            continue
        reference = committed.files.get(stage.solution_module)
        if reference is None:
            on_disk = (root / stage.solution_module).is_file()
            raise ReleaseError(f"{stage.solution_module} is {'on disk but not committed' if on_disk else 'missing'} at "
                               f"HEAD ({committed.commit[:12]}): a checkpoint pack holds the committed reference modules; "
                               f"commit it (`git add {stage.solution_module} && git commit`) and run this again")
        modules[stage.number] = (stage.module, reference)
    manifest = manifest_for(course, last.number, modules, committed.commit)
    data = pack_bytes(last.number, manifest, modules)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{pack_name(last.number)}.zip"
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    temporary.replace(path)
    return CheckpointBuild(path, last.number, tuple(module for module, _ in modules.values()), len(data),
                           committed.commit, _solution_changes(root))
