"""``forgelab verify-course``: prove that every stage's contract holds.

For each stage:
* the stage tests list exactly the registry's required tests;
* every required test passes on ``solution``, and so does the reference transfer test;
* the starter is genuinely unsolved: at least one required test fails on ``learner`` as shipped;
* the fault contract holds: the variant holds only the fault file, the target test fails on
  ``fault:NN`` with the declared symptom and passes on ``solution``; the reference transfer test
  also fails on the variant (so a transfer test can tell right from wrong);
* the course's example regression test of the fault lab (``solutions/regression/NN-slug/test_diagnosis.py``, never
  shipped: it names the defect) passes on ``solution`` and fails on ``fault:NN`` — a learner's regression test
  must do the same to earn the lab's diagnosis points;
* the generated notebook and failure.json are current with the stage source;
* the stage's source facts (``[[source_facts]]``) hold in its reference module and starter.
With ``--mutants`` every known-wrong variant in ``mutants.toml`` must fail at least one stage test.
"""

from __future__ import annotations

import ast
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from forgelab.authoring import sourcefacts
from forgelab.authoring.build import editions, opening_notebook, stale_artefacts, stale_opening
from forgelab.judge import core
from forgelab.verdicts import diagnosis, jobs
from forgelab.judge.core import CourseTests, TargetSpec
from forgelab.judge.outcomes import Outcome, RunReport
from forgelab.judge.settings import DEFAULT, JudgeSettings
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, RegistryError, Stage
from forgelab.core.targets import resolve_target
from forgelab.verdicts.mutants import mutant_targets, transfer_variants
from forgelab.authoring.scaffold import unfinished, unowned_files
from forgelab.core import pyast

SOLUTION, LEARNER = "solution", "learner"


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
    unowned: tuple[str, ...] = ()  # files in the course folders that no stage owns
    stale_openings: tuple[str, ...] = ()  # "notebooks/00-opening.ipynb: why", per edition

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts) and not self.unowned and not self.stale_openings

    @property
    def summary(self) -> str:
        held = sum(v.ok for v in self.verdicts)
        word = "all contracts hold" if self.ok else "some contracts do not hold"
        extra = f"; {len(self.unowned)} file(s) belong to no stage" if self.unowned else ""
        extra += f"; {len(self.stale_openings)} opening notebook(s) out of date" if self.stale_openings else ""
        return f"verify-course: {held}/{len(self.verdicts)} stages verified — {word}{extra}"


def test_functions(path: Path) -> list[str]:
    tree = pyast.parse(path.read_text(encoding="utf-8"))
    return [node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")]


def _reference_transfer(workbook: Workbook, stage: Stage) -> Path:
    return workbook.root / stage.reference_transfer


def _passes(report: RunReport, label: str, file: str, name: str) -> bool:
    rows = report.named(label, file, name)
    return bool(rows) and all(r.outcome is Outcome.PASSED for r in rows)


def verify_course(workbook: Workbook, course: Course, stages: list[Stage],
                  progress: Callable[[str], None] = lambda _: None, mutants: bool = False,
                  settings: JudgeSettings = DEFAULT) -> CourseReport:
    """Every contract of every stage, from one judge run (split over the machine's CPUs)."""
    solution = resolve_target("solution", workbook, course)
    learner = resolve_target("learner", workbook, course)
    references = {s.number: _reference_transfer(workbook, s) for s in stages}
    relative = {n: p.relative_to(workbook.root).as_posix() for n, p in references.items() if p.is_file()}
    regression = {s.number: s.reference_regression_test for s in stages if (workbook.root / s.reference_regression_test).is_file()}
    targets = [jobs.spec(solution, SOLUTION), jobs.spec(learner, LEARNER)]
    course_tests = [CourseTests(SOLUTION, tuple(s.test_file for s in stages) + tuple(relative.values())
                                + tuple(regression.values())),
                    CourseTests(LEARNER, tuple(s.test_file for s in stages))]
    for stage in stages:
        label = f"fault:{stage.number}"
        targets.append(jobs.spec(resolve_target(label, workbook, course), label, stage))
        course_tests.append(CourseTests(label, (stage.test_file,) + ((relative[stage.number],) if stage.number in relative else ())
                                        + ((regression[stage.number],) if stage.number in regression else ())))
    with tempfile.TemporaryDirectory(prefix="forgelab-mutants-") as scratch:
        transfer_labels: dict[str, dict[str, str]] = {}  # the known-wrong variants a transfer test must fail on too
        for stage in stages:
            if stage.number not in relative:
                continue
            for index, (name, folder) in enumerate(transfer_variants(workbook, stage, Path(scratch) / "transfer")):
                label = f"transfer-variant:{stage.number}:{index}"
                transfer_labels.setdefault(stage.number, {})[label] = name
                targets.append(TargetSpec(label, (*solution.layers, folder), stage.number, (stage.module,)))
                course_tests.append(CourseTests(label, (relative[stage.number],)))
        mutant_labels: dict[str, dict[str, str]] = {}
        if mutants:
            for stage in stages:
                made = mutant_targets(workbook, stage, Path(scratch))
                mutant_labels[stage.number] = {spec.label: name for spec, name in made}
                targets.extend(spec for spec, _ in made)
                course_tests.extend(CourseTests(spec.label, (stage.test_file,)) for spec, _ in made)
        job = jobs.job(course, workbook, targets, course_tests)
        job = core.Job(job.course_root, job.starters, job.stage_modules, job.targets, job.course_tests,
                       cache_dir=job.cache_dir, sessions=max(1, min(4, os.cpu_count() or 1)))
        stale = {(s.stage.number, s.artefact): s.reason for s in stale_artefacts(course, stages)}
        report = core.run(job, settings)

    verdicts = []
    for stage in stages:
        verdict = StageVerdict(stage)
        todo = unfinished(course, stage.number)
        if todo:
            verdict.failures.append(f"incomplete: {len(todo)} file(s) still carry the scaffold's TODO marker "
                                    f"({', '.join(todo[:4])}{'…' if len(todo) > 4 else ''})")
        if report.problem:
            verdict.failures.append(f"the judge could not run the course's tests: {report.problem}")
        _check_stage(workbook, stage, verdict, report, relative.get(stage.number))
        mismatched = sourcefacts.problems(course, stage)
        if mismatched:
            verdict.failures.append("source facts do not hold: " + "; ".join(mismatched))
        elif stage.source_facts:
            count = len(stage.source_facts)
            verdict.facts.append(f"{count} source fact{'s' if count != 1 else ''} hold{'' if count != 1 else 's'}")
        for (number, artefact), reason in sorted(stale.items()):
            if number == stage.number:
                verdict.failures.append(f"{artefact}: {reason} (run `forgelab build {number}`)")
        for label, name in transfer_labels.get(stage.number, {}).items():
            rows = report.in_file(label, relative[stage.number])
            if not rows or all(r.outcome is Outcome.PASSED for r in rows):
                verdict.failures.append(f"reference transfer test passes on the declared known-wrong variant {name!r}")
        if not any(f.startswith(("notebooks/", "failure_labs/")) for f in verdict.failures):
            verdict.facts.append("notebook current")
        if stage.number in mutant_labels:
            labels = mutant_labels[stage.number]
            survivors = [name for label, name in labels.items() if _survived(report, label, stage)]
            if survivors:
                verdict.failures.append(f"mutants survived: {', '.join(survivors)}")
            else:
                verdict.facts.append(f"{len(labels)} mutants killed")
        progress(verdict.line())
        verdicts.append(verdict)
    whole = len(stages) == len(course.stages)
    unowned = tuple(unowned_files(course)) if whole else ()
    for path in unowned:
        progress(f"FAIL    {path}: no stage owns this file (remove it, or register it in its stage's source)")
    openings = tuple(f"{opening_notebook(language)}: {reason}" for language in editions(course)
                     for reason in (stale_opening(course, language) if whole else []))
    for line in openings:
        progress(f"FAIL    {line} (run `forgelab build`)")
    return CourseReport(verdicts, unowned, openings)


def _survived(report: RunReport, label: str, stage: Stage) -> bool:
    if label in report.import_problems:
        return False
    rows = report.in_file(label, stage.test_file)
    return bool(rows) and all(r.outcome in (Outcome.PASSED, Outcome.SKIPPED) for r in rows)


def _check_diagnosis_key(workbook: Workbook, stage: Stage, verdict: StageVerdict, report: RunReport) -> None:
    """The answer key accepts exactly the tests that fail on ``fault:NN``, the functions the defect changed and the
    declared defect — proved against this run, though the key holds only salted digests."""
    try:
        key = diagnosis.load_key(workbook.root, stage)
        answer, _choices, _steps = diagnosis.declared(stage, tuple(key.confirm))
    except (diagnosis.DiagnosisError, RegistryError) as error:
        verdict.failures.append(f"diagnosis answer key: {error} (run `forgelab build {stage.number}`)")
        return
    rows = report.in_file(f"fault:{stage.number}", stage.test_file)
    failing = {row.name for row in rows if row.outcome is not Outcome.PASSED}
    accepted = {name for name in key.test.choices if diagnosis.answer_digest(key.salt, "test", name) in key.test.answers}
    variant = (workbook.root / stage.fault_variant).read_text(encoding="utf-8")
    changed = set(diagnosis.changed_functions((workbook.root / stage.solution_module).read_text(encoding="utf-8"),
                                              variant))
    where = {name for name in key.function.choices
             if diagnosis.answer_digest(key.salt, "function", name) in key.function.answers}
    if rows and accepted != failing:
        verdict.failures.append(f"diagnosis answer key accepts tests {sorted(accepted)}, but fault:{stage.number} fails "
                                f"{sorted(failing)} (run `forgelab build {stage.number}`)")
    elif where != changed or not diagnosis.judge(key, stage.fault.target_test, min(changed, default=""), answer)["defect"]:
        verdict.failures.append(f"diagnosis answer key does not accept the defect's functions {sorted(changed)} or "
                                f"the declared defect {answer!r} (run `forgelab build {stage.number}`)")
    else:
        verdict.facts.append("diagnosis key holds")


def _check_stage(workbook: Workbook, stage: Stage, verdict: StageVerdict, report: RunReport,
                 reference: str | None) -> None:
    root = workbook.root
    defined = test_functions(root / stage.test_file)
    if defined != list(stage.required_tests):
        extra = sorted(set(defined) - set(stage.required_tests))
        missing = sorted(set(stage.required_tests) - set(defined))
        verdict.failures.append(f"required_tests differ from {stage.test_file}: "
                                f"not listed {extra or '-'}, not defined {missing or '-'}")
    failing = [n for n in stage.required_tests if not _passes(report, SOLUTION, stage.test_file, n)]
    if failing:
        verdict.failures.append(f"solution fails {', '.join(failing)}")
    else:
        verdict.facts.append(f"solution {len(stage.required_tests)}/{len(stage.required_tests)}")
    if reference is None:
        verdict.failures.append(f"reference transfer test {_reference_transfer(workbook, stage).relative_to(root)} is missing")
    else:
        transfer_rows = report.in_file(SOLUTION, reference)
        if not transfer_rows or any(r.outcome is not Outcome.PASSED for r in transfer_rows):
            verdict.failures.append("reference transfer test does not pass on solution")
    unsolved = [n for n in stage.required_tests if not _passes(report, LEARNER, stage.test_file, n)]
    if not unsolved:
        verdict.failures.append("starter is already solved: every required test passes on learner")
    else:
        verdict.facts.append(f"starter unsolved ({len(unsolved)} failing)")
    variant_dir = jobs.fault_variant(workbook, stage)
    variant_files = sorted(p.relative_to(variant_dir.parent).as_posix() for p in variant_dir.rglob("*.py"))
    if variant_files != [stage.fault.fault_file]:
        verdict.failures.append(f"fault variant must hold exactly {stage.fault.fault_file}, holds {variant_files}")
    fault = f"fault:{stage.number}"
    target_rows = report.named(fault, stage.test_file, stage.fault.target_test)
    failed = [r for r in target_rows if r.outcome is Outcome.FAILED]
    if not failed:
        verdict.failures.append(f"{stage.fault.target_test} does not fail on fault:{stage.number}")
    elif not any(re.search(stage.fault.symptom, r.detail or r.cause) for r in failed):
        verdict.failures.append(f"fault symptom /{stage.fault.symptom}/ not seen; got: {failed[0].cause}")
    else:
        verdict.facts.append("fault holds")
    _check_diagnosis_key(workbook, stage, verdict, report)
    fault_transfer = report.in_file(fault, reference) if reference else ()
    if fault_transfer and all(r.outcome is Outcome.PASSED for r in fault_transfer):
        verdict.failures.append("reference transfer test passes on the fault variant: it cannot tell right from wrong")
    elif fault_transfer:
        verdict.facts.append("transfer discriminates")
    _check_regression_test(workbook, stage, verdict, report)


def _check_regression_test(workbook: Workbook, stage: Stage, verdict: StageVerdict, report: RunReport) -> None:
    """The course's example regression test passes on the reference and fails on the fault variant."""
    example = stage.reference_regression_test
    if not (workbook.root / example).is_file():
        verdict.failures.append(f"example regression test {example} is missing: write one that fails on "
                                f"fault:{stage.number} and passes on solution")
        return
    on_solution = report.in_file(SOLUTION, example)
    on_fault = report.in_file(f"fault:{stage.number}", example)
    if not on_solution or any(r.outcome is not Outcome.PASSED for r in on_solution):
        verdict.failures.append(f"example regression test {example} does not pass on solution")
    elif not any(r.outcome is Outcome.FAILED for r in on_fault):
        verdict.failures.append(f"example regression test {example} does not fail on fault:{stage.number}")
    else:
        verdict.facts.append("regression test pins the fault")
