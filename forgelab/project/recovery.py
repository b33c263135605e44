"""What recovery mode still needs from the learner's stages, checked before the extractor runs.

Recovery mode (``forgelab extract --recovery``, ``forge.extractor.RECOVERY``) is the chapter's minimal
recovery point: one fixed schema (v2), the pack's three fixed few-shot examples, and automatic repair
switched off. It therefore calls **no function of stage 03** (nothing is selected) and **no function of
stage 05** (the answer is parsed exactly as written by ``forge.project.strict``). Everything else in the
pipeline still runs the learner's code:

* 01 ``explain`` decides the instructions (and the write policy the permission check enforces);
* 02 ``explain_choice`` chooses the context under the token budget;
* 04 ``TaskSpec.parse`` is the strict schema;
* 06 ``prepare_retrieved_context`` and ``render_retrieved_block`` keep retrieved text as data;
* 07 ``prompt_version_id`` names the prompt (``regress`` also runs ``check_output`` and ``run_suite``);
* 08 ``build_prompt`` and ``read_output`` — the extractor itself.

Modules of stages 03 and 05 are still *imported* by ``forge/extractor.py``, so they must exist and be
valid Python: the shipped starters are enough.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from forgelab.core.i18n import _
from forgelab.core.registry import Course
from forgelab.core.targets import Target
from forgelab.core.starters import unfinished_functions
from forgelab.core import pyast

# stage -> the functions recovery mode calls (None: every function the learner writes in that module)
EXTRACT_NEEDS: dict[str, tuple[str, ...] | None] = {
    "01": None, "02": None, "04": None, "06": None, "07": ("prompt_version_id",), "08": None,
}
REGRESS_NEEDS: dict[str, tuple[str, ...] | None] = {**EXTRACT_NEEDS, "07": None}
NOT_NEEDED = ("03", "05")  # fixed examples, no repair: imported only


@dataclass(frozen=True)
class Gap:
    stage: str
    module: str
    detail: str  # "value_density, explain_choice not written yet", "missing", "does not parse (line 4)"

    def text(self) -> str:
        return _("{stage} ({module}: {detail})").format(stage=self.stage, module=self.module, detail=self.detail)


def recovery_gaps(course: Course, target: Target, *, regress: bool = False) -> list[Gap]:
    """The stages recovery mode needs whose module in ``target`` is missing, broken or unfinished."""
    needs = REGRESS_NEEDS if regress else EXTRACT_NEEDS
    gaps: list[Gap] = []
    for stage in course.stages:
        if stage.number not in needs and stage.number not in NOT_NEEDED:
            continue
        path = target.module_path(stage.module)
        if path is None:
            gaps.append(Gap(stage.number, stage.module, _("missing")))
            continue
        try:
            pyast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError) as error:
            line = getattr(error, "lineno", None)
            gaps.append(Gap(stage.number, stage.module, _("does not parse (line {line})").format(line=line) if line
                            else _("does not parse")))
            continue
        if stage.number in NOT_NEEDED:
            continue  # imported only: a starter is enough
        wanted = needs[stage.number]
        open_functions = [name for name in unfinished_functions(path) if wanted is None or name in wanted]
        if open_functions:
            gaps.append(Gap(stage.number, stage.module, _("{functions} not written yet").format(
                functions=", ".join(open_functions))))
    return gaps


def needs_sentence(course: Course, *, regress: bool = False) -> str:
    """One sentence: which stages recovery mode runs and which it leaves out."""
    needs = REGRESS_NEEDS if regress else EXTRACT_NEEDS
    ran = [number for number in needs if number in course.by_number]
    parts = [number if needs[number] is None else _("{stage} ({functions})").format(
        stage=number, functions=", ".join(needs[number] or ())) for number in ran]
    return _("recovery mode runs your stages {stages}; it leaves out 03 (three fixed examples) and 05 (nothing is "
             "repaired), whose modules only have to import").format(stages=", ".join(parts))
