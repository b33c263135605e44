"""The judge's messages between its processes, as strict Pydantic models shared by every way of starting a session.

A run of the course's tests crosses three process boundaries, each with one message:

* :class:`SessionRequest` — how to start the trusted session: pytest's arguments, the working folder and the exact
  environment. A cold start runs it as ``python -P -m pytest ARGS``; a session started early
  (:mod:`forgelab.judge.early`) reads it as one JSON line; the warm worker's :class:`~forgelab.judge.warm.RunRequest`
  is the same message with the worker's own two fields (``kind`` and ``output``);
* :class:`SessionJob` — what the session judges (``--forgelab-job FILE``): every target's code folder, the modules
  it imports first, the file each course test was copied to and the target it runs against, the settings, the
  isolation, and where to write its report;
* :class:`SessionReport` — what the session saw: one :class:`~forgelab.judge.outcomes.TestRow` per test, the import
  problem of each target that had one, the files that could not be collected.

The same three messages whichever starter ran the session (:mod:`forgelab.judge.starters`): a strategy changes when
the process starts, never what it is told or what it answers. Every message is validated strictly (no unknown
field, no string where a number is due, enums by their values); a malformed one is a :class:`MessageError` that
names the message, the field and what was wrong with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forgelab.judge.outcomes import CollectError, ImportProblem, TestRow
from forgelab.judge.sandbox import Isolation
from forgelab.judge.settings import JudgeSettings


class MessageError(ValueError):
    """A message between the judge's processes that is not what its model says; the text names the field."""


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


NonEmpty = Annotated[str, Field(min_length=1)]


class SessionRequest(Message):
    """Start ``python -P -m pytest ARGS`` in ``cwd`` with exactly ``env``."""

    args: list[str]
    cwd: NonEmpty
    env: dict[str, str]


class SessionTarget(Message):
    """One target of a session: its code folder (materialized ``forge/`` and the host's files), the modules its
    host imports first, its stage, and whether its first failing test ends its run (a mutant needs only one)."""

    code_dir: NonEmpty
    probe: tuple[str, ...] = ()  # dotted module names, e.g. forge.instructions
    stage: str = ""
    first_failure_ends: bool = False


class SessionFile(Message):
    """A course test file as the session sees it: the target it runs against and its path in the course."""

    target: NonEmpty
    canonical: NonEmpty  # e.g. tests/stages/test_01_instruction_hierarchy.py


class SessionJob(Message):
    """What one trusted session judges. ``files`` maps each copied test file (absolute path) to its target, in the
    order the session is given them; ``report`` is where the session writes its :class:`SessionReport`."""

    targets: dict[str, SessionTarget]
    files: dict[str, SessionFile]
    settings: JudgeSettings
    isolation: Isolation
    report: NonEmpty
    tests_root: NonEmpty


class SessionReport(Message):
    """What one trusted session saw, in the order its tests ran; ``exitstatus`` is pytest's."""

    rows: tuple[TestRow, ...]
    import_problems: dict[str, ImportProblem]
    collect_errors: tuple[CollectError, ...]
    exitstatus: int
    budget_spent_s: float = 0.0  # of the submission's time budget, by this session's learner code (TimeBudget.spent)


M = TypeVar("M", bound=Message)


def explain(error: ValidationError) -> str:
    """The first field a validation error names and what is wrong with it (and how many more there are)."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the message"
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def parse(model: type[M], text: str | bytes, source: str) -> M:
    """``text`` read as a ``model``, or a :class:`MessageError` naming ``source``, the field and the fault."""
    try:
        return model.model_validate_json(text, strict=True)
    except ValidationError as error:
        raise MessageError(f"malformed {model.__name__} in {source} ({explain(error)}): the judge wrote it, so this "
                           "is a fault of the judge or of a process that changed the file; run the check again, and "
                           "report it if it stays") from None


def read(model: type[M], path: Path) -> M:
    """The message in file ``path`` (see :func:`parse`)."""
    return parse(model, path.read_bytes(), str(path))


def write(message: Message, path: Path) -> None:
    path.write_text(message.model_dump_json(), encoding="utf-8")
