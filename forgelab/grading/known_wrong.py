"""The course's known-wrong implementation of each stage, for judging a learner's transfer test.

A transfer test that passes on a correct ``forge/`` proves little by itself: ``assert True`` passes
everywhere. So grading also runs the learner's transfer test against the stage's *known-wrong*
implementation — the course's ``fault:NN`` target, the reference solution with the fault lab's
broken module laid over it — and a test that passes there too earns no transfer points: it cannot
tell right from wrong. (Every reference transfer test fails on its fault variant; ``forgelab
verify-course`` proves it.)

The batch materializes the variants once, into the course template that each worker copies
(``known-wrong/NN/forge``), so every submission runs them from its own copy, with the same
environment, network guard and time limits as its other tests.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from forgelab.paths import Workbook
from forgelab.registry import Course, Stage
from forgelab.targets import TargetError, resolve_target

DIRNAME = "known-wrong"


def prepare(course: Course, stages: list[Stage], template: Path) -> dict[str, Path]:
    """Write ``template/known-wrong/NN/forge`` for every stage that has one; returns number → folder.

    A course without reference solutions (or a stage without a fault lab) gets no variant: its
    transfer tests are then graded without this check, and the reason says so.
    """
    workbook = Workbook(root=course.root, workspace=course.root)  # only read: materialize writes into template
    made: dict[str, Path] = {}
    for stage in stages:
        folder = template / DIRNAME / stage.number
        try:
            resolve_target(f"fault:{stage.number}", workbook, course).materialize(folder)
        except (TargetError, OSError):
            shutil.rmtree(folder, ignore_errors=True)
            continue
        made[stage.number] = folder
    return made


def variant(course_root: Path, stage: Stage) -> Path | None:
    """The folder to put on ``PYTHONPATH`` for the stage's known-wrong ``forge/``, if the course has one."""
    folder = course_root / DIRNAME / stage.number
    return folder if (folder / "forge" / "__init__.py").is_file() else None
