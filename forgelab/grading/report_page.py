"""The class report as one static HTML page (Jinja2, autoescaped) and as a terminal summary.

The page lives beside its figures (``figures/*.svg``, drawn by :mod:`forgelab.grading.report_plots`)
and loads nothing else: no script, no font, no network. Its words are the active language's, from
the gettext catalog; the course's own text (stage titles, quiz options) comes from the stage sources
in that language. Everything it shows is escaped by Jinja2 except the quiz options, which are the
course's Markdown rendered by :func:`forgelab.core.text.inline` (escaped there).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forgelab.grading.report import DISCRIMINATION_MIN, MIN_SHARED, ClassReport, StageFigure
from forgelab.core.i18n import N_, _, active
from forgelab.core.registry import Course
from forgelab.core.text import esc, inline
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


def words() -> dict[str, str]:
    """Every label of the page in the active language (the template holds no prose of its own)."""
    return {
        "title": _("Class report"),
        "lang": "zh-CN" if active() == "zh" else "en",
        "aggregates": _("Aggregates only: this report names no submission and shows no single learner's result. "
                        "A first difference is listed only when at least {shared} submissions share it; instructor "
                        "checks appear by name and share only.").format(shared=MIN_SHARED),
        "summary": _("Summary"),
        "similarity": _("Similar code"),
        "similarity_index": _("the similarity index"),
        "similarity_note": _("{link}: every pair of modules that match closely (two submissions, or a submission and "
                             "the reference, a fault lab or a known-wrong variant), side by side, for your review. It "
                             "names submissions: keep it to yourself when you show this report to the class."),
        "flagged_pairs": _("pairs flagged for review"),
        "submissions": _("submissions"),
        "stages": _("stages"),
        "course_version": _("course version"),
        "left_out": _("left out: the grader failed on them (flag regrade) — grade them again"),
        "read_from": _("Read from"),
        "shard": _("shard"),
        "whole": _("the whole class in one run"),
        "graded": _("graded"),
        "folder": _("folder"),
        "this_folder": _("this folder"),
        "partial": _("Partial: this gradebook was merged with --allow-partial while shard(s) {shards} were missing, so "
                     "their submissions are in none of the figures below."),
        "missing_shards": _("Missing shards: {shards} — the submissions of those slices are not in this report. "
                            "Merge every shard of the split, then report again."),
        "withheld": _("The class has {count} submission(s), fewer than {minimum}: per-stage and per-item figures are "
                      "withheld, because they could identify a learner (`--min-class` sets the threshold)."),
        "no_tests": _("This gradebook was written by a forgelab that did not record each test: grade the class again "
                      "to see per-test figures."),
        "distribution": _("Score distribution"),
        "heat_map": _("Failure rates"),
        "stage": _("Stage"),
        "mean_points": _("mean points"),
        "fault_labs": _("fault labs fixed"),
        "of_handed_in": _("of {count} handed in"),
        "diagnoses": _("self-reported diagnoses right at the first attempt (they earn no points)"),
        "of_stated": _("of {count} stated"),
        "no_diagnosis": _("not recorded: this class was graded before the fault lab asked for a diagnosis"),
        "none_diagnosed": _("nobody handed in a diagnosis"),
        "cannot_tell": _("transfer tests that cannot tell right from wrong"),
        "of_written": _("of {count} written"),
        "hints": _("hint depth (hints revealed)"),
        "fault_hints": _("fault-lab ladder depth (rungs shown before the diagnosis)"),
        "depth": _("depth"),
        "median": _("median"),
        "of_recorded": _("{count} learning record(s) cover this stage"),
        "no_hint_record": _("no learning record covers this stage"),
        "unreadable": _("{count} learning record(s) could not be read and are left out"),
        "quiz": _("Prediction quiz: first answers"),
        "option": _("option"),
        "chosen": _("chosen"),
        "answer": _("the answer"),
        "wrong_chosen": _("wrong option chosen"),
        "nobody_answered": _("nobody's record holds an answer"),
        "time_to_accept": _("median time from the first check to acceptance"),
        "minutes": _("{minutes} min (over {count} learner(s))"),
        "no_time": _("no record holds both times"),
        "withheld_median": _("withheld: {count} record(s), fewer than --min-class {minimum}"),
        "tests": _("Tests"),
        "test": _("test"),
        "failing": _("failing"),
        "differences": _("most common first differences"),
        "unshared_more": _("+ {count} submission(s), each with a difference of its own (not listed)"),
        "unshared_only": _("{count} submission(s), each with a difference of its own (not listed)"),
        "instructor_check": _("instructor check: name and share only"),
        "item_analysis": _("Item analysis"),
        "items_intro": _("Difficulty is the share of the class that passes a test; discrimination is the "
                         "point-biserial correlation of the test (passed or not) with the rest of the total (the "
                         "number of other tests passed). Below {threshold} a test separates strong from weak "
                         "submissions poorly.").format(threshold=DISCRIMINATION_MIN),
        "flagged": _("Items that do not separate strong from weak submissions"),
        "none_flagged": _("Every item separates strong from weak submissions."),
        "all_items": _("All items"),
        "difficulty": _("difficulty"),
        "discrimination": _("discrimination"),
        "why": _("why"),
        "alt_distribution": _("Bar chart: how many submissions scored in each tenth of the maximum points."),
        "alt_heat_map": _("Heat map: for each stage and test, the share of the class failing it."),
        "alt_discrimination": _("Bar chart: the discrimination of every test, with the threshold as a dashed line."),
    }


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
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
    from markupsafe import Markup

    environment = Environment(loader=PackageLoader("forgelab", "data/report"), autoescape=select_autoescape(["j2"]),
                              undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    environment.filters["breakable"] = _breakable
    template = environment.get_template(TEMPLATE)
    flagged = [item for item in report.items if item.flag]
    footer = Markup(esc(_("Written by {command} from the gradebook alone: it reads no submission."))).format(
        command=Markup("<code>forgelab grade report</code>"))
    return template.render(report=report, w=words(), course_title=course.text("title"), figures=figures,
                           stages=[_stage_view(course, figure) for figure in report.stage_figures],
                           flagged=flagged, footer=footer, flag_words={key: _(value) for key, value in FLAG_WORDS.items()},
                           percent=lambda share: f"{round(100 * share)} %")


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
