"""Does a submission's own verification.json agree with what grading observed?

The learner's ``forgelab check NN`` wrote the file on their machine. Grading re-runs the same
judgement with the course's tests, so the two can be compared:

* the integrity digest must hold (otherwise the file was edited after the checker wrote it);
* it must be this stage's evidence, produced for the learner's own ``forge/`` (target ``learner``);
* it must have been produced with the course's stage tests (their sha256 must match), and the
  submission's copy of ``tests/stages/`` must not differ from the course's;
* it must not claim more than grading saw: no test, fault lab, transfer test, design answer or
  acceptance that grading did not also observe.

Claiming *less* is fine (work done after the last check). Any finding above costs the evidence
item its points and flags it for review: the instructor decides what it means.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from forgelab.core import evidence, verification
from forgelab.core.i18n import N_, _
from forgelab.grading.rubric import ERROR, FAILED, MISSING, PASSED, REVIEW
from forgelab.core.registry import Stage
from forgelab.core.verification import Verification
from forgelab.judge.outcomes import TestRow

ACCEPTANCE_LABELS = {
    "required_tests_passed": N_("all required tests passed"),
    "fault_lab_fixed": N_("the fault lab fixed"),
    "fault_lab_diagnosed": N_("the fault lab diagnosed"),
    "transfer_passed": N_("the transfer test passed"),
    "design_answer_present": N_("a design answer present"),
}
MAX_LISTED = 4


@dataclass(frozen=True)
class Finding:
    outcome: str
    reason: str
    flag: str


def _listed(items: list[str]) -> str:
    shown = _(", ").join(items[:MAX_LISTED])
    return shown + (_(" and {count} more").format(count=len(items) - MAX_LISTED) if len(items) > MAX_LISTED else "")


def _observed_passed(stage: Stage, observed: tuple[TestRow, ...]) -> set[str]:
    return {name for name in stage.required_tests
            if (rows := [r for r in observed if r.name == name]) and all(r.outcome == "passed" for r in rows)}


def _claimed_passed(document: Verification) -> set[str]:
    rows: dict[str, list[str]] = {}
    for row in document.tests:
        rows.setdefault(row.name, []).append(row.outcome)
    return {name for name, outcomes in rows.items() if outcomes and all(o == "passed" for o in outcomes)}


def over_claims(stage: Stage, document: Verification, observed: tuple[TestRow, ...],
                acceptance_seen: dict[str, bool]) -> list[str]:
    """Everything the document claims that grading did not observe, in a stable order."""
    claims: list[str] = []
    seen = _observed_passed(stage, observed)
    tests = sorted(name for name in _claimed_passed(document) & set(stage.required_tests) if name not in seen)
    if tests:
        claims.append(_("tests passing that grading saw fail ({tests})").format(tests=_listed(tests)))
    acceptance = document.acceptance.model_dump()
    for key, label in ACCEPTANCE_LABELS.items():
        if acceptance.get(key) is True and acceptance_seen.get(key) is not True:
            if key == "required_tests_passed" and tests:
                continue
            claims.append(_("{claim} (grading did not see that)").format(claim=_(label)))
    if document.accepted and not all(acceptance_seen.get(key) is True for key in ACCEPTANCE_LABELS):
        claims.append(_("the stage accepted (grading does not accept it)"))
    return claims


def changed_since(stage: Stage, document: Verification, home: Path, module_file: Path | None) -> list[str]:
    """The handed-in files whose digest differs from the one the evidence recorded."""
    pairs = [
        (stage.module, document.digests.module.sha256, module_file),
        (stage.transfer_file, document.transfer.sha256, home / stage.transfer_file),
        (stage.design_answer_file, document.design_answer.sha256, home / stage.design_answer_file),
        (stage.lab_module, document.fault_lab.fixed_file_sha256, home / stage.lab_module),
    ]
    return [shown for shown, recorded, path in pairs
            if recorded is not None and recorded != evidence.sha256_file(path)]


def edited_tests(stage: Stage, course_root: Path, home: Path) -> bool:
    handed_in = home / stage.test_file
    return handed_in.is_file() and evidence.sha256_file(handed_in) != evidence.sha256_file(course_root / stage.test_file)


def check(stage: Stage, course_root: Path, home: Path, module_file: Path | None, observed: tuple[TestRow, ...],
          acceptance_seen: dict[str, bool]) -> Finding:
    """Judge ``home/<evidence dir>/verification.json`` against what grading observed: the stage test
    rows and the acceptance conditions (``required_tests_passed``, ``fault_lab_fixed``, ``fault_lab_diagnosed``,
    ``transfer_passed``, ``design_answer_present``)."""
    problems: list[str] = []
    tests_edited = edited_tests(stage, course_root, home)
    if tests_edited:
        problems.append(_("the submission's {file} differs from the course's (the stage tests were edited, or come "
                          "from an older version of the course)").format(file=stage.test_file))
    path = home / stage.evidence_dir / evidence.FILENAME
    shown = f"{stage.evidence_dir}/{evidence.FILENAME}"
    if not path.is_file():
        reason = _("no {file} handed in: run `forgelab check {n}` and hand in the evidence/ folder").format(
            file=shown, n=stage.number)
        if problems:
            return Finding(MISSING, _("{reason}; also: {problems}").format(reason=reason, problems=_("; ").join(problems)),
                           REVIEW)
        return Finding(MISSING, reason, "")
    try:
        document = verification.read(path)
    except verification.Unreadable as error:  # not JSON, or not a verification.json: never a traceback, never points
        return Finding(ERROR, _("{file} is unreadable ({reason}): it was damaged or edited by hand; `forgelab check "
                                "{n}` writes it again").format(file=shown, reason=error.reason, n=stage.number), REVIEW)

    if not verification.intact(document):
        problems.append(_("its integrity digest does not match its content (it was edited after `forgelab check` "
                          "wrote it)"))
    if document.experiment_id != stage.experiment_id:
        problems.append(_("it is the evidence of {experiment}, not of this stage").format(
            experiment=repr(document.experiment_id[:80])))
    if document.target.kind != "learner":
        problems.append(_("it was produced for target {target}, not for the learner's own forge/").format(
            target=repr(document.target.name[:40])))
    test_digests = [row.sha256 for row in document.digests.tests]
    course_digest = evidence.sha256_file(course_root / stage.test_file)
    if test_digests and any(digest != course_digest for digest in test_digests):
        problems.append(_("it was produced with stage tests whose digest differs from the course's (edited tests)"))
    changed = changed_since(stage, document, home, module_file)
    claims = over_claims(stage, document, observed, acceptance_seen)
    if claims:
        if changed:
            problems.append(_("it was produced for other versions of {files} and claims {claims}").format(
                files=_(", ").join(changed), claims=_("; ").join(claims)))
        else:
            problems.append(_("it claims more than grading saw: {claims}").format(claims=_("; ").join(claims)))

    if problems:
        return Finding(FAILED, _("{file}: {problems}").format(file=shown, problems=_("; ").join(problems)), REVIEW)
    if changed:
        return Finding(PASSED, _("{file} is intact, was produced with the course's tests and claims nothing grading "
                                 "did not see; it was produced for earlier versions of {files}, and claims nothing the "
                                 "handed-in work does not achieve").format(file=shown, files=_(", ").join(changed)), "")
    return Finding(PASSED, _("{file} is intact, was produced with the course's tests and claims nothing grading did not "
                             "see").format(file=shown), "")
