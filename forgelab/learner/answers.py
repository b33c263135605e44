"""Design answers live with the evidence: ``evidence/<module>/NN-slug/design-answer.md``.

An answer shorter than the check requires is still
saved, but :func:`length_warning` says so at once (:data:`MIN_DESIGN_WORDS`): how many words it has, how many are needed, and
that the stage is not accepted until then.
"""

from __future__ import annotations

from pathlib import Path

from forgelab.learner import backups
from forgelab.core.i18n import ngettext
from forgelab.core.evidence import write_atomic
from forgelab.core.paths import Workbook
from forgelab.core.registry import Stage
from forgelab.verdicts.parts import MIN_DESIGN_WORDS
from forgelab.core.text import word_count





def answer_path(workbook: Workbook, stage: Stage) -> Path:
    return workbook.workspace / stage.design_answer_file


def length_warning(stage: Stage, words: int) -> str | None:
    """A one-line warning when ``words`` is below what the check requires, else None."""
    if words >= MIN_DESIGN_WORDS:
        return None
    return ngettext("this answer has {words} word; the check needs at least {minimum} ({missing} more), so stage "
                    "{number} will not be accepted until the answer is that long — cover each rubric point below",
                    "this answer has {words} words; the check needs at least {minimum} ({missing} more), so stage "
                    "{number} will not be accepted until the answer is that long — cover each rubric point below",
                    words).format(words=words, minimum=MIN_DESIGN_WORDS, missing=MIN_DESIGN_WORDS - words,
                                  number=stage.number)


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
