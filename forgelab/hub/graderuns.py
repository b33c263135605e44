"""Grading from the course service's instructor page: what ``forgelab class grade`` runs, in the background.

An instructor presses *Grade the collected submissions* (or calls ``POST api/grade``); the service starts, in the
course repository the hub was started from (it has the instructor checks), the same two commands an instructor would
type: ``forgelab class grade --into RUN`` (collect the latest on-time submission of every learner through the
service's own API with the instructor's token, grade them with the sandboxed judge, publish every feedback page) and
then ``forgelab grade report RUN/grading --html`` (the class report). One run at a time; each run keeps its folder
``DATA/grading/run-NNNN/``: ``status.json`` (:class:`GradeRun`), ``log.txt`` (what the commands printed: the page
shows its last lines as progress), and what ``class grade`` wrote (``submissions/``, ``grading/`` with the
gradebook, feedback pages, similarity index and ``report/report.html``). A run the service was stopped in the middle
of is marked failed when it starts again.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Literal

from forgelab.core.evidence import write_atomic
from forgelab.core.i18n import N_, _, active
from forgelab.hub.models import AwareTime, Learner, Message
from forgelab.hub.store import now

FOLDER = "grading"  # under the service's data folder
REPORT = "grading/report/report.html"  # in a run's folder, once the run is done
STAGES_PATTERN = r"\d{2}(-\d{2})?(,\d{2}(-\d{2})?)*"
LOG_LINES = 12
STATE_WORDS = {"running": N_("running"), "done": N_("done"), "failed": N_("failed")}  # the page shows this many last lines of the log


class GradeRun(Message):
    id: int
    started_by: Learner
    started_at: AwareTime
    state: Literal["running", "done", "failed"]
    finished_at: AwareTime | None = None
    exit_code: int | None = None
    message: str = ""  # why it failed, in the service's language
    report: str = ""  # the class report, relative to the run's folder (REPORT), once written


class GradeRuns(Message):
    runs: list[GradeRun]  # newest first


class RunError(RuntimeError):
    """A run cannot start: what is wrong (``message``) and what to do (``next_step``)."""

    def __init__(self, status: int, reason: str, message: str, next_step: str) -> None:
        super().__init__(message)
        self.status, self.reason, self.message, self.next_step = status, reason, message, next_step


class Runner:
    """The grade runs of one service: started, driven in the background, read back after a restart."""

    def __init__(self, data: Path, course: Path | None, python: str, service_url: str) -> None:
        self.folder = data / FOLDER
        self.course, self.python, self.service_url = course, python, service_url
        self.tasks: set[asyncio.Task[None]] = set()
        self.folder.mkdir(parents=True, exist_ok=True)
        for run in self.runs():
            if run.state == "running":  # its process ended with the service that drove it
                self._save(run.model_copy(update={"state": "failed", "finished_at": now(), "message": _(
                    "the course service stopped during this run: start it again")}))

    def run_folder(self, number: int) -> Path:
        return self.folder / f"run-{number:04d}"

    def runs(self) -> list[GradeRun]:
        found = []
        for status in sorted(self.folder.glob("run-*/status.json"), reverse=True):
            found.append(GradeRun.model_validate_json(status.read_text(encoding="utf-8")))
        return found

    def run(self, number: int) -> GradeRun | None:
        path = self.run_folder(number) / "status.json"
        return GradeRun.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None

    def log_tail(self, number: int, lines: int = LOG_LINES) -> str:
        path = self.run_folder(number) / "log.txt"
        if not path.is_file():
            return ""
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])

    def _save(self, run: GradeRun) -> None:
        write_atomic(self.run_folder(run.id) / "status.json", run.model_dump_json(indent=2))

    def start(self, instructor: str, token: str, stages: str | None = None) -> GradeRun:
        """Start a run for ``instructor`` (``token``: theirs, for the service's own API) over ``stages`` (``class
        grade``'s ``--stages``, e.g. ``01-07``; None: every stage); refuse a second one at the same time."""
        if stages is not None and not re.fullmatch(STAGES_PATTERN, stages):
            raise RunError(400, "malformed", _("{stages} is not a choice of stages: e.g. 01-07, 01,03 or 02").format(
                stages=repr(stages)), _("give the stages as `forgelab grade --stages` takes them"))
        if self.course is None:
            raise RunError(409, "no_course", _("this course service was started without the course repository, so it "
                                               "cannot grade"),
                           _("grade from the course repository with `forgelab class grade`, or start the hub there "
                             "(`make hub`)"))
        if any(run.state == "running" for run in self.runs()):
            raise RunError(409, "running", _("a grade run is already running"), _("wait until it is done"))
        number = max((run.id for run in self.runs()), default=0) + 1
        self.run_folder(number).mkdir(parents=True)
        run = GradeRun(id=number, started_by=instructor, started_at=now(), state="running")
        self._save(run)
        task = asyncio.get_running_loop().create_task(self._drive(run, token, stages))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return run

    async def _drive(self, run: GradeRun, token: str, stages: str | None) -> None:
        assert self.course is not None
        folder = self.run_folder(run.id)
        env = {**os.environ, "FORGELAB_ROOT": str(self.course), "FORGELAB_COURSE_URL": self.service_url,
               "FORGELAB_COURSE_TOKEN": token, "FORGE_LANG": active(), "PYTHONUNBUFFERED": "1"}
        env.pop("JUPYTERHUB_API_TOKEN", None)  # the service's own token never reaches the grader
        steps = [["class", "grade", "--into", str(folder), *(["--stages", stages] if stages else [])],
                 ["grade", "report", str(folder / "grading"), "--html"]]
        code: int | None = None
        try:
            with (folder / "log.txt").open("ab") as log:
                for step in steps:
                    log.write(f"$ forgelab {' '.join(step)}\n".encode())
                    log.flush()
                    process = await asyncio.create_subprocess_exec(
                        self.python, "-m", "forgelab", *step, cwd=self.course, env=env, stdin=asyncio.subprocess.DEVNULL,
                        stdout=log, stderr=asyncio.subprocess.STDOUT)
                    code = await process.wait()
                    if code != 0 or not (folder / "grading" / "gradebook.sqlite").is_file():
                        break
        except OSError as error:
            self._save(run.model_copy(update={"state": "failed", "finished_at": now(), "message": str(error)}))
            return
        report = folder / REPORT
        done = code == 0 and report.is_file()
        self._save(run.model_copy(update={
            "state": "done" if done else "failed", "finished_at": now(), "exit_code": code,
            "report": REPORT if report.is_file() else "",
            "message": "" if done else _("a step ended with exit status {code}: its output is in the log below").format(
                code=code) if code else _("nothing was graded: see the log below")}))


__all__ = ["FOLDER", "REPORT", "STATE_WORDS", "GradeRun", "GradeRuns", "RunError", "Runner"]
