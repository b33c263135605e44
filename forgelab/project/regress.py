"""``forgelab regress``: run the fixed regression cases for one prompt version and keep the history.

1. choose the prompt version (``--prompt``: a template file, a shipped template name, or a stored
   version id or label) and the baseline run (``--baseline``: the same kinds of reference; by default
   the latest run of this target in which every case passed);
2. run every scenario pack's regression cases through the target's extractor on the mock model
   (stage 07's ``run_suite`` judges them);
3. store the run and its case results in one transaction;
4. print each case against the baseline and how the prompt text changed; a case that fails now and
   did not fail in the baseline is a NEW regression, and makes the command exit 1.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from forgelab.core.display import table
from forgelab.core.i18n import _
from forgelab.core.paths import Workbook
from forgelab.project.history import CaseOutcome, History, StoredRun, text_sha256, version_id
from forgelab.core.targets import Target

SHIPPED_DEFAULT = "extractor"
DIFF_LINES = 12


class RegressError(RuntimeError):
    def __init__(self, message: str, next_step: str) -> None:
        super().__init__(message)
        self.next_step = next_step


@dataclass(frozen=True)
class PromptChoice:
    text: str
    label: str

    @property
    def version_id(self) -> str:
        return version_id(self.text)


def shipped_templates(target: Target) -> list[str]:
    names: set[str] = set()
    for layer in target.layers:
        names.update(path.stem for path in (layer / "project" / "prompts").glob("*.txt"))
    return sorted(names)


def resolve_prompt(reference: str | None, target: Target, history: History) -> PromptChoice:
    reference = reference or SHIPPED_DEFAULT
    path = Path(reference).expanduser()
    if path.is_file():
        try:
            return PromptChoice(path.read_text(encoding="utf-8"), path.stem)
        except (OSError, UnicodeDecodeError) as error:
            raise RegressError(_("cannot read prompt template {reference}: {error}").format(reference=reference,
                                                                                             error=error),
                               _("give a UTF-8 text file")) from None
    if reference.replace("-", "").replace("_", "").isalnum():
        shipped = target.module_path(f"forge/project/prompts/{reference}.txt")
        if shipped is not None:
            return PromptChoice(shipped.read_text(encoding="utf-8"), reference)
    stored = history.find_versions(reference)
    if len(stored) == 1:
        return PromptChoice(stored[0].text, stored[0].label)
    if len(stored) > 1:
        ids = ", ".join(sorted(version.version_id for version in stored))
        raise RegressError(_("prompt version {reference!r} is ambiguous: it matches {ids}").format(reference=reference,
                                                                                                  ids=ids),
                           _("give more digits of the id"))
    names = ", ".join(shipped_templates(target)) or _("none")
    raise RegressError(_("unknown prompt version {reference!r}: expected a template file, a shipped template ({names}) "
                         "or a stored version id").format(reference=reference, names=names),
                       _("list the stored versions with `forgelab regress --list`"))


def resolve_baseline(reference: str | None, target: Target, history: History) -> StoredRun | None:
    if reference is None:
        return history.latest_run(target.name, passing_only=True)
    choice = resolve_prompt(reference, target, history)
    run = history.latest_run(target.name, text_sha256(choice.text))
    if run is None:
        raise RegressError(_("no stored run of prompt {version} ({label}) for target {target}").format(
                               version=choice.version_id, label=choice.label, target=target.name),
                           _("run `forgelab regress --prompt {reference} --target {target}` first").format(
                               reference=reference, target=target.name))
    return run


def prompt_diff(before: str, after: str) -> list[str]:
    lines = [line.rstrip("\n") for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
             if not line.startswith(("---", "+++", "@@"))]
    if len(lines) > DIFF_LINES:
        lines = lines[:DIFF_LINES] + [_("… {count} more changed line(s)").format(count=len(lines) - DIFF_LINES)]
    return lines


@dataclass(frozen=True)
class Comparison:
    rows: list[list[str]]
    new: list[str]
    fixed: list[str]
    still: list[str]


def compare(outcomes: list[CaseOutcome], baseline: dict[str, CaseOutcome] | None) -> Comparison:
    rows, new, fixed, still = [], [], [], []
    for outcome in outcomes:
        before = (baseline or {}).get(outcome.case_id)
        was = "-" if before is None else (_("passed") if before.passed else _("failed"))
        if outcome.passed:
            now = _("passed") if before is None or before.passed else _("passed (fixed)")
            if before is not None and not before.passed:
                fixed.append(outcome.case_id)
        elif before is None or before.passed:
            now = _("FAILED (new)")
            new.append(outcome.case_id)
        else:
            now = _("failed (still)")
            still.append(outcome.case_id)
        rows.append([outcome.case_id, outcome.scenario, now, was, "; ".join(outcome.problems)])
    return Comparison(rows, new, fixed, still)


def run_regress(workbook: Workbook, target: Target, *, prompt: str | None, baseline: str | None, recovery: bool,
                run_cases: Callable[[PromptChoice], list[CaseOutcome]], out: Callable[[str], None] = print) -> int:
    """The whole command after argument parsing; ``run_cases`` runs the suite in the target's driver."""
    with History.open(workbook.state_dir) as history:
        choice = resolve_prompt(prompt, target, history)
        base_run = resolve_baseline(baseline, target, history)
        outcomes = run_cases(choice)
        settings: dict[str, object] = {"model": "mock", "mode": "recovery" if recovery else "standard"}
        run = history.record_run(text=choice.text, label=choice.label, target=target.name, model="mock",
                                 settings=settings, outcomes=outcomes)
        base_results = history.results(base_run.id) if base_run else None
        base_text = history.version(base_run.sha256).text if base_run else None  # type: ignore[union-attr]
    scenarios = ", ".join(dict.fromkeys(outcome.scenario for outcome in outcomes))
    mode = _("recovery mode") if recovery else _("standard mode")
    out(_("regress: prompt {version} ({label}) · target {target} · {mode} · {count} cases from {scenarios}").format(
        version=choice.version_id, label=choice.label, target=target.name, mode=mode, count=len(outcomes),
        scenarios=scenarios))
    if base_run is None:
        out(_("baseline: none yet — no earlier run of this target passed every case, so every failure counts as new"))
    else:
        out(_("baseline: run #{run}, prompt {version} ({label})").format(run=base_run.id, version=base_run.version_id,
                                                                         label=base_run.label))
    comparison = compare(outcomes, base_results)
    out("")
    out(table([_("case"), _("scenario"), _("now"), _("baseline"), _("problems")], comparison.rows))
    failing = [outcome for outcome in outcomes if not outcome.passed]
    if failing:
        out("\n" + _("problems in full:"))
        for outcome in failing:
            out(f"  {outcome.case_id}: {'; '.join(outcome.problems)}")
    out("")
    if base_run is not None:
        out(_("against the baseline: {new} new failure(s), {fixed} fixed, {still} still failing").format(
            new=len(comparison.new), fixed=len(comparison.fixed), still=len(comparison.still)))
        if base_text == choice.text:
            out(_("prompt text: the same as the baseline's"))
        else:
            diff = prompt_diff(base_text or "", choice.text)
            added = sum(line.startswith("+") for line in diff)
            removed = sum(line.startswith("-") for line in diff)
            out(_("prompt text: changed against the baseline ({added} line(s) added, {removed} removed):").format(
                added=added, removed=removed))
            out("\n".join(f"  {line}" for line in diff))
    out(_("stored as run #{run} in {path}").format(run=run.id, path=workbook.relative(history.path)))
    passed = sum(outcome.passed for outcome in outcomes)
    if comparison.new:
        out(_("NEW REGRESSION in {count} case(s): {cases}").format(count=len(comparison.new),
                                                                 cases=", ".join(comparison.new)))
        return 1
    out(_("no new regression: {passed}/{total} cases pass").format(passed=passed, total=len(outcomes)))
    return 0


def list_runs(workbook: Workbook, out: Callable[[str], None] = print) -> int:
    path = workbook.state_dir / "regressions.sqlite3"
    if not path.is_file():
        out(_("no regression history yet: run `forgelab regress` to start one"))
        return 0
    with History(path) as history:
        runs = history.runs(limit=20)
    rows = [[f"#{run.id}", run.started_at, run.target, run.version_id, run.label,
             _("{passed}/{total} passed").format(passed=run.cases - run.failures, total=run.cases)] for run in runs]
    out(table([_("run"), _("started (UTC)"), _("target"), _("prompt"), _("label"), _("result")], rows))
    return 0
