"""``forgelab verify-course``: prove that every stage's contract holds.

For each stage:
* the stage tests list exactly the registry's required tests;
* every required test passes on ``solution``, and so does the reference transfer test;
* the starter is genuinely unsolved: at least one required test fails on ``learner`` as shipped;
* the fault contract holds: the variant holds only the fault file, the target test fails on
  ``fault:NN`` with the declared symptom and passes on ``solution``; the reference transfer test
  also fails on the variant (so a transfer test can tell right from wrong);
* the generated notebook and failure.json are current with the stage source.
With ``--mutants`` every known-wrong variant in ``mutants.toml`` must fail at least one stage test.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from forgelab.build import stale_artefacts
from forgelab.paths import Workbook
from forgelab.registry import Course, Stage
from forgelab.runner import RunResult, run_pytest
from forgelab.targets import Target, resolve_target


@dataclass
class StageVerdict:
    stage: Stage
    facts: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def line(self) -> str:
        status = "ok  " if self.ok else "FAIL"
        detail = "; ".join(self.failures) if self.failures else " · ".join(self.facts)
        return f"{status} {self.stage.number} {self.stage.slug:<28} {detail}"


@dataclass(frozen=True)
class CourseReport:
    verdicts: list[StageVerdict]

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts)

    @property
    def summary(self) -> str:
        held = sum(v.ok for v in self.verdicts)
        word = "all contracts hold" if self.ok else "some contracts do not hold"
        return f"verify-course: {held}/{len(self.verdicts)} stages verified — {word}"


def test_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")]


def _run(target: Target, root: Path, selection: list[str], expected: int) -> RunResult:
    with target.importable() as import_dir:
        return run_pytest(import_dir, root, selection, expected=expected)


def _reference_transfer(workbook: Workbook, stage: Stage) -> Path:
    return workbook.solutions / "transfer" / Path(stage.transfer_file).name


def _passes(run: RunResult, name: str, prefix: str) -> bool:
    rows = [r for r in run.tests if r.name == name and r.nodeid.startswith(prefix)]
    return bool(rows) and all(r.outcome == "passed" for r in rows)


def verify_course(workbook: Workbook, course: Course, stages: list[Stage],
                  progress: Callable[[str], None] = lambda _: None, mutants: bool = False) -> CourseReport:
    root = workbook.root
    solution = resolve_target("solution", workbook, course)
    learner = resolve_target("learner", workbook, course)
    stage_files = [s.test_file for s in stages]
    references = [str(_reference_transfer(workbook, s)) for s in stages if _reference_transfer(workbook, s).is_file()]
    expected = sum(len(s.required_tests) for s in stages) + len(stages)
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        solution_future = pool.submit(_run, solution, root, stage_files + references, expected)
        learner_future = pool.submit(_run, learner, root, stage_files, expected)
        fault_futures = {}
        for stage in stages:
            selection = [stage.test_file] + ([str(_reference_transfer(workbook, stage))]
                                             if _reference_transfer(workbook, stage).is_file() else [])
            fault_target = resolve_target(f"fault:{stage.number}", workbook, course)
            fault_futures[stage.number] = pool.submit(_run, fault_target, root, selection, len(stage.required_tests) + 2)
        mutant_futures = {}
        if mutants:
            from forgelab.mutants import check_mutants

            for stage in stages:
                mutant_futures[stage.number] = pool.submit(check_mutants, workbook, course, stage)
        stale = {(s.stage.number, s.artefact): s.reason for s in stale_artefacts(course, stages)}
        on_solution, on_learner = solution_future.result(), learner_future.result()
        verdicts = []
        for stage in stages:
            verdict = StageVerdict(stage)
            _check_stage(workbook, stage, verdict, on_solution, on_learner, fault_futures[stage.number].result())
            for (number, artefact), reason in sorted(stale.items()):
                if number == stage.number:
                    verdict.failures.append(f"{artefact}: {reason} (run `forgelab build {number}`)")
            if not any(f.startswith(("notebooks/", "failure_labs/")) for f in verdict.failures):
                verdict.facts.append("notebook current")
            if stage.number in mutant_futures:
                killed, survivors = mutant_futures[stage.number].result()
                if survivors:
                    verdict.failures.append(f"mutants survived: {', '.join(survivors)}")
                else:
                    verdict.facts.append(f"{killed} mutants killed")
            progress(verdict.line())
            verdicts.append(verdict)
    return CourseReport(verdicts)


def _check_stage(workbook: Workbook, stage: Stage, verdict: StageVerdict,
                 on_solution: RunResult, on_learner: RunResult, on_fault: RunResult) -> None:
    root = workbook.root
    defined = test_functions(root / stage.test_file)
    if defined != list(stage.required_tests):
        extra = sorted(set(defined) - set(stage.required_tests))
        missing = sorted(set(stage.required_tests) - set(defined))
        verdict.failures.append(f"required_tests differ from {stage.test_file}: "
                                f"not listed {extra or '-'}, not defined {missing or '-'}")
    failing = [n for n in stage.required_tests if not _passes(on_solution, n, stage.test_file)]
    if failing:
        verdict.failures.append(f"solution fails {', '.join(failing)}")
    else:
        verdict.facts.append(f"solution {len(stage.required_tests)}/{len(stage.required_tests)}")
    reference = _reference_transfer(workbook, stage)
    reference_prefix = reference.name
    transfer_rows = [r for r in on_solution.tests if reference_prefix in r.nodeid and not r.nodeid.startswith("tests/")]
    if not reference.is_file():
        verdict.failures.append(f"reference transfer test {reference.relative_to(root)} is missing")
    elif not transfer_rows or any(r.outcome != "passed" for r in transfer_rows):
        verdict.failures.append("reference transfer test does not pass on solution")
    unsolved = [n for n in stage.required_tests if not _passes(on_learner, n, stage.test_file)]
    if not unsolved:
        verdict.failures.append("starter is already solved: every required test passes on learner")
    else:
        verdict.facts.append(f"starter unsolved ({len(unsolved)} failing)")
    variant_dir = root / stage.failure_lab / "forge"
    variant_files = sorted(p.relative_to(variant_dir.parent).as_posix() for p in variant_dir.rglob("*.py"))
    if variant_files != [stage.fault.fault_file]:
        verdict.failures.append(f"fault variant must hold exactly {stage.fault.fault_file}, holds {variant_files}")
    target_rows = [r for r in on_fault.tests if r.name == stage.fault.target_test and r.nodeid.startswith(stage.test_file)]
    failed = [r for r in target_rows if r.outcome == "failed"]
    if not failed:
        verdict.failures.append(f"{stage.fault.target_test} does not fail on fault:{stage.number}")
    elif not any(re.search(stage.fault.symptom, r.longrepr or r.cause) for r in failed):
        verdict.failures.append(f"fault symptom /{stage.fault.symptom}/ not seen; got: {failed[0].cause}")
    else:
        verdict.facts.append("fault holds")
    fault_transfer = [r for r in on_fault.tests if reference_prefix in r.nodeid and not r.nodeid.startswith("tests/")]
    if fault_transfer and all(r.outcome == "passed" for r in fault_transfer):
        verdict.failures.append("reference transfer test passes on the fault variant: it cannot tell right from wrong")
    elif fault_transfer:
        verdict.facts.append("transfer discriminates")
