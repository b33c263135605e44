"""Instructor command: ``forgelab grade report OUT [--html] [--min-class N]`` — what the class struggles with.

``OUT`` is the ``--out`` folder of ``forgelab grade`` or the ``--into`` folder of ``forgelab gradebook merge``.
The report goes to ``OUT/report/``: ``report.json`` always, ``report.html`` (``report.zh.html`` with ``--lang zh``)
and its figures with ``--html``. The command line routes ``grade report`` here (:data:`forgelab.cli.main.COMPOUND`):
a submission folder that is really called ``report`` is graded as ``forgelab grade ./report``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from forgelab.core.display import fail, table, wrap
from forgelab.core.i18n import _
from forgelab.cli.context import open_workbook

if TYPE_CHECKING:
    from forgelab.grading.report import ClassReport
    from forgelab.core.registry import Course


def _shown(path: Path) -> str:
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else relative


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("{value!r} is not a whole number").format(value=text)) from None
    if value < 1:
        raise argparse.ArgumentTypeError(_("{value} must be 1 or more").format(value=value))
    return value


def cmd_report(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.grading import report as class_report
    from forgelab.grading import report_page

    _workbook, course = open_workbook()
    folder = Path(args.out).expanduser().resolve()
    if not folder.is_dir():
        return fail(_("{path} is not a folder").format(path=args.out),
                    _("give the --out folder of `forgelab grade` (or the --into folder of `forgelab gradebook merge`)"))
    try:
        report = class_report.build(course, folder, args.min_class)
    except class_report.ReportError as error:
        return fail(str(error))
    target = folder / "report"
    written = [class_report.write_json(report, target)]
    if args.html:
        written.append(report_page.write(course, report, target))
    print(summary(course, report))
    print()
    print(_("written: {files}").format(files=", ".join(_shown(path) for path in written)))
    if report.similarity is not None:  # it names submissions, so it is only linked, never summarised here
        print(_("similar code: {pairs} — the similarity index: {page}").format(
            pairs=_("withheld (a small class)") if report.similarity.flagged_pairs is None else
            _("{count} pair(s) flagged for review").format(count=report.similarity.flagged_pairs),
            page=_shown(Path(os.path.normpath(target / report.similarity.index)))))
    if args.html:
        print(_("next: open {page} in a browser (it loads nothing from the network)").format(page=_shown(written[-1])))
    else:
        print(_("next: `forgelab grade report {out} --html` also writes the page with its figures").format(out=args.out))
    return 0


def summary(course: Course, report: ClassReport) -> str:
    """The report in a terminal: where it read from, then per stage its figures and its tests, then the items that
    do not separate strong from weak submissions."""
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.grading.report_page import FLAG_WORDS

    lines = [_("class report: {count} submission(s), stage(s) {stages}, course version {version}").format(
        count=report.submissions, stages=", ".join(report.stages), version=report.course_version)]
    shards = [run for run in report.shards if run.shard]
    if shards:
        lines.append(wrap(_("read from {count} shard(s): {shards}").format(count=len(shards), shards="; ".join(
            f"{run.shard} ({run.submissions}, {run.merged_from or '.'})" for run in shards)), indent=2))
    else:
        lines.append(_("read from one grading run over the whole class"))
    if report.missing_shards:
        lines.append(wrap(_("missing shard(s): {shards} — their submissions are not in this report; merge every shard "
                            "of the split, then report again").format(shards=", ".join(report.missing_shards))))
    if report.left_out:
        lines.append(_("left out: {count} submission(s) the grader failed on (flag regrade) — grade them again").format(
            count=report.left_out))
    if report.withheld:
        lines.append(wrap(_("the class has {count} submission(s), fewer than {minimum}: per-stage and per-item figures "
                            "are withheld, because they could identify a learner (--min-class sets the threshold)").format(
            count=report.submissions, minimum=report.min_class)))
        return "\n".join(lines)
    for stage in report.stage_figures:
        title = course.stage(stage.stage).text().title
        lines += ["", f"{_('stage')} {stage.stage} · {title}"]
        diagnoses = (_("not recorded") if stage.diagnoses_stated is None else
                     _("none handed in") if not stage.diagnoses_stated else
                     _("{right} of {count} stated").format(right=stage.diagnoses_right_first_try,
                                                          count=stage.diagnoses_stated))
        withheld = _("withheld: {count} record(s), fewer than --min-class {minimum}")
        minutes = (_("no record holds both times") if not stage.accepted_timed else
                   withheld.format(count=stage.accepted_timed, minimum=report.min_class)
                   if stage.median_minutes_to_accept is None else
                   _("{minutes} min (over {count})").format(minutes=stage.median_minutes_to_accept,
                                                           count=stage.accepted_timed))
        wrong = [f"{chr(ord('A') + choice.value)} × {choice.count}" for choice in stage.prediction_choices
                 if choice.value != stage.prediction_answer and choice.count]
        facts = [
            (_("mean points"), f"{stage.mean_points:.1f} / {stage.max_points}"),
            (_("fault labs fixed"), _("{fixed} of {count} handed in").format(fixed=stage.fault_labs_fixed,
                                                                            count=stage.fault_labs_handed_in)),
            (_("diagnoses right at the first attempt"), diagnoses),
            (_("transfer tests that cannot tell right from wrong"), _("{bad} of {count} written").format(
                bad=stage.transfer_cannot_tell, count=stage.transfer_written)),
            (_("median hint depth"), _("{median} of {available} ({count} record(s))").format(
                median=stage.hints.median, available=stage.hints.available, count=stage.hints.recorded)
             if stage.hints.median is not None else withheld.format(count=stage.hints.recorded,
                                                                    minimum=report.min_class)
             if stage.hints.recorded else _("no learning record covers this stage")),
            (_("prediction quiz, wrong options chosen"), ", ".join(wrong) if wrong else _("none") if
             stage.prediction_answered else _("nobody's record holds an answer")),
            (_("median time from the first check to acceptance"), minutes),
        ]
        lines.append(table([_("figure"), _("value")], facts))
        rows = []
        for test in stage.tests:
            top = test.differences[0] if test.differences else None
            shown = (_("instructor check: name and share only") if test.kind == "instructor_check" else
                     f"{top.words()} × {top.count}" if top else "")
            rows.append((f"{test.label} {test.test}", f"{round(100 * test.fail_share)} % ({test.failing}/{test.submissions})",
                         shown))
        lines.append(table([_("test"), _("failing"), _("most common first difference")], rows))
    flagged = [item for item in report.items if item.flag]
    lines += ["", _("items that do not separate strong from weak submissions: {count} of {total}").format(
        count=len(flagged), total=len(report.items))]
    if flagged:
        lines.append(table([_("item"), _("difficulty"), _("discrimination"), _("why")], [
            (f"{item.stage} {item.label} {item.test}", f"{item.difficulty:.2f}",
             f"{item.discrimination:.2f}" if item.discrimination is not None else "–", _(FLAG_WORDS[item.flag]))
            for item in flagged]))
    return "\n".join(lines)


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.grading import MIN_CLASS

    report = sub.add_parser(
        "grade-report", prog="forgelab grade report", help=argparse.SUPPRESS,
        description=_("What a graded class struggles with: per stage and test the share that fails it and the most "
                      "common first differences, fault labs, diagnoses, transfer tests that cannot tell right from "
                      "wrong, hint depth, prediction-quiz answers, time to acceptance, and an item analysis. "
                      "Aggregates only."))
    report.add_argument("out", metavar="OUT", help=_("the --out folder of `forgelab grade` or the --into folder of "
                                                     "`forgelab gradebook merge`"))
    report.add_argument("--html", action="store_true", help=_("also write report.html with its figures (SVG)"))
    report.add_argument("--min-class", type=_at_least_one, default=MIN_CLASS, metavar="N",
                        help=_("withhold every per-stage and per-item figure for a class smaller than N (default "
                               "{default})").format(default=MIN_CLASS))
    report.set_defaults(handler=cmd_report)
