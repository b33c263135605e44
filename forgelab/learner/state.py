"""Small per-workspace memory: hints and fault-lab hints shown, prediction answers, last fault-lab checks.

Stored as ``.forgelab/state.json`` and replaced atomically; a damaged file is set aside, not trusted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def update(workbook: Workbook, section: str, key: str, value: Any) -> dict[str, Any]:
    data = load(workbook)
    data.setdefault(section, {})[key] = value
    write_atomic(_path(workbook), json.dumps(data, indent=2, sort_keys=True) + "\n")
    return data


def get(workbook: Workbook, section: str, key: str, default: Any = None) -> Any:
    return load(workbook).get(section, {}).get(key, default)


def hints_shown(workbook: Workbook, stage_number: str) -> int:
    return int(get(workbook, "hints", stage_number, 0))


def _reveal_next(workbook: Workbook, section: str, stage_number: str, items: tuple[str, ...]) -> tuple[int, str | None]:
    shown = int(get(workbook, section, stage_number, 0))
    if shown >= len(items):
        return shown, None
    update(workbook, section, stage_number, shown + 1)
    if section == "hints":  # the learning record keeps the deepest stage hint ever revealed

        learning.note_hint(workbook, stage_number, shown + 1, len(items))
    return shown + 1, items[shown]


def reveal_next_hint(workbook: Workbook, stage_number: str, hints: tuple[str, ...]) -> tuple[int, str | None]:
    """Reveal one more hint; returns (how many are shown now, the new hint or None if all were shown)."""
    return _reveal_next(workbook, "hints", stage_number, hints)


def fault_hints_shown(workbook: Workbook, stage_number: str) -> int:
    """How many rungs of the stage's fault-lab ladder (story, diagnosis steps, fix principle) are shown."""
    return int(get(workbook, "fault_hints", stage_number, 0))


def reveal_next_fault_hint(workbook: Workbook, stage_number: str, rungs: tuple[str, ...]) -> tuple[int, str | None]:
    """Reveal one more rung of the fault-lab ladder; returns (how many are shown now, the new rung or None)."""
    return _reveal_next(workbook, "fault_hints", stage_number, rungs)


def hide_fault_hints(workbook: Workbook, stage_number: str) -> None:
    update(workbook, "fault_hints", stage_number, 0)


def record_prediction(workbook: Workbook, stage_number: str, choice: int, options: int, correct: bool) -> None:
    """The prediction quiz was answered: the latest answer here, the first one in the learning record."""
    update(workbook, "predictions", stage_number, {"choice": choice, "correct": correct})
    learning.note_prediction(workbook, stage_number, choice, options, correct)
