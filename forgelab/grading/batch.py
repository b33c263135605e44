"""Grade many submissions: one worker subprocess per submission, up to ``jobs`` at a time.

Each worker runs in a new session (its own process group) and, where the system allows, in its
own network namespace. The batch waits for it up to the submission's wall-clock limit and then
kills the whole group; whatever stages the worker finished still count. A worker that crashes
or is stopped turns into graded rows that say so (flagged for review) — the batch goes on.
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from forgelab import __version__
from forgelab.grading import feedback, gradebook, known_wrong, notebooks
from forgelab.grading.isolation import Limits, grading_env, kill_group, namespace_prefix, write_startup_rules
from forgelab.grading.rubric import ERROR, TIMEOUT, GradeItem
from forgelab.grading.stage_grader import failed_stage
from forgelab.grading.submission import Submission
from forgelab.registry import Course, Stage


@dataclass
class Graded:
    submission: Submission
    content_sha256: str
    items: list[GradeItem]
    timings: list[tuple[str, str, float]] = field(default_factory=list)  # (stage, phase, seconds)
    wall_s: float = 0.0
    problem: str | None = None

    @property
    def points(self) -> int:
        return sum(item.points for item in self.items)

    @property
    def max_points(self) -> int:
        return sum(item.max_points for item in self.items)


@dataclass(frozen=True)
class BatchResult:
    graded: list[Graded]
    out: Path
    gradebook: Path
    csv: Path
    totals: Path
    pages: dict[str, Path]
    run_id: int


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _read_results(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            break  # a line cut off when the worker was killed
    return rows


COURSE_MATERIAL = ("course", "tests/stages", "instructor/checks", "pyproject.toml")


def course_template(course: Course, into: Path) -> Path:
    """The course material grading reads, copied once per batch (each worker copies it again).

    Graded code runs with its working directory inside the worker's own copy, so a learner's
    module that writes a relative path can never change the course or another submission's grading.
    """
    for entry in COURSE_MATERIAL:
        source = course.root / entry
        if source.is_dir():
            shutil.copytree(source, into / entry, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif source.is_file():
            (into / entry).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, into / entry)
    return into


def _wait(process: subprocess.Popen, limit: float, result: Path,  # type: ignore[type-arg]
          on_stage: Callable[[dict[str, Any]], None]) -> bool:
    """Wait for the worker up to ``limit`` seconds, reporting each stage as it lands; True if it finished."""
    deadline = time.monotonic() + limit
    reported = 0
    finished = False
    while not finished:
        try:
            process.wait(timeout=min(1.0, max(deadline - time.monotonic(), 0.01)))
            finished = True
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                return False
        stages = [row for row in _read_results(result) if row.get("kind") == "stage"]
        for row in stages[reported:]:
            on_stage(row)
        reported = len(stages)
    return True


def grade_one(course: Course, stages: list[Stage], sub: Submission, reduced: dict[str, Path], template: Path,
              work: Path, limits: Limits, network: str,
              progress: Callable[[str], None] = lambda line: None) -> Graded:
    scratch = work / "scratch"
    scratch.mkdir(parents=True)
    result, job_file = work / "result.jsonl", work / "job.json"
    job = {"id": sub.id, "path": str(sub.path), "kind": sub.kind, "prefix": sub.prefix,
           "course_template": str(template), "stages": [s.number for s in stages],
           "notebooks": {k: str(v) for k, v in reduced.items()},
           "limits": asdict(limits), "scratch": str(scratch), "result": str(result)}
    job_file.write_text(json.dumps(job), encoding="utf-8")
    env = grading_env(scratch, scratch / "course", limits, work.parent / "startup")
    prefix = namespace_prefix() if network == "namespace" else None
    command = [*(prefix or []), sys.executable, "-P", "-m", "forgelab.grading.worker", str(job_file)]
    limit = limits.for_submission(len(stages))
    started = time.monotonic()
    with (work / "worker.out").open("w") as stdout, (work / "worker.err").open("w") as stderr:
        process = subprocess.Popen(command, cwd=scratch, env=env, stdout=stdout, stderr=stderr,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        def on_stage(row: dict[str, Any]) -> None:
            points = sum(int(item["points"]) for item in row["items"])
            top = sum(int(item["max_points"]) for item in row["items"])
            progress(f"      {sub.id}: stage {row['stage']} graded, {points}/{top}")

        stopped = not _wait(process, limit, result, on_stage)
        kill_group(process)  # also whatever the submission's code left running
    wall = time.monotonic() - started

    rows = _read_results(result)
    head = next((row for row in rows if row.get("kind") == "submission"), {})
    items: list[GradeItem] = []
    timings: list[tuple[str, str, float]] = []
    done_stages: set[str] = set()
    for row in rows:
        if row.get("kind") == "stage":
            done_stages.add(row["stage"])
            items.extend(GradeItem.from_dict(item) for item in row["items"])
            timings.extend((row["stage"], phase, float(value)) for phase, value in sorted(row["timings"].items()))
    if head.get("copy_s") is not None:
        timings.append(("", "copy_s", float(head["copy_s"])))
    timings.append(("", "worker_wall_s", round(wall, 3)))
    problem = None
    if stopped:
        problem = f"grading this submission took longer than {limit} s and was stopped"
        outcome = TIMEOUT
    elif not any(row.get("kind") == "done" for row in rows):
        tail = (work / "worker.err").read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or ["no output"]
        problem = f"the grader stopped unexpectedly on this submission ({tail[0][:200]})"
        outcome = ERROR
    if problem:
        for stage in stages:
            if stage.number not in done_stages:
                items.extend(failed_stage(sub.id, stage, outcome, problem, course.root, reduced))
    return Graded(sub, str(head.get("content_sha256", "")), items, timings, wall, problem)


def grade_batch(course: Course, stages: list[Stage], subs: list[Submission], out: Path, *, jobs: int, limits: Limits,
                network: str, progress: Callable[[str], None] = print) -> BatchResult:
    out.mkdir(parents=True, exist_ok=True)
    connection = gradebook.open_gradebook(out / gradebook.FILENAME)
    try:
        run_id = gradebook.start_run(connection, started_at=_now(), tool_version=__version__,
                                     course_version=course.version, stages=",".join(s.number for s in stages),
                                     jobs=jobs, network=network, submissions=len(subs))
        batch_dir = Path(tempfile.mkdtemp(prefix="forgelab-grade-"))
        try:
            reduced = notebooks.prepare(course, stages, batch_dir / "reference-notebooks")
            template = course_template(course, batch_dir / "course")
            known_wrong.prepare(course, stages, template)
            write_startup_rules(batch_dir / "startup")
            graded: list[Graded] = []
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                futures = {pool.submit(grade_one, course, stages, sub, reduced, template, batch_dir / f"{index:04d}",
                                       limits, network, progress if len(stages) > 1 else (lambda line: None)): sub
                           for index, sub in enumerate(subs)}
                for done, future in enumerate(as_completed(futures), 1):
                    result = future.result()
                    graded.append(result)
                    gradebook.record(connection, run_id, gradebook.SubmissionRecord(
                        result.submission.id, result.content_sha256, str(result.submission.path), result.submission.kind),
                        result.items, result.timings)
                    review = sum(1 for item in result.items if item.flag)
                    note = f" — {review} item(s) to review" if review else ""
                    note += f" — {result.problem}" if result.problem else ""
                    progress(f"[{done}/{len(subs)}] {result.submission.id}: {result.points}/{result.max_points} points "
                             f"in {result.wall_s:.1f} s{note}")
        finally:
            shutil.rmtree(batch_dir, ignore_errors=True)
        gradebook.finish_run(connection, run_id, _now())
        csv_path, totals_path = gradebook.export(connection, out)
        items = gradebook.rows(connection, [g.submission.id for g in graded])
    finally:
        connection.close()
    graded.sort(key=lambda g: g.submission.id)
    pages = feedback.write_pages(course, out, {g.submission.id: g.content_sha256 for g in graded}, items)
    return BatchResult(graded, out, out / gradebook.FILENAME, csv_path, totals_path, pages, run_id)
