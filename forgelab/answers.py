"""Design answers live with the evidence: ``evidence/<module>/NN-slug/design-answer.md``.

An answer shorter than the check requires (:data:`forgelab.checker.MIN_DESIGN_WORDS`) is still
saved, but :func:`length_warning` says so at once: how many words it has, how many are needed, and
that the stage is not accepted until then.
"""

from __future__ import annotations

from pathlib import Path

from forgelab import backups
from forgelab.evidence import write_atomic
from forgelab.paths import Workbook
from forgelab.registry import Stage


def answer_path(workbook: Workbook, stage: Stage) -> Path:
    return workbook.workspace / stage.design_answer_file


def word_count(text: str) -> int:
    """Words as the checker counts them."""
    return len(text.split())


def length_warning(stage: Stage, words: int) -> str | None:
    """A one-line warning when ``words`` is below what the check requires, else None."""
    from forgelab.checker import MIN_DESIGN_WORDS

    if words >= MIN_DESIGN_WORDS:
        return None
    missing = MIN_DESIGN_WORDS - words
    return (f"this answer has {words} word{'s' if words != 1 else ''}; the check needs at least {MIN_DESIGN_WORDS} "
            f"({missing} more), so stage {stage.number} will not be accepted until the answer is that long — "
            "cover each rubric point below")


def save_answer(workbook: Workbook, stage: Stage, text: str) -> tuple[Path, int]:
    """Save the answer (keeping any previous one in a backup); returns (path, word count)."""
    path = answer_path(workbook, stage)
    if path.is_file() and path.read_text(encoding="utf-8") != text:
        backups.take(workbook, f"answer-{stage.number}", {stage.design_answer_file: path})
    write_atomic(path, text.strip() + "\n")
    return path, word_count(text)


def load_answer(workbook: Workbook, stage: Stage) -> str:
    path = answer_path(workbook, stage)
    return path.read_text(encoding="utf-8") if path.is_file() else ""
