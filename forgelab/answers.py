"""Design answers live with the evidence: ``evidence/<module>/NN-slug/design-answer.md``."""

from __future__ import annotations

from pathlib import Path

from forgelab import backups
from forgelab.evidence import write_atomic
from forgelab.paths import Workbook
from forgelab.registry import Stage


def answer_path(workbook: Workbook, stage: Stage) -> Path:
    return workbook.workspace / stage.design_answer_file


def save_answer(workbook: Workbook, stage: Stage, text: str) -> tuple[Path, int]:
    """Save the answer (keeping any previous one in a backup); returns (path, word count)."""
    path = answer_path(workbook, stage)
    if path.is_file() and path.read_text(encoding="utf-8") != text:
        backups.take(workbook, f"answer-{stage.number}", {stage.design_answer_file: path})
    write_atomic(path, text.strip() + "\n")
    return path, len(text.split())


def load_answer(workbook: Workbook, stage: Stage) -> str:
    path = answer_path(workbook, stage)
    return path.read_text(encoding="utf-8") if path.is_file() else ""
