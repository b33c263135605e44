"""The class report: what a graded class struggles with, item by item (``forgelab grade report OUT``).

It reads only a gradebook — one grading run's ``--out`` folder, or the ``--into`` folder of merged
shards — never the submissions, and it holds aggregates only: no submission's name, path or row.

Per stage and per course test: the share of the class that fails it and the three most common
first differences; per stage: fault labs fixed, diagnoses right at the first attempt (where the
evidence records a diagnosis), transfer tests that cannot tell right from wrong, how deep into the
hint ladders learners went (the stage hints from their learning record; the fault lab's ladder from their
diagnosis, where the evidence records one), which prediction-quiz options they picked, and the median time from a
stage's first check to its acceptance (from their learning record). Then an item analysis over every
test: its difficulty (the share that passes it) and its discrimination — the point-biserial
correlation of the item (0 or 1) with the rest of the total (the number of the *other* tests
passed) — flagging the items that do not separate strong submissions from weak ones.

Only course-authored text: everything the report shows is built from the course's own texts (test names, the
kind of each difference, the path of a first difference in the course's expected value), counts and numbers.
Free text a learner's process produced — an exception or assertion message, a value it returned, what it
printed — never enters it: a first difference is shown as its kind (:func:`course_difference`: "values differ at
['format']", "raised ValueError", "stopped at a limit"), and each name in its path must be a word of the course's
own files (stage tests, reference and starter modules), or the path stops before it. So a message naming a third
person, however many submissions raise it, is never published.

Privacy: a class smaller than ``min_class`` (default :data:`MIN_CLASS`, ``--min-class``) gets no per-stage or
per-item figure at all, only its size and where the report read it from; within a larger class, a median over a
group smaller than ``min_class`` (learners whose record holds their hint use or their time to acceptance) is
withheld, since it would be one or two learners' own figure. A first difference is listed only when at least two
submissions share it, and never when its text names a submission. Instructor checks are reported by name and
share only, never with their messages, so the report can be shown to the class.

Submissions whose rows the grader lost (flag ``regrade``) are left out of every figure and counted.
The report is :class:`ClassReport`, a Pydantic model written as ``report.json``; the terminal
summary, the HTML page and the figures are drawn from it.
"""

from __future__ import annotations

import builtins
import datetime as _dt
import math
import re
import sqlite3
import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from forgelab.grading import MIN_CLASS, gradebook, similarity
from forgelab.grading.class_facts import INSTRUCTOR_CHECK, STAGE_TEST, StageFacts, TestResult, ladder_length
from forgelab.grading.rubric import PASSED, REGRADE, GradeItem
from forgelab.core.i18n import N_, _, renderings
from forgelab.core.registry import Course
from forgelab.judge.explain import MARKER
from forgelab.judge.outcomes import Outcome
from forgelab.core.evidence import write_atomic

DISCRIMINATION_MIN = 0.2  # below this an item separates strong from weak submissions poorly (Ebel's rule of thumb)
TOP_DIFFERENCES = 3
MIN_SHARED = 2  # a first difference is listed only when this many submissions share it
BINS = 10  # the score distribution: 0–10 %, 10–20 %, … 90–100 %
KIND = "forge-workbook/class-report"
HIDDEN = "(not shown: the text names a submission)"
TOP_LEVEL = N_("the top level")  # as forgelab.judge.explain names the whole value
# Python's own exception classes: their names are Python's text, not the learner's (a class of their own is not named)
PYTHON_ERRORS = frozenset(name for name, value in vars(builtins).items()
                          if isinstance(value, type) and issubclass(value, BaseException))
_SEGMENT = re.compile(r"\.(?P<field>[A-Za-z_]\w*)|\[(?P<index>\d{1,6})\]|\['(?P<key>[A-Za-z_]\w*)'\]")
_RAISED = re.compile(r"^(?:forge/[\w./-]+\.py, line \d+: )?(?:[A-Za-z_][\w.]*\.)?(?P<name>[A-Za-z_]\w*)(?::|$)")
_WORD = re.compile(r"[A-Za-z_]\w*")


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


DifferenceKind = Literal["values_differ_at", "values_differ_at_top", "values_differ", "raised", "assertion", "stopped",
                         "not_run", "could_not_run"]


class Difference(_Model):
    """A kind of first difference shared by ``count`` submissions, in course-authored terms only: ``at`` is the path
    into the course's expected value (``values_differ_at``) or the name of Python's exception (``raised``), else ''.
    The JSON holds the kind, not words, so that it is the same in either edition; :meth:`words` says it."""

    kind: DifferenceKind
    at: str
    count: int

    def words(self) -> str:
        return difference_words(self.kind, self.at)


class TestFigure(_Model):
    kind: Literal["stage_test", "instructor_check"]
    test: str
    label: str  # T1, T2 … for stage tests, C1, C2 … for instructor checks (the heat map's columns)
    submissions: int
    failing: int
    fail_share: float
    differences: list[Difference]  # the most common first differences shared by MIN_SHARED or more (stage tests)
    unshared: int  # failing submissions whose first difference no other submission shares (or is hidden)


class ItemFigure(_Model):
    stage: str
    kind: Literal["stage_test", "instructor_check"]
    test: str
    label: str
    difficulty: float  # the share of the class that passes it
    discrimination: float | None  # point-biserial correlation with the rest of the total; None: no variance
    flag: Literal["", "weak", "negative", "everyone_passes", "everyone_fails", "rest_constant"]


class Count(_Model):
    value: int
    count: int


class HintUse(_Model):
    recorded: int  # submissions whose learning record covers the stage
    available: int  # rungs of the ladder
    depths: list[Count]  # how many stopped at each depth, 0..available
    median: float | None


class StageFigure(_Model):
    stage: str
    submissions: int
    mean_points: float
    max_points: int
    fault_labs_handed_in: int
    fault_labs_fixed: int
    diagnoses_stated: int | None  # handed in (right or not); None: graded before the course asked for a diagnosis
    diagnoses_right_first_try: int | None
    transfer_written: int
    transfer_cannot_tell: int
    learning_recorded: int
    learning_unreadable: int
    hints: HintUse
    fault_hints: HintUse | None  # rungs of the fault-lab ladder shown by the time of the diagnosis; None: not recorded
    prediction_answered: int
    prediction_answer: int  # the right option (0-based)
    prediction_choices: list[Count]  # per option (0-based), also options nobody chose
    accepted_timed: int  # submissions whose record holds both the first check and the acceptance
    median_minutes_to_accept: float | None
    tests: list[TestFigure]


class ShardRead(_Model):
    shard: str  # "K/N", or "" for a run over the whole class
    submissions: int
    started_at: str
    finished_at: str
    course_version: str
    tool_version: str
    merged_from: str  # the shard folder a merge read it from ("" for a gradebook written by grade itself)


class SimilarityRead(_Model):
    """Where the similarity check's pages are, for the instructor (they name submissions; the report names none)."""

    index: str  # the similarity index, relative to the report's folder: ../similarity/index.html
    flagged_pairs: int | None  # pairs flagged for review; None when the class is withheld (it could name a learner)


class ClassReport(_Model):
    schema_version: Literal[2] = 2
    kind: Literal["forge-workbook/class-report"] = "forge-workbook/class-report"
    course_version: str
    stages: list[str]
    submissions: int  # in the figures
    left_out: int  # lost to grader failures (flag regrade): grade them again
    min_class: int
    withheld: bool  # the class is smaller than min_class: no per-stage or per-item figures
    has_tests: bool  # the gradebook holds per-test results (graded by a forgelab that records them)
    shards: list[ShardRead]
    missing_shards: list[str]
    partial: bool  # merged with --allow-partial: shards of the split are missing, so submissions are missing too
    score_bins: list[int]  # submissions per tenth of the maximum (the last bin includes 100 %)
    stage_figures: list[StageFigure]
    items: list[ItemFigure]
    similarity: SimilarityRead | None  # None: no similarity index beside this gradebook (graded before it existed)


class ReportError(RuntimeError):
    """The folder cannot be reported on; the message says why and what to do."""


# ---------------------------------------------------------------- reading


def _round(value: float) -> float:
    return round(value, 4)


def open_graded(folder: Path) -> sqlite3.Connection:
    path = folder / gradebook.FILENAME
    if not path.is_file():
        raise ReportError(_("{folder} holds no {file}: give the --out folder of `forgelab grade` (or the --into folder "
                            "of `forgelab gradebook merge`)").format(folder=folder, file=gradebook.FILENAME))
    try:
        return gradebook.open_gradebook(path)
    except gradebook.GradebookError as error:
        raise ReportError(str(error)) from None


def course_words(course: Course) -> frozenset[str]:
    """Every identifier-like word of the course's own files a first difference's path may name: the stage tests
    (and their fixtures), the reference modules and the starters."""
    words: set[str] = set()
    for folder, patterns in (("tests/stages", ("*.py", "*.json", "*.toml")), ("solutions/forge", ("*.py",)),
                             ("forge", ("*.py",))):
        for pattern in patterns:
            for path in sorted((course.root / folder).rglob(pattern)):
                try:
                    words.update(_WORD.findall(path.read_text(encoding="utf-8")))
                except (OSError, UnicodeDecodeError):
                    continue
    return frozenset(words)


def difference_words(kind: str, at: str) -> str:
    """A first difference's kind (see :class:`Difference`) in the active language."""
    if kind == "values_differ_at":
        return _("values differ at {path}").format(path=at)
    if kind == "values_differ_at_top":
        return _("values differ at {path}").format(path=_(TOP_LEVEL))
    if kind == "raised":
        return _("raised {error}").format(error=at)
    return {"values_differ": _("values differ"), "assertion": _("an assertion failed"),
            "stopped": _("stopped at a limit"), "not_run": _("not run"), "could_not_run": _("could not run")}[kind]


def course_difference(outcome: str, cause: str, words: frozenset[str]) -> tuple[DifferenceKind, str] | None:
    """A test's first difference in course-authored terms only, as (kind, at), or None when none can be said
    without the learner's text: its kind (values differ, raised one of Python's exceptions, an assertion failed,
    stopped at a limit, not run, could not run), and for values that differ the path into the expected value, kept
    up to the first name that is not a word of the course (``words``). ``cause`` is read, never shown."""
    if outcome == Outcome.TIMEOUT:
        return "stopped", ""
    if outcome == Outcome.NOT_RUN:
        return "not_run", ""
    if outcome not in (Outcome.FAILED, Outcome.ERROR):
        return None
    text = cause.strip()
    lowered = text.lower()
    for marker in renderings(MARKER):
        at = lowered.find(marker.lower())
        if at == -1:
            continue
        where = text[at + len(marker):].lstrip()
        path, top = [], any(where.startswith(name) for name in renderings(TOP_LEVEL))
        position = 0
        while not top and (segment := _SEGMENT.match(where, position)) is not None:
            name = segment.group("field") or segment.group("key")
            if name is not None and name not in words:
                break
            path.append(segment.group())
            position = segment.end()
        if path:
            return "values_differ_at", "".join(path)
        return ("values_differ_at_top", "") if top else ("values_differ", "")
    raised = _RAISED.match(text)
    if raised is not None and raised.group("name") in PYTHON_ERRORS:
        name = raised.group("name")
        return ("assertion", "") if name == "AssertionError" else ("raised", name)
    if lowered.startswith("assert ") or lowered == "assert":
        return "assertion", ""
    return ("could_not_run", "") if outcome == Outcome.ERROR else None


def build(course: Course, folder: Path, min_class: int = MIN_CLASS) -> ClassReport:
    """The report over the gradebook in ``folder`` (read only; a gradebook of an older schema is migrated)."""
    connection = open_graded(folder)
    try:
        grades = gradebook.rows(connection)
        tests = gradebook.test_results(connection)
        facts = gradebook.stage_facts(connection)
        runs = gradebook.run_records(connection)
        pairs = len(gradebook.similarity_pairs(connection))
    finally:
        connection.close()
    report = analyse(course, grades, tests, facts, runs, min_class)
    if not (folder / similarity.FOLDER / similarity.INDEX).is_file():
        return report
    index = f"../{similarity.FOLDER}/{similarity.INDEX}"  # the report is written to FOLDER/report/
    return report.model_copy(update={"similarity": SimilarityRead(
        index=index, flagged_pairs=None if report.withheld else pairs)})


def analyse(course: Course, grades: list[GradeItem], tests: list[TestResult], facts: list[tuple[str, str, StageFacts]],
            runs: list[gradebook.RunRecord], min_class: int = MIN_CLASS) -> ClassReport:
    lost = {row.submission for row in grades if row.flag == REGRADE}
    names = sorted({row.submission for row in grades} - lost)
    stages = sorted({row.stage for row in grades})
    shards, missing = gradebook.shards_read(runs)
    shard_rows = [ShardRead(shard=run.shard, submissions=run.submissions, started_at=run.started_at,
                            finished_at=run.finished_at or "", course_version=run.course_version,
                            tool_version=run.tool_version, merged_from=run.merged_from) for run in runs]
    versions = sorted({run.course_version for run in runs}) or [course.version]
    withheld = len(names) < min_class
    base = dict(course_version=", ".join(versions), stages=stages, submissions=len(names), left_out=len(lost),
                min_class=min_class, withheld=withheld, has_tests=bool(tests), shards=shard_rows,
                missing_shards=missing if shards else [], partial=bool(shards and missing))
    if withheld:
        return ClassReport(**base, score_bins=[], stage_figures=[], items=[], similarity=None)  # type: ignore[arg-type]
    kept = set(names)
    grades = [row for row in grades if row.submission in kept]
    tests = [test for test in tests if test.submission in kept]
    facts = [entry for entry in facts if entry[0] in kept]
    privacy = _Names(names)
    words = course_words(course)
    figures = [_stage_figure(course, stage, grades, tests, facts, privacy, words, min_class) for stage in stages]
    return ClassReport(**base, score_bins=_score_bins(names, grades), stage_figures=figures,  # type: ignore[arg-type]
                       items=_items(names, tests, figures), similarity=None)


class _Names:
    """What a report must not say: a submission's name, as a word of its own (any case; "ana" hides "Ana said" but
    not "banana"). A name shorter than 3 characters is too common a word to look for."""

    def __init__(self, names: Sequence[str]) -> None:
        words = sorted({name.lower() for name in names if len(name) >= 3}, key=lambda name: (-len(name), name))
        self.pattern = re.compile("|".join(rf"(?<![^\W_]){re.escape(name)}(?![^\W_])" for name in words)) \
            if words else None

    def hides(self, text: str) -> bool:
        return self.pattern is not None and self.pattern.search(text.lower()) is not None


# ---------------------------------------------------------------- figures


def _score_bins(names: list[str], grades: list[GradeItem]) -> list[int]:
    points: dict[str, list[int]] = {name: [0, 0] for name in names}
    for row in grades:
        points[row.submission][0] += row.points
        points[row.submission][1] += row.max_points
    bins = [0] * BINS
    for earned, top in points.values():
        bins[min(BINS - 1, earned * BINS // top if top else 0)] += 1  # whole numbers only
    return bins


def _labels(tests: list[TestResult]) -> dict[tuple[str, str], str]:
    """T1, T2 … in the stage's order of required tests; C1, C2 … for the instructor checks by name."""
    labels: dict[tuple[str, str], str] = {}
    for kind, letter in ((STAGE_TEST, "T"), (INSTRUCTOR_CHECK, "C")):
        for test in tests:
            if test.kind == kind and (kind, test.test) not in labels:
                labels[(kind, test.test)] = f"{letter}{sum(1 for key in labels if key[0] == kind) + 1}"
    return labels


def _test_figures(course: Course, stage: str, tests: list[TestResult], privacy: _Names,
                  words: frozenset[str]) -> list[TestFigure]:
    mine = [test for test in tests if test.stage == stage]
    order = {name: index for index, name in enumerate(course.stage(stage).required_tests)}
    mine.sort(key=lambda t: (t.kind != STAGE_TEST, order.get(t.test, len(order)), t.test, t.submission))
    labels = _labels(mine)
    figures = []
    for (kind, test), label in labels.items():
        results = [t for t in mine if t.kind == kind and t.test == test]
        failing = [t for t in results if not t.passed]
        said = [course_difference(t.outcome, t.cause, words) for t in failing if kind == STAGE_TEST]
        causes = Counter(found for found in said if found is not None and not privacy.hides(found[1]))
        shared = sorted(((found, count) for found, count in causes.items() if count >= MIN_SHARED),
                        key=lambda pair: (-pair[1], pair[0]))
        listed = [Difference(kind=kind_, at=at, count=count) for (kind_, at), count in shared[:TOP_DIFFERENCES]]
        figures.append(TestFigure.model_validate(dict(
            kind=kind, test=test, label=label, submissions=len(results), failing=len(failing),
            fail_share=_round(len(failing) / len(results)) if results else 0.0, differences=listed,
            unshared=len(failing) - sum(count for _text, count in shared) if kind == STAGE_TEST else 0)))
    return figures


def _minutes(first: str, accepted: str) -> float:
    def parse(text: str) -> _dt.datetime:
        return _dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")

    return (parse(accepted) - parse(first)).total_seconds() / 60


def _hint_use(depths: list[int], available: int, min_class: int) -> HintUse:
    """How deep into a ladder learners went; the median only over a group of at least ``min_class``."""
    counts = Counter(depths)
    return HintUse(recorded=len(depths), available=available,
                   depths=[Count(value=depth, count=counts.get(depth, 0)) for depth in range(available + 1)],
                   median=_round(float(statistics.median(depths))) if depths and len(depths) >= min_class else None)


def _stage_figure(course: Course, stage: str, grades: list[GradeItem], tests: list[TestResult],
                  facts: list[tuple[str, str, StageFacts]], privacy: _Names, words: frozenset[str],
                  min_class: int) -> StageFigure:
    text = course.stage(stage).text()
    rows = [row for row in grades if row.stage == stage]
    per_sub: dict[str, list[GradeItem]] = {}
    for row in rows:
        per_sub.setdefault(row.submission, []).append(row)
    totals = [sum(row.points for row in mine) for mine in per_sub.values()]
    top = max((sum(row.max_points for row in mine) for mine in per_sub.values()), default=0)
    lab = [row for row in rows if row.item == "fault_lab"]
    found = {name: entry for name, number, entry in facts if number == stage}
    diagnosed = [entry for entry in found.values() if entry.diagnosis in ("right", "not_right")]
    recorded = [entry for entry in found.values() if entry.learning == "recorded"]
    rungs = [entry.fault_hints_deepest for entry in found.values() if entry.fault_hints_deepest is not None]
    ladder = ladder_length(course.stage(stage))
    choices = Counter(entry.prediction_choice for entry in recorded if entry.prediction_choice is not None)
    timed = [_minutes(entry.first_check_at, entry.accepted_at) for entry in recorded
             if entry.first_check_at and entry.accepted_at]
    any_diagnosis = any(entry.diagnosis is not None for entry in found.values())
    return StageFigure(
        stage=stage, submissions=len(per_sub), mean_points=_round(statistics.fmean(totals)) if totals else 0.0,
        max_points=top, fault_labs_handed_in=sum(1 for row in lab if row.outcome != "missing"),
        fault_labs_fixed=sum(1 for row in lab if row.outcome == PASSED),
        diagnoses_stated=len(diagnosed) if any_diagnosis else None,
        diagnoses_right_first_try=sum(1 for entry in diagnosed if entry.diagnosis == "right"
                                      and entry.diagnosis_first_right == 1) if any_diagnosis else None,
        transfer_written=sum(1 for entry in found.values() if entry.transfer not in ("missing", "not_written")),
        transfer_cannot_tell=sum(1 for entry in found.values() if entry.transfer == "cannot_tell"),
        learning_recorded=len(recorded), learning_unreadable=sum(1 for e in found.values() if e.learning == "unreadable"),
        hints=_hint_use([entry.hints_deepest or 0 for entry in recorded], len(text.hints), min_class),
        fault_hints=_hint_use(rungs, max([ladder, *rungs]), min_class) if rungs else None,
        prediction_answered=sum(choices.values()), prediction_answer=text.prediction.answer,
        prediction_choices=[Count(value=index, count=choices.get(index, 0))
                            for index in range(len(text.prediction.options))],
        accepted_timed=len(timed),
        median_minutes_to_accept=_round(statistics.median(timed)) if timed and len(timed) >= min_class else None,
        tests=_test_figures(course, stage, tests, privacy, words))


# ---------------------------------------------------------------- item analysis


def point_biserial(item: Sequence[int], rest: Sequence[int]) -> float | None:
    """Pearson's correlation of a 0/1 item with the rest score; None when either does not vary."""
    count = len(item)
    if count < 2:
        return None
    mean_x, mean_y = sum(item) / count, sum(rest) / count
    sxx = sum((x - mean_x) ** 2 for x in item)
    syy = sum((y - mean_y) ** 2 for y in rest)
    if sxx == 0 or syy == 0:
        return None
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(item, rest))
    return sxy / math.sqrt(sxx * syy)


def _items(names: list[str], tests: list[TestResult], figures: list[StageFigure]) -> list[ItemFigure]:
    scores: dict[tuple[str, str, str], dict[str, int]] = {}
    for result in tests:
        scores.setdefault((result.stage, result.kind, result.test), {})[result.submission] = int(result.passed)
    keys = [(figure.stage, each.kind, each.test, each.label) for figure in figures for each in figure.tests
            if (figure.stage, each.kind, each.test) in scores]
    totals = {name: sum(scores[key[:3]].get(name, 0) for key in keys) for name in names}
    found = []
    for stage, kind, test, label in keys:
        taking = [name for name in names if name in scores[(stage, kind, test)]]
        item = [scores[(stage, kind, test)][name] for name in taking]
        rest = [totals[name] - score for name, score in zip(taking, item)]
        difficulty = sum(item) / len(item) if item else 0.0
        r = point_biserial(item, rest)
        flag = ("everyone_passes" if difficulty == 1 else "everyone_fails" if difficulty == 0 else
                "rest_constant" if r is None else "negative" if r < 0 else "weak" if r < DISCRIMINATION_MIN else "")
        found.append(ItemFigure.model_validate(dict(stage=stage, kind=kind, test=test, label=label, flag=flag,
                                                    difficulty=_round(difficulty),
                                                    discrimination=None if r is None else _round(r))))
    return found


def write_json(report: ClassReport, folder: Path) -> Path:
    path = folder / "report.json"
    write_atomic(path, report.model_dump_json(indent=2) + "\n")
    path.chmod(0o644)
    return path
