"""The learner bundle: one zip with everything a learner receives and none of the reference solutions.

:func:`build_bundle` reads the committed course (:mod:`~forgelab.authoring.release.source`), puts together
what the learner receives (:mod:`~forgelab.authoring.release.contents`), seals each fault lab's broken module
(:mod:`~forgelab.authoring.release.sealing`), refuses when it would reveal a
reference solution (:mod:`~forgelab.authoring.release.leaks`) and writes the zip. The zip is deterministic:
entries sorted, fixed timestamps and permissions, fixed compression; the same commit gives the same bytes.

:func:`build_checkpoint` writes a checkpoint pack (:mod:`forgelab.core.checkpoint`) the same way.
"""

from __future__ import annotations

import io
import shutil
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from forgelab.authoring.release.contents import (STARTERS_DIR, bundle_contents, bundle_page, finished_docstrings,
                                                  learner_readmes, localized)
from forgelab.authoring.release.leaks import LeakCheck
from forgelab.authoring.release.sealing import sealed_labs
from forgelab.core.checkpoint import manifest_for, pack_bytes, pack_name
from forgelab.core.i18n import _
from forgelab.core.registry import RegistryError
from forgelab.authoring.release.source import NEEDED, ReleaseError, committed_course, run_git, missing_needed, read_committed

BUNDLE_NAME = "forge-workbook-lab"
ZIP_NAME = f"{BUNDLE_NAME}.zip"


def zip_name(language: str = "en") -> str:
    """``forge-workbook-lab.zip`` for the English bundle, ``forge-workbook-lab-zh.zip`` for the Chinese one."""
    return ZIP_NAME if language == "en" else f"{BUNDLE_NAME}-{language}.zip"


FIXED_TIMESTAMP = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip can hold (a commit without a date)


@dataclass(frozen=True)
class Bundle:
    path: Path
    files: tuple[str, ...]  # paths inside the bundle folder, sorted
    size: int
    cleared_notebooks: tuple[str, ...]
    commit: str = ""  # the commit the bundle was built from
    left_out: tuple[str, ...] = ()  # working-tree changes under the shipped folders that are not in the bundle
    starters: tuple[str, ...] = ()  # the pristine starter copies under course/starters/







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
    more = _(" (and {count} more)").format(count=len(items) - limit) if len(items) > limit else ""
    return _("; ").join(items[:limit]) + more


def _refuse_leaks(leaks: list[str], commit: str) -> None:
    if leaks:
        raise ReleaseError(_("the bundle (HEAD {commit}) would reveal a reference solution: {leaks}").format(
            commit=commit, leaks=_shown(leaks)))


def build_bundle(root: Path, out_dir: Path, language: str = "en") -> Bundle:
    """Write ``out_dir/forge-workbook-lab.zip`` (or ``…-zh.zip`` for another edition, :func:`zip_name`) from the
    workbook committed at ``root``'s git HEAD."""
    if not (root / "course" / "course.toml").is_file():
        raise ReleaseError(_("{root} is not a workbook (no course/course.toml): run this inside the course "
                             "repository").format(root=root))
    if shutil.which("git") is None:
        raise ReleaseError(_("git is not installed: `forgelab release` builds the bundle from the committed course "
                             "(git HEAD); install git and run it in the course repository"))
    committed = read_committed(root)
    short = committed.commit[:12]
    absent = [entry for entry in NEEDED if not any(p == entry or p.startswith(entry + "/") for p in committed.files)]
    if absent:
        raise ReleaseError(_("not committed at HEAD ({commit}): {files} — a bundle without them cannot run "
                             "`forgelab check`; commit them (`git add {paths} && git commit`)").format(
            commit=short, files=_(", ").join(absent), paths=" ".join(absent)))
    course = committed_course(committed)
    missing = missing_needed(committed, course)
    if missing:
        raise ReleaseError(_("the committed course (HEAD {commit}) lacks files its stages need: {files}; commit them "
                             "(`git add <file> && git commit`) or fix the stage registry, then release again").format(
            commit=short, files=_shown(missing, 6)))
    if language != "en" and language not in course.languages:
        raise ReleaseError(_("the course has no {language!r} edition (course.toml languages = {languages}): choose "
                             "one of them").format(language=language, languages=list(course.languages)))
    contents, cleared = bundle_contents(committed)
    contents = localized(contents, course, language, finished_docstrings(committed.files, language))
    for front_door in ("README.md", "README.zh-CN.md"):  # the course repository's README, never the learner's
        contents.pop(front_door, None)
    contents.update(learner_readmes(committed, course, language))
    # the leak check before the slow steps (running the reference for the seals' keys, building the page): a bundle
    # that would reveal a reference solution is refused at once. Its fault labs' modules are left out of this first
    # pass (each is a reference module with one defect: it ships only sealed); what sealing and the page add or
    # change is checked after them
    check = LeakCheck(committed)
    variants = {stage.fault_variant for stage in course.stages}
    checked = {path: data for path, data in contents.items() if path not in variants}
    _refuse_leaks(check.leaks(checked), short)
    contents = sealed_labs(committed, course, contents, language)  # the fault labs' modules ship only encrypted
    contents.update(bundle_page(contents))
    _refuse_leaks(check.leaks({path: data for path, data in contents.items() if checked.get(path) != data}), short)
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
    done = run_git(root, "status", "--porcelain=v1", "--untracked-files=all", "--", "solutions/forge", check=False)
    if done.returncode != 0:
        return ()
    return tuple(sorted(line[3:] for line in done.stdout.decode("utf-8", "replace").splitlines() if len(line) > 3))


def build_checkpoint(root: Path, out_dir: Path, number: str) -> CheckpointBuild:
    """Write ``out_dir/forge-workbook-checkpoint-NN.zip``: the committed reference modules of stages 01..NN."""

    if not (root / "course" / "course.toml").is_file():
        raise ReleaseError(_("{root} is not a workbook (no course/course.toml): run this inside the course "
                             "repository").format(root=root))
    if shutil.which("git") is None:
        raise ReleaseError(_("git is not installed: `forgelab release --checkpoint` builds the pack from the "
                             "committed course (git HEAD); install git and run it in the course repository"))
    committed = read_committed(root)
    course = committed_course(committed)
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
            state = _("on disk but not committed") if on_disk else _("missing")
            raise ReleaseError(_("{module} is {state} at HEAD ({commit}): a checkpoint pack holds the committed "
                                 "reference modules; commit it (`git add {module} && git commit`) and run this "
                                 "again").format(module=stage.solution_module, state=state, commit=committed.commit[:12]))
        modules[stage.number] = (stage.module, reference)
    manifest = manifest_for(course, last.number, modules, committed.commit)
    data = pack_bytes(last.number, manifest, modules)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{pack_name(last.number)}.zip"
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    temporary.replace(path)
    return CheckpointBuild(path, last.number, tuple(module for module, _data in modules.values()), len(data),
                           committed.commit, _solution_changes(root))
