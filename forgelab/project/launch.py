"""Start the project driver against a target and read its answer (the parent side of the subprocess).

The target's ``forge`` goes first on ``PYTHONPATH``, bytecode is not written into it, and the run has
a wall-clock limit, so a learner's infinite loop is reported. This runs the learner's own extractor
for the learner (it may call a model server the learner configured), so it is a plain subprocess,
not the judge's sandbox: nothing here is graded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import overload

from forgelab.core.fileformat import FileFormatError, parse_json
from forgelab.core.i18n import _, active
from forgelab.core.paths import Workbook
from forgelab.core.targets import Target
from forgelab.project.messages import ExtractAnswer, ExtractRequest, RegressAnswer, RegressRequest

MOCK_TIMEOUT_S = int(os.environ.get("FORGELAB_PROJECT_TIMEOUT", "60"))


class LaunchError(RuntimeError):
    def __init__(self, message: str, next_step: str) -> None:
        super().__init__(message)
        self.next_step = next_step


def base_env(import_dir: Path) -> dict[str, str]:
    """The driver's environment: the target first on the path, no bytecode written, no pytest plugins."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["PYTHONPATH"] = str(import_dir)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    env.pop("PYTHONSTARTUP", None)
    return env


def timeout_for(request: ExtractRequest | RegressRequest) -> int:
    if isinstance(request, ExtractRequest) and request.model == "openai":
        try:
            return int(float(os.environ.get("FORGE_OPENAI_TIMEOUT", "60"))) + MOCK_TIMEOUT_S
        except ValueError:
            return 2 * MOCK_TIMEOUT_S
    return MOCK_TIMEOUT_S


@overload
def run_driver(workbook: Workbook, target: Target, request: ExtractRequest) -> ExtractAnswer: ...
@overload
def run_driver(workbook: Workbook, target: Target, request: RegressRequest) -> RegressAnswer: ...
def run_driver(workbook: Workbook, target: Target,
               request: ExtractRequest | RegressRequest) -> ExtractAnswer | RegressAnswer:
    """Run one request through the driver in a subprocess; returns its answer (in the active language)."""
    limit = timeout_for(request)
    request = request.model_copy(update={"lang": active()})
    with target.importable() as import_dir, tempfile.TemporaryDirectory(prefix="forgelab-project-") as scratch:
        answer_file = Path(scratch) / "answer.json"
        command = [sys.executable, "-P", "-m", "forgelab.project.driver", str(answer_file), str(import_dir)]
        try:
            done = subprocess.run(command, input=request.model_dump_json(), env=base_env(import_dir),
                                  cwd=workbook.root, capture_output=True, text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            raise LaunchError(_("the extractor did not finish within {limit} s").format(limit=limit),
                              _("look for a loop that never ends in forge/extractor.py, or a model that does not "
                                "answer")) from None
        if not answer_file.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [_("no output")]
            raise LaunchError(_("the extractor stopped without an answer: {last}").format(last=tail[0]),
                              _("check that forge/ imports cleanly (forgelab check 08 --target {target})").format(
                                  target=target.name))
        raw, remedy = answer_file.read_bytes(), _("forgelab's driver wrote something else, or code in forge/ wrote into that file; if "
                                "forge/ does not write files, this is a fault of forgelab: please report it")
        name = _("the extractor's answer file")
        try:
            if isinstance(request, ExtractRequest):
                return parse_json(name, raw, ExtractAnswer, remedy)
            return parse_json(name, raw, RegressAnswer, remedy)
        except FileFormatError as error:
            raise LaunchError(str(error), _("run `forgelab check 08 --target {target}` to see whether forge/ works "
                                            "as the stage tests expect").format(target=target.name)) from None
