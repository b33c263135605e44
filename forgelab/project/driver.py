"""The extractor side of ``forgelab extract`` and ``forgelab regress``, run in a subprocess.

    python -P -m forgelab.project.driver ANSWER_FILE IMPORT_DIR  < request.json

``IMPORT_DIR`` is first on ``PYTHONPATH``, so ``import forge`` gets the chosen target. The driver reads
one JSON request from stdin and writes one JSON answer to ``ANSWER_FILE`` (never to stdout, which the
learner's code may print to):

    {"ok": true, "result": {...}}
    {"ok": false, "error": {"kind": ..., "message": ..., "next": ..., ...}, "audit": {...} | null}

Error kinds: ``usage`` (unknown scenario, fault, template), ``invalid`` (the pipeline refused its input),
``model`` (the model could not answer), ``rejected`` (the model's answer was refused: ``step`` and
``caught_by`` say by whom), ``not_implemented`` and ``crash`` (a problem in the target's code: ``where``
names its file and line).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from forgelab.core.fileformat import explain
from forgelab.core.i18n import N_, _
from forgelab.core import i18n
from forgelab.project.messages import (CaseResult, DriverError, ExtractAnswer, Extraction, ExtractRequest,
                                       RegressAnswer, Regression, RegressRequest, Request)

# who rejects an answer in recovery mode: not stage 05, which recovery mode never calls
# which stage stopped a rejected answer, by its step: forge/extractor.py's CAUGHT_BY, in the active language
CAUGHT_BY_WORDS = {
    "repair": N_("stage 05 (bounded output repair)"),
    "spec": N_("stage 04 (strict task specification)"),
    "permission": N_("the permission check (stage 08)"),
}
RECOVERY_CAUGHT_BY = N_("the strict JSON parser of recovery mode (forge/project/strict.py: nothing is repaired)")


class Failure(Exception):
    # audit: free-form, the learner's own audit record (forge/extractor.py's to_dict)
    def __init__(self, error: DriverError, audit: dict[str, Any] | None = None, output: str | None = None,
                 prompt: str | None = None) -> None:
        super().__init__(error.message)
        self.error, self.audit, self.output, self.prompt = error, audit, output, prompt


def _usage(message: str, next_step: str = "") -> Failure:
    return Failure(DriverError(kind="usage", message=message, next=next_step))


def _template(request: ExtractRequest | RegressRequest):  # type: ignore[no-untyped-def]
    from forge.project.prompts import PromptTemplate, load_template

    try:
        if request.template_text is None:
            return load_template()
        template = PromptTemplate(request.template_name or "custom", request.template_text)
        template.placeholders()
        return template
    except ValueError as error:
        raise _usage(str(error), _("fix the template, or leave --prompt out to use the shipped one")) from None


def _settings(request: ExtractRequest | RegressRequest):  # type: ignore[no-untyped-def]
    from forge.extractor import RECOVERY, STANDARD

    return RECOVERY if request.recovery else STANDARD


def _model(request: ExtractRequest):  # type: ignore[no-untyped-def]
    from forge.project.models import MockModel, Model, ModelError, OpenAIChatModel, RecordingModel, ReplayModel

    model: Model
    try:
        if request.model == "mock":
            model = MockModel(request.fault)
        elif request.model == "replay":
            if request.replay is None:
                raise _usage(_("--model replay needs a recording: --replay FILE"))
            model = ReplayModel(request.replay)
        else:
            model = OpenAIChatModel.from_env()
    except ValueError as error:
        raise _usage(str(error)) from None
    except ModelError as error:
        raise Failure(DriverError(kind="model", message=str(error), next=error.next_step)) from None
    if request.record:
        model = RecordingModel(model, Path(request.record))
    return model


class _Remembering:
    """Passes prompts through to a model and keeps the last prompt and answer, to show them on a rejection."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.prompt: str | None = None
        self.last: str | None = None

    @property
    def model_id(self) -> str:
        return str(self.inner.model_id)

    def complete(self, prompt: str) -> str:
        self.prompt = prompt
        self.last = self.inner.complete(prompt)
        return self.last


def extract(request: ExtractRequest) -> Extraction:
    from forge.extractor import CAUGHT_BY, ExtractionError
    from forge.extractor import extract as run_extraction
    from forge.project.models import ModelError
    from forge.project.scenarios import load_scenario

    try:
        pack = load_scenario(request.scenario)
    except ValueError as error:
        raise _usage(str(error)) from None
    template, settings, model = _template(request), _settings(request), _Remembering(_model(request))
    try:
        result = run_extraction(pack, request.request, model, template, settings)
    except ExtractionError as error:
        words = CAUGHT_BY_WORDS.get(error.step)
        caught_by = _(words) if words else CAUGHT_BY.get(error.step, error.step)
        if error.step == "repair" and not settings.repair:
            caught_by = _(RECOVERY_CAUGHT_BY)
        raise Failure(DriverError(kind="rejected", step=error.step, caught_by=caught_by, message=error.reason),
                      error.audit.to_dict(), model.last, model.prompt) from None
    except ModelError as error:
        raise Failure(DriverError(kind="model", message=str(error), next=error.next_step)) from None
    except ValueError as error:
        if type(error) is not ValueError:
            raise
        raise Failure(DriverError(kind="invalid", message=str(error))) from None
    return Extraction(spec=result.spec.model_dump(mode="json"), audit=result.audit.to_dict(), prompt=result.prompt,
                      output=result.output)


def regress(request: RegressRequest) -> Regression:
    from forge.extractor import regression_cases, regression_invoke
    from forge.project.models import MockModel
    from forge.prompt_regression import run_suite

    template, settings = _template(request), _settings(request)
    cases = regression_cases(settings)
    failures = run_suite(cases, regression_invoke(template, MockModel(), settings))
    if not isinstance(failures, dict):
        raise Failure(DriverError(kind="crash", message=_("run_suite returned {kind}, expected a dict").format(
                           kind=type(failures).__name__), where="forge/prompt_regression.py"))
    known = {case.id for case in cases}
    unknown = sorted(str(key) for key in failures if key not in known)
    if unknown:
        raise Failure(DriverError(kind="crash", message=_("run_suite reported unknown case ids: {ids}").format(
                           ids=", ".join(unknown)), where="forge/prompt_regression.py"))
    return Regression(cases=[CaseResult(id=case.id, scenario=str(case.payload["scenario"]),
                                        problems=[str(problem) for problem in failures.get(case.id, [])])
                             for case in cases])


def _where(error: BaseException, base: str) -> str:
    """``forge/x.py, line N``: the deepest place in the target's forge package that the error passed."""
    package = os.path.join(base, "forge") + os.sep
    if isinstance(error, SyntaxError) and error.filename and os.path.realpath(error.filename).startswith(package):
        return f"{Path(os.path.realpath(error.filename)).relative_to(base).as_posix()}, line {error.lineno}"
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if os.path.realpath(frame.filename).startswith(package)]
    if not frames:
        return ""
    frame = frames[-1]
    return f"{Path(os.path.realpath(frame.filename)).relative_to(base).as_posix()}, line {frame.lineno}"


def answer_for(request: ExtractRequest | RegressRequest, base: str) -> ExtractAnswer | RegressAnswer:
    kind = ExtractAnswer if isinstance(request, ExtractRequest) else RegressAnswer
    try:
        result = extract(request) if isinstance(request, ExtractRequest) else regress(request)
        return kind.model_validate({"ok": True, "result": result})
    except Failure as failure:
        return kind(ok=False, error=failure.error, audit=failure.audit, output=failure.output, prompt=failure.prompt)
    except NotImplementedError as error:
        return kind(ok=False, error=DriverError(kind="not_implemented", message=str(error) or _("not implemented yet"),
                                                where=_where(error, base)))
    except Exception as error:  # the target's code failed: report it in one line
        message = str(error).splitlines()[0] if str(error) else ""
        return kind(ok=False, error=DriverError(kind="crash", where=_where(error, base),
                                                message=f"{type(error).__name__}: {message}".rstrip(": ")))


def main(argv: list[str]) -> int:
    answer_file, base = Path(argv[1]), os.path.realpath(argv[2])
    raw = sys.stdin.read()
    try:
        request: ExtractRequest | RegressRequest = TypeAdapter(Request).validate_json(raw)
    except ValidationError as error:  # forgelab's own parent wrote it: say so, in the answer
        refusal = RegressAnswer(ok=False, error=DriverError(kind="usage", message=explain(
            _("the driver's request"), error, _("this is a fault of forgelab, not of your code: please report it"))))
        answer_file.write_text(refusal.model_dump_json(exclude_none=True), encoding="utf-8")
        return 0
    try:  # the parent's language (the request says which)
        i18n.use(request.lang)
    except i18n.LanguageError:
        pass
    answer = answer_for(request, base)
    answer_file.write_text(answer.model_dump_json(exclude_none=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
