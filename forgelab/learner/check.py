"""``forgelab check NN``: judge one stage for one target and write its evidence.

Four parts are judged, each from a real run:

1. the stage's required tests against the target's ``forge``;
2. the fault lab: the target test — and the rest of the stage tests — in the lab workspace;
3. the transfer challenge: the learner's own test file, run against the same ``forge`` — and once
   more against the stage's known-wrong implementation, where it must not pass;
4. the design answer: present and long enough to be an answer.

Everything that runs learner code goes through one judge run (:mod:`forgelab.judge`): the course's
tests on the trusted side, the learner's modules in the sandbox. The learner's own transfer test runs
in a sandbox of its own, with the course's interface ``forge`` instead of theirs: its calls reach their
``forge`` (or the known-wrong one) through the judge as data, so the two runs look the same from inside
the test except by what ``forge`` does (:mod:`forgelab.judge.relay`). Without bubblewrap (macOS) both are
plain child processes.
"""

from __future__ import annotations

import contextvars
import datetime as _dt
import platform
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgelab import __version__
from forgelab.core import evidence, verification
from forgelab.core.i18n import N_, _, active
from forgelab.judge import channel, core, waiting
from forgelab.judge.outcomes import ImportProblem, Outcome, RunReport, TestRow
from forgelab.judge.settings import DEFAULT, JudgeSettings
# what a check runs (re-exported: watch mode and the workbench name the parts and paths from here)
from forgelab.learner.checkjob import ALL_PARTS as ALL_PARTS, FAULT_LAB as FAULT_LAB, TESTS as TESTS, TRANSFER as TRANSFER
from forgelab.learner.checkjob import lab_dir as lab_dir, transfer_file as transfer_file
from forgelab.learner.checkjob import untouched_regression
from forgelab.learner.checkjob import (KNOWN_WRONG, LAB, REGRESSION_BROKEN, REGRESSION_FIXED, TARGET, CheckPlan,
                                       PendingRun, part_inputs, plan_check, regression_file)
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage
from forgelab.core.targets import Target
from forgelab.verdicts.parts import (NOT_WRITTEN_TEXT, PART_WORDS, REGRESSION_NOT_WRITTEN, Part, judge_design, judge_lab,
                                     judge_regression, judge_transfer)
from forgelab.verdicts.diagnosis import judged_record, load_key, defect_text, DiagnosisError

if TYPE_CHECKING:  # watch mode hands a worker in; a check never loads the warm worker's module
    from forgelab.judge.warm import WarmWorker



@dataclass(frozen=True)
class CheckOutcome:
    stage: Stage
    target: Target
    tests: tuple[TestRow, ...]
    fault_lab: Part
    transfer: Part
    transfer_tests: tuple[TestRow, ...]
    design: Part
    document: dict[str, Any]  # free-form: verification.json as written (core/verification.Verification validates it)
    path: Path | None
    import_problem: ImportProblem | None = None
    report: RunReport | None = None
    diagnosis: Part = field(default_factory=lambda: Part("missing", ""))
    regression: Part = field(default_factory=lambda: Part("missing", ""))
    # the digest of the files each slow part was judged on (checkjob.part_inputs), and the transfer test's rows on the
    # known-wrong module: a later check of the same files takes them from here instead of running them again
    inputs: dict[str, str] = field(default_factory=dict)
    known_wrong: tuple[TestRow, ...] | None = None
    # the slow parts (TRANSFER, FAULT_LAB) taken from an earlier check although their files changed since: a partial
    # check that shows the stage tests first (watch mode, the notebook's re-check) and judges them next. Never in
    # written evidence (a check that writes runs them), and never remembered for ``status`` (Workbench.record)
    stale: frozenset[str] = frozenset()

    @property
    def accepted(self) -> bool:
        return bool(self.document["accepted"])


class _OnThread:
    """A judge run (:func:`forgelab.judge.core.run`) on a thread, started now; :meth:`result` waits for its report.
    Ctrl-C while waiting stops what it started (its run's processes, and the warm worker's session)."""

    def __init__(self, job: core.Job, settings: JudgeSettings, warm: WarmWorker | None) -> None:
        self._report: RunReport | None = None
        self._error: BaseException | None = None
        self._processes = channel.RunProcesses(within=channel.current_run())
        self._warm = warm
        self._done = threading.Event()
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._run, job, settings), daemon=True,
                                        name="forgelab-check-tests")
        self._thread.start()

    def _run(self, job: core.Job, settings: JudgeSettings) -> None:
        try:
            self._report = (core.run(job, settings, warm=self._warm, processes=self._processes)
                            if job.course_tests or job.learner_tests else RunReport(()))
        except BaseException as error:  # noqa: BLE001 - handed to the thread that waits for the report
            self._error = error
        finally:
            self._done.set()

    def stop(self) -> None:
        """End everything the run started, and wait for it to end."""
        self._processes.stop()
        if self._warm is not None:
            self._warm.stop_child()
        self._done.wait(timeout=60)

    def result(self) -> RunReport:
        try:
            waiting.wait(self._done)
        except BaseException:  # Ctrl-C while waiting: nothing the run started may keep running
            self.stop()
            raise
        if self._error is not None:
            raise self._error
        assert self._report is not None
        return self._report


def design_answer_file(workbook: Workbook, stage: Stage, target: Target) -> Path:
    if target.is_reference:
        return workbook.root / stage.reference_answer
    return target.home / stage.design_answer_file


def _required_rows(stage: Stage, report: RunReport, label: str) -> tuple[TestRow, ...]:
    """One or more rows per required test; a required test that did not run says why."""
    found = report.in_file(label, stage.test_file)
    rows: list[TestRow] = []
    for name in stage.required_tests:
        mine = [row for row in found if row.name == name]
        if mine:
            rows.extend(mine)
            continue
        problem = report.import_problems.get(label)
        errors = [e.cause for e in report.collect_errors if e.target == label and e.file == stage.test_file]
        cause = (_("not run: {cause}").format(cause=problem.cause) if problem
                 else _("not run: could not collect the tests: {cause}").format(cause=errors[0]) if errors
                 else report.problem or _("this test was not found: the stage test file may have been edited"))
        rows.append(TestRow(f"{stage.test_file}::{name}", label, Outcome.NOT_RUN, cause))
    return tuple(rows)


ON_OWN_FORGE = N_("on your own forge/: {detail} (grading runs your test on the course's reference implementation "
                  "instead, where it must pass, and on its known-wrong ones, where it must fail)")


def _judge_lab(plan: CheckPlan, report: RunReport | None, reference_results: tuple[TestRow, ...]) -> Part:
    stage, target, lab = plan.stage, plan.target, plan.lab
    if target.kind == "solution":
        ok = all(r.outcome is Outcome.PASSED for r in reference_results if r.name == stage.fault.target_test)
        return Part("fixed" if ok else "broken", _("reference fix: the solution module is the repaired file"))
    if target.kind == "fault":
        return Part("broken", _("this target is the broken variant itself"))
    if not lab.is_dir():
        return Part("not_started", _("start it with `forgelab fault start {number}`").format(number=stage.number))
    if plan.lab_untouched:
        return Part("broken", _("{path} is still the broken variant: find the defect (`forgelab fault check {number}` "
                                "shows the symptom), state your diagnosis, then repair it").format(
                                    path=stage.lab_module, number=stage.number))
    assert report is not None
    verdict = judge_lab(stage, report, LAB)
    if verdict.status == "error":
        return Part("error", verdict.problem or _("the lab's tests did not run"))
    if verdict.status == "broken":
        if verdict.target is not None and verdict.target.outcome is not Outcome.PASSED:
            return Part("broken", _("{test} still fails: {cause}").format(test=stage.fault.target_test,
                                                                            cause=verdict.target.cause))
        return Part("broken", _("the target test passes, but the lab fix breaks: {tests}").format(
            tests=_(", ").join(verdict.failing)))
    return Part("fixed", _("the target test and the whole stage pass in the lab workspace"),
                {"fixed_file_sha256": evidence.sha256_file(lab / stage.fault.fault_file)})


def judge_lab_regression(stage: Stage, target: Target, lab: Path, lab_untouched: bool, report: RunReport | None) -> Part:
    """The lab's regression test (``labs/NN-slug/test_diagnosis.py``) from its runs on the lab's broken copy and on the
    learner's repair (:func:`forgelab.learner.checkjob.regression_runs`): it must fail on the first, pass on the second.
    What earns the lab's diagnosis points in grading (there on the course's reference instead of the repair)."""
    number = stage.number
    if target.kind == "solution":
        return Part("passed", _("reference: the course's example regression test"))
    if target.kind == "fault":
        return Part("missing", _("this target is the broken variant itself"))
    test = regression_file(lab, stage)
    if not lab.is_dir():
        return Part("missing", _("start the lab with `forgelab fault start {number}`: it writes the starter of {path}").format(
            number=number, path=stage.regression_test))
    if not test.is_file():
        return Part("missing", _("{path} does not exist: `forgelab fault start {number}` writes its starter").format(
            path=stage.regression_test, number=number))
    shown = stage.regression_test
    if untouched_regression(stage, test):
        return Part("not_written", _(REGRESSION_NOT_WRITTEN).format(path=shown))
    if report is None:
        return Part("error", _("the lab's regression test did not run"))

    def problem(label: str) -> str | None:
        errors = [e.cause for e in report.collect_errors if e.target == label and e.file == shown]
        return report.target_problems.get(label) or (_("could not collect {path}: {cause}").format(
            path=shown, cause=errors[0]) if errors else None)

    broken = report.in_file(REGRESSION_BROKEN, shown)
    if not lab_untouched:
        return judge_regression(shown, report.in_file(REGRESSION_FIXED, shown), problem(REGRESSION_FIXED), broken,
                                problem(REGRESSION_BROKEN), _("your repaired lab"), _("the lab's broken copy"))
    if broken and all(row.outcome is Outcome.SKIPPED for row in broken):
        return Part("not_written", _(REGRESSION_NOT_WRITTEN).format(path=shown))
    if any(row.outcome in (Outcome.FAILED, Outcome.TIMEOUT) for row in broken):
        return Part("pending", _("it fails on the lab's broken copy, as it should; repair {path} and check again: it "
                                 "must pass on your fix").format(path=stage.lab_module), {"on_broken": "fails"})
    if broken:
        return Part("cannot_tell", _("it passes on the lab's broken copy, so it does not pin the defect: assert what the "
                                     "repaired code does and the broken code does not"), {"on_broken": "passes"})
    return Part("error", problem(REGRESSION_BROKEN) or _("no test function found in {path}: name it test_...").format(
        path=shown))


def parts_to_run(workbook: Workbook, stage: Stage, target: Target, parts: frozenset[str],
                 previous: CheckOutcome | None) -> frozenset[str]:
    """The ``parts`` that :func:`run_check` with ``previous`` runs again: the stage tests when asked for, and each slow
    part asked for whose files changed since ``previous`` judged it."""
    if previous is None or previous.stage.number != stage.number or previous.target.name != target.name \
            or previous.report is None or previous.report.problem:
        return parts
    inputs = part_inputs(workbook, stage, target)
    return frozenset(part for part in parts if part == TESTS or previous.inputs.get(part) != inputs[part])


def run_check(course: Course, workbook: Workbook, stage: Stage, target: Target, *,
              write: bool = True, out: Path | None = None, settings: JudgeSettings = DEFAULT,
              parts: frozenset[str] = ALL_PARTS, previous: CheckOutcome | None = None,
              warm: WarmWorker | None = None, pending: PendingRun | None = None) -> CheckOutcome:
    """Judge the stage and (``write``) write its evidence. With ``previous`` (a check of the same stage and
    target), only ``parts`` run again and the other parts are taken from it — what watch mode does after a
    save that can affect only those parts; the evidence is written exactly as a whole check writes it. With
    ``warm`` (watch mode), the course's tests run in a session forked from that worker: the same verdict, sooner.
    With ``pending``, the judge's run of this whole check was started already (:func:`forgelab.learner.checkjob.start_check`)."""
    if previous is None or previous.stage.number != stage.number or previous.target.name != target.name:
        parts, previous = ALL_PARTS, None
    reusable = previous is not None and previous.report is not None and not previous.report.problem
    if pending is not None:  # the whole check's run, started already from its plan (forgelab check: see start_check)
        plan = pending.plan or plan_check(course, workbook, stage, target)
        inputs: dict[str, str] = {}
        known_wrong = True
        stale: frozenset[str] = frozenset()
        report = pending.result()
    else:
        transfer_path, lab = transfer_file(workbook, stage, target), lab_dir(workbook, stage, target)
        early_run = None
        if parts == frozenset({TESTS}) and not write:
            # the stage tests alone, nothing written (the verdict after a save): what runs does not depend on the
            # digests below, so the tests start first and the digests are read while they run
            early_plan = plan_check(course, workbook, stage, target, parts, False, transfer_path=transfer_path, lab=lab)
            early_run = _OnThread(early_plan.job, settings, warm)
        try:
            # what each slow part reads, now: a part asked for whose files are those it was last judged on is taken
            # from then
            inputs = part_inputs(workbook, stage, target, transfer_path, lab)
        except BaseException:  # Ctrl-C or a failure: the tests' run ends too
            if early_run is not None:
                early_run.stop()
            raise
        if reusable and previous is not None:
            parts = frozenset(part for part in parts if part == TESTS or previous.inputs.get(part) != inputs[part])
        # the slow parts not run now whose files changed since ``previous`` judged them: their rows are from before
        stale = frozenset(part for part in (TRANSFER, FAULT_LAB) if part not in parts and previous is not None
                          and previous.inputs.get(part) != inputs[part])
        if write:  # evidence says only what is true of the files as they are: what changed runs now
            parts, stale = parts | stale, frozenset()
        known_wrong = not (reusable and previous is not None and previous.known_wrong is not None
                           and previous.inputs.get(KNOWN_WRONG) == inputs[KNOWN_WRONG])
        if early_run is not None:
            plan, report = early_plan, early_run.result()
        else:
            plan = plan_check(course, workbook, stage, target, parts, known_wrong, transfer_path=transfer_path, lab=lab)
            job = plan.job
            report = core.run(job, settings, warm=warm) if job.course_tests or job.learner_tests else RunReport(())
    # from here on, only the plan says what was judged (the stage, the target, the files and folders)
    stage, target, parts, transfer_path, lab = plan.stage, plan.target, plan.parts, plan.transfer_path, plan.lab
    transfer_shown, transfer_name = stage.transfer_file, plan.transfer_name
    judged_at = {part: (inputs[part] if part in parts and not report.problem
                        else previous.inputs.get(part, "") if previous is not None and part not in parts else "")
                 for part in (TRANSFER, FAULT_LAB)} if inputs else {}
    # the transfer test's rows on the known-wrong module: this run's, else those of the check whose files they were
    if plan.known_wrong:
        on_wrong: tuple[TestRow, ...] | None = report.in_file(KNOWN_WRONG, transfer_name)
        judged_at[KNOWN_WRONG] = inputs[KNOWN_WRONG] if inputs and not report.problem else ""
    elif previous is not None and (not known_wrong or TRANSFER not in parts):
        on_wrong = previous.known_wrong
        judged_at[KNOWN_WRONG] = previous.inputs.get(KNOWN_WRONG, "")
    else:
        on_wrong = None
    if TESTS in parts or previous is None:
        problem = report.import_problems.get(TARGET)
        tests = _required_rows(stage, report, TARGET)
    else:
        problem, tests = previous.import_problem, previous.tests
    transfer_rows = report.in_file(TARGET, transfer_name)
    if TRANSFER not in parts and previous is not None:
        transfer_part, transfer_rows = previous.transfer, previous.transfer_tests
    elif plan.transfer == "missing":
        transfer_part = Part("missing", _("{path} does not exist: bring the starter back with `forgelab starter {number} "
                                          "--transfer`").format(path=transfer_shown, number=stage.number))
    elif plan.transfer == "starter":
        transfer_part = Part("not_written", _(NOT_WRITTEN_TEXT).format(path=transfer_shown))
    elif problem is not None and not target.is_reference:
        transfer_part = Part("error", _("not run: {cause}").format(cause=problem.cause))
    else:
        errors = [e.cause for e in report.collect_errors if e.target == TARGET and e.file == transfer_name]
        run_problem = report.target_problems.get(TARGET) or (
            _("could not collect {path}: {cause}").format(path=transfer_shown, cause=errors[0]) if errors else None)
        transfer_part = judge_transfer(transfer_rows, run_problem, transfer_shown, on_wrong)
        if not target.is_reference and transfer_part.status in ("passed", "failed", "error", "cannot_tell"):
            # the bundle has no reference implementation: check judges on the learner's forge, and says so
            transfer_part = Part(transfer_part.status, _(ON_OWN_FORGE).format(detail=transfer_part.detail),
                                 transfer_part.extra)
        if (transfer_part.status == "passed" and on_wrong is None and (workbook.root / stage.sealed_lab).is_file()
                and not (workbook.root / stage.fault_variant).is_file()):
            # a learner bundle whose fault lab is still sealed: the run on the known-wrong implementation (the lab's
            # module) waits until the stage passes and the lab is open
            transfer_part = Part("passed", _("{detail}; it is run on the known-wrong implementation too once the fault "
                                             "lab is open (`forgelab fault start {number}`)").format(
                detail=transfer_part.detail, number=stage.number), transfer_part.extra)
    if FAULT_LAB not in parts and previous is not None:
        lab_part, regression_part = previous.fault_lab, previous.regression
    else:
        lab_part = _judge_lab(plan, report, tests)
        regression_part = judge_lab_regression(stage, target, lab, plan.lab_untouched, report)
    diagnosis_part = judge_diagnosis(workbook, stage, target)
    design_path = design_answer_file(workbook, stage, target)
    design_part = judge_design(design_path, stage.design_answer_file)

    document = build_document(course, stage, target, tests, lab_part, transfer_part, transfer_rows,
                              transfer_path, design_part, design_path, diagnosis_part, regression_part,
                              regression_file(lab, stage))
    path = None
    if write:
        path = out or (workbook.workspace / stage.evidence_dir / evidence.FILENAME)
        verification.write(path, verification.Verification.model_validate(document))
    return CheckOutcome(stage, target, tests, lab_part, transfer_part, transfer_rows, design_part, document, path,
                        problem, report, diagnosis_part, regression_part, judged_at, on_wrong, stale)


def _summary(stage: Stage, tests: tuple[TestRow, ...]) -> dict[str, int]:
    counts = {key: 0 for key in ("passed", "failed", "error", "skipped", "timeout", "not_run")}
    for row in tests:
        counts[row.outcome] += 1
    passed_names = {
        name for name in stage.required_tests
        if (rows := [r for r in tests if r.name == name]) and all(r.outcome == "passed" for r in rows)
    }
    counts["required_passed"] = len(passed_names)
    counts["required_total"] = len(stage.required_tests)
    return counts


def judge_diagnosis(workbook: Workbook, stage: Stage, target: Target) -> Part:
    """The fault lab's diagnosis, the second fact of the lab beside its repair: stated, and right or not — judged
    again with the course's answer key, never taken from the saved record."""
    if target.kind == "solution":
        return Part("right", _("reference: the course's own diagnosis"))
    if target.kind == "fault":
        return Part("missing", _("this target is the broken variant itself"))
    home = workbook.workspace if target.kind == "learner" else target.home
    record, right = judged_record(workbook.root, home, stage)
    if record is None:
        return Part("missing", _("not stated yet: `forgelab fault diagnose {number}` (or part 7 of the notebook) — "
                                 "which test shows the defect, where it lies, what it is").format(number=stage.number))
    try:
        defect = defect_text(load_key(workbook.root, stage), record.defect, active())
    except DiagnosisError:
        defect = record.defect
    extra: dict[str, object] = {"test": record.test, "function": record.function, "defect": record.defect,
                             "defect_text": defect, "explanation": record.explanation, "attempts": record.attempts,
                             "stated_after_fix": record.stated_after_fix, "hints_shown": record.hints_shown}
    if all(right.values()):
        return Part("right", _("{test} shows it, it lies in {function}(), and the defect is: {defect} (stated at attempt "
                               "{attempts})").format(attempts=record.attempts, test=record.test,
                                                     function=record.function, defect=defect), extra)
    wrong = [_(QUESTION_WORDS[question]) for question, ok in right.items() if not ok]
    return Part("not_right", _("stated, not right yet ({wrong}): look again and state it with `forgelab fault "
                               "diagnose {number}`").format(wrong=_(", ").join(wrong), number=stage.number), extra)


QUESTION_WORDS = {"test": N_("which test shows it"), "function": N_("where it lies"), "defect": N_("what the defect is")}
DIAGNOSIS_WORDS = {"missing": N_("not stated"), "not_right": N_("not right yet"), "right": N_("right")}


def build_document(course: Course, stage: Stage, target: Target, tests: tuple[TestRow, ...],
                   lab: Part, transfer: Part, transfer_rows: tuple[TestRow, ...], transfer_path: Path,
                   design: Part, design_path: Path, diagnosis: Part | None = None, regression: Part | None = None,
                   regression_path: Path | None = None) -> dict[str, object]:
    from importlib.metadata import version

    diagnosis = diagnosis or Part("missing", "")
    summary = _summary(stage, tests)
    acceptance = {
        "required_tests_passed": summary["required_passed"] == summary["required_total"],
        "fault_lab_fixed": lab.status == "fixed",
        "fault_lab_diagnosed": diagnosis.status == "right",
        "transfer_passed": transfer.status == "passed",
        "design_answer_present": design.status == "present",
    }
    problems = []
    if not acceptance["required_tests_passed"]:
        failing = [name for name in stage.required_tests
                   if not all(r.outcome == "passed" for r in tests if r.name == name)]
        problems.append(_("required tests not passing: {tests}").format(tests=_(", ").join(failing)))
    if not acceptance["fault_lab_fixed"]:
        problems.append(_("fault lab {status}: {detail}").format(status=_(PART_WORDS.get(lab.status, lab.status)),
                                                                  detail=lab.detail))
    if not acceptance["fault_lab_diagnosed"]:
        problems.append(_("fault lab diagnosis (self-reported) {status}: {detail}").format(
            status=_(DIAGNOSIS_WORDS.get(diagnosis.status, diagnosis.status)), detail=diagnosis.detail))
    if not acceptance["transfer_passed"]:
        problems.append(_("transfer challenge {status}: {detail}").format(
            status=_(PART_WORDS.get(transfer.status, transfer.status)), detail=transfer.detail))
    if not acceptance["design_answer_present"]:
        problems.append(_("design answer {status}: {detail}").format(
            status=_(PART_WORDS.get(design.status, design.status)), detail=design.detail))
    module_file = target.module_path(stage.module)
    fault_lab: dict[str, object] = {"status": lab.status, "target_test": stage.fault_target_nodeid,
                                    "fault_file": stage.fault.fault_file, "detail": lab.detail}
    if lab.extra.get("fixed_file_sha256"):
        fault_lab["fixed_file_sha256"] = lab.extra["fixed_file_sha256"]
    # the multiple-choice diagnosis: a learning aid the learner's machine can forge, so it earns nothing
    fault_lab["diagnosis"] = {"status": diagnosis.status, "detail": diagnosis.detail, "self_reported": True,
                              **diagnosis.extra}
    regression = regression or Part("missing", "")
    regression_doc: dict[str, object] = {"status": regression.status, "file": stage.regression_test,
                                         "detail": regression.detail, **regression.extra}
    if regression_path is not None and regression_path.is_file():
        regression_doc["sha256"] = evidence.sha256_file(regression_path)
    fault_lab["regression_test"] = regression_doc
    transfer_doc: dict[str, object] = {
        "status": transfer.status, "file": stage.transfer_file, "detail": transfer.detail,
        "tests": [{"name": r.name, "outcome": str(r.outcome), "cause": r.cause[:300]} for r in transfer_rows],
    }
    if transfer.extra.get("known_wrong"):
        transfer_doc["known_wrong"] = transfer.extra["known_wrong"]
    if transfer_path.is_file():
        transfer_doc["sha256"] = evidence.sha256_file(transfer_path)
    design_doc: dict[str, object] = {"status": design.status, "file": stage.design_answer_file,
                                     "words": int(design.extra.get("words", 0)), "detail": design.detail}
    if design.extra.get("sha256"):
        design_doc["sha256"] = design.extra["sha256"]
    document: dict[str, object] = {
        "schema_version": evidence.SCHEMA_VERSION,
        "kind": evidence.KIND,
        "experiment_id": stage.experiment_id,
        "stage": {"number": stage.number, "slug": stage.slug, "title": stage.text().title,
                  "module": stage.module, "evidence_dir": stage.evidence_dir + "/"},
        "target": {"name": target.name if target.kind != "path" else "path", "kind": target.kind},
        "generated_by": {"tool": "forgelab", "tool_version": __version__, "course_version": course.version,
                         "python": platform.python_version(), "pytest": version("pytest"),
                         "platform": f"{platform.system()}-{platform.machine()}"},
        "checked_at": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "required_tests": list(stage.required_tests),
        "tests": [{"nodeid": r.nodeid, "name": r.name, "outcome": str(r.outcome), "cause": r.cause[:300],
                   "duration_ms": int(r.duration_ms)} for r in tests],
        "summary": summary,
        "fault_lab": fault_lab,
        "transfer": transfer_doc,
        "design_answer": design_doc,
        "digests": {
            "algorithm": "sha256",
            "module": {"path": stage.module, "sha256": evidence.sha256_file(module_file)},
            "tests": [{"path": stage.test_file, "sha256": evidence.sha256_file(course.root / stage.test_file)}],
        },
        "acceptance": acceptance,
        "accepted": all(acceptance.values()),
        "problems": problems,
        "disclaimer": evidence.DISCLAIMER,
    }
    # through its model: a document the model (and so the schema) does not describe is our bug, said here
    return verification.document(verification.Verification.model_validate(evidence.seal(document)))

