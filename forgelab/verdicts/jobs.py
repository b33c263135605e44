"""From the course's words to the judge's: targets, starters and stage modules as a :class:`Job` needs them."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from forgelab.judge.cache import build_once
from forgelab.judge.core import CourseTests, Job, LearnerTests, TargetSpec
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage
from forgelab.core.starters import pristine_starters_dir
from forgelab.core.targets import Target

GIT_TIMEOUT = 120


def stage_modules(course: Course) -> tuple[str, ...]:
    return tuple(sorted({stage.module for stage in course.stages}))


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    if shutil.which("git") is None or not (root / ".git").exists():
        return None
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, env=env, timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def starters(workbook: Workbook) -> Path:
    """A folder holding the pristine starter package ``forge/``: the course's definitions of its data types.

    The learner bundle ships it in ``course/starters/``; in the course repository it is ``forge/`` as
    committed at ``HEAD`` (exported once per commit into ``.forgelab/starters/``), so a reference module
    laid into the working tree never becomes "the course's definition"; without git, the working tree.
    """
    shipped = pristine_starters_dir(workbook.root)
    if shipped is not None and (shipped / "forge").is_dir():
        return shipped
    tree = _git(workbook.root, "rev-parse", "HEAD:forge")
    if tree is None or tree.returncode != 0:
        return workbook.root
    cache = workbook.state_dir / "starters" / tree.stdout.decode().strip()
    if (cache / "forge").is_dir():
        return cache
    archive = _git(workbook.root, "archive", "--format=tar", "HEAD", "forge")
    if archive is None or archive.returncode != 0:
        return workbook.root

    def export(scratch: Path) -> None:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as bundle:
            bundle.extractall(scratch, filter="data")

    # every thread and process of every grader shares this folder: built once, atomically (see judge.cache)
    return build_once(cache, export)

def spec(target: Target, label: str, stage: Stage | None = None, extra: tuple[Path, ...] = (),
         course_code: bool = False) -> TargetSpec:
    """The judge's view of a target: its forge folders, laid over each other, plus ``extra`` on top. ``course_code``:
    the target holds the course's own code (a reference, a fault variant), so a learner's test run on it reports
    outcomes and lines only (:attr:`forgelab.judge.core.TargetSpec.course_code`); a reference target always does."""
    probe = (stage.module,) if stage is not None else ()
    return TargetSpec(label, (*target.layers, *extra), stage.number if stage else "", probe,
                      course_code=course_code or target.is_reference)


def fault_variant(workbook: Workbook, stage: Stage) -> Path:
    """The folder that holds the stage's known-wrong module, as a layer of a forge package."""
    return (workbook.root / stage.fault_variant).parents[len(Path(stage.module).parts) - 2]


def lab_spec(lab: Path, stage: Stage, label: str = "lab") -> TargetSpec:
    return TargetSpec(label, (lab / "forge",), stage.number, (stage.module,))


def job(course: Course, workbook: Workbook, targets: list[TargetSpec], course_tests: list[CourseTests],
        learner_tests: list[LearnerTests] | None = None) -> Job:
    return Job(course.root, starters(workbook), stage_modules(course), tuple(targets), tuple(course_tests),
               tuple(learner_tests or ()), cache_dir=workbook.state_dir / "cache")
