"""The fault lab's reveal ladder: the story, each diagnosis step, then the fix principle — one at a time.

A fault lab is a diagnosis exercise. The learner first sees only the symptom (``forgelab fault check``
and the notebook show the target test failing); the story, the diagnosis steps and the fix principle
of the stage's ``[text.<lang>.fault]`` table are revealed one rung at a time, in this order. How many
rungs are shown is kept per stage in the workspace state (``forgelab.state.fault_hints_shown``), so the
terminal (``forgelab fault hint NN``) and the notebook share one counter, like the stage hints.
"""

from __future__ import annotations

from dataclasses import dataclass

from forgelab.i18n import _
from forgelab.registry import StageText


@dataclass(frozen=True)
class Rung:
    label: str  # "what you observe", "diagnosis 2/4", "fix principle" (in the active language)
    text: str  # one paragraph, whitespace collapsed


def _one_paragraph(text: str) -> str:
    return " ".join(text.split())


def ladder(text: StageText) -> tuple[Rung, ...]:
    """Every rung of a stage's fault ladder, in the order they are revealed (labels in the active language)."""
    steps = text.fault_diagnosis
    return (Rung(_("what you observe"), _one_paragraph(text.fault_story)),
            *(Rung(_("diagnosis {index}/{total}").format(index=index, total=len(steps)), _one_paragraph(step))
              for index, step in enumerate(steps, 1)),
            Rung(_("fix principle"), _one_paragraph(text.fault_fix_principle)))
