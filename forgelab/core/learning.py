"""The learning record: how a learner got through each stage, kept with their evidence.

``evidence/learning-record.json`` is written by the tools as the learner works and handed in with
the rest of ``evidence/``. Per stage it keeps:

* ``hints``: the most stage hints ever revealed at once, of how many — hiding them again (``--reset``) does
  not lower it — and, in ``shown``, each rung as it was revealed: its number, the first failing test it was
  chosen for (null when no check had failed) and whether it addresses that test or followed the ladder's order
  (the fault lab's own ladder is not recorded here: the fault lab's evidence is its own);
* ``prediction``: the first option picked in the prediction quiz (before the rationale was shown),
  whether it was right, and when;
* ``checks``: how many times ``forgelab check`` wrote the stage's evidence, when it first did, and
  when it was first accepted.

It holds counts, choices and times only — no code, no answer text. The instructor's class report
(``forgelab grade report``) reads it as self-reported, untrusted data: :func:`parse` accepts only a
document that fits :class:`LearningRecord` exactly. Writing it never stops a learner's command: a
record that cannot be read is set aside (``learning-record.damaged.json``) and a new one started.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forgelab.core.paths import Workbook
from forgelab.core.evidence import write_atomic

FILENAME = "learning-record.json"
KIND = "forge-workbook/learning-record"
MAX_BYTES = 256 * 1024  # far more than eleven stages need; a larger file is not read
STAGE_NUMBER = re.compile(r"^[0-9]{2}$")

Count = Annotated[int, Field(ge=0, le=1000)]
Stamp = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


TEST_NAME = re.compile(r"^test_[A-Za-z0-9_]{1,200}$")
TestName = Annotated[str, Field(pattern=TEST_NAME.pattern)]
MAX_SHOWN = 200  # rungs noted per stage; a learner who resets and reveals again past it is not noted further


class HintShown(_Strict):
    """One stage hint revealed: rung ``rung`` (1 = the first), for the first failing test ``failing_test`` of the
    stage's latest check (None: none was known), ``addressed`` when the stage declares the rung for that test."""

    rung: Annotated[int, Field(ge=1, le=1000)]
    failing_test: TestName | None = None
    addressed: bool
    at: Stamp


class HintDepth(_Strict):
    """The most hints revealed at once (``deepest``), of ``available``; ``shown``: each rung as it was revealed."""

    deepest: Count
    available: Count
    shown: list[HintShown] = Field(default_factory=list, max_length=MAX_SHOWN)


class PredictionAnswer(_Strict):
    """The first option picked (0-based) among ``options``, and whether it was the answer."""

    choice: Count
    options: Count
    correct: bool
    answered_at: Stamp


class CheckHistory(_Strict):
    count: Count
    first_at: Stamp
    accepted_at: Stamp | None = None


class StageRecord(_Strict):
    hints: HintDepth | None = None
    prediction: PredictionAnswer | None = None
    checks: CheckHistory | None = None


class LearningRecord(_Strict):
    schema_version: Literal[1] = 1
    kind: Literal["forge-workbook/learning-record"] = "forge-workbook/learning-record"
    stages: dict[Annotated[str, Field(pattern=STAGE_NUMBER.pattern)], StageRecord] = Field(default_factory=dict)


class RecordError(ValueError):
    """A learning record that is not one (the message says what is wrong with it)."""


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def parse(data: bytes) -> LearningRecord:
    """A handed-in record, checked field by field; :class:`RecordError` when it does not fit."""
    if len(data) > MAX_BYTES:
        raise RecordError(f"{len(data)} bytes, more than the {MAX_BYTES} a learning record may have")
    try:
        return LearningRecord.model_validate_json(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the document"
        raise RecordError(f"{where}: {first['msg']}") from None


def path(workbook: Workbook) -> Path:
    return workbook.evidence / FILENAME


def load(workbook: Workbook) -> LearningRecord:
    """The workbook's record; an empty one when there is none (a damaged one is set aside first)."""
    file = path(workbook)
    if not file.is_file():
        return LearningRecord()
    try:
        return parse(file.read_bytes())
    except (OSError, RecordError):
        try:
            file.replace(file.with_name("learning-record.damaged.json"))
        except OSError:
            pass
        return LearningRecord()


def _update(workbook: Workbook, number: str, change: Callable[[StageRecord], dict[str, object] | None]) -> None:
    """Change one stage's entry under a lock (a notebook and a terminal may write at once): ``change`` gets the
    entry as it is and returns the parts to replace (None: nothing to do)."""
    from filelock import FileLock


    if not STAGE_NUMBER.match(number):
        return
    workbook.state_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(workbook.state_dir / "learning-record.lock"), timeout=30):
        record = load(workbook)
        before = record.stages.get(number, StageRecord())
        parts = change(before)
        if parts is None:
            return
        stages = {**record.stages, number: before.model_copy(update=parts)}
        updated = LearningRecord(stages=dict(sorted(stages.items())))
        text = json.dumps(updated.model_dump(mode="json", exclude_none=True), indent=2, sort_keys=True) + "\n"
        write_atomic(path(workbook), text)


def _quietly(workbook: Workbook, number: str, change: Callable[[StageRecord], dict[str, object] | None]) -> None:
    """Keeping the record must never stop the command the learner ran."""
    try:
        _update(workbook, number, change)
    except (OSError, ValueError, TimeoutError):
        pass


def note_hint(workbook: Workbook, number: str, shown: int, available: int, rung: int | None = None,
              failing_test: str | None = None, addressed: bool = False) -> None:
    """``shown`` stage hints are revealed now, the last of them ``rung`` (chosen for ``failing_test``); the record
    keeps the most ever revealed at once and notes the rung with its failure."""
    stamp = now()

    def change(before: StageRecord) -> dict[str, object]:
        deepest = max(shown, before.hints.deepest if before.hints else 0)
        noted = list(before.hints.shown) if before.hints else []
        if rung is not None and len(noted) < MAX_SHOWN:
            noted.append(HintShown(rung=min(rung, 1000), addressed=addressed, at=stamp,
                                   failing_test=failing_test if failing_test and TEST_NAME.match(failing_test) else None))
        return {"hints": HintDepth(deepest=min(deepest, 1000), available=min(available, 1000), shown=noted)}

    _quietly(workbook, number, change)


def note_prediction(workbook: Workbook, number: str, choice: int, options: int, correct: bool) -> None:
    """The quiz's answer — only the first one counts: later picks are made after the rationale was shown."""

    def change(before: StageRecord) -> dict[str, object] | None:
        if before.prediction is not None:
            return None
        return {"prediction": PredictionAnswer(choice=choice, options=options, correct=correct, answered_at=now())}

    _quietly(workbook, number, change)


def note_check(workbook: Workbook, number: str, accepted: bool) -> None:
    """``forgelab check`` wrote the stage's evidence: count it, keep the first time and the first acceptance."""
    stamp = now()

    def change(before: StageRecord) -> dict[str, object]:
        earlier = before.checks
        return {"checks": CheckHistory(count=min((earlier.count if earlier else 0) + 1, 1000),
                                       first_at=earlier.first_at if earlier else stamp,
                                       accepted_at=(earlier.accepted_at if earlier and earlier.accepted_at else
                                                    stamp if accepted else None))}

    _quietly(workbook, number, change)
