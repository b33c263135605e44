"""``forgelab site build``: the course page as published — each edition's pages with its learner bundle to download.

The page itself is :mod:`forgelab.site.builder`; the bundles are :mod:`forgelab.authoring.release`. Every bundle is
built first, in scratch (it can fail: a course not committed, a leak) — after the site's sources are checked —
then the site — which replaces an earlier
build only once nothing can fail any more — and each bundle is moved into its edition's ``downloads/``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from forgelab.authoring.release.bundle import Bundle, build_bundle, zip_name
from forgelab.core.registry import Course
from forgelab.site.builder import Download, SiteBuild, build_site, check_sources


@dataclass(frozen=True)
class Published:
    site: SiteBuild
    bundles: dict[str, Bundle]  # language -> its bundle, in that edition's downloads/

    @property
    def bundle(self) -> Bundle | None:
        """The bundle of the edition at the site's root."""
        return self.bundles.get(self.site.editions[0].language) if self.site.editions else None


def publish_site(course: Course, out: Path, *, editions: Sequence[str] = ("en",), with_bundle: bool = True) -> Published:
    """Write the site into ``out`` (see :func:`~forgelab.site.builder.build_site`), each edition offering its bundle."""
    placed = check_sources(course, editions)  # before the slow bundles: a missing figure fails at once
    if not with_bundle:
        return Published(build_site(course, out, editions=editions), {})
    with tempfile.TemporaryDirectory(prefix="forgelab-site-") as scratch:
        bundles = {edition.language: build_bundle(course.root, Path(scratch) / edition.language, edition.language)
                   for edition in placed}
        site = build_site(course, out, editions=editions,
                          downloads={language: Download(zip_name(language), bundle.size)
                                     for language, bundle in bundles.items()})
        for edition in site.editions:
            target = out / edition.folder / "downloads" / zip_name(edition.language)
            target.parent.mkdir(parents=True)
            moved = Path(shutil.move(bundles[edition.language].path, target))
            bundles[edition.language] = replace(bundles[edition.language], path=moved)
    return Published(site, bundles)
