"""The class report as one static HTML page (Jinja2, autoescaped) and as a terminal summary.

The page lives beside its figures (``figures/*.svg``, drawn by :mod:`forgelab.grading.report_plots`)
and loads nothing else: no script, no font, no network. Its words are the active language's, from
the gettext catalog; the course's own text (stage titles, quiz options) comes from the stage sources
in that language. The template is one of ``forgelab/data/templates`` (:func:`forgelab.core.text.templates`, with
``jinja2.ext.i18n``), so its ``{{ _("…") }}`` are extracted into the catalogs like ``_()`` in Python. Everything it
shows is escaped by Jinja2 except the quiz options, which are the course's Markdown rendered by
:func:`forgelab.core.text.inline` (escaped there).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forgelab.grading.report import DISCRIMINATION_MIN, MIN_SHARED, ClassReport, StageFigure
from forgelab.core.i18n import N_, _, active
from forgelab.core.registry import Course
from forgelab.core.text import esc, inline, templates
from forgelab.core.evidence import write_atomic
from forgelab.grading import report_plots

TEMPLATE = "class-report.html.j2"
FLAG_WORDS = {
    "weak": N_("weak: separates strong from weak submissions poorly"),
    "negative": N_("negative: weaker submissions pass it more often than stronger ones — check the test"),
    "everyone_passes": N_("everyone passes it: it tells nobody apart"),
    "everyone_fails": N_("everyone fails it: it tells nobody apart — check the test or the teaching"),
    "rest_constant": N_("the rest of the total does not vary: no correlation to compute"),
}


def page_name(language: str) -> str:
    return "report.html" if language == "en" else f"report.{language}.html"


@dataclass(frozen=True)
class StageView:
    figure: StageFigure
    title: str
    options: list[Any]  # (letter, option HTML, count, is the answer)


def _stage_view(course: Course, figure: StageFigure) -> StageView:
    from markupsafe import Markup

    text = course.stage(figure.stage).text()
    options = [(chr(ord("A") + choice.value), Markup(inline(text.prediction.options[choice.value])), choice.count,
                choice.value == figure.prediction_answer) for choice in figure.prediction_choices]
    return StageView(figure, text.title, options)


def _breakable(name: str) -> Any:
    """A long test name that may wrap after each underscore (escaped first, then ``<wbr>`` added)."""
    from markupsafe import Markup

    return Markup("_<wbr>").join(Markup(esc(part)) for part in name.split("_"))


def render(course: Course, report: ClassReport, figures: dict[str, str]) -> str:
    """The page's HTML; ``figures`` maps a figure's name to its path relative to the page."""
    from markupsafe import Markup

    template = templates(active()).get_template(TEMPLATE)
    flagged = [item for item in report.items if item.flag]
    footer = Markup(esc(_("Written by {command} from the gradebook alone: it reads no submission."))).format(
        command=Markup("<code>forgelab grade report</code>"))
    return template.render(report=report, lang="zh-CN" if active() == "zh" else "en", min_shared=MIN_SHARED,
                           threshold=DISCRIMINATION_MIN, course_title=course.text("title"), figures=figures,
                           stages=[_stage_view(course, figure) for figure in report.stage_figures],
                           flagged=flagged, footer=footer, flag_words={key: _(value) for key, value in FLAG_WORDS.items()},
                           percent=lambda share: f"{round(100 * share)} %", breakable=_breakable)


def write(course: Course, report: ClassReport, folder: Path, threshold: float = DISCRIMINATION_MIN) -> Path:
    """The page and its figures in ``folder``, in the active language; returns the page."""
    figures: dict[str, str] = {}
    if not report.withheld and report.stage_figures:
        drawn = report_plots.write_all(report, folder / "figures", threshold)
        figures = {name: path.relative_to(folder).as_posix() for name, path in drawn.items()}
    page = folder / page_name(active())
    write_atomic(page, render(course, report, figures))
    page.chmod(0o644)  # a page to share: readable like any other file the instructor writes
    return page
