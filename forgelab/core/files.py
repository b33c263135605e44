"""Copying files that someone else controls: never a link, never a special file, always within stated limits.

A learner's folder or zip is read by the trusted side before any of it runs. Whatever it holds — a
folder nested two thousand levels deep, a sparse file of half a gigabyte, a zip whose members clash
(one is a file, another needs it as a folder), a name the file system cannot hold, a file nobody may
read — reading it must neither crash nor fill the disk, and the problem must be reported as what it
is: the submission's, with the limit it broke. So:

* folders are walked iteratively (no recursion limit to hit), to at most :attr:`FileLimits.depth`
  levels, never through a symbolic link, and only where the caller wants files from (``enter``);
* every file is checked before a byte is copied: a regular file (opened with ``O_NOFOLLOW``), at most
  :attr:`FileLimits.file_bytes`, not sparse, and all of them together at most
  :attr:`FileLimits.total_bytes` — the same cap for a folder and a zip — so nothing larger than the cap
  is ever written;
* files are copied one by one, in chunks, with a byte count that stops at the size the file had when it
  was checked (a file that grows while it is read is refused, not followed).

Every refusal is a :class:`LayoutError` naming the problem (:class:`Problem`), the path and the limit. What is
skipped rather than refused — a symbolic link, a named pipe, a socket or a device file where grading would read a
file — is handed back as :class:`Skipped`, so that a reason can say what it was instead of "not handed in". A path
shown in a reason is the path as written in the folder or zip, with characters that cannot be printed escaped.
"""

from __future__ import annotations

import enum
import hashlib
import os
import stat
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from forgelab.core.i18n import N_, _

CHUNK = 1 << 20
SPARSE_FROM = 1 << 20  # a file this large that takes less than half its size on disk is sparse


class Problem(enum.StrEnum):
    """Why a set of files cannot be laid out for grading (every one is the sender's problem)."""

    TOO_DEEP = "too_deep"
    TOO_MANY = "too_many"
    TOO_LARGE = "too_large"
    SPARSE = "sparse"
    CLASH = "clash"
    BAD_NAME = "bad_name"
    UNREADABLE = "unreadable"


class LayoutError(ValueError):
    """Files that cannot be laid out: what is wrong (with the path, where there is one) and the limit."""

    def __init__(self, problem: Problem, what: str, limit: str = "") -> None:
        super().__init__(f"{what} (the limit: {limit})" if limit else what)
        self.problem, self.what, self.limit = problem, what, limit


class Kind(enum.StrEnum):
    """What an entry that is not a regular file or folder is (such an entry is skipped, never read)."""

    LINK = "link"
    FIFO = "fifo"
    SOCKET = "socket"
    DEVICE = "device"


KIND_WORDS = {
    Kind.LINK: N_("a symbolic link"),
    Kind.FIFO: N_("a named pipe (FIFO)"),
    Kind.SOCKET: N_("a socket"),
    Kind.DEVICE: N_("a device file"),
}


@dataclass(frozen=True)
class Skipped:
    """An entry where grading would read a file, skipped because it is not one: its path and what it is."""

    relative: PurePosixPath
    kind: Kind

    def words(self) -> str:
        return _("{path} is {kind}, not a regular file: it was skipped (grading reads only regular files) — hand in "
                 "the file itself").format(path=shown(self.relative), kind=_(KIND_WORDS[self.kind]))


def _kind(mode: int) -> Kind | None:
    if stat.S_ISLNK(mode):
        return Kind.LINK
    if stat.S_ISFIFO(mode):
        return Kind.FIFO
    if stat.S_ISSOCK(mode):
        return Kind.SOCKET
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return Kind.DEVICE
    return None


@dataclass(frozen=True)
class FileLimits:
    depth: int = 32  # folder levels below the top
    files: int = 5000  # files copied
    entries: int = 50_000  # folders and files looked at (pruned folders are not looked into)
    file_bytes: int = 50 * 1024 * 1024
    total_bytes: int = 200 * 1024 * 1024  # the same cap for a folder and a zip
    name_bytes: int = 255  # one path component, as the file system stores it

    def describe(self) -> str:
        return (f"{self.depth} folder levels, {self.files} files, {_mb(self.file_bytes)} per file, "
                f"{_mb(self.total_bytes)} in all")


DEFAULT_LIMITS = FileLimits()


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB" if size >= 1024 * 1024 else f"{size} bytes"


def printable(text: str) -> str:
    """``text`` with every character that cannot be printed (a line break, a control character) escaped."""
    return "".join(character if character.isprintable() else repr(character)[1:-1] for character in text)


def shown(relative: PurePosixPath, keep: int = 4) -> str:
    """A path as a reason may show it: at most ``keep`` leading parts and the last one, unprintable characters
    escaped."""
    parts = relative.parts
    if len(parts) <= keep + 1:
        return printable(relative.as_posix())
    return printable("/".join((*parts[:keep], "…", parts[-1])))


@dataclass(frozen=True)
class Source:
    """One file to copy: where it goes (relative), its size, and how to open it for reading."""

    relative: PurePosixPath
    size: int
    open: Callable[[], IO[bytes]]


def _check_name(relative: PurePosixPath, limits: FileLimits) -> None:
    for part in relative.parts:
        if len(os.fsencode(part)) > limits.name_bytes:
            raise LayoutError(Problem.BAD_NAME, _("the name {name}… in {folder} is longer than a file system can "
                                                  "hold").format(name=repr(part[:40]), folder=shown(relative.parent)),
                              _("{count} bytes per name").format(count=limits.name_bytes))


class _Budget:
    def __init__(self, limits: FileLimits) -> None:
        self.limits, self.files, self.bytes, self.entries = limits, 0, 0, 0

    def entry(self, relative: PurePosixPath) -> None:
        self.entries += 1
        if self.entries > self.limits.entries:
            raise LayoutError(Problem.TOO_MANY, _("more than {count} files and folders (at {path})").format(
                count=self.limits.entries, path=shown(relative)), _("{count} entries").format(count=self.limits.entries))

    def file(self, relative: PurePosixPath, size: int) -> None:
        limits = self.limits
        if size > limits.file_bytes:
            raise LayoutError(Problem.TOO_LARGE, _("{path} is {size}").format(path=shown(relative), size=_mb(size)),
                              _("{size} per file").format(size=_mb(limits.file_bytes)))
        self.files += 1
        self.bytes += size
        if self.files > limits.files:
            raise LayoutError(Problem.TOO_MANY, _("more than {count} files to grade").format(count=limits.files),
                              _("{count} files").format(count=limits.files))
        if self.bytes > limits.total_bytes:
            raise LayoutError(Problem.TOO_LARGE, _("the files to grade add up to more than {size} (at {path})").format(
                size=_mb(limits.total_bytes), path=shown(relative)), _("{size} in all").format(size=_mb(limits.total_bytes)))


# ---------------------------------------------------------------- a folder


def folder_sources(root: Path, wanted: Callable[[PurePosixPath], bool], enter: Callable[[PurePosixPath], bool],
                   limits: FileLimits = DEFAULT_LIMITS, skipped: list[Skipped] | None = None) -> list[Source]:
    """The files under ``root`` that ``wanted`` keeps, looking only into folders that ``enter`` allows.

    Symbolic links (to files or folders) and special files (pipes, sockets, devices) are skipped, never
    followed, and — where grading would have read them (``wanted`` or ``enter``) — added to ``skipped``; ``root``
    itself must not be a link. Raises :class:`LayoutError`.
    """
    budget = _Budget(limits)
    found: list[Source] = []
    stack: list[tuple[Path, PurePosixPath]] = [(root, PurePosixPath())]
    while stack:
        folder, relative = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name, reverse=True)
        except OSError as error:
            raise LayoutError(Problem.UNREADABLE, _("the folder {path} cannot be read ({error})").format(
                path=shown(relative) or ".", error=error.strerror or type(error).__name__), _("readable files")) from None
        for entry in entries:
            path = relative / entry.name
            budget.entry(path)
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # it went away while we looked
            if stat.S_ISDIR(info.st_mode):
                if not enter(path):
                    continue
                if len(path.parts) > limits.depth:
                    raise LayoutError(Problem.TOO_DEEP, _("{path} is nested more than {count} folders deep").format(
                        path=shown(path), count=limits.depth), _("{count} folder levels").format(count=limits.depth))
                _check_name(path, limits)
                stack.append((Path(entry.path), path))
            elif stat.S_ISREG(info.st_mode) and wanted(path):
                _check_name(path, limits)
                budget.file(path, info.st_size)
                if info.st_size >= SPARSE_FROM and info.st_blocks * 512 < info.st_size // 2:
                    raise LayoutError(Problem.SPARSE, _("{path} is a sparse file of {size} that takes {disk} on "
                                                        "disk").format(path=shown(path), size=_mb(info.st_size),
                                                                       disk=_mb(info.st_blocks * 512)),
                                      _("no sparse files"))
                found.append(Source(path, info.st_size, _opener(Path(entry.path), path)))
            elif skipped is not None and (kind := _kind(info.st_mode)) is not None and (wanted(path) or enter(path)):
                skipped.append(Skipped(path, kind))
    if skipped is not None:
        skipped.sort(key=lambda entry: entry.relative)
    return sorted(found, key=lambda source: source.relative)


def _opener(path: Path, relative: PurePosixPath) -> Callable[[], IO[bytes]]:
    def open_it() -> IO[bytes]:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):  # replaced by something else since it was checked
            os.close(descriptor)
            raise LayoutError(Problem.UNREADABLE, _("{path} changed while it was read").format(path=shown(relative)),
                              _("regular files"))
        return os.fdopen(descriptor, "rb")

    return open_it


# ---------------------------------------------------------------- a zip


def unsafe_member(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return name.startswith("/") or "\\" in name or ".." in parts or (len(name) > 1 and name[1] == ":")


def zip_sources(archive: zipfile.ZipFile, prefix: str, wanted: Callable[[PurePosixPath], bool],
                limits: FileLimits = DEFAULT_LIMITS, skipped: list[Skipped] | None = None) -> list[Source]:
    """The members of ``archive`` under ``prefix`` that ``wanted`` keeps (paths without the prefix).

    Refused: a member path that is absolute or climbs out (``..``), members whose paths clash (two with
    the same path, or a file where another member needs a folder), and anything past the limits (by the
    sizes the zip declares; the copy holds them to it). Links stored in a zip are skipped (and added to
    ``skipped`` where ``wanted`` would have kept the member). A member's path is shown as written, escaped.
    """
    budget = _Budget(limits)
    files: dict[PurePosixPath, zipfile.ZipInfo] = {}
    folders: set[PurePosixPath] = set()
    for info in archive.infolist():
        name = info.filename
        if unsafe_member(name):
            raise LayoutError(Problem.BAD_NAME, _("the member path {path} points outside the zip").format(
                path=repr(name[:120])), _("paths inside the zip"))
        relative = PurePosixPath(name)
        if prefix:
            if relative.parts[:1] != (prefix,):
                continue
            relative = PurePosixPath(*relative.parts[1:])
        if not relative.parts:
            continue
        budget.entry(relative)
        if len(relative.parts) > limits.depth + 1:
            raise LayoutError(Problem.TOO_DEEP, _("{path} is nested more than {count} folders deep").format(
                path=shown(relative), count=limits.depth), _("{count} folder levels").format(count=limits.depth))
        folders.update(relative.parents)
        if info.is_dir():
            folders.add(relative)
            continue
        if not wanted(relative):
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            if skipped is not None:
                skipped.append(Skipped(relative, Kind.LINK))
            continue
        _check_name(relative, limits)
        if relative in files:
            raise LayoutError(Problem.CLASH, _("two members of the zip are both {path}").format(path=shown(relative)),
                              _("one member per path"))
        if info.flag_bits & 0x1:
            raise LayoutError(Problem.UNREADABLE, _("{path} is encrypted").format(path=shown(relative)),
                              _("members without a password"))
        budget.file(relative, info.file_size)
        files[relative] = info
    for relative in sorted(files):
        if relative in folders:
            raise LayoutError(Problem.CLASH, _("{path} is a file in the zip, and another member needs it as a "
                                               "folder").format(path=shown(relative)),
                              _("a path is a file or a folder, not both"))
    return [Source(relative, info.file_size, _member_opener(archive, info)) for relative, info in sorted(files.items())]


def _member_opener(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[], IO[bytes]]:
    def open_it() -> IO[bytes]:
        return archive.open(info)

    return open_it


# ---------------------------------------------------------------- copying


def copy_sources(sources: list[Source], place: Callable[[PurePosixPath], Path],
                 limits: FileLimits = DEFAULT_LIMITS) -> dict[PurePosixPath, str]:
    """Copy each source to ``place(relative)``; returns every file's sha256. Raises :class:`LayoutError`.

    No file gets more bytes than it declared, and no more than ``limits.total_bytes`` are written in all.
    """
    digests: dict[PurePosixPath, str] = {}
    written = 0
    for source in sources:
        destination = place(source.relative)
        digest = hashlib.sha256()
        try:
            destination.parent.mkdir(parents=True, exist_ok=True)
            with source.open() as reader, open(destination, "xb") as writer:
                left = source.size
                while True:
                    chunk = reader.read(min(CHUNK, left + 1))
                    if not chunk:
                        break
                    if len(chunk) > left:
                        raise LayoutError(Problem.TOO_LARGE, _("{path} holds more than the {size} it declared").format(
                            path=shown(source.relative), size=_mb(source.size)), _("the declared size"))
                    left -= len(chunk)
                    written += len(chunk)
                    if written > limits.total_bytes:
                        raise LayoutError(Problem.TOO_LARGE, _("the files to grade add up to more than {size}").format(
                            size=_mb(limits.total_bytes)), _("{size} in all").format(size=_mb(limits.total_bytes)))
                    digest.update(chunk)
                    writer.write(chunk)
        except LayoutError:
            raise
        except (FileExistsError, NotADirectoryError, IsADirectoryError) as error:
            raise LayoutError(Problem.CLASH, _("{path} clashes with another file of the same path ({error})").format(
                path=shown(source.relative), error=error.strerror), _("a path is a file or a folder, not both")) from None
        except (zipfile.BadZipFile, EOFError, RuntimeError, NotImplementedError) as error:
            raise LayoutError(Problem.UNREADABLE, _("{path} is damaged in the zip ({error})").format(
                path=shown(source.relative), error=error), _("readable files")) from None
        except OSError as error:
            if error.errno == 36:  # ENAMETOOLONG: the whole path is longer than the file system takes
                raise LayoutError(Problem.BAD_NAME, _("the path {path} is too long").format(path=shown(source.relative)),
                                  _("a path the file system can hold")) from None
            raise LayoutError(Problem.UNREADABLE, _("{path} cannot be read ({error})").format(
                path=shown(source.relative), error=error.strerror or type(error).__name__), _("readable files")) from None
        digests[source.relative] = digest.hexdigest()
    return digests


def walk(root: Path, max_depth: int, skip: frozenset[str] = frozenset()) -> Iterator[tuple[Path, int]]:
    """Every entry under ``root`` with its depth, iteratively, never through a link, at most ``max_depth`` deep,
    not looking into folders named in ``skip``.

    For looking around in folders others share (e.g. the system's temporary folder): an entry that
    vanishes or cannot be read is skipped, never an error.
    """
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as entries:
                found = list(entries)
        except OSError:
            continue
        for entry in found:
            path = Path(entry.path)
            yield path, depth + 1
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_folder and depth + 1 < max_depth and entry.name not in skip:
                stack.append((path, depth + 1))
