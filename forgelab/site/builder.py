"""The static course page, rendered from the stage registry, in one or both editions.

``forgelab site build`` adds each edition's learner bundle to its ``downloads/`` (:mod:`forgelab.authoring.publish`);
the copy inside the bundle (``page/``) offers none.

Layout of one edition's folder::

    index.html                     the chapter's opening, every stage and its progress (kept in the
                                   browser), the recovery point
    NN-slug.html                   one page per stage, with its figures and the local-check panel
    figures/NN-slug-figure*.svg    the stages' figures, as committed next to their sources (each edition
                                   its own drawing: figure.svg, or figure_zh.svg in zh/)
    assets/site.css, verify.js, page.js
    assets/strings.js              the words the scripts show, in this edition's language (generated from
                                   forgelab's gettext catalog: every ``t("…")`` of verify.js and page.js)
    assets/course-data.js          what the page checks against: required tests, published test
                                   digests, the verification.json schema (generated)
    downloads/forge-workbook-lab.zip   the learner bundle of this edition (``…-zh.zip`` for the Chinese
                                   one), put there by forgelab.authoring.publish

One language (``--lang en`` or ``--lang zh``) builds that edition at the site's root. ``--lang all``
puts English at the root and every other edition in a folder named after its language (``zh/``),
each one complete in itself — its own assets, figures and bundle — so a folder can also be published
alone; only the language switch and the hreflang links cross from one edition to the other.

The same registry and files give the same bytes: nothing depends on the clock or on file order.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from forgelab.core import evidence
from forgelab.core import figures
from forgelab.core.i18n import LANGUAGES, _, speaking
from forgelab.core.registry import Course, Stage
from forgelab.site import pages
from forgelab.core.opening import OpeningError, opening_texts

ASSETS = ("site.css", "verify.js", "page.js")
SCRIPTS = ("verify.js", "page.js")  # their t("…") messages go into assets/strings.js
MARKER = ".forgelab-site"  # marks a folder this builder owns and may replace
BUNDLE_PAGE = "page"  # where the learner bundle carries the built page (both editions: English here, others in page/<lang>/)
MAX_VERIFICATION_BYTES = 1024 * 1024
SUPPORTED_SCHEMA_VERSIONS = (evidence.SCHEMA_VERSION,)
_STRING = r'"(?:[^"\\\n]|\\.)*"'
# t("…") in the scripts, a message that may be split into "…" + "…" literals (as Babel's extractor reads it)
_T_CALL = re.compile(rf"(?<![\w$.])t\(\s*({_STRING}(?:\s*\+\s*{_STRING})*)")


class SiteError(RuntimeError):
    """The site cannot be built; the message names the cause and what to do."""


@dataclass(frozen=True)
class Download:
    """The file an edition's page offers for download — its learner bundle — at ``downloads/<name>``.

    The site only links to it: whoever builds the site with bundles (:mod:`forgelab.authoring.publish`) puts the
    file there."""

    name: str
    size: int


@dataclass(frozen=True)
class EditionBuild:
    language: str
    folder: str  # "" for the site's root
    pages: tuple[str, ...]  # relative to the edition's folder


@dataclass(frozen=True)
class SiteBuild:
    out: Path
    editions: tuple[EditionBuild, ...]

    @property
    def pages(self) -> tuple[str, ...]:
        """Every page written, relative to ``out`` (``index.html``, ``zh/index.html``, …)."""
        return tuple(f"{edition.folder}/{page}" if edition.folder else page
                     for edition in self.editions for page in edition.pages)


def asset_text(name: str) -> str:
    """A static asset shipped inside the package (works in editable and regular installs)."""
    return (resources.files("forgelab.site") / "assets" / name).read_text(encoding="utf-8")


def script_messages() -> tuple[str, ...]:
    """The English text of every ``t("…")`` in the page's scripts: the keys of ``assets/strings.js``.

    The same messages are in forgelab's gettext catalog (``forgelab i18n extract`` reads the scripts with
    Babel's JavaScript extractor), so ``forgelab i18n check`` fails on one without a translation."""
    found: set[str] = set()
    for name in SCRIPTS:
        for call in _T_CALL.finditer(asset_text(name)):
            literals = re.findall(_STRING, call.group(1))
            try:
                found.add("".join(json.loads(literal) for literal in literals))
            except json.JSONDecodeError:
                raise SiteError(f"forgelab/site/assets/{name}: the message {call.group(1)[:60]} uses an escape that "
                                "is not JSON's: write the character itself") from None
    return tuple(sorted(found))


def script_strings(language: str) -> dict[str, str]:
    """English text → the edition's words, for every message the scripts show (English: itself)."""
    with speaking(language):
        return {message: _(message) for message in script_messages()}


def strings_js(language: str) -> str:
    encoded = json.dumps(script_strings(language), sort_keys=True, ensure_ascii=False, indent=1)
    return ("/* Generated by `forgelab site build` from forgelab's gettext catalog: the words verify.js and page.js\n"
            f"   show, in the {language} edition. Do not edit: translate in forgelab/locale instead. */\n"
            f"window.FORGE_STRINGS = {encoded};\n")


def published_test_digests(course: Course, stage: Stage) -> list[dict[str, str]]:
    path = course.root / stage.test_file
    if not path.is_file():
        raise SiteError(f"stage {stage.number}: {stage.test_file} does not exist, so its digest cannot be "
                        "published: add the stage tests or remove the stage from course/stages")
    return [{"path": stage.test_file, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}]


def course_data(course: Course, language: str, in_bundle: bool = False) -> dict[str, object]:
    """Everything the in-browser check compares a verification.json with (and whether the page came inside the
    learner's bundle: then the lab is already there)."""
    stages = {}
    for stage in course.stages:
        stages[stage.number] = {
            "number": stage.number,
            "key": stage.key,
            "title": stage.text(language).title,
            "experiment_id": stage.experiment_id,
            "page": pages.stage_page(stage),
            "module": stage.module,
            "evidence_dir": stage.evidence_dir,
            "required_tests": list(stage.required_tests),
            "test_digests": published_test_digests(course, stage),
        }
    return {
        "module_id": course.module_id,
        "course_version": course.version,
        "language": language,
        "schema_versions": list(SUPPORTED_SCHEMA_VERSIONS),
        "max_bytes": MAX_VERIFICATION_BYTES,
        "schema": evidence.schema(),
        "stages": stages,
        "in_bundle": in_bundle,
    }


def course_data_js(data: dict[str, object]) -> str:
    encoded = json.dumps(data, sort_keys=True, ensure_ascii=False, indent=1)
    return ("/* Generated by `forgelab site build` from the stage registry: do not edit. */\n"
            f"window.FORGE_COURSE = {encoded};\n")


def _prepare(out: Path) -> None:
    if out.exists():
        if not out.is_dir():
            raise SiteError(f"{out} is a file: choose a folder with --out")
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise SiteError(f"{out} is not empty and was not built by forgelab: choose an empty folder with --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("built by `forgelab site build`; rebuilding replaces this folder\n", encoding="utf-8")


def _write(out: Path, relative: str, text: str) -> None:
    _write_bytes(out, relative, text.encode("utf-8"))


def _require_figures_and_opening(course: Course, language: str) -> None:
    """Fail before anything is written when a figure or an opening text the pages need is missing."""
    try:
        opening_texts(course, language)
        for stage in course.stages:
            for figure in figures.stage_figures(stage.source_dir):
                svg = figure.svg_in(language)
                if not svg.is_file():
                    raise figures.FigureError(f"{svg} is missing: run `forgelab build` to make it from "
                                              f"{figure.source.name}")
                figures.svg_size(svg)
    except (figures.FigureError, OpeningError) as error:
        raise SiteError(str(error)) from None


def _write_bytes(out: Path, relative: str, data: bytes) -> None:
    path = out / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def site_editions(course: Course, languages: Sequence[str]) -> tuple[pages.Edition, ...]:
    """Where each requested edition goes: English (else the first) at the root, the others in ``<lang>/``."""
    wanted = [language for language in LANGUAGES if language in languages]
    unknown = sorted(set(languages) - set(LANGUAGES))
    if unknown or not wanted:
        raise SiteError(f"unknown edition {', '.join(unknown) or '(none)'}: expected en, zh or all")
    missing = [language for language in wanted if language != "en" and language not in course.languages]
    if missing:
        raise SiteError(f"the course has no {missing[0]!r} edition (course.toml languages = {list(course.languages)}): "
                        "choose one of them with --lang")
    return tuple(pages.Edition(language, "" if index == 0 else language) for index, language in enumerate(wanted))


def check_sources(course: Course, editions: Sequence[str]) -> tuple[pages.Edition, ...]:
    """Where each edition goes, after checking everything a build needs (a :class:`SiteError` names what is missing).

    :func:`build_site` checks the same before it writes; a caller with slow work of its own to do first (building
    the bundles, :mod:`forgelab.authoring.publish`) calls this before that work."""
    placed = site_editions(course, editions)
    for edition in placed:
        course_data(course, edition.language)
        _require_figures_and_opening(course, edition.language)
    script_messages()
    return placed


def build_site(course: Course, out: Path, *, editions: Sequence[str] = ("en",), in_bundle: bool = False,
               downloads: Mapping[str, Download] | None = None) -> SiteBuild:
    """Write the whole site into ``out`` (replacing an earlier build there): one folder per edition.

    ``downloads`` names, per edition's language, the learner bundle its pages link to (``downloads/<name>``); the
    file itself is the caller's to put there (:func:`forgelab.authoring.publish.publish_site` builds the bundles).
    ``in_bundle`` builds the copy that ships inside the learner bundle (``page/``, see :data:`BUNDLE_PAGE`): it
    offers no download (the learner has the lab already) and needs nothing but the workbook's own files — no git."""
    placed = site_editions(course, editions)
    offered = {} if in_bundle else dict(downloads or {})
    data = {edition.language: course_data(course, edition.language, in_bundle) for edition in placed}
    for edition in placed:
        _require_figures_and_opening(course, edition.language)
    strings = {edition.language: strings_js(edition.language) for edition in placed}
    _prepare(out)  # only after everything that can fail: an earlier build stays until then
    built = []
    for edition in placed:
        download = offered.get(edition.language)
        root = out / edition.folder
        ctx = pages.SiteContext(
            course=course,
            language=edition.language,
            bundle_href=f"downloads/{download.name}" if download else None,
            bundle_size=download.size if download else 0,
            folder=edition.folder,
            editions=placed,
            in_bundle=in_bundle,
        )
        for name in ASSETS:
            _write(root, f"assets/{name}", asset_text(name))
        _write(root, "assets/strings.js", strings[edition.language])
        _write(root, "assets/course-data.js", course_data_js(data[edition.language]))
        written = ["index.html"]
        _write(root, "index.html", pages.index_html(ctx))
        for stage in course.stages:
            for figure in figures.stage_figures(stage.source_dir):
                _write_bytes(root, pages.figure_file(stage, figure), figure.svg_in(edition.language).read_bytes())
        for stage in course.stages:
            name = pages.stage_page(stage)
            _write(root, name, pages.stage_html(ctx, stage))
            written.append(name)
        built.append(EditionBuild(edition.language, edition.folder, tuple(written)))
    return SiteBuild(out, tuple(built))
