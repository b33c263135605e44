"""Small per-workspace memory: hints and fault-lab hints shown, prediction answers, last fault-lab checks, each
stage's first failing test (the next hint is chosen for it).

Stored as ``.forgelab/state.json`` and replaced atomically; a damaged file is set aside, not trusted. Every change
reads, changes and writes the file under a lock (``.forgelab/state.lock``): a notebook and a terminal may write
at once, and neither loses the other's change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock

from forgelab.core.evidence import write_atomic
from forgelab.core.paths import Workbook
from forgelab.core import learning


def _path(workbook: Workbook) -> Path:
    return workbook.state_dir / "state.json"


def load(workbook: Workbook) -> dict[str, Any]:
    path = _path(workbook)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        path.replace(path.with_suffix(".damaged.json"))
        return {}
    return data if isinstance(data, dict) else {}


Result = TypeVar("Result")


def modify(workbook: Workbook, change: Callable[[dict[str, Any]], Result]) -> Result:
    """Apply ``change`` to the state in place, under the lock; the file is written only when something changed."""
    workbook.state_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(workbook.state_dir / "state.lock"), timeout=30):
        data = load(workbook)
        before = json.dumps(data, sort_keys=True)
        result = change(data)
        if json.dumps(data, sort_keys=True) != before:
            write_atomic(_path(workbook), json.dumps(data, indent=2, sort_keys=True) + "\n")
        return result


def update(workbook: Workbook, section: str, key: str, value: Any) -> dict[str, Any]:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        data.setdefault(section, {})[key] = value
        return data

    return modify(workbook, change)


def get(workbook: Workbook, section: str, key: str, default: Any = None) -> Any:
    return load(workbook).get(section, {}).get(key, default)


def _rungs(value: Any, total: int | None = None) -> tuple[int, ...]:
    """The stage hints revealed, as rung numbers (1 = the first) in the ladder's order. A count (how earlier
    versions kept it: the first ``n`` rungs) reads as rungs 1..n; anything else as none."""
    if isinstance(value, bool):
        return ()
    if isinstance(value, int):
        rungs = set(range(1, value + 1))
    elif isinstance(value, list):
        rungs = {item for item in value if isinstance(item, int) and not isinstance(item, bool) and item >= 1}
    else:
        return ()
    return tuple(sorted(rung for rung in rungs if total is None or rung <= total))


def revealed_hints(workbook: Workbook, stage_number: str, total: int | None = None) -> tuple[int, ...]:
    """The rungs of the stage's hint ladder revealed so far (1 = the first), in the ladder's order."""
    return _rungs(get(workbook, "hints", stage_number, []), total)


def hints_shown(workbook: Workbook, stage_number: str) -> int:
    """How many of the stage's hints are revealed."""
    return len(revealed_hints(workbook, stage_number))


def reveal_hint(workbook: Workbook, stage_number: str, total: int,
                choose: Callable[[tuple[int, ...]], int | None]) -> tuple[tuple[int, ...], int | None]:
    """Reveal the rung ``choose`` picks among the revealed ones (under the lock: a notebook and a terminal asking at
    once reveal two rungs, never one twice); returns (the rungs revealed now, the new rung or None)."""

    def one_more(data: dict[str, Any]) -> tuple[tuple[int, ...], int | None]:
        revealed = _rungs(data.get("hints", {}).get(stage_number, []), total)
        rung = choose(revealed)
        if rung is None or rung in revealed or not 1 <= rung <= total:
            return revealed, None
        now = tuple(sorted({*revealed, rung}))
        data.setdefault("hints", {})[stage_number] = list(now)
        return now, rung

    return modify(workbook, one_more)


def hide_hints(workbook: Workbook, stage_number: str) -> None:
    update(workbook, "hints", stage_number, [])


def remember_first_failing(workbook: Workbook, stage_number: str, test: str | None) -> None:
    """The first failing test of the stage's latest check (None: none failed, or the module did not import) — the
    test the next stage hint is chosen for."""
    update(workbook, "first_failing", stage_number, test)


def first_failing(workbook: Workbook, stage_number: str) -> tuple[bool, str | None]:
    """(whether a check of the stage was remembered, its first failing test)."""
    section = load(workbook).get("first_failing", {})
    if not isinstance(section, dict) or stage_number not in section:
        return False, None
    value = section[stage_number]
    return True, value if isinstance(value, str) else None


def _reveal_next(workbook: Workbook, section: str, stage_number: str, items: Sequence[str]) -> tuple[int, str | None]:
    def one_more(data: dict[str, Any]) -> int:
        shown = int(data.get(section, {}).get(stage_number, 0))
        if shown < len(items):
            data.setdefault(section, {})[stage_number] = shown + 1
        return shown

    shown = modify(workbook, one_more)
    if shown >= len(items):
        return shown, None
    return shown + 1, items[shown]


def fault_hints_shown(workbook: Workbook, stage_number: str) -> int:
    """How many rungs of the stage's fault-lab ladder (story, diagnosis steps, fix principle) are shown."""
    return int(get(workbook, "fault_hints", stage_number, 0))


def reveal_next_fault_hint(workbook: Workbook, stage_number: str, rungs: Sequence[str]) -> tuple[int, str | None]:
    """Reveal one more rung of the fault-lab ladder; returns (how many are shown now, the new rung or None)."""
    return _reveal_next(workbook, "fault_hints", stage_number, rungs)


def hide_fault_hints(workbook: Workbook, stage_number: str) -> None:
    update(workbook, "fault_hints", stage_number, 0)


def record_prediction(workbook: Workbook, stage_number: str, choice: int, options: int, correct: bool) -> None:
    """The prediction quiz was answered: the latest answer here, the first one in the learning record."""
    update(workbook, "predictions", stage_number, {"choice": choice, "correct": correct})
    learning.note_prediction(workbook, stage_number, choice, options, correct)
