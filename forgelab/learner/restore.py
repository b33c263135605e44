"""Lay the reference modules of every stage before NN into ``forge/`` (``forgelab restore NN``).

The modules come from ``solutions/`` in the course repository, or — in the learner bundle, which has no
reference solutions — from a checkpoint pack the instructor released (``forgelab restore NN --from
FILE``, see :mod:`forgelab.core.checkpoint`). :func:`plan_restore` says, before anything is written, which
files would be overwritten and which of them hold the learner's own work (they differ from the pristine
starter, see :func:`forgelab.core.starters.starter_source`); :func:`apply_restore` takes a timestamped backup
of ``forge/`` and then writes. In a bundle without a pack the error says to ask for one, and points at
``forgelab starter NN``, which brings back a wrecked starter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from forgelab.learner import backups
from forgelab.core.checkpoint import Pack
from forgelab.core.i18n import _
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage
from forgelab.core.targets import TargetError
from forgelab.core.starters import StarterError, starter_bytes


@dataclass(frozen=True)
class RestoreItem:
    module: str  # forge/instructions.py
    reference: bytes  # the reference module's content
    destination: Path
    state: str  # "missing" | "reference" (already the reference) | "starter" (untouched starter) | "own work" | "changed"

    @property
    def overwrites(self) -> bool:
        """Whether writing replaces an existing file with different content."""
        return self.state in ("starter", "own work", "changed")

    @property
    def holds_own_work(self) -> bool:
        return self.state == "own work"


@dataclass(frozen=True)
class RestorePlan:
    stage: Stage
    items: tuple[RestoreItem, ...]
    starter_known: bool  # whether the pristine starters could be read to tell own work from the starter
    source: str = "solutions/"  # where the reference modules come from: solutions/ or the checkpoint pack's file name

    @property
    def to_write(self) -> tuple[RestoreItem, ...]:
        return tuple(item for item in self.items if item.state != "reference")

    @property
    def overwritten(self) -> tuple[RestoreItem, ...]:
        return tuple(item for item in self.items if item.overwrites)


def _not_in_bundle(earlier: list[Stage], stage: Stage) -> TargetError:
    modules = _(", ").join(_("`forgelab starter {number}` for {module}").format(number=s.number, module=s.module)
                        for s in earlier)
    return TargetError(_(
        "the reference modules are not part of the learner bundle, so `forgelab restore` cannot lay them in from here: "
        "ask your instructor for the checkpoint pack (forge-workbook-checkpoint-{last}.zip or later) and "
        "run `forgelab restore {number} --from FILE`, or keep working from your own forge/. "
        "To bring back the shipped starter of a wrecked or deleted module, run `forgelab starter NN` ({modules}); "
        "it keeps a backup of what is there").format(last=earlier[-1].number, number=stage.number, modules=modules))


def _references(workbook: Workbook, earlier: list[Stage], stage: Stage, pack: Pack | None) -> dict[str, bytes]:
    """Module path -> reference content of the stages before ``stage``, from the pack or from solutions/."""
    if pack is not None:
        if pack.checkpoint < earlier[-1].number:
            raise TargetError(_("{pack} holds the modules of stages 01–{checkpoint}, but `forgelab restore {number}` "
                                "lays in 01–{last}: ask your instructor for forge-workbook-checkpoint-{last}.zip or "
                                "later").format(pack=pack.path.name, checkpoint=pack.checkpoint, number=stage.number,
                                                last=earlier[-1].number))
        return {module: data for number, (module, data) in pack.modules.items() if number < stage.number}
    if not workbook.has_solutions:
        raise _not_in_bundle(earlier, stage)
    references = {}
    for item in earlier:
        reference = workbook.solutions / item.module
        if not reference.is_file():
            raise TargetError(_("the reference module {path} is missing: the course repository is incomplete; "
                                "restore it from git (`git checkout -- solutions/`)").format(
                path=workbook.relative(reference)))
        references[item.module] = reference.read_bytes()
    return references


def plan_restore(workbook: Workbook, course: Course, stage: Stage, pack: Pack | None = None) -> RestorePlan:
    """Which reference modules ``forgelab restore NN`` would lay in (from ``pack`` when one is given), and what
    each would overwrite."""
    earlier = [s for s in course.stages if s.number < stage.number]
    if not earlier:
        return RestorePlan(stage, (), True)
    references = _references(workbook, earlier, stage, pack)
    items = []
    starter_known = True
    for item in earlier:
        reference = references[item.module]
        destination = workbook.root / item.module
        if not destination.is_file():
            state = "missing"
        else:
            current = destination.read_bytes()
            if current == reference:
                state = "reference"
            else:
                try:
                    state = "starter" if current == starter_bytes(workbook.root, item.module) else "own work"
                except StarterError:
                    state, starter_known = "changed", False
        items.append(RestoreItem(item.module, reference, destination, state))
    return RestorePlan(stage, tuple(items), starter_known, pack.path.name if pack is not None else "solutions/")


def apply_restore(workbook: Workbook, chosen: RestorePlan) -> backups.Backup | None:
    """Back up ``forge/`` and lay the reference modules in; None when there is nothing to write."""
    if not chosen.to_write:
        return None
    backup = backups.take(workbook, f"restore-{chosen.stage.number}")
    for item in chosen.to_write:
        item.destination.parent.mkdir(parents=True, exist_ok=True)
        item.destination.write_bytes(item.reference)
    return backup


def restore_before(workbook: Workbook, course: Course, stage: Stage) -> tuple[list[str], backups.Backup | None]:
    """Plan and apply at once (no question asked); returns the modules laid in and the backup."""
    chosen = plan_restore(workbook, course, stage)
    backup = apply_restore(workbook, chosen)
    return [item.module for item in chosen.to_write], backup
