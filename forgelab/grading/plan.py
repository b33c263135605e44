"""What one grading job is made of: the submission laid out in scratch, and the judge's target labels per stage.

:mod:`forgelab.grading.grader` builds the job from these, :mod:`forgelab.grading.items` reads the judge's rows
back by the same labels — both import them from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from forgelab.core import submission as submissions
from forgelab.core.paths import Workbook
from forgelab.core.registry import Stage
from forgelab.verdicts import jobs


def transfer_label(stage: Stage) -> str:
    return f"transfer-{stage.number}"


def sub_label(stage: Stage) -> str:
    return f"sub-{stage.number}"


def lab_label(stage: Stage) -> str:
    return f"lab-{stage.number}"


def wrong_label(stage: Stage) -> str:
    return f"known-wrong-{stage.number}"


def regression_label(stage: Stage) -> str:
    """The lab's regression test on a repaired module (the course's reference; a bundle: the submission's lab)."""
    return f"regression-{stage.number}"


def regression_broken_label(stage: Stage) -> str:
    """The lab's regression test on the same module with the lab's defect laid over it."""
    return f"regression-broken-{stage.number}"


def check_files(course_root: Path, stage: Stage) -> list[str]:
    return sorted(path.relative_to(course_root).as_posix() for path in course_root.glob(stage.instructor_checks))


@dataclass(frozen=True)
class Laid:
    """A submission copied into scratch: ``import_dir/forge`` and ``home`` (transfer/, labs/, evidence/, tests/)."""

    submission: submissions.Submission
    content_sha256: str
    import_dir: Path
    home: Path
    file_count: int
    skipped: tuple[submissions.Skipped, ...] = ()  # links and special files not read (named in the reasons)


def lay_out(sub: submissions.Submission, scratch: Path) -> Laid:
    """Raises :class:`~forgelab.core.submission.LayoutError` when the submission cannot be laid out."""
    laid = submissions.lay_out(sub, scratch)
    return Laid(sub, laid.content_sha256, laid.import_dir, laid.home, len(laid.files), laid.skipped)


def lab_handed_in(laid: Laid, stage: Stage) -> bool:
    return (laid.home / stage.lab_dir / "forge" / "__init__.py").is_file() or (laid.home / stage.lab_module).is_file()


def reference_layers(workbook: Workbook) -> tuple[Path, ...] | None:
    """The course's reference implementation as forge layers (the pristine starters, then ``solutions/``), or
    None where there is none (a learner bundle)."""
    if not workbook.has_solutions:
        return None
    return (jobs.starters(workbook) / "forge", workbook.solutions / "forge")


def wrong_labels(stage: Stage, extra: int) -> list[str]:
    return [wrong_label(stage), *(f"{wrong_label(stage)}-{index}" for index in range(1, extra + 1))]
