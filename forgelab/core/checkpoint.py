"""Checkpoint packs: the reference modules of stages 01..NN, released the way courses release solutions.

An instructor writes one with ``forgelab release --checkpoint NN --out DIR`` (see
:func:`forgelab.authoring.release.bundle.build_checkpoint`): ``DIR/forge-workbook-checkpoint-NN.zip``, built from
the committed course (git ``HEAD``) and reproducible byte for byte. A learner who is stuck lays the
modules of the stages *before* a stage into ``forge/`` with ``forgelab restore NN --from FILE`` — in the
learner bundle, which has no ``solutions/``.

The zip holds one folder, ``forge-workbook-checkpoint-NN/``, with exactly:

* ``manifest.json`` — the format, the course (name, module id, version), the checkpoint's stage, the
  commit it was built from, and for every module its stage, path and SHA-256;
* ``forge/<module>.py`` for each stage 01..NN — the reference module, and nothing else: no tests, no
  transfer tests, no design answers, no fault labs.

:func:`read_pack` refuses a file that is not a readable zip, holds anything besides those entries, was
damaged (a CRC or SHA-256 that does not match), or was made for another course or course version — each
with one sentence that names the problem and what to do.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from forgelab.core.fileformat import FileFormatError, parse_json
from forgelab.core.i18n import _
from forgelab.core.registry import Course

FORMAT: Final = "forge-workbook-checkpoint/1"
PACK_STEM = "forge-workbook-checkpoint"
MANIFEST = "manifest.json"
FIXED_TIMESTAMP = (1980, 1, 1, 0, 0, 0)
MAX_PACK_BYTES = 16 * 1024 * 1024  # a pack of a dozen modules is a few hundred KB
MAX_ENTRY_BYTES = 4 * 1024 * 1024


class PackError(ValueError):
    """A checkpoint pack cannot be used; the message names the file, the problem and what to do."""


def pack_name(number: str) -> str:
    return f"{PACK_STEM}-{number}"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class PackModule(_Strict):
    """One reference module of a pack: its stage, its path in the workbook and the SHA-256 of its bytes."""

    stage: Annotated[str, Field(pattern=r"^[0-9]{2}$")]
    path: Annotated[str, Field(pattern=r"^forge/[A-Za-z0-9_/]+\.py$")]
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class Manifest(_Strict):
    """``manifest.json`` of a checkpoint pack."""

    format: Literal["forge-workbook-checkpoint/1"]
    course: str
    module_id: str
    course_version: str
    checkpoint: Annotated[str, Field(pattern=r"^[0-9]{2}$")]
    commit: str = ""
    modules: list[PackModule]


def manifest_for(course: Course, number: str, modules: Mapping[str, tuple[str, bytes]], commit: str) -> Manifest:
    """The manifest of a pack: ``modules`` maps a stage number to (module path, reference bytes)."""
    return Manifest(format=FORMAT, course=course.name, module_id=course.module_id, course_version=course.version,
                    checkpoint=number, commit=commit,
                    modules=[PackModule(stage=stage, path=path, sha256=sha256(data))
                             for stage, (path, data) in sorted(modules.items())])


def pack_bytes(number: str, manifest: Manifest, modules: Mapping[str, tuple[str, bytes]]) -> bytes:
    """The zip: sorted entries under one folder, fixed timestamps and permissions — the same input, the same bytes."""
    folder = pack_name(number)
    document = manifest.model_dump(mode="json")
    contents = {MANIFEST: (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")}
    contents.update({path: data for path, data in modules.values()})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for relative in sorted(contents):
            info = zipfile.ZipInfo(f"{folder}/{relative}", date_time=FIXED_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = (0o100644 & 0xFFFF) << 16
            archive.writestr(info, contents[relative], compresslevel=9)
    return buffer.getvalue()


@dataclass(frozen=True)
class Pack:
    path: Path
    checkpoint: str  # the last stage whose module the pack holds
    course_version: str
    commit: str
    modules: Mapping[str, tuple[str, bytes]]  # stage number -> (forge/<module>.py, reference bytes)


def _refuse(path: Path, problem: str, what: str = "") -> PackError:
    return PackError(f"{path.name}: {problem}" + (f" — {what}" if what else ""))


def read_pack(path: Path, course: Course) -> Pack:
    """Open and check a checkpoint pack for ``course`` (see the module docstring for what is refused)."""
    fresh = _("download the checkpoint pack again, or ask your instructor for it")
    try:
        size = path.stat().st_size
    except OSError as error:
        raise PackError(_("cannot read {path} ({cause}): give the path of the {stem}-NN.zip your instructor "
                          "released").format(path=path, cause=error.strerror or error, stem=PACK_STEM)) from None
    if not path.is_file():
        raise PackError(_("{path} is not a file: give the path of the {stem}-NN.zip your instructor released").format(
            path=path, stem=PACK_STEM))
    if size > MAX_PACK_BYTES:
        raise _refuse(path, _("{size} bytes is far too large for a checkpoint pack").format(size=size),
                      _("this is not one; {what}").format(what=fresh))
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        raise _refuse(path, _("not a readable zip file (damaged or not a checkpoint pack)"), fresh) from None
    with archive:
        infos = archive.infolist()
        folders = {PurePosixPath(info.filename).parts[0] for info in infos if info.filename}
        if len(folders) != 1:
            raise _refuse(path, _("a checkpoint pack holds one folder, forge-workbook-checkpoint-NN/; this zip holds "
                                  "{folders}").format(folders=", ".join(sorted(folders)) or _("nothing")), fresh)
        folder = folders.pop()
        entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            relative = PurePosixPath(info.filename).relative_to(folder).as_posix() if info.filename != folder else ""
            if info.is_dir() or not relative or relative == ".":
                continue
            if ".." in PurePosixPath(relative).parts or info.file_size > MAX_ENTRY_BYTES:
                raise _refuse(path, _("the entry {entry!r} is not a module of a checkpoint pack").format(
                    entry=info.filename), fresh)
            entries[relative] = info
        if MANIFEST not in entries:
            raise _refuse(path, _("no {manifest} inside {folder}/: this is not a checkpoint pack").format(
                manifest=MANIFEST, folder=folder), fresh)
        data: dict[str, bytes] = {}
        for relative, info in sorted(entries.items()):
            try:  # reading checks each entry's CRC
                data[relative] = archive.read(info)
            except (zipfile.BadZipFile, OSError, EOFError, zlib.error, ValueError):
                raise _refuse(path, _("the zip is damaged ({entry} cannot be read back intact)").format(
                    entry=info.filename), fresh) from None
    manifest = _manifest(path, data[MANIFEST])
    _same_course(path, manifest, course)
    listed = _listed_modules(path, manifest, course)
    extra = sorted(set(data) - {MANIFEST} - {module for module, _digest in listed.values()})
    if extra:
        raise _refuse(path, _("it holds files a checkpoint pack never holds: {files}").format(
                          files=", ".join(extra[:5]) + (" …" if len(extra) > 5 else "")),
                      _("only the reference modules of the stages are accepted; {what}").format(what=fresh))
    modules: dict[str, tuple[str, bytes]] = {}
    for stage, (module, digest) in listed.items():
        if module not in data:
            raise _refuse(path, _("{module} is listed in {manifest} but missing from the zip").format(
                module=module, manifest=MANIFEST), fresh)
        if sha256(data[module]) != digest:
            raise _refuse(path, _("{module} was changed or damaged (its SHA-256 differs from {manifest})").format(
                module=module, manifest=MANIFEST), fresh)
        modules[stage] = (module, data[module])
    checkpoint = manifest.checkpoint
    if folder != pack_name(checkpoint) or sorted(modules) != [s.number for s in course.stages if s.number <= checkpoint]:
        raise _refuse(path, _("it should hold the modules of stages 01–{checkpoint} in {folder}/, and it does not").format(
            checkpoint=checkpoint, folder=pack_name(checkpoint)), fresh)
    return Pack(path, checkpoint, manifest.course_version, manifest.commit, modules)


def _manifest(path: Path, raw: bytes) -> Manifest:
    try:
        return parse_json(f"{path.name}/{MANIFEST}", raw, Manifest,
                          _("the pack was damaged or edited by hand: download it again, or ask your instructor for a "
                            "pack made by this course's `forgelab release --checkpoint`"))
    except FileFormatError as error:
        raise PackError(str(error)) from None


def _same_course(path: Path, manifest: Manifest, course: Course) -> None:
    made_for = _("{course} {module} version {version}").format(course=manifest.course, module=manifest.module_id,
                                                              version=manifest.course_version)
    here = _("{course} {module} version {version}").format(course=course.name, module=course.module_id,
                                                          version=course.version)
    if (manifest.course, manifest.module_id, manifest.course_version) != (course.name, course.module_id,
                                                                          course.version):
        raise _refuse(path, _("it was made for {made_for}, and this workbook is {here}").format(made_for=made_for, here=here),
                      _("ask your instructor for the checkpoint pack of this course version"))


def _listed_modules(path: Path, manifest: Manifest, course: Course) -> dict[str, tuple[str, str]]:
    listed: dict[str, tuple[str, str]] = {}
    for entry in manifest.modules:
        stage = course.by_number.get(entry.stage)
        if stage is None or stage.module != entry.path or entry.stage in listed:
            raise _refuse(path, _("{manifest} lists {module} for stage {stage}, which is not this course's module for "
                                  "that stage").format(manifest=MANIFEST, module=entry.path, stage=entry.stage),
                          _("ask your instructor for this course's pack"))
        listed[entry.stage] = (entry.path, entry.sha256)
    return listed
