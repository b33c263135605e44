"""Reading the committed course: every file a release reads comes from git ``HEAD``, never from the working tree.

``git ls-tree`` + ``git cat-file`` give the files of the allow-list (:data:`INCLUDE`, less
:data:`EXCLUDED_FILES`) and ``solutions/`` (read only to look for leaks), so whatever sits in the folder right
now — reference modules laid into ``forge/`` by ``forgelab restore``, a finished transfer test, an uncommitted
edit — is not shipped; such working-tree changes are only listed (:attr:`Committed.left_out`). A folder that is
not a git repository, a repository without a commit, or a course whose needed files are not committed is
refused with the file names and the ``git`` command to run (:class:`ReleaseError`).
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from forgelab.core.i18n import N_, _
from forgelab.core.registry import Course, RegistryError, load_course


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
    "docs/learner.md",  # the learner guide in both editions; docs/ holds the instructor's and the authors' too
    "docs/learner.zh-CN.md",
    "LICENSE",
    ".gitignore",
    "evidence/README.md",
)


# Never shipped even inside an included folder (posix globs on the path relative to the root).
EXCLUDED_FILES: tuple[str, ...] = (
    "solutions/*",
    "course/learner/*",  # the bundle's own README files: shipped at its root (contents.LEARNER_READMES)
    "course/stages/*/mutants.toml",  # exact lines of the reference modules, for mutation testing
    "course/stages/*/fault.toml",  # the fault lab's defect as edits of the reference module (reference lines)
    "course/docstrings.toml",  # forge/'s finished files in another edition: the release writes them into the files
)


EXCLUDED_PARTS = frozenset({"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".mypy_cache", ".DS_Store"})


EXCLUDED_SUFFIXES = (".pyc", ".pyo", ".egg-info")


# Without these a bundle cannot run `forgelab check`.
NEEDED: tuple[str, ...] = ("forge", "tests/stages", "course/course.toml", "forgelab", "pyproject.toml")


GIT_TIMEOUT = 300  # seconds; generous, the machine may be busy


class ReleaseError(RuntimeError):
    """The bundle cannot be built; the message names the cause and what to do."""


@dataclass(frozen=True)
class Committed:
    """The course as committed at one commit: the files a release may read, and the starters' history."""

    root: Path
    commit: str
    files: Mapping[str, bytes]  # path relative to root -> content (regular files only)
    left_out: tuple[str, ...] = ()
    committed_at: int = 0  # the commit's time (seconds since the epoch): the date of every file in the bundle


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE")}
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def run_git(root: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    try:
        done = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=root, input=stdin, capture_output=True,
                              env=_git_env(), timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise ReleaseError(_("git is not installed: `forgelab release` builds the bundle from the committed course "
                             "(git HEAD); install git and run it in the course repository")) from None
    except subprocess.TimeoutExpired:
        raise ReleaseError(_("`git {command}` did not finish within {seconds} seconds (in {root}): check the "
                             "repository with `git status`").format(command=" ".join(args[:2]), seconds=GIT_TIMEOUT,
                                                                    root=root)) from None
    if check and done.returncode != 0:
        message = " ".join(done.stderr.decode("utf-8", "replace").split()) or \
            _("exit status {code}").format(code=done.returncode)
        raise ReleaseError(_("`git {command}` failed in {root}: {message}").format(command=" ".join(args), root=root,
                                                                                  message=message))
    return done


def read_blobs(root: Path, object_ids: Iterable[str]) -> dict[str, bytes]:
    """Object id -> content, with one ``git cat-file --batch``."""
    wanted = sorted(set(object_ids))
    if not wanted:
        return {}
    out = run_git(root, "cat-file", "--batch", stdin=("\n".join(wanted) + "\n").encode("ascii")).stdout
    blobs: dict[str, bytes] = {}
    position = 0
    for object_id in wanted:
        end = out.index(b"\n", position)
        header = out[position:end].decode("ascii").split()
        if len(header) != 3:
            raise ReleaseError(_("git could not read object {object} ({header}): run `git fsck` in {root}").format(
                object=object_id, header=" ".join(header), root=root))
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
    return ReleaseError(_(
        "{root} is not a git repository: `forgelab release` builds the bundle from the committed course "
        "(git HEAD), never from the files on disk. Run it in a clone of the course repository, or commit this "
        "folder first (`git init && git add -A && git commit -m 'course'`)").format(root=root))


def read_committed(root: Path) -> Committed:
    """The files of the workbook at ``root`` as committed at ``HEAD`` (see the module docstring)."""
    inside = run_git(root, "rev-parse", "--is-inside-work-tree", check=False)
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        raise _not_a_repository(root)
    prefix = run_git(root, "rev-parse", "--show-prefix").stdout.decode("utf-8").strip()
    head = run_git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    if head.returncode != 0:
        raise ReleaseError(_("the git repository at {root} has no commit yet: commit the course "
                             "(`git add -A && git commit -m 'course'`), then run `forgelab release` again").format(
            root=root))
    commit = head.stdout.decode("ascii").strip()
    tree = run_git(root, "ls-tree", "-r", "-z", "--full-tree", f"{commit}:{prefix}", check=False)
    if tree.returncode != 0:
        top = run_git(root, "rev-parse", "--show-toplevel").stdout.decode("utf-8").strip()
        raise ReleaseError(_("the workbook folder {folder} is not committed in the git repository at {top} "
                             "(HEAD {commit}): commit it (`git add -A {folder} && git commit`), then run "
                             "`forgelab release` again").format(folder=prefix.rstrip("/"), top=top, commit=commit[:12]))
    listing = tree.stdout
    ids: dict[str, str] = {}
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _tab, name = entry.partition(b"\t")
        mode, kind, object_id = meta.decode("ascii").split()
        relative = name.decode("utf-8")
        if kind == "blob" and mode in ("100644", "100755") and _wanted(relative):  # no symlinks, no submodules
            ids[relative] = object_id
    blobs = read_blobs(root, ids.values())
    files = {relative: blobs[object_id] for relative, object_id in sorted(ids.items())}
    stamp = run_git(root, "show", "-s", "--format=%ct", commit, check=False).stdout.decode("ascii", "replace").strip()
    return Committed(root, commit, files, _left_out(root, prefix),
                     int(stamp) if stamp.isdigit() else 0)


# how a working-tree change is named beside its path, by git's two-letter status (any other code: modified)
CHANGE_WORDS = {"??": N_("untracked"), " D": N_("deleted on disk"), "D ": N_("deleted on disk")}
MODIFIED = N_("modified")


def _left_out(root: Path, prefix: str) -> tuple[str, ...]:
    """Working-tree changes under the shipped folders: they are not in the bundle, and the instructor is told (each
    as ``path (what)``, in the active language)."""
    done = run_git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *INCLUDE, check=False)
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
        what = _(CHANGE_WORDS.get(code, MODIFIED))
        found.append(_("{path} ({what})").format(path=relative, what=what))
    return tuple(sorted(found))


def _excluded(relative: PurePosixPath) -> bool:
    if any(part in EXCLUDED_PARTS or part.endswith(EXCLUDED_SUFFIXES) for part in relative.parts):
        return True
    text = relative.as_posix()
    return any(fnmatch.fnmatch(text, pattern) for pattern in EXCLUDED_FILES)


def shipped_files(committed: Committed) -> list[str]:
    return sorted(path for path in committed.files if _included(path) and not _excluded(PurePosixPath(path)))


def select_files(root: Path) -> list[str]:
    """Every committed file to ship from the workbook at ``root`` (starter copies aside), as sorted posix paths."""
    return shipped_files(read_committed(root))


def committed_course(committed: Committed) -> Course:
    """The stage registry as committed (read from a scratch copy of ``course/`` and ``pyproject.toml``)."""
    with tempfile.TemporaryDirectory(prefix="forgelab-release-") as scratch:
        base = Path(scratch)
        for path, data in committed.files.items():
            if path.startswith("course/") or path == "pyproject.toml":
                (base / path).parent.mkdir(parents=True, exist_ok=True)
                (base / path).write_bytes(data)
        try:
            return load_course(base)
        except (RegistryError, OSError, ValueError) as error:
            raise ReleaseError(_("the committed stage registry cannot be read ({error}): fix course/ and commit "
                                 "it").format(error=error)) from None


def missing_needed(committed: Committed, course: Course) -> list[str]:
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
