"""Chapter project commands: ``forgelab extract`` and ``forgelab regress``.

Both run the target's ``forge`` in a subprocess (``forgelab.project.driver``); imports stay inside
the handlers so that ``forgelab --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from forgelab.commands.context import open_workbook
from forgelab.display import fail

MODELS = ("mock", "replay", "openai")
FAULTS = ("fenced", "trailing_comma", "prose", "unknown_field", "missing_write_allowed")
OUTPUT_LINES = 8

RESTORE_HINT = ("lay in the reference modules of the stages before 08 with `forgelab restore 08` (in the learner "
                "bundle: `forgelab restore 08 --from PACK`, the checkpoint pack your instructor releases)")
NEXT_BY_STEP = {
    "repair": "the answer is not a JSON object that may safely be repaired: fix the prompt or ask the model again "
              "(with --recovery nothing is repaired on purpose)",
    "spec": "the answer breaks the task-spec contract: check the Output schema section of the prompt (--show-prompt)",
    "permission": "the answer grants write access the instructions deny: look for retrieved text outside its "
                  "data block with --show-prompt",
}


def _scenarios(target: Any) -> list[str]:
    names: set[str] = set()
    for layer in target.layers:
        names.update(path.stem for path in (layer / "project" / "scenarios").glob("*.json"))
    return sorted(names)


def explain_failure(error: dict[str, Any], target_name: str) -> tuple[str, str]:
    """One-line cause and next step for a driver error."""
    kind, message = error.get("kind"), str(error.get("message", ""))
    where = str(error.get("where") or "")
    if kind == "usage":
        return message, str(error.get("next") or "see `forgelab extract --help`")
    if kind == "model":
        return message, str(error.get("next") or "use --model mock, which works offline")
    if kind == "rejected":
        return (f"the model's answer was rejected by {error.get('caught_by')}: {message}",
                NEXT_BY_STEP.get(str(error.get("step")), "compare with --model mock"))
    if kind == "invalid":
        return message, "check the request and the scenario pack"
    if kind == "not_implemented":
        module = where.split(",")[0] if where else "forge"
        return (f"{module}: {message}",
                f"finish that stage (its notebook, part 6), {RESTORE_HINT}, or try --recovery (it needs neither "
                "stage 03 nor stage 05)")
    place = f" ({where})" if where else ""
    return (f"the extractor failed{place}: {message}",
            f"fix that line and run again; `forgelab check 08 --target {target_name}` runs the stage tests")


def recovery_gap_failure(course: Any, target: Any, *, regress: bool = False) -> tuple[str, str] | None:
    """(cause, next step) when recovery mode cannot run on ``target`` because a stage it needs is not there."""
    from forgelab.project.recovery import needs_sentence, recovery_gaps

    gaps = recovery_gaps(course, target, regress=regress)
    if not gaps:
        return None
    listed = ", ".join(gap.text() for gap in gaps)
    return (f"recovery mode still needs stage{'s' if len(gaps) != 1 else ''} {listed}",
            f"{needs_sentence(course, regress=regress)}; finish the stages listed, or {RESTORE_HINT}")


def _template_request(reference: str | None, target: Any) -> dict[str, Any]:
    """--prompt for extract: a template file or a shipped name (the driver validates it)."""
    if reference is None:
        return {}
    path = Path(reference).expanduser()
    if path.is_file():
        return {"template_text": path.read_text(encoding="utf-8"), "template_name": path.stem}
    shipped = target.module_path(f"forge/project/prompts/{reference}.txt") if reference.replace("-", "").isalnum() else None
    if shipped is None:
        raise ValueError(f"unknown prompt template {reference!r}: give a template file or a shipped name")
    return {"template_text": shipped.read_text(encoding="utf-8"), "template_name": reference}


# ---------------------------------------------------------------- extract
def cmd_extract(args: argparse.Namespace) -> int:
    from forgelab.project.launch import LaunchError, run_driver
    from forgelab.targets import resolve_target

    try:  # the spec and audit views are finished infrastructure of the learner's package
        from forge.project.report import format_audit, format_extraction
    except Exception as error:  # noqa: BLE001 - a broken forge/ package must not become a traceback
        return fail(f"forge/project/report.py cannot be imported ({type(error).__name__}: {error})",
                    "bring forge/__init__.py and forge/project/ back to the shipped versions")

    workbook, course = open_workbook()
    target = resolve_target(args.target, workbook, course)
    known = _scenarios(target)
    if not known:
        return fail(f"no scenario packs in forge/project/scenarios/ of target {target.name}",
                    "put them back from the workbook (e.g. git checkout forge/project)")
    if not args.scenario:
        return fail(f"--scenario is required: one of {', '.join(known)}",
                    'e.g. forgelab extract --scenario software "add a search box to the product list"')
    if args.scenario not in known:
        return fail(f"unknown scenario {args.scenario!r}: expected one of {', '.join(known)}",
                    'e.g. forgelab extract --scenario office "compare the two vendor quotes"')
    if args.request is None or not args.request.strip():
        return fail("empty request: give the request text in quotes after the options",
                    f'e.g. forgelab extract --scenario {args.scenario} "what you need, in one sentence"')
    if args.model not in MODELS:
        return fail(f"unknown model {args.model!r}: expected one of {', '.join(MODELS)}", "leave --model out to use the mock")
    if args.fault is not None and args.fault not in FAULTS:
        return fail(f"unknown mock fault {args.fault!r}: expected one of {', '.join(FAULTS)}",
                    "leave --fault out for a clean answer")
    if args.fault is not None and args.model != "mock":
        return fail("--fault switches on a defect of the mock model only", "use it with --model mock")
    if args.recovery:
        gap = recovery_gap_failure(course, target)
        if gap is not None:
            return fail(*gap)
    request: dict[str, Any] = {"action": "extract", "scenario": args.scenario, "request": args.request,
                               "model": args.model, "fault": args.fault, "recovery": args.recovery}
    if args.model == "replay":
        if not args.replay:
            return fail("--model replay needs a recording: --replay FILE",
                        "make one with --record FILE while using another model")
        request["replay"] = str(Path(args.replay).expanduser().resolve())
    if args.record:
        request["record"] = str(Path(args.record).expanduser().resolve())
    try:
        request.update(_template_request(args.prompt, target))
    except (ValueError, OSError) as error:
        return fail(str(error), "leave --prompt out to use the shipped template")
    try:
        answer = run_driver(workbook, target, request)
    except LaunchError as error:
        return fail(str(error), error.next_step)
    if answer["ok"]:
        result = answer["result"]
        document = {"spec": result["spec"], "audit": result["audit"]}
        if args.show_prompt:
            document["prompt"] = result["prompt"]
        if args.json:
            print(json.dumps(document, ensure_ascii=False, indent=2))
        else:
            if args.show_prompt:
                print(f"prompt sent to the model\n{'-' * 24}\n{result['prompt'].rstrip()}\n{'-' * 24}\n")
            print(format_extraction(document))
            if args.recovery:
                print("\nrecovery mode: one fixed schema (v2), the pack's three fixed examples, the answer parsed exactly "
                      "as written — stage 03 (example selection) and stage 05 (repair) were not called")
        return 0
    failure = answer["error"]
    cause, next_step = explain_failure(failure, target.name)
    if args.recovery and failure.get("step") == "repair" and "repair is off" in str(failure.get("message")):
        next_step = "recovery mode repairs nothing on purpose; without --recovery, stage 05 may remove a fence or a trailing comma"
    if args.json:
        document = {"error": failure, "audit": answer.get("audit"), "output": answer.get("output")}
        if args.show_prompt:
            document["prompt"] = answer.get("prompt")
        print(json.dumps(document, ensure_ascii=False, indent=2))
    elif answer.get("audit"):
        if args.show_prompt and answer.get("prompt"):
            print(f"prompt sent to the model\n{'-' * 24}\n{answer['prompt'].rstrip()}\n{'-' * 24}\n")
        print(format_audit(answer["audit"]))
        if answer.get("output") is not None:
            lines = str(answer["output"]).splitlines()
            shown = lines[:OUTPUT_LINES] + ([f"… {len(lines) - OUTPUT_LINES} more line(s)"] if len(lines) > OUTPUT_LINES else [])
            print("\nmodel answer (rejected)\n" + "\n".join(f"  | {line}" for line in shown))
        sys.stdout.flush()
    status = fail(cause, next_step)
    return 1 if failure.get("kind") == "rejected" else status


# ---------------------------------------------------------------- regress
def cmd_regress(args: argparse.Namespace) -> int:
    from forgelab.project.history import CaseOutcome, HistoryError
    from forgelab.project.launch import LaunchError, run_driver
    from forgelab.project.regress import PromptChoice, RegressError, list_runs, run_regress
    from forgelab.targets import resolve_target

    workbook, course = open_workbook()
    if args.list:
        try:
            return list_runs(workbook)
        except HistoryError as error:
            return fail(str(error), "move the file away to start a new history")
    target = resolve_target(args.target, workbook, course)
    if args.recovery:
        gap = recovery_gap_failure(course, target, regress=True)
        if gap is not None:
            return fail(*gap)

    def run_cases(choice: PromptChoice) -> list[CaseOutcome]:
        request = {"action": "regress", "template_text": choice.text, "template_name": choice.label,
                   "recovery": args.recovery}
        answer = run_driver(workbook, target, request)
        if not answer["ok"]:
            cause, next_step = explain_failure(answer["error"], target.name)
            raise RegressError(cause, next_step)
        return [CaseOutcome(case["id"], case["scenario"], tuple(case["problems"])) for case in answer["result"]["cases"]]

    try:
        return run_regress(workbook, target, prompt=args.prompt, baseline=args.baseline, recovery=args.recovery,
                           run_cases=run_cases)
    except (RegressError, LaunchError) as error:
        return fail(str(error), error.next_step)
    except HistoryError as error:
        return fail(str(error), "move the file away to start a new history")


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    extract = sub.add_parser("extract", help="chapter project: turn a vague request into a checked task spec",
                             description="Run the requirement extractor (forge/extractor.py) on one request and print "
                                         "the task spec and its audit trail.")
    extract.add_argument("request", nargs="?", help='the request, in quotes, e.g. "为前端仓库增加功能、修改代码并补测试"')
    extract.add_argument("--scenario", help="scenario pack: software, office or music")
    extract.add_argument("--json", action="store_true", help="print the spec and the audit as JSON")
    extract.add_argument("--target", default="learner", help="learner (default), solution, fault:NN or a workbook path")
    extract.add_argument("--model", default="mock", help="mock (default, offline), replay (needs --replay FILE) or "
                                                         "openai (FORGE_OPENAI_BASE_URL, FORGE_OPENAI_MODEL, FORGE_OPENAI_API_KEY)")
    extract.add_argument("--fault", help=f"mock only: switch on one output defect ({', '.join(FAULTS)})")
    extract.add_argument("--recovery", action="store_true",
                         help="the minimal recovery point: fixed schema v2, three fixed examples, no repair code at all "
                              "(works while stages 03 and 05 are unfinished)")
    extract.add_argument("--replay", metavar="FILE", help="the JSONL recording --model replay answers from")
    extract.add_argument("--record", metavar="FILE", help="append every model answer to this JSONL recording")
    extract.add_argument("--prompt", metavar="TEMPLATE", help="a prompt template file or shipped name (default: extractor)")
    extract.add_argument("--show-prompt", action="store_true", help="also print the prompt the model received")
    extract.set_defaults(handler=cmd_extract)

    regress = sub.add_parser("regress", help="chapter project: run the prompt regression cases and keep the history",
                             description="Run the fixed regression cases of all three scenarios for one prompt version, "
                                         "store the run in .forgelab/regressions.sqlite3 and compare it with a baseline. "
                                         "Exits 1 on a new regression.")
    regress.add_argument("--target", default="learner", help="learner (default), solution, fault:NN or a workbook path")
    regress.add_argument("--prompt", metavar="V", help="a template file, a shipped template name or a stored version id "
                                                       "(default: the shipped extractor template)")
    regress.add_argument("--baseline", metavar="V", help="compare with the latest run of this version "
                                                         "(default: the latest run of this target that passed every case)")
    regress.add_argument("--recovery", action="store_true", help="run the cases in recovery mode")
    regress.add_argument("--list", action="store_true", help="list the stored runs and exit")
    regress.set_defaults(handler=cmd_regress)
