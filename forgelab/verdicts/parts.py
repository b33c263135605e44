"""The verdict on each part of a stage, from the judge's typed rows: one rule, for every caller.

``forgelab check`` (:mod:`forgelab.learner.check`), ``forgelab status`` and grading
(:mod:`forgelab.grading.items`) judge the same parts the same way, so the rules live here, below all three:

* :func:`judge_transfer` — the learner's transfer test from its rows: not written, failed, error, cannot
  tell (it passes on a known-wrong implementation too), or passed;
* :func:`judge_design` — the design answer: missing, too short (:data:`MIN_DESIGN_WORDS`), or present;
* :func:`judge_lab` — the fault lab: fixed only when the target test and every stage test pass;
* :func:`judge_regression` — the lab's regression test: it must pass on a repaired module and fail on the broken one.

Nothing here runs anything: the rows come from a judge run (:mod:`forgelab.judge`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forgelab.core import evidence
from forgelab.core.i18n import N_, _
from forgelab.core.registry import Stage
from forgelab.core.text import word_count
from forgelab.judge.outcomes import Limit, Outcome, RunReport, TestRow

MIN_DESIGN_WORDS = 40  # the check's minimum length of a design answer (Chinese: two characters count one word)


@dataclass(frozen=True)
class Part:
    """One part's verdict: its status word (``passed``, ``fixed``, ``missing`` …), a sentence, and facts for the evidence."""

    status: str
    detail: str
    extra: dict[str, Any] = field(default_factory=dict)  # free-form: the part's own evidence fields, as written


def judge_design(path: Path, shown: str) -> Part:
    """The design answer at ``path`` (shown to the learner as ``shown``): missing, too short, or present."""
    if not path.is_file():
        return Part("missing", _("no answer yet: write it in the notebook (part 9) or save it to {path}").format(path=shown))
    text = path.read_text(encoding="utf-8", errors="replace")
    words = word_count(text)
    extra = {"words": words, "sha256": evidence.sha256_file(path)}
    if words < MIN_DESIGN_WORDS:
        return Part("too_short", _("{words} words; a real answer needs at least {minimum} — cover each rubric point").format(
            words=words, minimum=MIN_DESIGN_WORDS), extra)
    return Part("present", _("{words} words").format(words=words), extra)


NOT_WRITTEN_TEXT = N_("still the starter: replace the pytest.skip line in {path} with your test")


CANNOT_TELL = N_("it passes on the stage's known-wrong implementation too, so it cannot tell right from wrong: assert "
                 "the exact results the transfer challenge asks for (notebook part 8)")


PART_WORDS = {"not_started": N_("not started"), "broken": N_("broken"), "fixed": N_("fixed"), "error": N_("error"),
              "missing": N_("missing"), "not_written": N_("not written"), "passed": N_("passed"), "failed": N_("failed"),
              "cannot_tell": N_("cannot tell"), "too_short": N_("too short"), "present": N_("present"),
              "pending": N_("pending")}


OUTCOME_WORDS = {"passed": N_("passed"), "failed": N_("failed"), "error": N_("error"), "skipped": N_("skipped"),
                 "timeout": N_("timeout"), "not_run": N_("not run")}


def outcome_words(row: TestRow) -> str:
    """The row's outcome in words, in the active language: a row whose process ended by itself (an exit, a signal) or
    broke its link to the judge is "ended" — no limit of time or memory stopped it, so it is never a timeout."""
    return _("ended") if row.limit is Limit.CRASH else _(OUTCOME_WORDS[row.outcome])


_DID_NOT_RAISE_WORDS = N_("DID NOT RAISE")  # pytest's phrase; its translation only says the edition explains it
_DID_NOT_RAISE = re.compile(r"DID NOT RAISE <?(?:class )?'?([\w.]+)'?>?")


def glossed(cause: str) -> str:
    """``cause`` (pytest's own words, English) with what it means in the active language in front, where the tools
    know the phrase: ``Failed: DID NOT RAISE ValueError`` reads "expected ValueError to be raised; nothing was".
    In English the raw text says it already and is returned as it is."""
    found = _DID_NOT_RAISE.search(cause)
    if found is None or _(_DID_NOT_RAISE_WORDS) == _DID_NOT_RAISE_WORDS:
        return cause
    return _("the test expected {error} to be raised, but nothing was raised ({raw})").format(error=found.group(1),
                                                                                                raw=cause)


def judge_transfer(results: tuple[TestRow, ...], problem: str | None, shown: str,
                   on_wrong: tuple[TestRow, ...] | None = None) -> Part:
    """The transfer part from its rows: not written (still skipped), failed, error, cannot tell, or passed.

    ``on_wrong`` are the same tests run against the stage's known-wrong implementation (the learner's
    ``forge/`` with the fault-lab variant laid over it): a test that passes there too cannot tell
    right from wrong, however green it is on the learner's own code.
    """
    if problem and not results:
        return Part("error", problem)
    if not results:
        return Part("error", _("no test function found in {path}: name it test_...").format(path=shown))
    if all(r.outcome is Outcome.SKIPPED for r in results):
        return Part("not_written", _(NOT_WRITTEN_TEXT).format(path=shown))
    bad = [r for r in results if r.outcome is not Outcome.PASSED and r.outcome is not Outcome.SKIPPED]
    if bad:
        first = bad[0]
        status = "error" if first.outcome in (Outcome.ERROR, Outcome.NOT_RUN) else "failed"
        return Part(status, _("{test} {outcome}: {cause}").format(test=first.name, outcome=outcome_words(first),
                                                                   cause=glossed(first.cause)))
    passed = sum(r.outcome is Outcome.PASSED for r in results)
    if on_wrong is not None and on_wrong and all(r.outcome in (Outcome.PASSED, Outcome.SKIPPED) for r in on_wrong) \
            and any(r.outcome is Outcome.PASSED for r in on_wrong):
        return Part("cannot_tell", _("{count} transfer test(s) pass, but {why}").format(count=passed, why=_(CANNOT_TELL)),
                    {"known_wrong": "passes"})
    extra = {"known_wrong": "fails"} if on_wrong else {}
    if on_wrong:
        return Part("passed", _("{count} transfer test(s) passed; it fails on the known-wrong implementation, as it "
                                "should").format(count=passed), extra)
    return Part("passed", _("{count} transfer test(s) passed").format(count=passed), extra)


REGRESSION_NOT_WRITTEN = N_("still the starter: replace the pytest.skip line in {path} with a test that fails on the "
                            "lab's broken copy and passes on a repaired one")


def judge_regression(shown: str, on_fixed: tuple[TestRow, ...], fixed_problem: str | None,
                     on_broken: tuple[TestRow, ...], broken_problem: str | None, fixed: str, broken: str) -> Part:
    """The lab's regression test ``shown`` from its runs on a repaired module (``fixed``, in words: the course's
    reference, or the learner's repaired lab) and on the lab's broken one (``broken``): missing is the caller's,
    here not written (still skipped), error, failed (it fails where the defect is repaired), cannot tell (it passes
    on the broken module too: it does not pin the defect), or passed. On the course's own code the rows carry
    outcomes and lines only (the reference is never an oracle)."""
    if not on_fixed:
        return Part("error", fixed_problem or _("no test function found in {path}: name it test_...").format(path=shown))
    if all(r.outcome is Outcome.SKIPPED for r in on_fixed):
        return Part("not_written", _(REGRESSION_NOT_WRITTEN).format(path=shown))
    bad = [r for r in on_fixed if r.outcome is not Outcome.PASSED and r.outcome is not Outcome.SKIPPED]
    if bad:
        first = bad[0]
        status = "error" if first.outcome in (Outcome.ERROR, Outcome.NOT_RUN) else "failed"
        return Part(status, _("{test} {outcome} on {fixed}, where the defect is repaired: {cause}; it must pass "
                              "there").format(test=first.name, outcome=outcome_words(first), fixed=fixed,
                                              cause=glossed(first.cause)), {"on_fixed": "fails"})
    passed = sum(r.outcome is Outcome.PASSED for r in on_fixed)
    caught = [r for r in on_broken if r.outcome in (Outcome.FAILED, Outcome.TIMEOUT)]
    if not on_broken:
        return Part("error", _("it did not run on {broken}: {why}").format(
            broken=broken, why=broken_problem or _("no result")), {"on_fixed": "passes"})
    if not caught:
        return Part("cannot_tell", _("{count} regression test(s) pass on {fixed}, but on {broken} too, so they do not "
                                     "pin the defect: assert what the repaired code does and the broken code does "
                                     "not").format(count=passed, fixed=fixed, broken=broken),
                    {"on_fixed": "passes", "on_broken": "passes"})
    return Part("passed", _("{count} regression test(s) pass on {fixed} and fail on {broken}, as they should").format(
        count=passed, fixed=fixed, broken=broken), {"on_fixed": "passes", "on_broken": "fails"})


@dataclass(frozen=True)
class LabCheck:
    status: str  # broken | fixed | error
    target: TestRow | None
    symptom_matched: bool
    symptom_text: str
    failing: tuple[str, ...]
    problem: str | None


def judge_lab(stage: Stage, report: RunReport, label: str) -> LabCheck:
    """The lab's verdict from a judge report: fixed only when the target test and every stage test pass."""
    problem = report.import_problems.get(label)
    if problem is not None:
        return LabCheck("error", None, False, "", (), problem.cause)
    rows = report.in_file(label, stage.test_file)
    target_rows = [row for row in rows if row.name == stage.fault.target_test]
    target = next((r for r in target_rows if r.outcome is not Outcome.PASSED), target_rows[0] if target_rows else None)
    failing = tuple(sorted({r.name for r in rows if r.outcome is not Outcome.PASSED}))
    if target is None:
        return LabCheck("error", None, False, "", failing,
                        report.problem or _("{test} did not run").format(test=stage.fault.target_test))
    output = target.detail or target.cause
    match = re.search(stage.fault.symptom, output)
    fixed = target.outcome is Outcome.PASSED and not failing and not report.problem
    return LabCheck("fixed" if fixed else "broken", target, bool(match), _symptom_line(output, match) if match else "",
                    failing, report.problem)


def _symptom_line(output: str, match: re.Match[str]) -> str:
    """The whole line of the failure the contract's symptom matched in (the pattern itself may stop mid-value, as
    ``('trusted', True, []) == ('untrusted',`` does): what the learner reads, not a fragment of a pattern."""
    start = output.rfind("\n", 0, match.start()) + 1
    end = output.find("\n", match.end())
    line = output[start:end if end >= 0 else len(output)].strip()
    line = re.sub(r"^(?:E\s+)?(?:AssertionError:\s*)?(?:assert\s+)?", "", line)  # the comparison itself
    return line if len(line) <= 240 else line[:239] + "…"
