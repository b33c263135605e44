"""Fault-lab variants, generated: the reference module with the stage's declared defect applied.

Each stage declares its defect in ``course/stages/NN-slug/fault.toml`` as ``[[patch]]`` edits — ``find``
(text that occurs exactly once at its turn) and ``replace`` — the same form as the known-wrong
variants in ``mutants.toml``. ``forgelab build`` writes ``failure_labs/NN-slug/forge/<module>`` from
``solutions/`` plus those edits, and ``build --check`` reports the file stale when the reference or
the patch changed, so a variant can never silently drift from the module it breaks. Learners receive
the plain, readable broken file; ``fault.toml`` stays with the course (it holds reference lines).
"""

from __future__ import annotations

from pathlib import Path

from forgelab.core import course_files
from forgelab.core.course_files import Edit as Edit
from forgelab.core.i18n import _
from forgelab.core.registry import CourseFileError, Stage


def patch_file(stage: Stage) -> Path:
    return stage.source_dir / "fault.toml"


def read_fault(stage: Stage) -> course_files.FaultFile:
    """The stage's fault.toml, checked key by key (its ``[[patch]]`` and its ``[diagnosis]``)."""
    path = patch_file(stage)
    if not path.is_file():
        raise CourseFileError(_("{path} is missing: declare stage {number}'s fault as [[patch]] find/replace edits and "
                              "its [diagnosis]").format(path=path, number=stage.number))
    return course_files.read(path, course_files.FaultFile)


def load_patch(stage: Stage) -> list[Edit]:
    edits = read_fault(stage).patch
    if not edits:
        raise CourseFileError(_("{path}: no [[patch]] edits: a fault lab needs a defect").format(path=patch_file(stage)))
    return edits


def variant_text(root: Path, stage: Stage) -> str:
    """The broken module: the reference module with every edit of the stage's patch applied in order."""
    reference = root / stage.solution_module
    text = reference.read_text(encoding="utf-8")
    for index, edit in enumerate(load_patch(stage), 1):
        count = text.count(edit.find)
        if count != 1:
            raise CourseFileError(_("{path}: patch {index}'s find text occurs {count} times in {module} (after the edits "
                                  "before it), expected once: give it more lines of context, or update it to the "
                                  "current reference").format(path=patch_file(stage), index=index, count=count,
                                                              module=stage.solution_module))
        text = text.replace(edit.find, edit.replace)
    if text == reference.read_text(encoding="utf-8"):
        raise CourseFileError(_("{path}: the edits leave {module} unchanged: there is no defect").format(
            path=patch_file(stage), module=stage.solution_module))
    return text
