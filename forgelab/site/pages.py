"""HTML for the course page: the index and one page per stage, in one edition (English or Chinese).

The pages are the templates ``forgelab/data/templates/site/*.html.j2`` (Jinja2, autoescaped, through
:func:`forgelab.core.text.templates`): every value from the registry is escaped by the template or rendered
through the safe Markdown subset (the ``md`` and ``inline`` filters). Pages load only their own files
(``assets/…``), so they work from ``file://`` and from ``forgelab site serve``; the Content-Security-Policy
forbids any connection.

The page's own words are ``{{ _("…") }}`` in the templates, from the tools' gettext catalog of the edition's
language; the course's texts come from the registry in the same language. A page built beside the other edition
links to the same page there (the language switch, and ``<link rel="alternate" hreflang>`` in its head).
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import Any

from forgelab.core import figures
from forgelab.core.i18n import N_, _, speaking
from forgelab.core.opening import CONCEPT_PARTS, CONCEPTS, is_project, opening_texts
from forgelab.core.registry import Course, Stage, edition_notebook
from forgelab.core.text import templates

STATES = (
    ("not-started", N_("Not started")),
    ("reading", N_("Reading")),
    ("lab-downloaded", N_("Lab downloaded")),
    ("results-read", N_("Results read")),
    ("self-check-passed", N_("Self-check passed")),
)
HTML_LANG = {"en": "en", "zh": "zh-CN"}  # <html lang> and hreflang of each edition
# Each edition's name for itself: what the language switch shows (a reader looks for their own language's name).
AUTONYM = {"en": "English", "zh": "中文"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'none'; form-action 'none'; base-uri 'none'")


@dataclass(frozen=True)
class Edition:
    """One edition of the site: its language and its folder (``""`` for the site's root, else e.g. ``"zh"``)."""

    language: str
    folder: str = ""

    def href(self, page: str, *, seen_from: "Edition") -> str:
        """A relative link from a page of ``seen_from`` to ``page`` of this edition."""
        up = "../" * len([part for part in seen_from.folder.split("/") if part])
        return f"{up}{self.folder + '/' if self.folder else ''}{page}"


@dataclass(frozen=True)
class SiteContext:
    course: Course
    language: str
    bundle_href: str | None  # relative link to the zip, if one was built
    bundle_size: int
    folder: str = ""  # where this edition lives in the site ("" is the root)
    editions: tuple[Edition, ...] = ()  # every edition of this build, this one included; fewer than two: no switch
    in_bundle: bool = False  # the copy inside the learner's bundle (page/): the lab is already there

    @property
    def title(self) -> str:
        return self.course.text("title", self.language)

    @property
    def edition(self) -> Edition:
        return Edition(self.language, self.folder)


def stage_page(stage: Stage) -> str:
    return f"{stage.key}.html"


def figure_file(stage: Stage, figure: figures.Figure) -> str:
    """Where a stage's figure is published on the site (relative to the edition's root).

    Every edition publishes its own drawing (``figure_zh.svg`` for Chinese) under this same name in its folder.
    """
    return f"figures/{stage.key}-{figure.name}.svg"


WIDE_FIGURE = 736  # px: wider figures may use more than the text column on a large screen


BUNDLE_TEXT = {
    "en": N_("Unzip it and run `make lab` in the unzipped folder: it installs the workbook into `.venv` and opens "
             "the notebooks (its README has the details). The bundle holds the starters, tests, notebooks, fault "
             "labs and the `forgelab` tool — no reference solutions."),
    "zh": N_("This is the Chinese edition of the lab bundle: its starters and transfer starters carry Chinese "
             "docstrings, `make lab` opens the Chinese notebooks in `notebooks/zh/`, and the `forgelab` tool speaks "
             "Chinese (its `course/edition.toml` says so; `--lang en` switches a command to English). Unzip it and "
             "run `make lab` in the unzipped folder: it installs the workbook into `.venv` (its `README.md` has the "
             "details). Like the English bundle, it holds the starters, tests, notebooks, fault labs and the "
             "`forgelab` tool — no reference solutions."),
}


def _release_command(language: str) -> str:
    return "forgelab release --out DIR" if language == "en" else f"forgelab release --lang {language} --out DIR"


def _alternates(ctx: SiteContext, page: str) -> tuple[list[dict[str, str]], list[dict[str, object]]]:
    """The hreflang links of the head and the language switch, for a page built beside another edition."""
    if len(ctx.editions) < 2:
        return [], []
    here = ctx.edition
    root = next((edition for edition in ctx.editions if not edition.folder), ctx.editions[0])
    links = [{"hreflang": HTML_LANG[edition.language], "href": edition.href(page, seen_from=here)}
             for edition in ctx.editions]
    links.append({"hreflang": "x-default", "href": root.href(page, seen_from=here)})
    switch = [{"language": edition.language, "lang": HTML_LANG[edition.language], "name": AUTONYM[edition.language],
               "href": edition.href(page, seen_from=here), "current": edition.language == ctx.language}
              for edition in ctx.editions]
    return links, switch


def _render(ctx: SiteContext, template: str, page: str, **values: Any) -> str:
    """One page of the site: ``template`` under ``site/`` in the edition's language, in the common layout."""
    alternates, switch = _alternates(ctx, page)
    with speaking(ctx.language):  # the registry's and the opening's texts, where they call _() themselves
        return templates(ctx.language).get_template(f"site/{template}").render(
            course=ctx.course, language=ctx.language, html_lang=HTML_LANG.get(ctx.language, ctx.language), csp=CSP,
            course_title=ctx.title, alternates=alternates, switch=switch, in_bundle=ctx.in_bundle,
            bundle_href=ctx.bundle_href, bundle_kb=max(1, round(ctx.bundle_size / 1024)),
            bundle_text=BUNDLE_TEXT.get(ctx.language, BUNDLE_TEXT["en"]), release_command=_release_command(ctx.language),
            stage_page=stage_page, **values)


def index_html(ctx: SiteContext) -> str:
    """The index: the chapter's opening (the same course.toml texts as notebooks/00-opening.ipynb), the lab, the
    stages with their progress badges, the recovery point."""
    return _render(ctx, "index.html.j2", "index.html", opening=opening_texts(ctx.course, ctx.language),
                   concepts=CONCEPTS, concept_parts=CONCEPT_PARTS, not_started=STATES[0][1],
                   opening_notebook=edition_notebook("00-opening.ipynb", ctx.language))


def stage_html(ctx: SiteContext, stage: Stage) -> str:
    """One stage's page: problem, figures, capability chain, experiment card, local check."""
    shown = [{"name": figure.name, "src": figure_file(stage, figure), "alt": figure.alt_in(ctx.language),
              "caption": figure.caption_in(ctx.language), "width": width, "height": height,
              "wide": width > WIDE_FIGURE}
             for figure in figures.stage_figures(stage.source_dir)
             for width, height in [figures.svg_size(figure.svg_in(ctx.language))]]
    with speaking(ctx.language):
        label = _("Stage {number}").format(number=stage.number)
    return _render(ctx, "stage.html.j2", stage_page(stage), stage=stage, text=stage.text(ctx.language), label=label,
                   figures=shown, project=is_project(stage), states=STATES)
