"""Small per-workspace memory: hints and fault-lab hints shown, prediction answers, last fault-lab checks, each
stage's first failing test (the next hint is chosen for it).

Stored as ``.forgelab/state.json`` and replaced atomically; a damaged file is set aside, not trusted. Every change
reads, changes and writes the file under a lock (``.forgelab/state.lock``): a notebook and a terminal may write
at once, and neither loses the other's change.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, TypeVar

from filelock import FileLock
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from forgelab.core.evidence import write_atomic
from forgelab.core.fileformat import FileFormatError, parse_json
from forgelab.core.i18n import _
from forgelab.core.paths import Workbook
from forgelab.core import learning

DAMAGED = "state.damaged.json"


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class Prediction(_Strict):
    """The latest answer to a stage's prediction quiz (0-based option)."""

    choice: int
    correct: bool


class FaultCheck(_Strict):
    """The last ``forgelab fault check`` of a stage: its status and the lab file it checked."""

    status: str
    file_sha256: str | None  # None: the lab file was missing


class StatusTests(_Strict):
    """A stage's tests as ``forgelab status`` last saw them (:class:`forgelab.learner.status.TestsCell`)."""

    passed: int
    total: int
    problem: str
    starter: bool = False


class StatusEntry(_Strict):
    """What ``status`` keeps for a stage, valid while the digest ``key`` of what it judged is unchanged."""

    key: str
    tests: StatusTests
    transfer: str


def _count_as_rungs(value: object) -> object:
    """Earlier versions kept a count of stage hints (the first ``n`` rungs): read as the rungs 1..n."""
    if isinstance(value, int) and not isinstance(value, bool):
        return list(range(1, value + 1))
    return value


class WorkspaceState(_Strict):
    """``.forgelab/state.json``: one table per kind of memory, each keyed by stage number (or module path)."""

    model_config = ConfigDict(populate_by_name=True)

    hints: dict[str, Annotated[list[int], BeforeValidator(_count_as_rungs)]] = Field(default_factory=dict)
    fault_hints: dict[str, int] = Field(default_factory=dict)
    first_failing: dict[str, str | None] = Field(default_factory=dict)
    predictions: dict[str, Prediction] = Field(default_factory=dict)
    fault_lab: dict[str, FaultCheck] = Field(default_factory=dict)
    imports_cleanly: dict[str, str] = Field(default_factory=dict, alias="imports-cleanly")
    status: dict[str, StatusEntry] = Field(default_factory=dict, alias="status-v3")

    def text(self) -> str:
        return json.dumps(self.model_dump(mode="json", by_alias=True, exclude_defaults=True), indent=2,
                          sort_keys=True) + "\n"


def _path(workbook: Workbook) -> Path:
    return workbook.state_dir / "state.json"


def load(workbook: Workbook) -> WorkspaceState:
    """The state; a file that does not fit :class:`WorkspaceState` is set aside (``state.damaged.json``) with one line
    on stderr naming the file, the field and what happened, and a fresh state is used."""
    path = _path(workbook)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return WorkspaceState()
    except OSError as error:
        raw = str(error).encode()  # unreadable: set aside below like a damaged file
    try:
        return parse_json(path.as_posix(), raw, WorkspaceState,
                          _("the file was damaged or edited by hand; it is set aside as {damaged} and a new one is "
                            "started (only which hints were shown and what status can work out again are "
                            "forgotten)").format(damaged=DAMAGED))
    except FileFormatError as error:
        try:
            path.replace(path.with_name(DAMAGED))
        except OSError:
            pass
        print(f"forgelab: {error}", file=sys.stderr)
        return WorkspaceState()


Result = TypeVar("Result")


def modify(workbook: Workbook, change: Callable[[WorkspaceState], Result]) -> Result:
    """Apply ``change`` to the state in place, under the lock; the file is written only when something changed."""
    workbook.state_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(workbook.state_dir / "state.lock"), timeout=30):
        data = load(workbook)
        before = data.text()
        result = change(data)
        after = WorkspaceState.model_validate(data.model_dump(by_alias=True, warnings=False))  # a change keeps to the format
        if after.text() != before:
            write_atomic(_path(workbook), after.text())
        return result


def _rungs(value: list[int], total: int | None = None) -> tuple[int, ...]:
    """The stage hints revealed, as rung numbers (1 = the first) in the ladder's order."""
    rungs = {item for item in value if item >= 1}
    return tuple(sorted(rung for rung in rungs if total is None or rung <= total))


def revealed_hints(workbook: Workbook, stage_number: str, total: int | None = None) -> tuple[int, ...]:
    """The rungs of the stage's hint ladder revealed so far (1 = the first), in the ladder's order."""
    return _rungs(load(workbook).hints.get(stage_number, []), total)


def hints_shown(workbook: Workbook, stage_number: str) -> int:
    """How many of the stage's hints are revealed."""
    return len(revealed_hints(workbook, stage_number))


def reveal_hint(workbook: Workbook, stage_number: str, total: int,
                choose: Callable[[tuple[int, ...]], int | None]) -> tuple[tuple[int, ...], int | None]:
    """Reveal the rung ``choose`` picks among the revealed ones (under the lock: a notebook and a terminal asking at
    once reveal two rungs, never one twice); returns (the rungs revealed now, the new rung or None)."""

    def one_more(data: WorkspaceState) -> tuple[tuple[int, ...], int | None]:
        revealed = _rungs(data.hints.get(stage_number, []), total)
        rung = choose(revealed)
        if rung is None or rung in revealed or not 1 <= rung <= total:
            return revealed, None
        now = tuple(sorted({*revealed, rung}))
        data.hints[stage_number] = list(now)
        return now, rung

    return modify(workbook, one_more)


def hide_hints(workbook: Workbook, stage_number: str) -> None:
    modify(workbook, lambda data: data.hints.__setitem__(stage_number, []))


def remember_first_failing(workbook: Workbook, stage_number: str, test: str | None) -> None:
    """The first failing test of the stage's latest check (None: none failed, or the module did not import) — the
    test the next stage hint is chosen for."""
    modify(workbook, lambda data: data.first_failing.__setitem__(stage_number, test))


def first_failing(workbook: Workbook, stage_number: str) -> tuple[bool, str | None]:
    """(whether a check of the stage was remembered, its first failing test)."""
    section = load(workbook).first_failing
    if stage_number not in section:
        return False, None
    return True, section[stage_number]


def _reveal_next(workbook: Workbook, stage_number: str, items: Sequence[str]) -> tuple[int, str | None]:
    def one_more(data: WorkspaceState) -> int:
        shown = data.fault_hints.get(stage_number, 0)
        if shown < len(items):
            data.fault_hints[stage_number] = shown + 1
        return shown

    shown = modify(workbook, one_more)
    if shown >= len(items):
        return shown, None
    return shown + 1, items[shown]


def fault_hints_shown(workbook: Workbook, stage_number: str) -> int:
    """How many rungs of the stage's fault-lab ladder (story, diagnosis steps, fix principle) are shown."""
    return load(workbook).fault_hints.get(stage_number, 0)


def reveal_next_fault_hint(workbook: Workbook, stage_number: str, rungs: Sequence[str]) -> tuple[int, str | None]:
    """Reveal one more rung of the fault-lab ladder; returns (how many are shown now, the new rung or None)."""
    return _reveal_next(workbook, stage_number, rungs)


def show_fault_hints(workbook: Workbook, stage_number: str, shown: int) -> None:
    """``shown`` rungs of the stage's fault-lab ladder are shown (0: hidden again)."""
    modify(workbook, lambda data: data.fault_hints.__setitem__(stage_number, shown))


def hide_fault_hints(workbook: Workbook, stage_number: str) -> None:
    show_fault_hints(workbook, stage_number, 0)


def record_prediction(workbook: Workbook, stage_number: str, choice: int, options: int, correct: bool) -> None:
    """The prediction quiz was answered: the latest answer here, the first one in the learning record."""
    modify(workbook, lambda data: data.predictions.__setitem__(stage_number,
                                                               Prediction(choice=choice, correct=correct)))
    learning.note_prediction(workbook, stage_number, choice, options, correct)


def remember_fault_check(workbook: Workbook, stage_number: str, status: str, file_sha256: str | None) -> None:
    modify(workbook, lambda data: data.fault_lab.__setitem__(stage_number,
                                                             FaultCheck(status=status, file_sha256=file_sha256)))


def last_fault_check(workbook: Workbook, stage_number: str) -> FaultCheck | None:
    return load(workbook).fault_lab.get(stage_number)


def remember_import(workbook: Workbook, module: str, key: str) -> None:
    """``module`` (with what it imports, digest ``key``) imported cleanly."""
    modify(workbook, lambda data: data.imports_cleanly.__setitem__(module, key))


def imported_cleanly(workbook: Workbook, module: str) -> str | None:
    """The digest of ``module`` as it last imported cleanly, if it did."""
    return load(workbook).imports_cleanly.get(module)


def remember_status(workbook: Workbook, stage_number: str, entry: StatusEntry) -> None:
    modify(workbook, lambda data: data.status.__setitem__(stage_number, entry))


def remembered_status(workbook: Workbook, stage_number: str) -> StatusEntry | None:
    return load(workbook).status.get(stage_number)
