"""Reading a submission: a learner's workbook folder, or a zip of one.

A submission is only ever *read*. What grading needs is copied into a scratch folder laid out so
that nothing the learner handed in can stand in for the course's tooling:

``import/forge/``        the submission's ``forge/`` — the only thing put on ``PYTHONPATH``
``home/transfer/``       their transfer tests
``home/labs/NN-slug/forge/``  their fault-lab workspaces (only the ``forge/`` inside each)
``home/evidence/``       their verification.json files and design answers
``home/tests/stages/``   their copy of the stage tests — compared by digest, never run

A learner's ``forgelab/``, ``conftest.py`` or ``sitecustomize.py`` is never copied, so it can not
replace the course's pytest plugin or configuration. Symbolic links are skipped. A zip is accepted
when its top level, or its single top folder, holds ``forge/``; members with absolute paths or
``..`` are refused, and so is a zip that would unpack to more than :data:`MAX_ZIP_BYTES`.
"""

from __future__ import annotations

import hashlib
import re
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_ZIP_BYTES = 200 * 1024 * 1024
SKIPPED_PARTS = frozenset({"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".mypy_cache", "__MACOSX",
                           ".git", ".venv", "node_modules", ".DS_Store"})
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
    if top == "labs" and len(parts) >= 4 and parts[2] == "forge":
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
    raise SubmissionError(f"{shown} has no forge/ folder at its top or inside a single top folder: "
                          "zip the learner's whole workbook folder (the one that holds forge/)")


def _check_zip(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            bad = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise SubmissionError(f"{path} is not a readable zip ({error}): ask the learner to zip the workbook again") from None
    if bad is not None:
        raise SubmissionError(f"{path} is damaged (member {bad} fails its checksum): ask the learner to zip it again")
    total = 0
    for info in infos:
        name = info.filename
        if name.startswith("/") or "\\" in name or ".." in PurePosixPath(name).parts or re.match(r"^[A-Za-z]:", name):
            raise SubmissionError(f"{path} has an unsafe member path {name!r}: refusing to unpack it")
        total += info.file_size
    if total > MAX_ZIP_BYTES:
        raise SubmissionError(f"{path} unpacks to {total // 1_000_000} MB, more than {MAX_ZIP_BYTES // 1_000_000} MB: "
                              "ask for the workbook without .venv/ and build/")
    return _zip_prefix([info.filename for info in infos], str(path))


def inspect(path_text: str) -> tuple[Path, str, str]:
    """Validate one submission path → (path, kind, zip prefix)."""
    path = Path(path_text).expanduser()
    if not path.exists():
        raise SubmissionError(f"submission {path_text!r} does not exist: check the path (give a folder or a .zip)")
    if path.is_dir():
        if not (path / "forge").is_dir():
            hint = " (it looks like a forge/ package itself: give the folder above it)" if path.name == "forge" else ""
            raise SubmissionError(f"{path_text} is not a learner's workbook: it has no forge/ folder{hint}; "
                                  "give the folder that holds forge/, transfer/, labs/ and evidence/")
        return path.resolve(), "folder", ""
    if zipfile.is_zipfile(path) or path.suffix.lower() == ".zip":
        return path.resolve(), "zip", _check_zip(path)
    raise SubmissionError(f"{path_text} is neither a folder nor a zip: give a learner's workbook folder or its zip")


def _base_name(path: Path, kind: str) -> str:
    return path.stem if kind == "zip" else path.name


def safe_name(text: str) -> str:
    """A file-name-safe form of a submission id."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return cleaned or "submission"


def discover(paths: list[str]) -> list[Submission]:
    """Validate every path and give each a stable, unique id (in the order given)."""
    found = [inspect(text) for text in paths]
    seen: dict[Path, int] = {}
    for index, (path, _, _) in enumerate(found):
        if path in seen:
            raise SubmissionError(f"{paths[index]} is given twice: list each submission once")
        seen[path] = index
    names = [_base_name(path, kind) for path, kind, _ in found]
    ids = list(names)
    for index, name in enumerate(names):
        if names.count(name) > 1:  # e.g. alice/forge-workbook-lab.zip and bob/forge-workbook-lab.zip
            ids[index] = f"{found[index][0].parent.name}/{name}"
    for index, sid in enumerate(ids):
        if ids.count(sid) > 1:
            raise SubmissionError(f"two submissions would both be called {sid!r}: rename one of them "
                                  f"({paths[index]})")
    return [Submission(sid, path, kind, prefix) for sid, (path, kind, prefix) in zip(ids, found)]


# ---------------------------------------------------------------- reading files


def _folder_entries(root: Path) -> Iterator[tuple[PurePosixPath, Path]]:
    for top in ("forge", "transfer", "labs", "evidence", "tests"):
        base = root / top
        if base.is_symlink() or not base.is_dir():
            continue
        stack = [base]
        while stack:
            folder = stack.pop()
            for entry in sorted(folder.iterdir()):
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    stack.append(entry)
                elif entry.is_file():
                    yield PurePosixPath(entry.relative_to(root).as_posix()), entry


def read_files(submission: Submission) -> dict[tuple[str, str], bytes]:
    """The files grading needs: (area, posix path) → bytes, with area "import" or "home"."""
    files: dict[tuple[str, str], bytes] = {}
    if submission.kind == "folder":
        for relative, source in _folder_entries(submission.path):
            target = _destination(relative)
            if target is not None:
                files[(target[0], target[1].as_posix())] = source.read_bytes()
        return files
    with zipfile.ZipFile(submission.path) as archive:
        for info in archive.infolist():
            if info.is_dir() or stat.S_ISLNK(info.external_attr >> 16):
                continue
            name = PurePosixPath(info.filename)
            if submission.prefix:
                if name.parts[:1] != (submission.prefix,):
                    continue
                name = PurePosixPath(*name.parts[1:])
            target = _destination(name)
            if target is not None:
                files[(target[0], target[1].as_posix())] = archive.read(info)
    return files


def content_digest(files: dict[tuple[str, str], bytes]) -> str:
    """sha256 over the graded files (paths and contents): equal for a folder and its zip."""
    digest = hashlib.sha256()
    for (area, relative) in sorted(files):
        digest.update(f"{area}/{relative}\0".encode())
        digest.update(hashlib.sha256(files[(area, relative)]).digest())
    return digest.hexdigest()


def lay_out(files: dict[tuple[str, str], bytes], scratch: Path) -> tuple[Path, Path]:
    """Write the files under ``scratch/import`` and ``scratch/home``; returns the two folders."""
    import_dir, home = scratch / _IMPORT, scratch / _HOME
    for folder in (import_dir, home):
        folder.mkdir(parents=True, exist_ok=True)
    for (area, relative), data in sorted(files.items()):
        destination = scratch / area / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(data)
    return import_dir, home
