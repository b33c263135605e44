"""The fault lab: a broken copy of one stage module in its own workspace, ``labs/NN-slug/``.

``start`` lays out ``labs/NN-slug/forge/`` (a copy of the learner's modules with the broken module
laid over it, so a stage that builds on earlier ones still imports) — in a learner bundle, where the broken module
ships sealed, only after :func:`unseal` opened it (the stage's required tests pass on the learner's own code,
:mod:`forgelab.core.seal`) — ``check`` runs
the stage tests there and shows whether the declared symptom appears, ``diff`` compares the
learner's fix with the broken file, ``reset`` puts the broken file back (after a backup). The
learner's own ``forge/`` is only read (once, at start), never written.
"""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

from forgelab.learner import backups, state
from forgelab.learner.check import judge_lab_regression
from forgelab.learner.checkjob import regression_runs, regression_starter_text, untouched_lab
from forgelab.core.targets import resolve_target
from forgelab.core import evidence
from forgelab.core.i18n import _
from forgelab.judge.settings import DEFAULT, JudgeSettings
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage
from forgelab.verdicts.parts import LabCheck, Part, judge_lab
from forgelab.judge import core
from forgelab.verdicts import jobs
from forgelab.verdicts import seal as seal_verdict
from forgelab.judge.core import CourseTests

LAB_INIT = '"""forge — fault-lab workspace: only the module under repair lives here."""\n'


class FaultLabError(ValueError):
    """The lab cannot do what was asked; the message says what to do instead."""


def lab_path(workbook: Workbook, stage: Stage) -> Path:
    return workbook.workspace / stage.lab_dir


def broken_file(workbook: Workbook, stage: Stage) -> Path:
    return workbook.root / stage.fault_variant


def sealed_file(workbook: Workbook, stage: Stage) -> Path:
    return workbook.root / stage.sealed_lab


def is_sealed(workbook: Workbook, stage: Stage) -> bool:
    """The lab's broken module ships sealed here and has not been opened yet (a learner bundle)."""
    return not broken_file(workbook, stage).is_file() and sealed_file(workbook, stage).is_file()


def unseal(workbook: Workbook, course: Course, stage: Stage, layers: tuple[Path, ...],
           settings: JudgeSettings = DEFAULT) -> Path:
    """Open the sealed lab of ``stage`` with the answers of ``layers`` (the learner's ``forge/``): write the broken
    module where the course repository keeps it (:attr:`Stage.fault_variant`) and return it.

    The stage's tests and seal probes run through the judge first; the lab opens only when every required test
    passes and the probes' answers make the key. Otherwise :class:`FaultLabError` says what is missing and what to
    do next."""
    from forgelab.core import seal  # lazy: cryptography loads only when a lab is opened, not with every command

    shown = stage.sealed_lab
    try:
        sealed = seal.load(sealed_file(workbook, stage).read_bytes(), shown)
        probes = (workbook.root / sealed.probes).read_bytes()
    except OSError as error:
        raise FaultLabError(_("the sealed fault lab of stage {number} cannot be read ({error}): restore {path} and "
                              "{probes} from the bundle").format(number=stage.number, error=error.strerror or error,
                                                                 path=shown, probes=stage.seal_probes)) from None
    except seal.SealError as error:
        raise FaultLabError(str(error)) from None
    if sealed.stage != stage.number or sealed.module != stage.fault_variant or sealed.probes != stage.seal_probes:
        raise FaultLabError(_("{path} was sealed for another lab (stage {found}, {module}): restore it from the "
                              "bundle").format(path=shown, found=sealed.stage, module=sealed.module))
    job = seal_verdict.seal_job(stage, course.root, jobs.starters(workbook), jobs.stage_modules(course), layers,
                                cache_dir=workbook.state_dir / "cache")
    run = seal_verdict.run_seal(stage, job, settings)
    number, total = stage.number, len(run.required)
    if not run.all_pass:
        why = _(" (your code could not be judged: {problem})").format(problem=run.problem) if run.problem else ""
        raise FaultLabError(_("stage {number}: {passing} of {total} required tests pass on your forge/{why} — the fault "
                              "lab opens when all pass: run `forgelab check {number}`").format(
            number=number, passing=len(run.passing), total=total, why=why))
    try:
        module = seal.open_sealed(sealed, probes, run.answers)
    except seal.SealError as error:
        raise FaultLabError(str(error)) from None
    if module is None:
        silent = (_(" ({probes} gave no answer)").format(probes=_(", ").join(run.unanswered)) if run.unanswered else "")
        raise FaultLabError(_("stage {number}: all {total} required tests pass on your forge/, but its answers to the "
                              "lab's seal probes in {file}{silent} are not the ones the stage's contract asks for, so "
                              "the lab stays sealed: compare those calls with the contract in {module}'s docstring, or "
                              "ask your instructor").format(number=number, total=total, file=stage.seal_probes,
                                                            silent=silent, module=stage.module))
    target = broken_file(workbook, stage)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.opening")
    temporary.write_bytes(module)
    temporary.replace(target)
    return target


def start(workbook: Workbook, stage: Stage, base_forge: Path | None = None) -> tuple[Path, bool]:
    """Create the lab; returns (module path, created). An existing lab is kept as it is.

    The other modules come from ``base_forge`` (default: the learner's ``forge/``); the course
    builder passes the reference target's, so reference notebooks show the real symptom.
    """
    lab = lab_path(workbook, stage)
    module = lab / stage.fault.fault_file
    if module.is_file():
        regression_starter(workbook, stage)  # a lab started before the course asked for one gets it now
        return module, False
    source = broken_file(workbook, stage)
    if is_sealed(workbook, stage):
        raise FaultLabError(_("the fault lab of stage {number} is still sealed: `forgelab fault start {number}` opens it "
                              "once the stage's required tests pass on your forge/").format(number=stage.number))
    if not source.is_file():
        raise FaultLabError(_("the broken variant {path} is missing: restore it from the workbook").format(
            path=workbook.relative(source)))
    # the lab holds a copy of the learner's other modules (a later stage may build on them), a bare
    # package marker, and the broken module under repair
    base = base_forge or workbook.forge
    if base.is_dir():
        shutil.copytree(base, lab / "forge", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                        dirs_exist_ok=True)
    module.parent.mkdir(parents=True, exist_ok=True)
    (lab / "forge" / "__init__.py").write_text(LAB_INIT, encoding="utf-8")
    shutil.copyfile(source, module)
    # the README names the task, never the defect: the diagnosis is the learner's (revealed step by step on request)
    readme = [_("# Fault lab {number} — {title}").format(number=stage.number, title=stage.text().title), "",
              _("A copy of `{module}` in this folder has a defect, and a stage test fails because of it. Run "
                "`forgelab fault check {number}` to see the symptom, find the cause, and repair the file here.").format(
                  module=stage.fault.fault_file, number=stage.number), "",
              _("Before you repair it, state your diagnosis: `forgelab fault diagnose {number}` asks which test shows "
                "the defect, in which function it lies and what it is, and a sentence in your own words.").format(
                  number=stage.number), "",
              _("Then write `test_diagnosis.py` in this folder: a test that fails on the broken copy and passes once you "
                "have repaired it. `forgelab fault check {number}` runs it on both. It earns the lab's diagnosis points; "
                "the multiple-choice diagnosis is self-reported, a learning aid that earns none.").format(
                  number=stage.number), "",
              _("Stuck? `forgelab fault hint {number}` reveals the lab's story, then one diagnosis step at a time, "
                "then the fix principle.").format(number=stage.number), "",
              _("Your own forge/ is not involved: this workspace is separate.")]
    (lab / "README.md").write_text("\n".join(readme) + "\n", encoding="utf-8")
    regression_starter(workbook, stage)
    return module, True


def regression_starter(workbook: Workbook, stage: Stage) -> Path:
    """``labs/NN-slug/test_diagnosis.py`` as a starter (a docstring that says what it must do, a skipped test), unless
    the learner has one already; returns its path."""
    path = workbook.workspace / stage.regression_test
    if not path.exists():
        path.write_text(regression_starter_text(stage), encoding="utf-8")
    return path


def _require(workbook: Workbook, stage: Stage) -> Path:
    module = lab_path(workbook, stage) / stage.fault.fault_file
    if not module.is_file():
        raise FaultLabError(_("the fault lab for stage {number} is not started: run `forgelab fault start {number}`").format(
            number=stage.number))
    return module


def check(workbook: Workbook, course: Course, stage: Stage, settings: JudgeSettings = DEFAULT) -> tuple[LabCheck, Part]:
    """Run the stage tests against the lab workspace (through the judge) and remember the verdict; in the same run,
    the lab's regression test on the broken copy and on the repair (:func:`forgelab.learner.check.judge_lab_regression`)."""
    module = _require(workbook, stage)
    lab = lab_path(workbook, stage)
    untouched = untouched_lab(workbook.root, stage, lab)
    targets, tests = regression_runs(workbook, stage, lab, untouched)
    job = jobs.job(course, workbook, [jobs.lab_spec(lab, stage, "lab"), *targets], [CourseTests("lab", (stage.test_file,))],
                   tests)
    report = core.run(job, settings)
    result = judge_lab(stage, report, "lab")
    state.remember_fault_check(workbook, stage.number, result.status, evidence.sha256_file(module))
    return result, judge_lab_regression(stage, resolve_target("learner", workbook, course), lab, untouched, report)


def is_fixed(workbook: Workbook, stage: Stage) -> bool:
    """The last ``fault check`` said FIXED, and the lab file is still the one it checked."""
    module = lab_path(workbook, stage) / stage.fault.fault_file
    last = state.last_fault_check(workbook, stage.number)
    return (module.is_file() and last is not None and last.status == "fixed"
            and last.file_sha256 == evidence.sha256_file(module))


def diff(workbook: Workbook, stage: Stage) -> str:
    module = _require(workbook, stage)
    original = broken_file(workbook, stage).read_text(encoding="utf-8").splitlines(keepends=True)
    current = module.read_text(encoding="utf-8").splitlines(keepends=True)
    name = stage.fault.fault_file
    return "".join(difflib.unified_diff(original, current, f"broken/{name}", stage.lab_module))


def reset(workbook: Workbook, stage: Stage) -> backups.Backup:
    module = _require(workbook, stage)
    saved = backups.take(workbook, f"lab-{stage.number}", {stage.lab_module: module})
    shutil.copyfile(broken_file(workbook, stage), module)
    return saved
