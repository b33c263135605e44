"""Known-wrong variants of a reference module, declared in ``course/stages/NN-slug/mutants.toml``.

Each ``[[mutant]]`` has ``name``, ``find`` (text that occurs exactly once in the solution module)
and ``replace``. Applied to the solution, every mutant must make at least one stage test fail:
that is how the course proves its tests can tell a plausible mistake from the real thing.
"""

from __future__ import annotations

from pathlib import Path

from forgelab.core import course_files
from forgelab.core.course_files import Mutant as Mutant
from forgelab.core.i18n import _
from forgelab.judge.core import TargetSpec
from forgelab.core.paths import Workbook
from forgelab.core.registry import CourseFileError, Stage


def load_mutants(stage: Stage) -> list[Mutant]:
    """The stage's ``[[mutant]]`` entries (none without a mutants.toml), checked key by key."""
    path = stage.mutants_file
    return course_files.read(path, course_files.MutantsFile).mutant if path.is_file() else []


def apply(source: str, mutant: Mutant, where: str) -> str:
    count = source.count(mutant.find)
    if count != 1:
        raise CourseFileError(_("mutant {name!r}: {find!r} occurs {count} times in {where}, expected once").format(
            name=mutant.name, find=mutant.find, count=count, where=where))
    return source.replace(mutant.find, mutant.replace)


def mutant_targets(workbook: Workbook, stage: Stage, scratch: Path) -> list[tuple[TargetSpec, str]]:
    """One judge target per known-wrong variant: the solution with that one change. Returns (target, name)."""
    reference = workbook.root / stage.solution_module
    source = reference.read_text(encoding="utf-8")
    made = []
    for index, mutant in enumerate(load_mutants(stage)):
        mutated = apply(source, mutant, str(reference.relative_to(workbook.root)))
        folder = scratch / f"{stage.number}-{index:03d}"
        (folder / Path(stage.module).relative_to("forge")).parent.mkdir(parents=True, exist_ok=True)
        (folder / Path(stage.module).relative_to("forge")).write_text(mutated, encoding="utf-8")
        spec = TargetSpec(f"mutant:{stage.number}:{index:03d}", (workbook.forge, workbook.solutions / "forge", folder),
                          stage.number, (stage.module,), first_failure_ends=True)
        made.append((spec, mutant.name))
    return made


def transfer_variants(workbook: Workbook, stage: Stage, scratch: Path) -> list[tuple[str, Path]]:
    """The known-wrong variants a transfer test of ``stage`` must fail on besides the fault variant — the mutants
    its ``[transfer] known_wrong`` names — each as a folder holding the mutated module (a layer over the solution)."""
    if not stage.transfer_known_wrong:
        return []
    declared = {mutant.name: mutant for mutant in load_mutants(stage)}
    reference = workbook.root / stage.solution_module
    source = reference.read_text(encoding="utf-8")
    made = []
    for index, name in enumerate(stage.transfer_known_wrong):
        if name not in declared:
            raise CourseFileError(_("stage {number}: [transfer] known_wrong names {name!r}, which is not a mutant in "
                                  "{file} (mutants: {mutants})").format(number=stage.number, name=name,
                                                                       file=stage.mutants_file.name,
                                                                       mutants=_(", ").join(sorted(declared)) or _("none")))
        folder = scratch / f"transfer-{stage.number}-{index:02d}"
        module = folder / Path(stage.module).relative_to("forge")
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text(apply(source, declared[name], str(reference.relative_to(workbook.root))), encoding="utf-8")
        made.append((name, folder))
    return made
