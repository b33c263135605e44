"""Design answers live with the evidence: ``evidence/<module>/NN-slug/design-answer.md``.

An answer shorter than the check requires is still
saved, but :func:`length_warning` says so at once (:data:`MIN_DESIGN_WORDS`): how many words it has, how many are needed, and
that the stage is not accepted until then.
"""

from __future__ import annotations

import re
from pathlib import Path

from forgelab import backups
from forgelab.i18n import ngettext
from forgelab.evidence import write_atomic
from forgelab.paths import Workbook
from forgelab.registry import Stage


MIN_DESIGN_WORDS = 40  # the check's minimum length of a design answer (Chinese: two characters count one word)


def answer_path(workbook: Workbook, stage: Stage) -> Path:
    return workbook.workspace / stage.design_answer_file


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def word_count(text: str) -> int:
    """Words as the checker counts them, in either edition: whitespace-separated words, where a run of
    Chinese characters counts one word per two characters (about how much a Chinese sentence says
    per English word), so the minimum asks the same of an answer in either language."""
    total = 0
    for token in text.split():
        cjk = len(_CJK.findall(token))
        rest = _CJK.sub(" ", token).split()
        total += len(rest) + (cjk + 1) // 2
    return total


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
