"""Grade many submissions: up to ``jobs`` at a time, each through its own judge job.

This process is the trusted side: it reads the submissions, builds each judge job
(:mod:`forgelab.grading.grader`), writes every row of the gradebook and every feedback page. No
submission's code runs in it or can reach what it writes. A submission that breaks anything — its
own code or even the grader — becomes graded rows with a reason; the batch always finishes.

``shard`` grades the K-th of N deterministic slices of the submissions (sorted by id, every N-th);
:func:`merge` combines the shards' output folders into the same gradebook, CSV files and feedback
pages a single run would have written.
"""

from __future__ import annotations

import contextvars
import datetime as _dt
import json
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from forgelab import __version__
from forgelab.grading import feedback, gradebook, seal, similarity
from forgelab.grading.grader import Graded, grade_submission
from forgelab.grading.rubric import REGRADE, REVIEW
from forgelab.core.i18n import _
from forgelab.core.submission import Submission
from forgelab.judge import channel, waiting
from forgelab.judge.sandbox import isolation
from forgelab.judge.settings import JudgeSettings
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage


@dataclass(frozen=True)
class BatchResult:
    graded: list[Graded]
    out: Path
    gradebook: Path
    csv: Path
    totals: Path
    pages: dict[str, Path]
    run_id: int
    sandbox: str
    similar: list[similarity.Pair]  # the pairs flagged for review (similarity/index.html under out)


@dataclass(frozen=True)
class ShardSpec:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        parts = text.split("/")
        if len(parts) != 2 or not all(part.strip().isdigit() for part in parts):
            raise ValueError(_("--shard {text}: write it as K/N, e.g. 2/4 (the second of four slices)").format(
                text=repr(text)))
        index, count = (int(part) for part in parts)
        if count < 1 or not 1 <= index <= count:
            raise ValueError(_("--shard {text}: K must be between 1 and N (N at least 1)").format(text=repr(text)))
        return cls(index, count)

    def select(self, subs: list[Submission]) -> list[Submission]:
        ordered = sorted(subs, key=lambda sub: sub.id)
        return [sub for position, sub in enumerate(ordered) if position % self.count == self.index - 1]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


class GradingInterrupted(KeyboardInterrupt):
    """Ctrl-C during a batch: ``graded`` were recorded (in the gradebook, its CSV files and pages under ``out``);
    ``not_graded`` were not, and nothing of theirs was recorded in this run."""

    def __init__(self, graded: list[Graded], not_graded: list[Submission], out: Path) -> None:
        super().__init__()
        self.graded, self.not_graded, self.out = graded, not_graded, out


def _grade_as(run: channel.RunProcesses, course: Course, workbook: Workbook, stages: list[Stage], sub: Submission,
              settings: JudgeSettings, sessions: int, similar: similarity.Thresholds) -> Graded:
    """:func:`grade_submission` with what it starts belonging to ``run`` (stopped by a Ctrl-C of the batch)."""
    token = channel.running_as(run)
    try:
        return grade_submission(course, workbook, stages, sub, settings, sessions, similar)
    finally:
        channel.stop_running_as(token)


MAX_SESSIONS = 4  # more trusted sessions per submission than this each run too few targets to pay for their start


def sessions_per_submission(jobs: int) -> int:
    """Trusted sessions per submission: the CPUs this process may use, shared by the ``jobs`` graded at once (at least
    one each). The verdicts are the same for any number (see :func:`forgelab.grading.grader.grade_submission`)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_SESSIONS, cpus // max(1, jobs)))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def grade_batch(course: Course, workbook: Workbook, stages: list[Stage], subs: list[Submission], out: Path, *,
                jobs: int, settings: JudgeSettings, shard: ShardSpec | None = None,
                progress: Callable[[str], None] = print,
                thresholds: similarity.Thresholds = similarity.Thresholds()) -> BatchResult:
    chosen = shard.select(subs) if shard else subs
    mode = isolation(settings.sandbox)  # raises SandboxUnavailable when required and missing: before any work
    out.mkdir(parents=True, exist_ok=True)
    (out / seal.SEAL_NAME).unlink(missing_ok=True)  # sealed again when this run is done; an interrupted run is not
    connection = gradebook.open_gradebook(out / gradebook.FILENAME)
    try:
        run_id = gradebook.start_run(connection, started_at=_now(), tool_version=__version__,
                                     course_version=course.version, stages=",".join(s.number for s in stages),
                                     jobs=jobs, network="none" if mode.sandboxed else "host (unsandboxed)",
                                     submissions=len(chosen), sandbox=mode.description, shard=str(shard or ""),
                                     settings=json.dumps({**settings.as_dict(), "similarity": thresholds.as_dict()},
                                                         sort_keys=True))
        graded: list[Graded] = []
        similarity.load_in_background()  # copydetect's import, for publish(), while the judge runs
        runs = {sub.id: channel.RunProcesses() for sub in chosen}  # what each submission's grading starts
        pool = ThreadPoolExecutor(max_workers=max(1, jobs))
        sessions = sessions_per_submission(jobs)
        try:
            # each job speaks the language of this run (a thread starts with a fresh context, i.e. English)
            futures = {pool.submit(contextvars.copy_context().run, _grade_as, runs[sub.id], course, workbook, stages,
                                   sub, settings, sessions, thresholds): sub for sub in chosen}
            for done, future in enumerate(waiting.completed(futures), 1):
                result = future.result()
                gradebook.record(connection, run_id, gradebook.SubmissionRecord(
                    result.submission.id, result.content_sha256, str(result.submission.path), result.submission.kind),
                    result.items, result.timings, result.tests, result.facts, result.modules)
                graded.append(result)
                review = sum(1 for item in result.items if item.flag == REVIEW)
                regrade = sum(1 for item in result.items if item.flag == REGRADE)
                note = _(" — {count} item(s) to review").format(count=review) if review else ""
                note += _(" — {count} item(s) to grade again: the grader failed on them").format(count=regrade) \
                    if regrade else ""
                note += f" — {result.problem}" if result.problem else ""
                progress(_("[{done}/{total}] {submission}: {points}/{max_points} points in {seconds} s{note}").format(
                    done=done, total=len(chosen), submission=result.submission.id, points=result.points,
                    max_points=result.max_points, seconds=f"{result.wall_s:.1f}", note=note))
        except KeyboardInterrupt:
            # Ctrl-C: no submission that has not been recorded yet starts or goes on. What those being graded got
            # from a run stopped under them is no grade (it would blame them for the stop), so nothing more is
            # recorded; the run keeps no finished_at, and what was recorded gets its CSV lines and pages.
            for future in futures:
                future.cancel()
            for run in runs.values():
                run.stop()
            pool.shutdown(wait=True)
            done_ids = {result.submission.id for result in graded}
            publish(course, connection, out, workbook)
            raise GradingInterrupted(sorted(graded, key=lambda g: g.submission.id),
                                     [sub for sub in chosen if sub.id not in done_ids], out) from None
        finally:
            pool.shutdown(wait=True)
        gradebook.finish_run(connection, run_id, _now())
        graded.sort(key=lambda g: g.submission.id)
        pages, csv_path, totals_path = publish(course, connection, out, workbook)
        seal.write(connection, out)
        similar = gradebook.similarity_pairs(connection)
    finally:
        connection.close()
    return BatchResult(graded, out, out / gradebook.FILENAME, csv_path, totals_path, pages, run_id, mode.description,
                       similar)


def publish(course: Course, connection: object, out: Path, workbook: Workbook) -> tuple[dict[str, Path], Path, Path]:
    """The similarity check, CSV exports and feedback pages from the gradebook's rows (also after a merge).

    Similar code is looked for over every submission the gradebook holds, with the thresholds its last run recorded;
    its pages go to ``out/similarity/`` and its flags into the gradebook and the CSV files, never the feedback pages."""
    import sqlite3

    assert isinstance(connection, sqlite3.Connection)
    runs = list(connection.execute("SELECT settings FROM runs ORDER BY run_id DESC LIMIT 1"))
    thresholds = similarity.Thresholds.from_settings(str(runs[0][0]) if runs else "")
    modules = gradebook.handed_modules(connection)
    graded = sorted({item.stage for item in gradebook.rows(connection)})
    stages = [stage for stage in course.stages if stage.number in graded]
    pairs, _index = similarity.write_pages(course, out, similarity.compare(workbook, stages, modules, thresholds),
                                           thresholds)
    gradebook.set_similarity(connection, pairs)
    csv_path, totals_path = gradebook.export(connection, out)
    records = gradebook.submission_records(connection)
    items = gradebook.rows(connection)
    pages = feedback.write_pages(course, out, {r.submission: r.content_sha256 for r in records}, items)
    gradebook.set_feedback_pages(connection, {submission: path.name for submission, path in pages.items()})
    return pages, csv_path, totals_path


def merge(course: Course, workbook: Workbook, folders: list[Path], into: Path,
          allow_partial: bool = False) -> tuple[int, Path, Path, dict[str, Path]]:
    """Combine shard output folders into ``into``; returns (submissions, gradebook, csv, pages)."""
    (into / seal.SEAL_NAME).unlink(missing_ok=True)
    connection, records = gradebook.merge(folders, into, allow_partial)
    try:
        pages, csv_path, _ = publish(course, connection, into, workbook)
        seal.write(connection, into)
    finally:
        connection.close()
    return len(records), into / gradebook.FILENAME, csv_path, pages
