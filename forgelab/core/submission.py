"""Reading a submission: a learner's workbook folder, or a zip of one.

A submission is only ever *read*. What grading needs is copied into a scratch folder laid out so
that nothing the learner handed in can stand in for the course's tooling:

``import/forge/``        the submission's ``forge/`` — the only thing put on ``PYTHONPATH``
``home/transfer/``       their transfer tests
``home/labs/NN-slug/forge/``  their fault-lab workspaces (only the ``forge/`` inside each, and the lab's
                         regression test ``labs/NN-slug/test_diagnosis.py``)
``home/evidence/``       their verification.json files and design answers
``home/tests/stages/``   their copy of the stage tests — compared by digest, never run

A learner's ``forgelab/``, ``conftest.py`` or ``sitecustomize.py`` is never copied, so it can not
replace the course's pytest plugin or configuration. A zip is accepted when its top level, or its
single top folder, holds ``forge/``.

Folders and zips are copied the same way (:mod:`forgelab.core.files`): file by file, never through a
symbolic link, under the same limits (:data:`LIMITS`: depth, number of files, size per file and in
all); a sparse file is refused. A submission that cannot be laid out — too deep, too large, members
that clash, a damaged zip, a file nobody may read — raises :class:`LayoutError`: it is graded as the
submission's problem, with the limit it broke, never as the grader's.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from forgelab.core.files import (DEFAULT_LIMITS, FileLimits, LayoutError, Problem, Skipped, Source, copy_sources,
    folder_sources, zip_sources)
from forgelab.core.i18n import _

LIMITS = DEFAULT_LIMITS
MAX_ZIP_BYTES = LIMITS.total_bytes  # one cap for a folder and a zip
SKIPPED_PARTS = frozenset({"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".mypy_cache", "__MACOSX",
                           ".git", ".venv", "node_modules", ".DS_Store"})
REGRESSION_TEST = "test_diagnosis.py"  # a fault lab's regression test, beside its forge/ (Stage.regression_test)
# where each kept file goes in the scratch layout; None = not needed for grading
_IMPORT, _HOME = "import", "home"


class SubmissionError(ValueError):
    """A path that cannot be graded; the message names it and says what to do."""


@dataclass(frozen=True)
class Submission:
    id: str  # stable name used in the gradebook (folder name or zip stem, disambiguated)
    path: Path  # as found on disk
    kind: str  # "folder" | "zip"
    prefix: str  # inside a zip: the single top folder ("" when forge/ is at the top)


def _destination(relative: PurePosixPath) -> tuple[str, PurePosixPath] | None:
    parts = relative.parts
    if not parts or any(part in SKIPPED_PARTS for part in parts) or relative.suffix in (".pyc", ".pyo"):
        return None
    top = parts[0]
    if top == "forge":
        return _IMPORT, relative
    if top in ("transfer", "evidence"):
        return _HOME, relative
    if top == "labs" and ((len(parts) >= 4 and parts[2] == "forge") or (len(parts) == 3 and parts[2] == REGRESSION_TEST)):
        return _HOME, relative
    if parts[:2] == ("tests", "stages"):
        return _HOME, relative
    return None


# ---------------------------------------------------------------- finding and validating


def _zip_prefix(names: list[str], shown: str) -> str:
    tops = {PurePosixPath(name).parts[0] for name in names if name and not name.startswith("__MACOSX")}
    if "forge" in tops:
        return ""
    if len(tops) == 1:
        top = next(iter(tops))
        if any(PurePosixPath(name).parts[1:2] == ("forge",) for name in names):
            return top
    raise SubmissionError(_("{zip} has no forge/ folder at its top or inside a single top folder: zip the learner's "
                            "whole workbook folder (the one that holds forge/)").format(zip=shown))


def _check_zip(path: Path) -> str:
    """The zip's prefix (its single top folder, or ""). A zip that cannot be read at all is still a submission:
    laying it out says why it cannot be graded (:func:`lay_out`)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError, EOFError):
        return ""
    return _zip_prefix(names, str(path))


def inspect(path_text: str) -> tuple[Path, str, str]:
    """Validate one submission path → (path, kind, zip prefix)."""
    path = Path(path_text).expanduser()
    if not path.exists():
        raise SubmissionError(_("submission {path} does not exist: check the path (give a folder or a .zip)").format(
            path=repr(path_text)))
    if path.is_dir():
        if not (path / "forge").is_dir():
            if path.name == "forge":
                raise SubmissionError(_("{path} is not a learner's workbook: it looks like a forge/ package itself; "
                                        "give the folder above it").format(path=path_text))
            raise SubmissionError(_("{path} is not a learner's workbook: it has no forge/ folder; give the folder that "
                                    "holds forge/, transfer/, labs/ and evidence/").format(path=path_text))
        return path.resolve(), "folder", ""
    if zipfile.is_zipfile(path) or path.suffix.lower() == ".zip":
        return path.resolve(), "zip", _check_zip(path)
    raise SubmissionError(_("{path} is neither a folder nor a zip: give a learner's workbook folder or its zip").format(
        path=path_text))


def _base_name(path: Path, kind: str) -> str:
    return path.stem if kind == "zip" else path.name


def safe_name(text: str) -> str:
    """A file-name-safe form of a submission id."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return cleaned or "submission"


def id_problem(name: str) -> str | None:
    """Why ``name`` (a folder's name, a zip's name without .zip) cannot be a submission's id, or None.

    An id names the submission in the gradebook, the CSV files and its feedback page's name: it must name a learner,
    not a place — no empty or blank name, no name of dots only (``...zip`` would be the id ``..``), no slash or
    backslash, no character that cannot be printed."""
    if not name.strip():
        return _("it is empty or blank")
    if set(name) <= {"."}:
        return _("{name} is a name of dots only, which names a folder, not a learner").format(name=repr(name))
    if "/" in name or "\\" in name:
        return _("{name} holds a slash or backslash, so it reads as a path").format(name=repr(name))
    if not name.isprintable():
        return _("{name} holds characters that cannot be printed").format(name=repr(name))
    return None


def discover(paths: list[str]) -> list[Submission]:
    """Validate every path and give each a stable, unique id (in the order given)."""
    found = [inspect(text) for text in paths]
    for text, (path, kind, _prefix) in zip(paths, found):
        why = id_problem(_base_name(path, kind))
        if why is not None:
            raise SubmissionError(_("{path} cannot be graded under its name: {why}. The id of a submission is its "
                                    "folder's name or its zip's name without .zip; the name was given by whoever "
                                    "collected it, not by the learner's work — rename it to the learner's name (e.g. "
                                    "ana-lima.zip) and grade again").format(path=repr(text), why=why))
    seen: dict[Path, int] = {}
    for index, (path, _kind, _prefix) in enumerate(found):
        if path in seen:
            raise SubmissionError(_("{path} is given twice: list each submission once").format(path=paths[index]))
        seen[path] = index
    names = [_base_name(path, kind) for path, kind, _prefix in found]
    ids = list(names)
    for index, name in enumerate(names):
        if names.count(name) > 1:  # e.g. alice/forge-workbook-lab.zip and bob/forge-workbook-lab.zip
            ids[index] = f"{found[index][0].parent.name}/{name}"
    for index, sid in enumerate(ids):
        if ids.count(sid) > 1:
            raise SubmissionError(_("two submissions would both be called {name}: rename one of them ({path})").format(
                name=repr(sid), path=paths[index]))
    return [Submission(sid, path, kind, prefix) for sid, (path, kind, prefix) in zip(ids, found)]


# ---------------------------------------------------------------- laying it out


def _wanted(relative: PurePosixPath) -> bool:
    return _destination(relative) is not None


def _enter(relative: PurePosixPath) -> bool:
    """May a folder at ``relative`` (from the workbook's top) hold a file grading reads?"""
    parts = relative.parts
    if any(part in SKIPPED_PARTS for part in parts):
        return False
    top = parts[0]
    if top in ("forge", "transfer", "evidence"):
        return True
    if top == "labs":
        return len(parts) < 3 or parts[2] == "forge"
    if top == "tests":
        return len(parts) < 2 or parts[1] == "stages"
    return False


def snapshot_sources(root: Path, limits: FileLimits = LIMITS) -> list[Source]:
    """The files of the workbook at ``root`` that grading reads (forge/, transfer/, labs/NN-slug/forge/, evidence/,
    tests/stages/), under grading's limits: what a learner hands in (``forgelab submit`` zips exactly these).

    Raises :class:`LayoutError` when the workbook breaks a limit (the same refusal grading would give).
    """
    return folder_sources(root, _wanted, _enter, limits)


@dataclass(frozen=True)
class LaidOut:
    """A submission copied into scratch: ``import_dir/forge`` and ``home`` (transfer/, labs/, evidence/, tests/)."""

    import_dir: Path
    home: Path
    files: dict[tuple[str, str], str]  # (area, posix path) → sha256 of the file
    content_sha256: str
    skipped: tuple[Skipped, ...] = ()  # links and special files where grading would have read a file


def lay_out(submission: Submission, scratch: Path, limits: FileLimits = LIMITS) -> LaidOut:
    """Copy what grading reads into ``scratch/import`` and ``scratch/home`` (see the module docstring).

    Raises :class:`LayoutError` when the submission cannot be laid out: its own problem, with the limit.
    """
    import_dir, home = scratch / _IMPORT, scratch / _HOME
    for folder in (import_dir, home):
        folder.mkdir(parents=True, exist_ok=True)

    def place(relative: PurePosixPath) -> Path:
        area, inside = _destination(relative) or (_HOME, relative)
        return scratch / area / inside

    skipped: list[Skipped] = []
    if submission.kind == "folder":
        sources = folder_sources(submission.path, _wanted, _enter, limits, skipped)
        digests = copy_sources(sources, place, limits)
    else:
        try:
            with zipfile.ZipFile(submission.path) as archive:
                digests = copy_sources(zip_sources(archive, submission.prefix, _wanted, limits, skipped), place, limits)
        except (zipfile.BadZipFile, EOFError) as error:
            raise LayoutError(Problem.UNREADABLE, _("{path} is not a readable zip ({error})").format(
                path=submission.path.name, error=error), _("a zip that unpacks")) from None
        except OSError as error:
            raise LayoutError(Problem.UNREADABLE, _("{path} cannot be read ({error})").format(
                path=submission.path.name, error=error.strerror or type(error).__name__), _("readable files")) from None
    files = {}
    for relative, sha in digests.items():
        area, inside = _destination(relative) or (_HOME, relative)
        files[(area, inside.as_posix())] = sha
    return LaidOut(import_dir, home, files, content_digest(files), tuple(skipped))


def content_digest(files: dict[tuple[str, str], str]) -> str:
    """sha256 over the graded files (paths and each file's sha256): equal for a folder and its zip."""
    digest = hashlib.sha256()
    for (area, relative) in sorted(files):
        digest.update(f"{area}/{relative}\0".encode())
        digest.update(bytes.fromhex(files[(area, relative)]))
    return digest.hexdigest()


__all__ = ["LIMITS", "LaidOut", "LayoutError", "Skipped", "Submission", "SubmissionError", "discover", "lay_out",
           "safe_name", "snapshot_sources"]
