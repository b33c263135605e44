"""The recovery point: lay the reference modules of every stage before NN into ``forge/``."""

from __future__ import annotations

import shutil

from forgelab import backups
from forgelab.paths import Workbook
from forgelab.registry import Course, Stage
from forgelab.targets import TargetError


def restore_before(workbook: Workbook, course: Course, stage: Stage) -> tuple[list[str], backups.Backup | None]:
    earlier = [s for s in course.stages if s.number < stage.number]
    if not earlier:
        return [], None
    if not workbook.has_solutions:
        raise TargetError("the reference modules are not part of the learner bundle: "
                          "ask your instructor for the recovery pack, or keep working from your own forge/")
    backup = backups.take(workbook, f"restore-{stage.number}")
    laid = []
    for item in earlier:
        source = workbook.solutions / item.module
        shutil.copyfile(source, workbook.root / item.module)
        laid.append(item.module)
    return laid, backup
