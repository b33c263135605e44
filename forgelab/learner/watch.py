"""``forgelab watch [NN]``: the stage's verdict a moment after every save.

It checks the stage once as ``forgelab check`` does, then waits for a save of one of the stage's files
(:mod:`watchfiles`, debounced) and judges again only what that file can change:

=============================  =======================================================================
the file saved                 what runs again
=============================  =======================================================================
the stage's module             the stage tests, and the transfer test (it runs on your ``forge``)
the transfer test              the transfer test (on your ``forge`` and on the known-wrong one)
the fault lab's copy           the stage tests in the lab workspace
the design answer              nothing runs: the answer is read again
=============================  =======================================================================

Every run writes ``verification.json`` exactly as ``check`` does (the parts that did not run are taken
from the previous run, which judged the same files). The first line on screen is the first failing
test with its first difference; then the tables. Keys: ``q`` quits, ``h`` shows the next hint, ``n``
goes on to the next stage once this one is accepted. Ctrl-C stops the run in progress and everything
it started (the judge's runs are process groups it ends itself).

Every check runs in the judge's warm worker (:mod:`forgelab.judge.warm`), started once per watch: pytest,
Hypothesis and the judge are imported once, and each check forks a fresh session from it, whose calls into
the learner's code go to a fresh sandboxed process as in ``check``. When the worker cannot start, one line
says so and every save runs a whole cold check instead: the same verdict, only later.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import select
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TextIO

import watchfiles

from forgelab.core.i18n import N_, _
from forgelab.core.registry import Stage
from forgelab.judge.outcomes import Outcome
from forgelab.judge.warm import WarmUnavailable, WarmWorker
from forgelab.learner.check import (ALL_PARTS, FAULT_LAB, TESTS, TRANSFER, CheckOutcome, design_answer_file, lab_dir,
                                    parts_to_run, transfer_file)
from forgelab.learner.status import evidence_cell
from forgelab.learner.workbench import Message, Workbench

DEBOUNCE_MS = 400  # the longest a burst of saves (an editor's write, rename and chmod) is gathered
STEP_MS = 5  # a burst ends after this long without a further change (a save is seen 5-10 ms after it)
TICK_MS = 100  # how often the keyboard is looked at while nothing changes
CLEAR = "\x1b[H\x1b[2J"  # to the top left, then clear the screen
PENDING_WORDS = {TRANSFER: N_("transfer"), FAULT_LAB: N_("fault lab")}  # the parts that follow the tests' verdict


@dataclass(frozen=True)
class Watched:
    """A file the stage depends on and the parts of the check a change of it can affect."""

    path: Path
    parts: frozenset[str]


def watched_files(bench: Workbench, stage: Stage, target: str = "learner") -> list[Watched]:
    """The stage's module, its transfer test, its fault lab's copy and its design answer (what may exist)."""
    chosen = bench.target(target)
    module = chosen.module_path(stage.module) or bench.workbook.root / stage.module
    files = [Watched(module, frozenset({TESTS, TRANSFER})),
             Watched(transfer_file(bench.workbook, stage, chosen), frozenset({TRANSFER})),
             Watched(design_answer_file(bench.workbook, stage, chosen), frozenset())]
    if chosen.kind in ("learner", "path"):
        files.append(Watched(lab_dir(bench.workbook, stage, chosen) / stage.module, frozenset({FAULT_LAB})))
    return files


def first_open_stage(bench: Workbench) -> Stage | None:
    """The first stage whose evidence does not say accepted for the code as it is now (nothing is run)."""
    return next((stage for stage in bench.course.stages if evidence_cell(bench.workbook, stage) != "accepted"), None)


def parts_for(files: list[Watched], changed: set[Path]) -> frozenset[str] | None:
    """The parts to judge again after ``changed`` were saved; None when none of them is one of the stage's."""
    hit = [item for item in files if item.path.resolve() in changed]
    return frozenset().union(*(item.parts for item in hit)) if hit else None


def _roots(files: list[Watched]) -> list[Path]:
    """Folders to watch: each file's own folder (editors save by writing a new file and renaming it), or its
    nearest existing parent inside the workbook when the folder is not there yet (a lab not started)."""
    roots: set[Path] = set()
    for item in files:
        folder = item.path.parent
        while not folder.is_dir() and folder.parent != folder:
            folder = folder.parent
        roots.add(folder.resolve())
    return sorted(roots)


def first_line(outcome: CheckOutcome) -> str:
    """What the learner reads first: the verdict when accepted, else the first failing test and its difference."""
    stage = outcome.stage
    if outcome.accepted:
        return _("ACCEPTED — stage {number} · {title}").format(number=stage.number, title=stage.text().title)
    if outcome.import_problem is not None:
        return _("{module} does not import: {cause}").format(module=stage.module, cause=outcome.import_problem.cause)
    failing = next((row for row in outcome.tests if row.outcome is not Outcome.PASSED), None)
    if failing is not None:
        difference = (failing.cause or str(failing.outcome)).strip().splitlines()[0]
        return _("FAILING {test}: {difference}").format(test=failing.name, difference=difference)
    return _("the tests pass; still open: {step}").format(step=outcome.document["problems"][0]
                                                          if outcome.document["problems"] else "")


class Keys:
    """Single keys from the terminal (cbreak: no Enter needed, Ctrl-C still interrupts); lines elsewhere."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        try:
            self.fd: int | None = stream.fileno()
        except (OSError, ValueError, AttributeError):
            self.fd = None
        self.tty = self.fd is not None and os.isatty(self.fd)

    @contextlib.contextmanager
    def active(self) -> Iterator[Keys]:
        if not self.tty or self.fd is None:
            yield self
            return
        import termios  # lazy: POSIX only, and only on a terminal
        import tty

        saved = termios.tcgetattr(self.fd)
        try:
            tty.setcbreak(self.fd)
            yield self
        finally:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, saved)

    def read(self) -> str:
        """The keys pressed since the last call ('' when none); never waits."""
        if self.fd is None:
            return ""
        got = ""
        try:
            while select.select([self.fd], [], [], 0)[0]:
                chunk = os.read(self.fd, 64)
                if not chunk:
                    self.fd = None  # end of input: no more keys, watching goes on
                    break
                got += chunk.decode("utf-8", errors="replace")
        except (OSError, ValueError):
            self.fd = None
        return got.lower()


def _interrupted(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _hang_up_as_interrupt() -> Iterator[None]:
    """SIGHUP (the terminal was closed) ends watch as Ctrl-C does, through every ``finally`` — its default ends the
    process at once and left the warm worker's /tmp/forgelab-warm-* folder behind. Only the main thread can."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGHUP"):
        yield
        return
    previous = signal.signal(signal.SIGHUP, _interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, previous)


class Watch:
    """One stage watched for one target; :meth:`loop` returns the process's exit status."""

    def __init__(self, bench: Workbench, stage: Stage, *, target: str = "learner", out: TextIO | None = None,
                 keys: Keys | None = None) -> None:
        self.bench, self.stage, self.target = bench, stage, target
        self.out = out or sys.stdout
        self.keys = keys or Keys(sys.stdin)
        self.outcome: CheckOutcome | None = None
        self.files = watched_files(bench, stage, target)
        self.stop = threading.Event()
        self.warm: WarmWorker | None = None

    # ------------------------------------------------------------ saying things

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def legend(self) -> str:
        shown = _(", ").join(self.bench.workbook.relative(item.path) for item in self.files if item.path.exists())
        keys = _("q quits, h shows the next hint")
        if self.outcome is not None and self.outcome.accepted and self.next_stage() is not None:
            keys = _("n watches the next stage, q quits, h shows the next hint")
        return _("watching {files} — {keys}").format(files=shown, keys=keys)

    def next_stage(self) -> Stage | None:
        stages = list(self.bench.course.stages)
        index = [s.number for s in stages].index(self.stage.number)
        return stages[index + 1] if index + 1 < len(stages) else None

    def show(self, outcome: CheckOutcome, saved: list[Path], pending: frozenset[str] = frozenset()) -> None:
        """The verdict on screen; ``pending``: the parts still being judged after this save (their rows are from
        before it, the verdict line waits for them, and the screen is drawn again when they are done)."""
        evidence = self.bench.workbook.relative(outcome.path) if outcome.path else None
        message = self.bench.check_message(outcome, evidence)
        lines = [first_line(outcome) if not pending or not outcome.accepted
                 else _("stage tests pass — stage {number} · {title}").format(number=self.stage.number,
                                                                             title=self.stage.text().title), ""]
        lines += message.lines[:-1] if pending else message.lines
        if pending:
            names = _(", ").join(_(PENDING_WORDS[part]) for part in sorted(pending))
            lines.append(_("still judging: {parts} (their rows above are from before this save)").format(parts=names))
        elif outcome.accepted:
            following = self.next_stage()
            lines.append(_("stage {number} is accepted. Next: stage {next} — press n to watch it, q to quit").format(
                number=self.stage.number, next=following.number) if following is not None
                else _("stage {number} is accepted, and it is the last stage: `forgelab page` opens the course "
                       "page to self-check your evidence").format(number=self.stage.number))
        elif message.next_step and not pending:
            lines.append(_("next: {step}").format(step=message.next_step))
        when = _dt.datetime.now().strftime("%H:%M:%S")
        names = _(", ").join(self.bench.workbook.relative(path) for path in saved)
        lines += ["", (_("{time} · after saving {files}").format(time=when, files=names) if names
                       else _("{time} · checked").format(time=when)), self.legend()]
        prefix = CLEAR if self.keys.tty else ""
        self.out.write(prefix + Message(tuple(lines)).text() + "\n")
        self.out.flush()

    def hint(self) -> None:
        self.say(self.bench.hint(self.stage, latest=self.outcome).text())

    # ------------------------------------------------------------ running

    def check(self, parts: frozenset[str], saved: list[Path]) -> None:
        """Judge ``parts`` again. After a save of the module the stage tests' verdict comes first: it is on screen,
        with a line naming the parts still being judged, while the transfer test runs; then the whole screen again.
        A slow part whose files are those it was last judged on is not run again (:func:`run_check`)."""
        self.say(_("checking stage {number}…").format(number=self.stage.number))
        if self.outcome is not None:
            parts = parts_to_run(self.bench.workbook, self.stage, self.bench.target(self.target), parts, self.outcome)
        later = parts - {TESTS} if TESTS in parts and self.outcome is not None else frozenset()
        if later:
            first = self.bench.check(self.stage, self.target, parts=frozenset({TESTS}), previous=self.outcome,
                                     warm=self.warm, record=False, write=False)
            self.show(first, saved, pending=later)
            self.outcome = self.bench.check(self.stage, self.target, parts=later, previous=first, warm=self.warm,
                                            record=False)
        else:
            self.outcome = self.bench.check(self.stage, self.target, parts=parts, previous=self.outcome,
                                            warm=self.warm, record=False)
        self.show(self.outcome, saved)
        self.bench.record(self.outcome, self.target)  # the same records as check's, once the verdict is on screen

    def switch(self, stage: Stage) -> None:
        self.stage, self.outcome = stage, None
        self.files = watched_files(self.bench, stage, self.target)

    @contextlib.contextmanager
    def warm_worker(self) -> Iterator[WarmWorker | None]:
        """The warm worker for this watch (None, after one line that says why, when it cannot start); it ends
        with the context, and with it every process it started."""
        try:
            self.warm = WarmWorker.start()
        except WarmUnavailable as error:
            self.say(_("{why}: every save runs a whole cold check instead (the same verdict, only later)").format(
                why=error))
        try:
            yield self.warm
        finally:
            if self.warm is not None:
                self.warm.close()
            self.warm = None

    def loop(self) -> int:
        """Check, then watch until ``q`` (exit 0 when the stage is accepted, else 1). Ctrl-C propagates, and so does a
        closed terminal (SIGHUP, raised as Ctrl-C is): either way the warm worker and its folder are gone."""
        with _hang_up_as_interrupt(), self.keys.active(), self.warm_worker():
            while True:
                following = self._watch()
                if following is None:
                    return 0 if self.outcome is not None and self.outcome.accepted else 1
                self.switch(following)

    def _watch(self) -> Stage | None:
        """Watch the current stage's files until ``q`` (None) or ``n`` on an accepted stage (the next stage).

        The whole check runs once the watcher has started (its first, empty, yield): a save made while that
        check runs is seen afterwards, never lost."""
        roots = _roots(self.files)
        wanted = {item.path.resolve() for item in self.files}

        def relevant(_change: watchfiles.Change, path: str) -> bool:
            return Path(path).resolve() in wanted

        for changes in watchfiles.watch(*roots, watch_filter=relevant, debounce=DEBOUNCE_MS, step=STEP_MS,
                                        rust_timeout=TICK_MS, yield_on_timeout=True, stop_event=self.stop,
                                        recursive=False, raise_interrupt=True):
            if self.outcome is None:
                self.check(ALL_PARTS, [])
            for key in self.keys.read():
                if key == "q":
                    return None
                if key == "h":
                    self.hint()
                if key == "n" and self.outcome is not None and self.outcome.accepted:
                    following = self.next_stage()
                    if following is not None:
                        return following
            changed = {Path(path).resolve() for _change, path in changes if Path(path).exists()}
            parts = parts_for(self.files, changed)
            if parts is not None:
                self.check(parts, sorted(item.path for item in self.files if item.path.resolve() in changed))
            if _roots(self.files) != roots:  # a folder appeared (the lab was started): watch it too
                return self._watch()
        return None
