"""The fault lab's reveal ladder: the story, each diagnosis step, then the fix principle — one at a time.

A fault lab is a diagnosis exercise. The learner first sees only the symptom (``forgelab fault check`` and the
notebook show the target test failing); then, on request, one rung at a time: the story, the open diagnosis
steps of the stage's ``[text.<lang>.fault]`` table (observe, reproduce, narrow down), the last diagnosis step —
the one that names the defect, sealed in the lab's answer key until the learner's own diagnosis names that
defect (:mod:`forgelab.verdicts.diagnosis`) — and the fix principle after it. How many rungs are shown is kept per stage
in the workspace state (``forgelab.learner.state.fault_hints_shown``), so the terminal (``forgelab fault hint NN``) and
the notebook share one counter, like the stage hints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from forgelab.core.i18n import _

if TYPE_CHECKING:
    from forgelab.core.course_files import StageTexts


@dataclass(frozen=True)
class Rung:
    label: str  # "what you observe", "diagnosis 2/4", "fix principle" (in the active language)
    text: str  # one paragraph, whitespace collapsed; "" for the sealed step while it is closed
    sealed: bool = False  # the step that names the defect: it opens with a right diagnosis


def _one_paragraph(text: str) -> str:
    return " ".join(text.split())


def ladder(text: StageTexts, confirm: str | None) -> tuple[Rung, ...]:
    """Every rung of a stage's fault ladder, in the order they are revealed (labels in the active language).

    ``confirm`` is the last diagnosis step once the learner's diagnosis opened it, else None (closed)."""
    steps = text.fault.diagnosis
    total = len(steps) + 1
    return (Rung(_("what you observe"), _one_paragraph(text.fault.story)),
            *(Rung(_("diagnosis {index}/{total}").format(index=index, total=total), _one_paragraph(step))
              for index, step in enumerate(steps, 1)),
            Rung(_("diagnosis {index}/{total}").format(index=total, total=total), _one_paragraph(confirm or ""),
                 sealed=True),
            Rung(_("fix principle"), _one_paragraph(text.fault.fix_principle)))


def shown_line(index: int, total: int, rung: Rung, new: bool) -> str:
    """One revealed rung as the learner reads it: ``3/6 diagnosis 2/4 (new): …`` — no box that looks unticked."""
    label = _("{label} (new)").format(label=rung.label) if new else rung.label
    return _("{index}/{total} {label}: {text}").format(index=index, total=total, label=label, text=rung.text)
