"""The course page inside the learner's workbook: ``page/`` (``forgelab page [NN]``).

The learner bundle ships the page already built (``forgelab release`` puts it into ``page/``, every edition:
English at its root, the others in ``page/<lang>/``). It works from ``file://`` — no server, no network — and
checks a verification.json in the browser. When the folder is missing (deleted, or a workbook without it), it
is built from the workbook's own files: the stage registry, the figures and the stage tests — no git, no
download link. In the course repository the page is rebuilt each time, so it shows the course as it is now.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage
from forgelab.site.builder import BUNDLE_PAGE, build_site
from forgelab.site.pages import stage_page


def page_folder(workbook: Workbook) -> Path:
    return workbook.root / BUNDLE_PAGE


def page_file(workbook: Workbook, course: Course, language: str, stage: Stage | None = None) -> Path:
    """Where a page of the workbook's copy lives: a stage's page, or the index, in ``language``'s edition."""
    edition = language if language in course.languages else "en"
    folder = page_folder(workbook) if edition == "en" else page_folder(workbook) / edition
    return folder / (stage_page(stage) if stage is not None else "index.html")


def ensure_page(workbook: Workbook, course: Course, *, rebuild: bool = False) -> bool:
    """Build ``page/`` when it is missing (or when asked, or in the course repository); True when it was built."""
    folder = page_folder(workbook)
    if not rebuild and workbook.is_learner_bundle and (folder / "index.html").is_file():
        return False
    build_site(course, folder, editions=course.languages, in_bundle=True)
    return True


def can_open_a_browser() -> bool:
    """Whether a graphical web browser can be started here (never a text browser in this terminal)."""
    if sys.platform == "darwin" or os.name == "nt":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("BROWSER"))


def open_in_browser(uri: str) -> bool:
    """Open ``uri`` in the learner's browser; False when there is none to open it in."""
    if not can_open_a_browser():
        return False
    import webbrowser

    try:
        return webbrowser.open(uri, new=2)
    except webbrowser.Error:
        return False
