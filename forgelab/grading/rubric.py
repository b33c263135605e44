"""What is graded per stage, how many points each item is worth, and how a grade row looks.

Every stage is graded as the same seven items, in this order. Points are whole numbers; partial
credit is proportional and rounded down, so a row's points never depend on floating-point noise.
An item that the course cannot grade for a stage (no instructor checks or no reference notebook
yet) is still listed, worth 0 of 0 points, with a reason that says so.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Self

from pydantic import AfterValidator, ConfigDict, Field, model_validator
from pydantic.dataclasses import dataclass as model_dataclass

from forgelab.core.i18n import N_, _
from forgelab.core.registry import Course, RegistryError, Stage


@dataclass(frozen=True)
class ItemSpec:
    key: str
    title: str
    max_points: int
    checks: str  # what is checked, in plain words (shown on the feedback page)


ITEMS: tuple[ItemSpec, ...] = (
    ItemSpec("stage_tests", N_("Stage tests"), 40,
             N_("the stage's required tests, taken from the course (never from your copy), run against your forge/")),
    ItemSpec("instructor_checks", N_("Instructor checks"), 10,
             N_("extra checks kept by your instructor; they are listed by name and result only")),
    ItemSpec("notebook", N_("Reference notebook"), 20,
             N_("the graded cells of the course's reference notebook, run against your forge/; "
                "their output must match the reference output")),
    ItemSpec("fault_lab", N_("Fault lab"), 10,
             N_("half for your repaired file in labs/, run against the course's stage tests; half for the diagnosis, "
                "proven by your regression test labs/NN-slug/test_diagnosis.py, run like the transfer test on the "
                "course's reference implementation (where it must pass) and on the lab's broken module (where it "
                "must fail); the multiple-choice diagnosis is self-reported and earns nothing")),
    ItemSpec("transfer", N_("Transfer test"), 10,
             N_("your own test in transfer/, run against the course's reference implementation of the stage (where "
                "it must pass) and against its known-wrong implementations (where it must not: a test that passes "
                "there too cannot tell right from wrong and earns no points); never against your own forge/, so only "
                "what the test checks counts")),
    ItemSpec("design_answer", N_("Design answer"), 5,
             N_("that your design answer is handed in and long enough to be an answer (your instructor reads it)")),
    ItemSpec("evidence", N_("Evidence"), 5,
             N_("that your verification.json is intact and claims no more than grading observed")),
)
ITEM_ORDER: dict[str, int] = {spec.key: index for index, spec in enumerate(ITEMS)}
SPEC: dict[str, ItemSpec] = {spec.key: spec for spec in ITEMS}

# outcome of one item
PASSED, PARTIAL, FAILED, TIMEOUT, ERROR, MISSING, NOT_GRADED = (
    "passed", "partial", "failed", "timeout", "error", "missing", "not_graded")
ENDED = "ended"  # the learner's process ended by itself (an exit, a signal) while it was judged: no limit stopped it
OUTCOMES = (PASSED, PARTIAL, FAILED, TIMEOUT, ENDED, ERROR, MISSING, NOT_GRADED)
REVIEW = "review"  # flag: an instructor should look at this item by hand
REGRADE = "regrade"  # flag: the grader failed on this item; grade the submission again
FLAGS = ("", REVIEW, REGRADE)


def _one_of(allowed: tuple[str, ...], what: str) -> AfterValidator:
    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"unknown {what} {value!r}: expected one of {', '.join(repr(a) for a in allowed)}")
        return value

    return AfterValidator(check)


@model_dataclass(frozen=True, config=ConfigDict(strict=True))
class GradeItem:
    """One gradebook row: a submission × a stage × an item. No timestamps, no durations. A Pydantic dataclass:
    every row — made by grading or read back from a gradebook — is checked field by field when it is made."""

    submission: str
    stage: str
    item: Annotated[str, _one_of(tuple(ITEM_ORDER), "grade item")]
    points: Annotated[int, Field(ge=0)]
    max_points: int
    outcome: Annotated[str, _one_of(OUTCOMES, "outcome")]
    reason: str  # why points were lost (or what earned them), in plain words
    flag: Annotated[str, _one_of(FLAGS, "flag")] = ""  # "", "review" or "regrade"

    @model_validator(mode="after")
    def _points_within_the_maximum(self) -> Self:
        if self.points > self.max_points:
            raise ValueError(f"{self.item}: {self.points} points is outside 0..{self.max_points}")
        return self

    @property
    def sort_key(self) -> tuple[str, str, int]:
        return (self.submission, self.stage, ITEM_ORDER[self.item])

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def proportional(max_points: int, passed: int, total: int) -> int:
    """Whole points for ``passed`` of ``total``, rounded down; full points only when all pass."""
    if total <= 0:
        return 0
    return max_points * passed // total


def outcome_for(points: int, max_points: int) -> str:
    if max_points == 0:
        return NOT_GRADED
    if points == max_points:
        return PASSED
    return PARTIAL if points > 0 else FAILED


def parse_stages(course: Course, text: str | None) -> list[Stage]:
    """``01-07``, ``1,3,5``, ``02`` or ``all`` (default) → stages in course order.

    Each number named (both ends of a range) must be a stage of the course.
    """
    if text is None or text.strip().lower() in ("", "all"):
        return list(course.stages)
    valid = _(", ").join(stage.number for stage in course.stages)
    chosen: set[str] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        ends = part.split("-")
        if len(ends) > 2 or not all(end.strip().isdigit() for end in ends):
            raise RegistryError(_("unknown stage range {part}: write stages like 01-07, 01,03 or 02 (stages: {valid})").format(
                part=repr(part), valid=valid))
        numbers = [end.strip().zfill(2) for end in ends]
        for number in numbers:
            if number not in course.by_number:
                raise RegistryError(_("unknown stage {number} in {text}: the course has stages {valid}").format(
                    number=number, text=repr(text), valid=valid))
        low, high = numbers[0], numbers[-1]
        if low > high:
            raise RegistryError(_("stage range {part} runs backwards: write {high}-{low}").format(
                part=repr(part), high=high, low=low))
        chosen.update(stage.number for stage in course.stages if low <= stage.number <= high)
    if not chosen:
        raise RegistryError(_("no stages selected by {text}: the course has stages {valid}").format(
            text=repr(text), valid=valid))
    return [stage for stage in course.stages if stage.number in chosen]
