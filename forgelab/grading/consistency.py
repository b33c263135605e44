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

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forgelab.core import evidence
from forgelab.grading.rubric import ERROR, FAILED, MISSING, PASSED, REVIEW
from forgelab.core.registry import Stage
from forgelab.judge.outcomes import TestRow

ACCEPTANCE_LABELS = {
    "required_tests_passed": "all required tests passed",
    "fault_lab_fixed": "the fault lab fixed",
    "fault_lab_diagnosed": "the fault lab diagnosed",
    "transfer_passed": "the transfer test passed",
    "design_answer_present": "a design answer present",
}
MAX_LISTED = 4


@dataclass(frozen=True)
class Finding:
    outcome: str
    reason: str
    flag: str


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:MAX_LISTED])
    return shown + (f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")


def _observed_passed(stage: Stage, observed: tuple[TestRow, ...]) -> set[str]:
    return {name for name in stage.required_tests
            if (rows := [r for r in observed if r.name == name]) and all(r.outcome == "passed" for r in rows)}


def _claimed_passed(document: dict[str, Any]) -> set[str]:
    rows: dict[str, list[str]] = {}
    for row in document.get("tests", []) or []:
        if isinstance(row, dict) and isinstance(row.get("name"), str):
            rows.setdefault(row["name"], []).append(str(row.get("outcome")))
    return {name for name, outcomes in rows.items() if outcomes and all(o == "passed" for o in outcomes)}


def over_claims(stage: Stage, document: dict[str, Any], observed: tuple[TestRow, ...],
                acceptance_seen: dict[str, bool]) -> list[str]:
    """Everything the document claims that grading did not observe, in a stable order."""
    claims: list[str] = []
    seen = _observed_passed(stage, observed)
    tests = sorted(name for name in _claimed_passed(document) & set(stage.required_tests) if name not in seen)
    if tests:
        claims.append(f"tests passing that grading saw fail ({_listed(tests)})")
    acceptance = _table(document, "acceptance")
    for key, label in ACCEPTANCE_LABELS.items():
        if acceptance.get(key) is True and acceptance_seen.get(key) is not True:
            if key == "required_tests_passed" and tests:
                continue
            claims.append(f"{label} (grading did not see that)")
    if document.get("accepted") is True and not all(acceptance_seen.get(key) is True for key in ACCEPTANCE_LABELS):
        claims.append("the stage accepted (grading does not accept it)")
    return claims


def _table(document: dict[str, Any], key: str) -> dict[str, Any]:
    value = document.get(key)
    return value if isinstance(value, dict) else {}


def _digest_at(document: dict[str, Any], *keys: str) -> object:
    value: object = document
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def changed_since(stage: Stage, document: dict[str, Any], home: Path, module_file: Path | None) -> list[str]:
    """The handed-in files whose digest differs from the one the evidence recorded."""
    pairs = [
        (stage.module, _digest_at(document, "digests", "module", "sha256"), module_file),
        (stage.transfer_file, _digest_at(document, "transfer", "sha256"), home / stage.transfer_file),
        (stage.design_answer_file, _digest_at(document, "design_answer", "sha256"), home / stage.design_answer_file),
        (stage.lab_module, _digest_at(document, "fault_lab", "fixed_file_sha256"), home / stage.lab_module),
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
        problems.append(f"the submission's {stage.test_file} differs from the course's "
                        "(the stage tests were edited, or come from an older version of the course)")
    path = home / stage.evidence_dir / evidence.FILENAME
    shown = f"{stage.evidence_dir}/{evidence.FILENAME}"
    if not path.is_file():
        reason = f"no {shown} handed in: run `forgelab check {stage.number}` and hand in the evidence/ folder"
        if problems:
            return Finding(MISSING, f"{reason}; also: {'; '.join(problems)}", REVIEW)
        return Finding(MISSING, reason, "")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(document, dict):
            raise ValueError("not a JSON object")
    except (ValueError, UnicodeDecodeError) as error:
        return Finding(ERROR, f"{shown} is not readable JSON ({type(error).__name__}): it was damaged or edited by hand",
                       REVIEW)

    if not evidence.integrity_holds(document):
        problems.append("its integrity digest does not match its content (it was edited after `forgelab check` wrote it)")
    if document.get("experiment_id") != stage.experiment_id:
        problems.append(f"it is the evidence of {str(document.get('experiment_id'))[:80]!r}, not of this stage")
    target = _table(document, "target")
    if target.get("kind") != "learner":
        problems.append(f"it was produced for target {str(target.get('name'))[:40]!r}, not for the learner's own forge/")
    digests = _table(document, "digests")
    test_digests = [row.get("sha256") for row in digests.get("tests", []) or [] if isinstance(row, dict)]
    course_digest = evidence.sha256_file(course_root / stage.test_file)
    if test_digests and any(digest != course_digest for digest in test_digests):
        problems.append("it was produced with stage tests whose digest differs from the course's (edited tests)")
    changed = changed_since(stage, document, home, module_file)
    claims = over_claims(stage, document, observed, acceptance_seen)
    if claims:
        lead = (f"it was produced for other versions of {', '.join(changed)} and claims" if changed
                else "it claims more than grading saw:")
        problems.append(f"{lead} {'; '.join(claims)}")

    if problems:
        return Finding(FAILED, f"{shown}: " + "; ".join(problems), REVIEW)
    note = (f"; it was produced for earlier versions of {', '.join(changed)}, and claims nothing the handed-in "
            "work does not achieve" if changed else "")
    return Finding(PASSED, f"{shown} is intact, was produced with the course's tests and claims nothing grading "
                           f"did not see{note}", "")
