"""What the judge reports, typed: every verdict is an enum value, never inferred from a message."""

from __future__ import annotations

import enum
import signal
from dataclasses import dataclass, field
from typing import ClassVar

from forgelab.core.i18n import _


class Outcome(enum.StrEnum):
    """One test's outcome. The values are the words verification.json has always used."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # the test could not run properly (setup failed, the value could not cross, a crash)
    SKIPPED = "skipped"
    TIMEOUT = "timeout"  # a limit stopped the learner's code (see Limit)
    NOT_RUN = "not_run"  # not started: the module does not import, or earlier tests hit limits


class Limit(enum.StrEnum):
    """Which limit stopped the learner's code."""

    CPU = "cpu"  # CPU time: an endless loop (a busy machine does not count)
    WALL = "wall"  # wall-clock time: code that waits forever
    MEMORY = "memory"
    OUTPUT = "output"  # printed too much
    CRASH = "crash"  # the process ended in the middle of a call (os._exit, a signal, a fault)


class ImportKind(enum.StrEnum):
    MISSING = "missing"
    SYNTAX = "syntax"
    IMPORT = "import"  # an exception while the module was imported
    LIMIT = "limit"  # importing it hit a limit (e.g. a loop at module level)


def ended_how(code: int | None) -> str:
    """How a process ended, from its exit code as ``subprocess`` gives it: an exit status, or the signal (negative)."""
    if code is None:
        return _("its exit status could not be read")
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return _("ended by signal {signal}").format(signal=name)
    return _("exit status {code}").format(code=code)


@dataclass(frozen=True)
class ImportProblem:
    """Why a target's module did not import: one cause with file and line where known."""

    # read strictly wherever it crosses a process boundary inside a message (forgelab.judge.messages)
    __pydantic_config__: ClassVar[dict[str, object]] = {"strict": True, "extra": "forbid"}

    module: str  # e.g. forge/instructions.py
    kind: ImportKind
    message: str  # e.g. "invalid syntax"
    file: str = ""  # as the learner sees it, e.g. forge/instructions.py
    line: int = 0
    error_type: str = ""
    stage: str = ""  # the stage whose module this is, when known (for the next step)

    @property
    def where(self) -> str:
        return _("{file}, line {line}").format(file=self.file, line=self.line) if self.file and self.line else self.file

    @property
    def cause(self) -> str:
        """One line a learner can act on."""
        if self.kind is ImportKind.MISSING:
            fix = (_("`forgelab starter {stage}` brings back the shipped starter").format(stage=self.stage) if self.stage
                   else _("restore it from the workbook"))
            return _("{module} does not exist or cannot be imported as a module: {fix}").format(module=self.module, fix=fix)
        if self.kind is ImportKind.SYNTAX:
            return _("syntax error in {where}: {message} — fix that line and run again").format(
                where=self.where or self.module, message=self.message)
        if self.kind is ImportKind.LIMIT:
            return _("importing {module} did not finish: {message} — look for a loop that runs at module level").format(
                module=self.module, message=self.message)
        detail = f"{self.error_type}: {self.message}".rstrip(": ")
        if self.where:
            return _("importing {module} raised {detail} ({where}) — fix the module so that it imports cleanly").format(
                module=self.module, detail=detail, where=self.where)
        return _("importing {module} raised {detail} — fix the module so that it imports cleanly").format(
            module=self.module, detail=detail)


@dataclass(frozen=True)
class TestRow:
    """One test item's result against one target."""

    __test__: ClassVar[bool] = False  # a result row, not a test class: pytest must not try to collect it
    # read strictly wherever it crosses a process boundary inside a message (forgelab.judge.messages)
    __pydantic_config__: ClassVar[dict[str, object]] = {"strict": True, "extra": "forbid"}

    nodeid: str  # canonical, e.g. tests/stages/test_01_instruction_hierarchy.py::test_x[param]
    target: str  # the target label the test ran against
    outcome: Outcome
    cause: str  # one line
    detail: str = ""  # the full failure text (assertion, the learner's traceback, printed output)
    duration_ms: int = 0
    limit: Limit | None = None
    printed: str = ""  # what the learner's code printed during this test (capped)
    unfinished: bool = False  # it failed on a function that is still the starter's stub (NotImplementedError)
    # what a course test handed back with the session's ``forgelab_record`` fixture: JSON text (sorted keys), the
    # value the learner's code computed, carried as data (the fault lab's seal derives its key from such values)
    recorded: str = ""
    trips: int = 0  # exchanges with the learner's process during this test (forgelab.judge.remote.each saves them)

    @property
    def name(self) -> str:
        return self.nodeid.rsplit("::", 1)[-1].split("[", 1)[0]

    @property
    def file(self) -> str:
        return self.nodeid.split("::", 1)[0]

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    @property
    def stopped_by_limit(self) -> bool:
        """A limit stopped it, or it was not run because earlier tests of its target hit limits."""
        return self.outcome is Outcome.TIMEOUT or (self.outcome is Outcome.NOT_RUN and self.limit is not None)


@dataclass(frozen=True)
class CollectError:
    """A course test file that could not be collected (imported) for one target."""

    # read strictly wherever it crosses a process boundary inside a message (forgelab.judge.messages)
    __pydantic_config__: ClassVar[dict[str, object]] = {"strict": True, "extra": "forbid"}

    file: str  # canonical path of the file that could not be collected
    target: str
    cause: str
    detail: str = ""


@dataclass(frozen=True)
class RunReport:
    """Everything one judge run saw: rows by node id and target, and problems by target."""

    rows: tuple[TestRow, ...]
    import_problems: dict[str, ImportProblem] = field(default_factory=dict)  # target label → problem
    collect_errors: tuple[CollectError, ...] = ()
    problem: str | None = None  # a run-level problem (the course's session could not start, or was stopped)
    sandbox: str = ""  # how learner code was isolated in this run, in words
    target_problems: dict[str, str] = field(default_factory=dict)  # target label → why its learner tests did not run
    # target labels whose learner-test process ended by itself (an exit or a signal) before it reported every result,
    # or broke its link to the judge: no limit of time or memory stopped it (grading's outcome "ended")
    ended_targets: frozenset[str] = frozenset()
    # seconds of the submission's time budget the learner's code spent in the course's tests, every session added up
    course_budget_spent_s: float = 0.0

    def for_target(self, label: str) -> tuple[TestRow, ...]:
        return tuple(row for row in self.rows if row.target == label)

    def in_file(self, label: str, file: str) -> tuple[TestRow, ...]:
        return tuple(row for row in self.rows if row.target == label and row.file == file)

    def named(self, label: str, file: str, name: str) -> tuple[TestRow, ...]:
        return tuple(row for row in self.in_file(label, file) if row.name == name)
