"""How many known-wrong variants each instructor check file catches.

    .venv/bin/python instructor/mutant_catches.py [NN ...]      (default: every stage with checks)

For each stage, every ``[[mutant]]`` of ``course/stages/NN-slug/mutants.toml`` and the fault lab's
broken module are applied to the ``solution`` target in a temporary folder, and
``instructor/checks/test_NN_*.py`` is run against it. A variant is *caught* when at least one check
fails. The check file itself must pass on the unchanged solution (that is run first). Nothing in
the repository is written.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from forgelab.mutants import apply, load_mutants
from forgelab.paths import Workbook
from forgelab.registry import load_course
from forgelab.runner import run_pytest
from forgelab.targets import resolve_target

ROOT = Path(__file__).resolve().parent.parent


def _passes(import_dir: Path, checks: list[str]) -> bool:
    run = run_pytest(import_dir, ROOT, checks, expected=8)
    return bool(run.tests) and not run.problem and all(r.outcome == "passed" for r in run.tests)


def main(argv: list[str]) -> int:
    course = load_course(ROOT)
    workbook = Workbook(root=ROOT, workspace=ROOT)
    solution = resolve_target("solution", workbook, course)
    numbers = argv or [stage.number for stage in course.stages]
    failures = 0
    for number in numbers:
        stage = course.stage(number)
        checks = sorted(str(p) for p in (ROOT / "instructor" / "checks").glob(f"test_{stage.number}_*.py"))
        if not checks:
            print(f"stage {stage.number}: no instructor checks")
            continue
        reference = workbook.solutions / stage.module
        source = reference.read_text(encoding="utf-8")
        variants = [(m.name, apply(source, m, str(reference.relative_to(ROOT)))) for m in load_mutants(stage)]
        lab = ROOT / stage.failure_lab / stage.fault.fault_file
        caught, survived = [], []
        with tempfile.TemporaryDirectory(prefix="forgelab-catches-") as scratch:
            solution.materialize(Path(scratch))
            if not _passes(Path(scratch), checks):
                print(f"stage {stage.number}: the checks FAIL on the solution — fix them first")
                failures += 1
                continue
            for name, text in variants:
                (Path(scratch) / stage.module).write_text(text, encoding="utf-8")
                (survived if _passes(Path(scratch), checks) else caught).append(name)
            (Path(scratch) / stage.module).write_text(source, encoding="utf-8")
            (Path(scratch) / stage.fault.fault_file).write_bytes(lab.read_bytes())
            fault_caught = not _passes(Path(scratch), checks)
        print(f"stage {stage.number}: {len(caught)} of {len(variants)} mutants caught; fault lab "
              f"{'caught' if fault_caught else 'NOT caught'}" + (f"; survivors: {', '.join(survived)}" if survived else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
