"""Known-wrong variants of a reference module, declared in ``course/stages/NN-slug/mutants.toml``.

Each ``[[mutant]]`` has ``name``, ``find`` (text that occurs exactly once in the solution module)
and ``replace``. Applied to the solution, every mutant must make at least one stage test fail:
that is how the course proves its tests can tell a plausible mistake from the real thing.
"""

from __future__ import annotations

import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from forgelab.paths import Workbook
from forgelab.registry import Course, RegistryError, Stage
from forgelab.runner import run_pytest
from forgelab.targets import resolve_target


@dataclass(frozen=True)
class Mutant:
    name: str
    find: str
    replace: str


def load_mutants(stage: Stage) -> list[Mutant]:
    path = stage.source_dir / "mutants.toml"
    if not path.is_file():
        return []
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    return [Mutant(str(m["name"]), str(m["find"]), str(m["replace"])) for m in data.get("mutant", [])]


def apply(source: str, mutant: Mutant, where: str) -> str:
    count = source.count(mutant.find)
    if count != 1:
        raise RegistryError(f"mutant {mutant.name!r}: {mutant.find!r} occurs {count} times in {where}, expected once")
    return source.replace(mutant.find, mutant.replace)


def check_mutants(workbook: Workbook, course: Course, stage: Stage) -> tuple[int, list[str]]:
    """Returns (number killed, names of survivors)."""
    solution = resolve_target("solution", workbook, course)
    reference = workbook.solutions / stage.module
    source = reference.read_text(encoding="utf-8")
    killed, survivors = 0, []
    for mutant in load_mutants(stage):
        mutated = apply(source, mutant, str(reference.relative_to(workbook.root)))
        with tempfile.TemporaryDirectory(prefix="forgelab-mutant-") as scratch:
            solution.materialize(Path(scratch))
            (Path(scratch) / stage.module).write_text(mutated, encoding="utf-8")
            run = run_pytest(Path(scratch), workbook.root, [stage.test_file], expected=len(stage.required_tests))
        if run.tests and all(r.outcome == "passed" for r in run.tests) and not run.problem:
            survivors.append(mutant.name)
        else:
            killed += 1
    return killed, survivors
