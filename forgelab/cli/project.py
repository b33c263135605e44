"""Chapter project commands: ``forgelab extract`` and ``forgelab regress``.

Both run the target's ``forge`` in a subprocess (``forgelab.project.driver``); imports stay inside
the handlers so that ``forgelab --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgelab.cli.context import open_workbook
from forgelab.core.display import fail
from forgelab.core.i18n import N_, _, active, ngettext

if TYPE_CHECKING:
    from forgelab.project.messages import DriverError

MODELS = ("mock", "replay", "openai")
FAULTS = ("fenced", "trailing_comma", "prose", "unknown_field", "missing_write_allowed")
OUTPUT_LINES = 8

RESTORE_HINT = N_("lay in the reference modules of the stages before 08 with `forgelab restore 08` (in the learner "
                  "bundle: `forgelab restore 08 --from PACK`, the checkpoint pack your instructor releases)")
NEXT_BY_STEP = {
    "repair": N_("the answer is not a JSON object that may safely be repaired: fix the prompt or ask the model again "
                 "(with --recovery nothing is repaired on purpose)"),
    "spec": N_("the answer breaks the task-spec contract: check the Output schema section of the prompt "
               "(--show-prompt)"),
    "permission": N_("the answer grants write access the instructions deny: look for retrieved text outside its "
                     "data block with --show-prompt"),
}


def _scenarios(target: Any) -> list[str]:
    names: set[str] = set()
    for layer in target.layers:
        names.update(path.stem for path in (layer / "project" / "scenarios").glob("*.json"))
    return sorted(names)


def explain_failure(error: DriverError, target_name: str) -> tuple[str, str]:
    """One-line cause and next step for a driver error."""
    kind, message, where = error.kind, error.message, error.where
    if kind == "usage":
        return message, error.next or _("see `forgelab extract --help`")
    if kind == "model":
        return message, error.next or _("use --model mock, which works offline")
    if kind == "rejected":
        step = NEXT_BY_STEP.get(str(error.step))
        return (_("the model's answer was rejected by {caught_by}: {message}").format(caught_by=error.caught_by,
                                                                                     message=message),
                _(step) if step else _("compare with --model mock"))
    if kind == "invalid":
        return message, _("check the request and the scenario pack")
    if kind == "not_implemented":
        module = where.split(",")[0] if where else "forge"
        return (f"{module}: {message}",
                _("finish that stage (its notebook, part 6), {restore}, or try --recovery (it needs neither stage 03 "
                  "nor stage 05)").format(restore=_(RESTORE_HINT)))
    if where:
        cause = _("the extractor failed ({where}): {message}").format(where=where, message=message)
    else:
        cause = _("the extractor failed: {message}").format(message=message)
    return (cause, _("fix that line and run again; `forgelab check 08 --target {target}` runs the stage tests").format(
        target=target_name))


def recovery_gap_failure(course: Any, target: Any, *, regress: bool = False) -> tuple[str, str] | None:
    """(cause, next step) when recovery mode cannot run on ``target`` because a stage it needs is not there."""
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.project.recovery import needs_sentence, recovery_gaps

    gaps = recovery_gaps(course, target, regress=regress)
    if not gaps:
        return None
    listed = ", ".join(gap.text() for gap in gaps)
    return (ngettext("recovery mode still needs stage {stages}", "recovery mode still needs stages {stages}",
                     len(gaps)).format(stages=listed),
            _("{needs}; finish the stages listed, or {restore}").format(needs=needs_sentence(course, regress=regress),
                                                                         restore=_(RESTORE_HINT)))


def _template_request(reference: str | None, target: Any) -> tuple[str | None, str | None]:
    """--prompt for extract: a template file or a shipped name (the driver validates it); (text, name)."""
    if reference is None:
        return None, None
    path = Path(reference).expanduser()
    if path.is_file():
        return path.read_text(encoding="utf-8"), path.stem
    shipped = target.module_path(f"forge/project/prompts/{reference}.txt") if reference.replace("-", "").isalnum() else None
    if shipped is None:
        raise ValueError(_("unknown prompt template {reference!r}: give a template file or a shipped name").format(
            reference=reference))
    return shipped.read_text(encoding="utf-8"), reference


# ---------------------------------------------------------------- extract
def cmd_extract(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.project.launch import LaunchError, run_driver
    from forgelab.project.messages import ExtractRequest
    from forgelab.core.targets import resolve_target

    try:  # the spec and audit views are finished infrastructure of the learner's package
        from forge.project.report import format_audit, format_extraction
    except Exception as error:  # noqa: BLE001 - a broken forge/ package must not become a traceback
        return fail(_("forge/project/report.py cannot be imported ({error})").format(
                        error=f"{type(error).__name__}: {error}"),
                    _("bring forge/__init__.py and forge/project/ back to the shipped versions"))

    workbook, course = open_workbook()
    target = resolve_target(args.target, workbook, course)
    known = _scenarios(target)
    if not known:
        return fail(_("no scenario packs in forge/project/scenarios/ of target {target}").format(target=target.name),
                    _("put them back from the workbook (e.g. git checkout forge/project)"))
    if not args.scenario:
        return fail(_("--scenario is required: one of {names}").format(names=", ".join(known)),
                    _('e.g. forgelab extract --scenario software "add a search box to the product list"'))
    if args.scenario not in known:
        return fail(_("unknown scenario {name!r}: expected one of {names}").format(name=args.scenario,
                                                                                   names=", ".join(known)),
                    _('e.g. forgelab extract --scenario office "compare the two vendor quotes"'))
    if args.request is None or not args.request.strip():
        return fail(_("empty request: give the request text in quotes after the options"),
                    _('e.g. forgelab extract --scenario {name} "what you need, in one sentence"').format(
                        name=args.scenario))
    if args.model not in MODELS:
        return fail(_("unknown model {name!r}: expected one of {names}").format(name=args.model, names=", ".join(MODELS)),
                    _("leave --model out to use the mock"))
    if args.fault is not None and args.fault not in FAULTS:
        return fail(_("unknown mock fault {name!r}: expected one of {names}").format(name=args.fault,
                                                                                     names=", ".join(FAULTS)),
                    _("leave --fault out for a clean answer"))
    if args.fault is not None and args.model != "mock":
        return fail(_("--fault switches on a defect of the mock model only"), _("use it with --model mock"))
    if args.recovery:
        gap = recovery_gap_failure(course, target)
        if gap is not None:
            return fail(*gap)
    if args.model == "replay" and not args.replay:
        return fail(_("--model replay needs a recording: --replay FILE"),
                    _("make one with --record FILE while using another model"))
    try:
        template_text, template_name = _template_request(args.prompt, target)
    except (ValueError, OSError) as error:
        return fail(str(error), _("leave --prompt out to use the shipped template"))
    request = ExtractRequest(
        scenario=args.scenario, request=args.request, model=args.model, fault=args.fault, recovery=args.recovery,
        replay=str(Path(args.replay).expanduser().resolve()) if args.model == "replay" else None,
        record=str(Path(args.record).expanduser().resolve()) if args.record else None, template_text=template_text,
        template_name=template_name)
    try:
        answer = run_driver(workbook, target, request)
    except LaunchError as error:
        return fail(str(error), error.next_step)
    if answer.result is not None:
        result = answer.result
        document: dict[str, object] = {"spec": result.spec, "audit": result.audit}
        if args.show_prompt:
            document["prompt"] = result.prompt
        if args.json:
            print(json.dumps(document, ensure_ascii=False, indent=2))
        else:
            if args.show_prompt:
                print(_prompt_block(result.prompt))
            print(format_extraction(document, language="zh" if active() == "zh" else "en"))
            if args.recovery:
                print("\n" + _("recovery mode: one fixed schema (v2), the pack's three fixed examples, the answer parsed "
                               "exactly as written — stage 03 (example selection) and stage 05 (repair) were not called"))
        return 0
    failure = answer.error
    assert failure is not None  # an answer that is not ok holds its error (ExtractAnswer checks it)
    cause, next_step = explain_failure(failure, target.name)
    if args.recovery and failure.step == "repair" and "repair is off" in failure.message:
        next_step = _("recovery mode repairs nothing on purpose; without --recovery, stage 05 may remove a fence or a "
                      "trailing comma")
    if args.json:
        failed: dict[str, object] = {"error": failure.model_dump(exclude_none=True), "audit": answer.audit,
                                     "output": answer.output}
        if args.show_prompt:
            failed["prompt"] = answer.prompt
        print(json.dumps(failed, ensure_ascii=False, indent=2))
    elif answer.audit:
        if args.show_prompt and answer.prompt:
            print(_prompt_block(answer.prompt))
        print(format_audit(answer.audit, language="zh" if active() == "zh" else "en"))
        if answer.output is not None:
            lines = answer.output.splitlines()
            more = len(lines) - OUTPUT_LINES
            shown = lines[:OUTPUT_LINES] + ([ngettext("… {count} more line", "… {count} more lines", more).format(
                count=more)] if more > 0 else [])
            print("\n" + _("model answer (rejected)") + "\n" + "\n".join(f"  | {line}" for line in shown))
        sys.stdout.flush()
    status = fail(cause, next_step)
    return 1 if failure.kind == "rejected" else status


def _prompt_block(prompt: str) -> str:
    rule = "-" * 24
    return f"{_('prompt sent to the model')}\n{rule}\n{prompt.rstrip()}\n{rule}\n"


# ---------------------------------------------------------------- regress
def cmd_regress(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.project.history import CaseOutcome, HistoryError
    from forgelab.project.launch import LaunchError, run_driver
    from forgelab.project.messages import RegressRequest
    from forgelab.project.regress import PromptChoice, RegressError, list_runs, run_regress
    from forgelab.core.targets import resolve_target

    workbook, course = open_workbook()
    if args.list:
        try:
            return list_runs(workbook)
        except HistoryError as error:
            return fail(str(error), _("move the file away to start a new history"))
    target = resolve_target(args.target, workbook, course)
    if args.recovery:
        gap = recovery_gap_failure(course, target, regress=True)
        if gap is not None:
            return fail(*gap)

    def run_cases(choice: PromptChoice) -> list[CaseOutcome]:
        request = RegressRequest(template_text=choice.text, template_name=choice.label, recovery=args.recovery)
        answer = run_driver(workbook, target, request)
        if answer.result is None:
            assert answer.error is not None  # an answer that is not ok holds its error (RegressAnswer checks it)
            cause, next_step = explain_failure(answer.error, target.name)
            raise RegressError(cause, next_step)
        return [CaseOutcome(case.id, case.scenario, tuple(case.problems)) for case in answer.result.cases]

    try:
        return run_regress(workbook, target, prompt=args.prompt, baseline=args.baseline, recovery=args.recovery,
                           run_cases=run_cases)
    except (RegressError, LaunchError) as error:
        return fail(str(error), error.next_step)
    except HistoryError as error:
        return fail(str(error), _("move the file away to start a new history"))


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    extract = sub.add_parser("extract", help=_("chapter project: turn a vague request into a checked task spec"),
                             description=_("Run the requirement extractor (forge/extractor.py) on one request and print "
                                           "the task spec and its audit trail."))
    extract.add_argument("request", nargs="?", help=_('the request, in quotes, e.g. "{example}"').format(
        example="为前端仓库增加功能、修改代码并补测试"))
    extract.add_argument("--scenario", help=_("scenario pack: software, office or music"))
    extract.add_argument("--json", action="store_true", help=_("print the spec and the audit as JSON"))
    extract.add_argument("--target", default="learner", help=_("learner (default), solution, fault:NN or a workbook path"))
    extract.add_argument("--model", default="mock", help=_("mock (default, offline), replay (needs --replay FILE) or "
                                                           "openai (FORGE_OPENAI_BASE_URL, FORGE_OPENAI_MODEL, "
                                                           "FORGE_OPENAI_API_KEY)"))
    extract.add_argument("--fault", help=_("mock only: switch on one output defect ({names})").format(
        names=", ".join(FAULTS)))
    extract.add_argument("--recovery", action="store_true",
                         help=_("the minimal recovery point: fixed schema v2, three fixed examples, no repair code at "
                                "all (works while stages 03 and 05 are unfinished)"))
    extract.add_argument("--replay", metavar="FILE", help=_("the JSONL recording --model replay answers from"))
    extract.add_argument("--record", metavar="FILE", help=_("append every model answer to this JSONL recording"))
    extract.add_argument("--prompt", metavar="TEMPLATE",
                         help=_("a prompt template file or shipped name (default: extractor)"))
    extract.add_argument("--show-prompt", action="store_true", help=_("also print the prompt the model received"))
    extract.set_defaults(handler=cmd_extract)

    regress = sub.add_parser("regress", help=_("chapter project: run the prompt regression cases and keep the history"),
                             description=_("Run the fixed regression cases of all three scenarios for one prompt "
                                           "version, store the run in .forgelab/regressions.sqlite3 and compare it with "
                                           "a baseline. Exits 1 on a new regression."))
    regress.add_argument("--target", default="learner", help=_("learner (default), solution, fault:NN or a workbook path"))
    regress.add_argument("--prompt", metavar="V", help=_("a template file, a shipped template name or a stored version "
                                                         "id (default: the shipped extractor template)"))
    regress.add_argument("--baseline", metavar="V", help=_("compare with the latest run of this version (default: the "
                                                           "latest run of this target that passed every case)"))
    regress.add_argument("--recovery", action="store_true", help=_("run the cases in recovery mode"))
    regress.add_argument("--list", action="store_true", help=_("list the stored runs and exit"))
    regress.set_defaults(handler=cmd_regress)
