"""The seven items of one stage, judged from the judge's typed rows (never from message wording).

Every reason is one deterministic line in plain words: no scratch or course paths, no paths into the
judge's own code (the learner's file and line instead, where the row knows them), no memory
addresses. The instructor checks are reported by name and outcome only — their code, inputs and
assertion messages never reach a reason.

When the grader itself fails — the trusted test session dies, or grading raises — every item it
could not judge is an error worth its full points, 0 earned, flagged for re-grading (``regrade``),
with a reason that starts with :data:`GRADER_FAILED` and says it is not the learner's fault
(:func:`is_grader_failure`); a stage's maximum never shrinks because of it. Time the learner's code
takes past its limits is the learner's, never a grader failure: the judge stops it per test and per
submission (the time budget) and the items say so. A submission that cannot be laid out (too deep,
too large, clashing or unreadable files) is the learner's problem too: every item says which limit
it broke (:func:`cannot_lay_out`), not flagged.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from forgelab.verdicts.diagnosis import grading_note
from forgelab.verdicts.parts import Part, judge_design, judge_lab, judge_regression, judge_transfer
from forgelab.grading import consistency
from forgelab.grading.plan import (Laid, check_files, lab_handed_in, regression_broken_label, regression_label,
                                   sub_label, transfer_label, wrong_label)
from forgelab.grading.rubric import (ENDED, ERROR, FAILED, MISSING, NOT_GRADED, PARTIAL, PASSED, REGRADE, REVIEW, SPEC,
                                     TIMEOUT, GradeItem, outcome_for, proportional)
from forgelab.core.files import LayoutError, Skipped
from forgelab.core.i18n import N_, _, active, renderings
from forgelab.judge.outcomes import Limit, Outcome, RunReport, TestRow
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage

MAX_LISTED = 4
CAUSE_CHARS = 180
# how the reason of every item lost to a grader failure starts, in every language (the reasons are written in the
# class's language; the gradebook's codes, outcome and flag, are the same in all of them)
GRADER_FAILED = N_("the grader failed")
SESSION_DIED = N_("{grader_failed}: its test session stopped before this item was graded; this is not the learner's "
                  "fault — grade this submission again (report it to the course maintainers if it happens again)")
CRASHED = N_("{grader_failed} on this submission ({error}); this is not the learner's fault — grade it again, and "
             "report it to the course maintainers if it fails again")
# a place in the judge's (or pytest's, or the standard library's) own code, as a traceback or pytest names it.
# Found in one linear pass: the text is split into runs of path characters, and a run is a judge place when
# it is a .py file under one of these folders; what follows it (":12:", '", line 12, in f') goes with it.
PATH_RUN = re.compile(r"[\w./<>~-]+")
JUDGE_FOLDER = re.compile(r"(?:^|/)(?:forgelab|_pytest|pluggy|site-packages|python3\.\d{1,3})/")
PLACE_SUFFIX = re.compile(r"""(?::\d{1,9}:?|", line \d{1,9}(?:, in [\w<>]{1,200})?)""")
LEARNER_PLACE = re.compile(r'File "(?P<file>forge/[\w./-]+\.py)", line (?P<line>\d+)')


def clean(text: str, course_root: Path) -> str:
    """One deterministic line: no course, judge or temporary paths, no memory addresses."""
    text = text.replace(str(course_root) + "/", "").replace(str(course_root), "<course>")
    text, _count = without_judge_places(text)
    # a temporary path, where one starts (not "/tmp/" inside a longer path, e.g. a zip member's '../../tmp/x')
    text = re.sub(r"(?<![\w.~/-])/tmp/[A-Za-z0-9_.\-/]+", "<tmp>", text)
    text = re.sub(r"\b0x[0-9a-fA-F]{6,}\b", "0x…", text)
    text = " ".join(text.split())
    return text if len(text) <= 900 else text[:899] + "…"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= CAUSE_CHARS else text[: CAUSE_CHARS - 1] + "…"


def _listed(entries: list[str]) -> str:
    shown = _("; ").join(entries[:MAX_LISTED])
    more = _("; and {count} more").format(count=len(entries) - MAX_LISTED) if len(entries) > MAX_LISTED else ""
    return shown + more


def without_judge_places(text: str) -> tuple[str, int]:
    """``text`` without the places in the judge's own code it names, and how many there were (linear time)."""
    kept: list[str] = []
    last = count = 0
    for run in PATH_RUN.finditer(text):
        path = run.group()
        if not path.endswith(".py") or not JUDGE_FOLDER.search(path):
            continue
        start, end = run.start(), run.end()
        if text[max(last, start - 6):start] == 'File "':  # a traceback's line: the whole of it
            start -= 6
        suffix = PLACE_SUFFIX.match(text, end)
        if suffix is not None:
            end = suffix.end()
        kept.append(text[last:start])
        last = end
        count += 1
    kept.append(text[last:])
    return "".join(kept), count


def learner_place(detail: str) -> str:
    """Where the learner's code raised, as the judge recorded it (``forge/x.py, line N``), or ''."""
    found = LEARNER_PLACE.findall(detail)
    return _("{file}, line {line}").format(file=found[-1][0], line=found[-1][1]) if found else ""


def _cause(row: TestRow) -> str:
    """The row's cause in one short line; a place in the judge's code becomes the learner's place, if known."""
    text, replaced = without_judge_places(row.cause)
    text = text.strip(" :") or _outcome_words(row)
    if replaced and (where := learner_place(row.detail)):
        text = _("{place}: {cause}").format(place=where, cause=text)
    return _short(text)


ENDED_WORDS = N_("ended")
# each outcome in plain words (every message id literal, so the catalog extraction sees them all)
OUTCOME_WORDS: dict[Outcome, str] = {
    Outcome.PASSED: N_("passed"),
    Outcome.FAILED: N_("failed"),
    Outcome.ERROR: N_("error"),
    Outcome.SKIPPED: N_("skipped"),
    Outcome.TIMEOUT: N_("timeout"),
    Outcome.NOT_RUN: N_("not run"),
}


def _outcome_words(row: TestRow) -> str:
    """The row's outcome in plain words, in the active language (``not_run`` → "not run"; a process that ended is
    "ended", not a timeout: no limit of time or memory stopped it)."""
    if row.limit is Limit.CRASH and row.outcome is not Outcome.PASSED:
        return _(ENDED_WORDS)
    return _(OUTCOME_WORDS[Outcome(row.outcome)])


def _row_cause(row: TestRow) -> str:
    words = _outcome_words(row)
    text = _cause(row)
    return text if text.lower().startswith(words) else _("{outcome}: {cause}").format(outcome=words, cause=text)


def grader_crashed(error: BaseException) -> str:
    """The reason of every item of a submission on which grading itself raised (flagged for re-grading)."""
    return _(CRASHED).format(grader_failed=_(GRADER_FAILED), error=f"{type(error).__name__}: {str(error)[:200]}")


def is_grader_failure(item: GradeItem) -> bool:
    """An item lost because the grader failed, not the learner (see the module docstring)."""
    return item.outcome == ERROR and item.flag == REGRADE and item.reason.startswith(renderings(GRADER_FAILED))


UNLAID = N_("not graded: the submission cannot be laid out for grading")  # how such a row's reason starts


def cannot_lay_out(problem: LayoutError) -> str:
    """The reason of every item of a submission that cannot be laid out: the learner's problem and the limit."""
    what = _("{what} — the limit: {limit}").format(what=problem.what, limit=problem.limit) if problem.limit \
        else problem.what
    return _("{unlaid}: {what}. This is a problem of the submission, not of the grader: hand in the workbook without "
             "it").format(unlaid=_(UNLAID), what=what)


def is_unlaid(item: GradeItem) -> bool:
    """A row of a submission that could not be laid out (its own problem; see :func:`cannot_lay_out`)."""
    return item.outcome == ERROR and not item.flag and item.reason.startswith(renderings(UNLAID))


class _Stage:
    """Builds the stage's rows with the submission and the course root at hand."""

    def __init__(self, submission: str, stage: Stage, course_root: Path) -> None:
        self.submission, self.stage, self.root = submission, stage, course_root

    def item(self, key: str, points: int, outcome: str, reason: str, flag: str = "", max_points: int | None = None) -> GradeItem:
        top = SPEC[key].max_points if max_points is None else max_points
        return GradeItem(self.submission, self.stage.number, key, points, top, outcome, clean(reason, self.root), flag)


def _limit_outcome(rows: list[TestRow]) -> bool:
    return any(row.stopped_by_limit for row in rows)


def _stopped(rows: list[TestRow], otherwise: str) -> str:
    """The item's outcome when some of ``rows`` were stopped: a timeout when a limit (time, memory, output) stopped
    one, "ended" when the learner's process only ended by itself (an exit or a signal), else ``otherwise``."""
    stopped = [row for row in rows if row.stopped_by_limit or row.limit is Limit.CRASH]
    if not stopped:
        return otherwise
    return ENDED if all(row.limit is Limit.CRASH for row in stopped) else TIMEOUT


def grade_tests(ctx: _Stage, report: RunReport, label: str) -> GradeItem:
    stage = ctx.stage
    total = len(stage.required_tests)
    problem = report.import_problems.get(label)
    if problem is not None:
        outcome = TIMEOUT if problem.kind == "limit" else MISSING if problem.kind == "missing" else ERROR
        return ctx.item("stage_tests", 0, outcome, _("0 of {total} required tests could run: {cause}").format(
            total=total, cause=problem.cause))
    rows = report.in_file(label, stage.test_file)
    failing: list[str] = []
    bad_rows: list[TestRow] = []
    for name in stage.required_tests:
        mine = [row for row in rows if row.name == name]
        bad = [row for row in mine if row.outcome is not Outcome.PASSED]
        if not mine or bad:
            bad_rows.extend(bad)
            failing.append(_("{test} ({cause})").format(test=name, cause=_row_cause(bad[0]) if bad
                                                        else _("not found: did it run?")))
    passed = total - len(failing)
    top = SPEC["stage_tests"].max_points
    points = proportional(top, passed, total)
    if not failing:
        return ctx.item("stage_tests", points, PASSED, _("all {total} required tests pass").format(total=total))
    result = _stopped(bad_rows, outcome_for(points, top))
    return ctx.item("stage_tests", points, result, _("{passed} of {total} required tests pass; failing: {failing}").format(
        passed=passed, total=total, failing=_listed(failing)))


def grade_instructor_checks(ctx: _Stage, report: RunReport, label: str, files: list[str]) -> GradeItem:
    """By name and outcome only: the checks' code, inputs and assertion messages never reach a reason."""
    if not files:
        return ctx.item("instructor_checks", 0, NOT_GRADED, _("the course has no instructor checks for this stage"),
                        max_points=0)
    if report.import_problems.get(label) is not None:
        return ctx.item("instructor_checks", 0, ERROR,
                        _("not run: the stage module does not import (see the stage tests)"))
    rows = [row for row in report.for_target(label) if row.file in files]
    if not rows:
        return ctx.item("instructor_checks", 0, ERROR,
                        _("0 instructor checks ran: they could not be loaded against this forge/"))
    names = sorted({row.name for row in rows})
    failing = []
    for name in names:
        bad = [row for row in rows if row.name == name and row.outcome is not Outcome.PASSED]
        if bad:
            failing.append((name, bad[0]))
    passed = len(names) - len(failing)
    top = SPEC["instructor_checks"].max_points
    points = proportional(top, passed, len(names))
    if not failing:
        return ctx.item("instructor_checks", points, PASSED, _("all {total} instructor checks pass").format(total=len(names)))
    listed = [_("{test} ({cause})").format(test=name, cause=_outcome_words(row)) for name, row in failing]
    result = _stopped([row for _name, row in failing], outcome_for(points, top))
    return ctx.item("instructor_checks", points, result,
                    _("{passed} of {total} instructor checks pass; not passing: {failing}").format(
                        passed=passed, total=len(names), failing=_listed(listed)))


def grade_notebook(ctx: _Stage, report: RunReport, label: str, course: Course) -> GradeItem:
    stage = ctx.stage
    if not (course.root / stage.notebook).is_file():
        return ctx.item("notebook", 0, NOT_GRADED, _("the course has no reference notebook {notebook} yet").format(
            notebook=stage.notebook), max_points=0)
    rows = list(report.in_file(label, stage.notebook))
    problem = report.import_problems.get(label)
    if problem is not None:
        return ctx.item("notebook", 0, ERROR, _("the graded cells could not run: {cause}").format(cause=problem.cause))
    if not rows:
        return ctx.item("notebook", 0, NOT_GRADED, _("{notebook} has no graded demonstration cells").format(
            notebook=stage.notebook), max_points=0)
    failing = [row for row in rows if row.outcome is not Outcome.PASSED]
    passed = len(rows) - len(failing)
    top = SPEC["notebook"].max_points
    points = proportional(top, passed, len(rows))
    # the learner reads the notebook of their own language: its graded cells are the English one's, in the same places
    head = _("{passed} of {total} graded cells of {notebook} reproduce the reference output").format(
        passed=passed, total=len(rows), notebook=stage.notebook_in(active()))
    if not failing:
        return ctx.item("notebook", points, PASSED, head)
    listed = [_("{place}: {cause}").format(place=_cell_place(row.nodeid), cause=_cause(row)) for row in failing]
    result = _stopped(failing, outcome_for(points, top))
    return ctx.item("notebook", points, result, _("{head}; {failing}").format(head=head, failing=_listed(listed)))


def _cell_place(nodeid: str) -> str:
    """``…ipynb::cell-13`` as a reader names it: "cell 13" (the number JupyterLab's cell ids end with)."""
    name = nodeid.rsplit("::", 1)[-1]
    number = name.removeprefix("cell-")
    return _("cell {number}").format(number=int(number)) if number.isdigit() else name


FIX_POINTS = 5  # of the fault lab's points: the repaired module; the rest is the diagnosis, proven by a regression test
SELF_REPORTED = N_("self-reported, earns no points: {note}")


def regression_part(stage: Stage, report: RunReport, laid: Laid, on_reference: bool = True) -> Part:
    """The lab's regression test (``labs/NN-slug/test_diagnosis.py``), judged like the transfer test: on the course's
    reference (a learner bundle: the submission's repaired lab), where it must pass, and with the lab's broken module
    laid over it, where it must fail. Never on the submission's own ``forge/``."""
    shown = stage.regression_test
    if not (laid.home / shown).is_file():
        return Part("missing", _("no regression test handed in ({file}): write one in the starter `forgelab fault start "
                                 "{n}` made, a test that fails on the lab's broken copy and passes on your fix").format(
            file=shown, n=stage.number))

    def problem(label: str) -> str | None:
        errors = [e.cause for e in report.collect_errors if e.target == label and e.file == shown]
        return report.target_problems.get(label) or (_("could not collect {file}: {error}").format(
            file=shown, error=errors[0]) if errors else None)

    fixed, broken = regression_label(stage), regression_broken_label(stage)
    return judge_regression(shown, report.in_file(fixed, shown), problem(fixed), report.in_file(broken, shown),
                            problem(broken),
                            _("the course's reference implementation") if on_reference else _("the repaired lab"),
                            _("the lab's broken module"))


def _fix(ctx: _Stage, report: RunReport) -> tuple[str, str]:
    """The repaired module's verdict: (outcome, reason) — PASSED when the lab's tests all pass."""
    stage = ctx.stage
    where = stage.lab_module
    label = f"lab-{stage.number}"
    if not any(label == key for key in (*report.import_problems, *(row.target for row in report.rows))):
        return MISSING, _("no fault lab handed in ({file} is missing): run `forgelab fault start {n}`, fix it, and hand "
                          "in labs/").format(file=where, n=stage.number)
    verdict = judge_lab(stage, report, label)
    if verdict.status == "fixed":
        return PASSED, _("{file}: the target test and every stage test pass in the lab workspace").format(file=where)
    if verdict.status == "error":
        return ERROR, _("{file} is not fixed: {detail}").format(file=where, detail=verdict.problem)
    rows = report.in_file(label, stage.test_file)
    if verdict.target is not None and verdict.target.outcome is not Outcome.PASSED:
        detail = _("{test} still fails: {cause}").format(test=stage.fault.target_test, cause=_cause(verdict.target))
    else:
        detail = _("the target test passes, but the fix breaks: {tests}").format(
            tests=_(", ").join(verdict.failing[:MAX_LISTED]))
    return _stopped(list(rows), FAILED), _("{file} is not fixed: {detail}").format(
        file=where, detail=detail)


def grade_fault_lab(ctx: _Stage, report: RunReport, laid: Laid, workbook: Workbook,
                    on_reference: bool = True) -> GradeItem:
    """The repaired module earns :data:`FIX_POINTS`; the diagnosis earns the rest, proven by the lab's regression test
    (:func:`regression_part`). The multiple-choice diagnosis is shown, labelled self-reported, and earns nothing."""
    stage = ctx.stage
    top = SPEC["fault_lab"].max_points
    fix_outcome, fix_reason = _fix(ctx, report)
    regression = regression_part(stage, report, laid, on_reference)
    points = (FIX_POINTS if fix_outcome == PASSED else 0) + (top - FIX_POINTS if regression.status == "passed" else 0)
    note, _right = grading_note(ctx.root, laid.home, stage)
    reason = _("{fix}; diagnosis ({file}): {regression}; {note}").format(
        fix=fix_reason, file=stage.regression_test, regression=regression.detail,
        note=_(SELF_REPORTED).format(note=note))
    if points == top:
        outcome = PASSED
    elif points:
        outcome = PARTIAL
    elif fix_outcome == MISSING and regression.status == "missing":
        outcome = MISSING
    elif fix_outcome in (ERROR, TIMEOUT, ENDED):
        outcome = fix_outcome
    else:
        outcome = ERROR if regression.status == "error" and fix_outcome == MISSING else FAILED
    return ctx.item("fault_lab", points, outcome, reason)


def transfer_part(stage: Stage, report: RunReport, laid: Laid, on_reference: bool = True) -> tuple[Part, str]:
    """The transfer part, and how the learner's test was stopped: :data:`TIMEOUT` when a limit stopped it,
    :data:`ENDED` when its process ended by itself (an exit, a signal) or broke its link to the judge, else "".

    ``on_reference``: the test ran on the course's reference implementation (where it must pass) and on each
    known-wrong variant (where it must fail). Otherwise (a learner bundle, no reference) it ran on the
    submission's own ``forge/`` as ``forgelab check`` runs it, and the detail says so.
    """
    shown = stage.transfer_file
    if not (laid.home / shown).is_file():
        return Part("missing", _("{file} was not handed in").format(file=shown)), ""
    label = transfer_label(stage)
    rows = report.in_file(label, shown)
    errors = [e.cause for e in report.collect_errors if e.target == label and e.file == shown]
    problem = report.target_problems.get(label) or (_("could not collect {file}: {error}").format(
        file=shown, error=errors[0]) if errors else None)
    stopped = _stopped(list(rows), ENDED if label in report.ended_targets else "")
    variants = sorted({row.target for row in report.rows if row.target.startswith(wrong_label(stage))}
                      | {key for key in report.target_problems if key.startswith(wrong_label(stage))},
                      key=lambda name: (len(name), name))
    if not on_reference:
        on_wrong = report.in_file(variants[0], shown) if variants else None
        part = judge_transfer(rows, problem, shown, on_wrong)
        note = _("judged on the submission's own forge/, as `forgelab check` judges it (this course has no reference)")
        return Part(part.status, _("{detail}; {note}").format(detail=part.detail, note=note), part.extra), stopped
    part = judge_transfer(rows, problem, shown)
    if part.status in ("failed", "error"):
        return Part(part.status, _("on the course's reference implementation, {detail}").format(detail=part.detail),
                    part.extra), stopped
    if part.status != "passed":
        return part, stopped
    for index, variant in enumerate(variants):
        wrong = report.in_file(variant, shown)
        if wrong and all(r.outcome in (Outcome.PASSED, Outcome.SKIPPED) for r in wrong) \
                and any(r.outcome is Outcome.PASSED for r in wrong):
            which = (_("the stage's known-wrong implementation") if index == 0
                     else _("known-wrong variant {number}").format(number=index + 1))
            return Part("cannot_tell", _("it passes on the course's reference implementation, but on {which} too, so it "
                                         "cannot tell right from wrong: assert the exact results the transfer challenge "
                                         "asks for (notebook part 8)").format(which=which),
                        {"known_wrong": "passes"}), stopped
    count = sum(r.outcome is Outcome.PASSED for r in rows)
    if not variants:  # a stage without a known-wrong implementation (none in this course)
        return Part("passed", _("{count} transfer test(s) pass on the course's reference implementation").format(
            count=count)), stopped
    against = (_("its known-wrong one") if len(variants) == 1
               else _("each of its {count} known-wrong ones").format(count=len(variants)))
    return Part("passed", _("{count} transfer test(s) pass on the course's reference implementation and fail on "
                            "{against}, as they should").format(count=count, against=against),
                {"known_wrong": "fails"}), stopped


def grade_transfer(ctx: _Stage, part: Part, stopped: str) -> GradeItem:
    """``stopped``: how the learner's test was stopped (see :func:`transfer_part`)."""
    stage = ctx.stage
    top = SPEC["transfer"].max_points
    if part.status == "passed":
        return ctx.item("transfer", top, PASSED, _("{place}: {cause}").format(place=stage.transfer_file, cause=part.detail))
    if part.status == "cannot_tell":
        return ctx.item("transfer", 0, FAILED, _("{place}: {cause}").format(place=stage.transfer_file, cause=part.detail), REVIEW)
    if part.status in ("missing", "not_written"):
        return ctx.item("transfer", 0, MISSING, _("{place}: {cause}").format(place=stage.transfer_file, cause=part.detail))
    result = stopped or (ERROR if part.status == "error" else FAILED)
    return ctx.item("transfer", 0, result, _("{file} does not pass: {detail}").format(
        file=stage.transfer_file, detail=part.detail))


def grade_design(ctx: _Stage, laid: Laid) -> GradeItem:
    stage = ctx.stage
    part = judge_design(laid.home / stage.design_answer_file, stage.design_answer_file)
    top = SPEC["design_answer"].max_points
    if part.status == "present":
        return ctx.item("design_answer", top, PASSED, _("{file}: handed in ({detail}); its content is read against "
                                                        "the rubric by the instructor").format(
            file=stage.design_answer_file, detail=part.detail))
    if part.status == "missing":
        return ctx.item("design_answer", 0, MISSING, _("no design answer handed in ({file})").format(
            file=stage.design_answer_file))
    return ctx.item("design_answer", 0, FAILED, _("{place}: {cause}").format(place=stage.design_answer_file, cause=part.detail))


def grade_evidence(ctx: _Stage, report: RunReport, laid: Laid, items: list[GradeItem], transfer_status: str) -> GradeItem:
    stage = ctx.stage
    label = f"sub-{stage.number}"
    observed = report.in_file(label, stage.test_file)
    by_key = {item.item: item for item in items}
    acceptance = {
        "required_tests_passed": by_key["stage_tests"].outcome == PASSED,
        "fault_lab_fixed": _fix(ctx, report)[0] == PASSED,
        "fault_lab_diagnosed": grading_note(ctx.root, laid.home, stage)[1],
        "transfer_passed": transfer_status == "passed",
        "design_answer_present": by_key["design_answer"].outcome == PASSED,
    }
    module_file = laid.import_dir / stage.module
    finding = consistency.check(stage, ctx.root, laid.home, module_file if module_file.is_file() else None,
                                observed, acceptance)
    top = SPEC["evidence"].max_points
    return ctx.item("evidence", top if finding.outcome == PASSED else 0, finding.outcome, finding.reason, finding.flag)


def grade_stage(course: Course, workbook: Workbook, stage: Stage, laid: Laid, report: RunReport,
                on_reference: bool = True) -> list[GradeItem]:
    ctx = _Stage(laid.submission.id, stage, course.root)
    label = sub_label(stage)
    part, stopped = transfer_part(stage, report, laid, on_reference)
    lost = _lost_to_the_grader(ctx, report, laid, course.root)
    rows = [
        lost.get("stage_tests") or grade_tests(ctx, report, label),
        lost.get("instructor_checks") or grade_instructor_checks(ctx, report, label, check_files(course.root, stage)),
        lost.get("notebook") or grade_notebook(ctx, report, label, course),
        lost.get("fault_lab") or grade_fault_lab(ctx, report, laid, workbook, on_reference),
        grade_transfer(ctx, part, stopped),
        grade_design(ctx, laid),
    ]
    rows.append(lost.get("evidence") or grade_evidence(ctx, report, laid, rows, part.status))
    return [with_skipped(row, laid.skipped) for row in rows]


def with_skipped(item: GradeItem, skipped: tuple[Skipped, ...]) -> GradeItem:
    """The row, its reason opening with what each skipped link or special file named in it was: a named pipe
    where the module should be is not "not handed in" or "does not exist" but a pipe, skipped."""
    if item.outcome == PASSED:
        return item
    said = [entry.words() for entry in skipped
            if (path := entry.relative.as_posix()) in item.reason or f"{path}/" in item.reason]
    if not said:
        return item
    return dataclasses.replace(item, reason=_("{skipped}; {reason}").format(skipped=_("; ").join(said),
                                                                           reason=item.reason))


def _lost_to_the_grader(ctx: _Stage, report: RunReport, laid: Laid, course_root: Path) -> dict[str, GradeItem]:
    """When the trusted session died, the items it should have judged: errors worth their full points."""
    if not report.problem:
        return {}
    can = gradeable(course_root, ctx.stage)
    can["fault_lab"] = lab_handed_in(laid, ctx.stage)  # a lab not handed in is still missing
    died = _(SESSION_DIED).format(grader_failed=_(GRADER_FAILED))
    return {key: ctx.item(key, 0, ERROR, died, REGRADE)
            for key in ("stage_tests", "instructor_checks", "notebook", "fault_lab", "evidence") if can[key]}


def gradeable(course_root: Path, stage: Stage) -> dict[str, bool]:
    """Which items the course can grade for this stage (the others are worth 0 of 0)."""
    return {key: (key != "instructor_checks" or bool(check_files(course_root, stage)))
            and (key != "notebook" or (course_root / stage.notebook).is_file()) for key in SPEC}


def failed_stage(submission: str, stage: Stage, outcome: str, reason: str, course_root: Path,
                 flag: str = REGRADE) -> list[GradeItem]:
    """Every item of a stage lost for one cause: a grader failure (flagged for re-grading), or a submission that
    cannot be laid out (``flag=""``)."""
    rows = []
    # a reason of the grader's own failure may hold scratch paths; a submission's layout problem holds only paths as
    # written in the submission (a zip member '../../tmp/x' stays what it is)
    said = clean(reason, course_root) if flag else " ".join(reason.split())
    for key, can in gradeable(course_root, stage).items():
        if can:
            rows.append(GradeItem(submission, stage.number, key, 0, SPEC[key].max_points, outcome, said, flag))
        else:
            rows.append(GradeItem(submission, stage.number, key, 0, 0, NOT_GRADED,
                                  _("not graded: the course has nothing to grade this item with for this stage")))
    return rows
