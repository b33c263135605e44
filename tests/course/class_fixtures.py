"""A class of eight for the class report and the Slurm test: built once per test session, graded once.

Every learner derives from the shared correct submission (``grading_fixtures.shared_base``) with one
or two changes in stages 01 and 05, the stages the class is graded on, and a learning record written
with the course's own model (:mod:`forgelab.core.learning`) at fixed times, so the report's figures are known:

===========  ==========================================================================================
ana-lima     correct; no stage-01 hint, quiz right; accepted 40 min (01) and 20 min (05) after her first check
bo-chen      correct; 3 hints in 01, quiz 01 wrong (A); accepted after 60 min (01) and 50 min (05); her stage-01
             diagnosis was right only at the second attempt, after 4 rungs of the fault lab's ladder
cai-wen      stage 01 resolves same-rank conflicts last-wins; every hint; quiz 01 wrong (A), 05 wrong (C); a wrong
             stage-01 diagnosis (the defect), after the whole ladder
dara-okafor  the same stage-01 mistake, stage 05 forgets ``~~~`` fences, and the stage-01 fault lab left broken
eli-novak    the hostile suite's control (both mistakes); no learning record
fay-ruiz     the starter: stages 01 and 05 untouched, no fault labs, no verification evidence; quiz 01 (D)
gus-tanaka   hostile: the control with results whose ``__eq__`` is always true; a record claiming 99 of 6 hints
hana-ito     correct code, but a stage-01 transfer test that cannot fail; a learning record that is not JSON
===========  ==========================================================================================
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from conftest import ROOT, pristine_starters, run_cli
from grading_fixtures import (SAME_RANK_FIND, SAME_RANK_LAST_WINS, TRIVIAL_TRANSFER, break_module, derive_handed_in,
                              shared, shared_base)
from hostile_submissions import ALWAYS_EQUAL, HostileContext, _append, make_control

from forgelab.core import learning

CLASS_STAGES = ("01", "05")
STAGES_ARG = ",".join(CLASS_STAGES)
NAMES = ("ana-lima", "bo-chen", "cai-wen", "dara-okafor", "eli-novak", "fay-ruiz", "gus-tanaka", "hana-ito")
INSTRUCTIONS, REPAIR = "forge/instructions.py", "forge/output_repair.py"
TILDE_FIND, TILDE_FORGOTTEN = 'FENCE_MARKERS = ("```", "~~~")', 'FENCE_MARKERS = ("```",)'
STAGE_KEYS = {"01": "01-instruction-hierarchy", "05": "05-bounded-output-repair"}
DAY = "2026-03-02"


def _stamp(clock: str) -> str:
    return f"{DAY}T{clock}:00Z"


def _entry(hints: int = 0, choice: int | None = None, first: str | None = None, accepted: str | None = None,
           available: int = 6, checks: int = 2) -> learning.StageRecord:
    """One stage of a learning record; ``choice`` is checked against the quiz's answer (B, index 1, in 01 and 05)."""
    return learning.StageRecord(
        hints=learning.HintDepth(deepest=hints, available=available) if hints else None,
        prediction=(learning.PredictionAnswer(choice=choice, options=4, correct=choice == 1,
                                              answered_at=first or _stamp("08:00")) if choice is not None else None),
        checks=(learning.CheckHistory(count=checks, first_at=first, accepted_at=accepted) if first else None))


def _records() -> dict[str, learning.LearningRecord | str | None]:
    """Each learner's learning record: a model, raw text (not a record), or None (no file)."""
    return {
        "ana-lima": learning.LearningRecord(stages={
            "01": _entry(choice=1, first=_stamp("09:00"), accepted=_stamp("09:40"), checks=3),
            "05": _entry(hints=1, available=9, choice=1, first=_stamp("10:00"), accepted=_stamp("10:20"))}),
        "bo-chen": learning.LearningRecord(stages={
            "01": _entry(hints=3, choice=0, first=_stamp("09:00"), accepted=_stamp("10:00")),
            "05": _entry(hints=2, available=9, choice=1, first=_stamp("11:00"), accepted=_stamp("11:50"))}),
        "cai-wen": learning.LearningRecord(stages={
            "01": _entry(hints=6, choice=0, first=_stamp("09:00"), checks=5),
            "05": _entry(available=9, choice=2, first=_stamp("10:00"), accepted=_stamp("10:30"))}),
        "dara-okafor": learning.LearningRecord(stages={
            "01": _entry(hints=2, choice=1, first=_stamp("09:00")),
            "05": _entry(hints=9, available=9, choice=0, first=_stamp("10:00"))}),
        "eli-novak": None,
        "fay-ruiz": learning.LearningRecord(stages={"01": _entry(hints=1, choice=3, first=_stamp("09:00"), checks=1)}),
        "gus-tanaka": learning.LearningRecord(stages={
            "01": _entry(hints=99, choice=1, first=_stamp("09:00")),  # more hints than the stage has: not trusted
            "05": _entry(hints=4, available=9, choice=0, first=_stamp("10:00"))}),
        "hana-ito": "{ this is not a learning record",
    }


def _write_record(folder: Path, record: learning.LearningRecord | str | None) -> None:
    path = folder / "evidence" / learning.FILENAME
    path.unlink(missing_ok=True)
    if record is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    text = record if isinstance(record, str) else \
        json.dumps(record.model_dump(mode="json", exclude_none=True), indent=2, sort_keys=True) + "\n"
    path.write_text(text, encoding="utf-8")


def _diagnosis(folder: Path, number: str, *, right: bool, attempts: int, first_right: int | None, rungs: int) -> None:
    """Replace the handed-in stage diagnosis (the shared base states every one right at the first attempt)."""
    from forgelab.verdicts.diagnosis import RECORD_FILE, DiagnosisRecord, reference_answers
    from forgelab.core.registry import load_course

    test, function, defect = reference_answers(ROOT, load_course(ROOT).stage(number))
    record = DiagnosisRecord(schema_version=1, stage=number, test=test, function=function,
                             defect=defect if right else "a-defect-it-does-not-have", explanation="what I saw",
                             right={"test": True, "function": True, "defect": right}, attempts=attempts,
                             first_right_at=first_right, hints_shown=rungs, stated_after_fix=False)
    path = folder / "evidence" / "prompt-context-output" / STAGE_KEYS[number] / RECORD_FILE
    assert path.is_file(), f"the shared base has no {path.name}: update the class fixtures"
    path.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")


def _starter(folder: Path) -> None:
    """Stages 01 and 05 as shipped: starter modules and transfer starters, no labs, no verification evidence."""
    pristine = pristine_starters()
    for number, module in (("01", INSTRUCTIONS), ("05", REPAIR)):
        shutil.copyfile(pristine / module, folder / module)
        transfer = next((pristine / "transfer").glob(f"test_{number}_*.py"))
        shutil.copyfile(transfer, folder / "transfer" / transfer.name)
    shutil.rmtree(folder / "labs")
    shutil.rmtree(folder / "evidence" / "prompt-context-output")


def build_class(folder: Path, base: Path) -> dict[str, str]:
    """The eight learners under ``folder/submissions/`` (nothing else there: the Slurm script grades ``*``)."""
    subs = folder / "submissions"
    made: dict[str, Path] = {}
    for name in ("ana-lima", "bo-chen", "cai-wen", "hana-ito"):
        made[name] = derive_handed_in(base, subs / name)
    break_module(made["cai-wen"], SAME_RANK_FIND, SAME_RANK_LAST_WINS)
    (made["hana-ito"] / "transfer" / "test_01_instruction_hierarchy.py").write_text(TRIVIAL_TRANSFER, encoding="utf-8")
    made["dara-okafor"] = make_control(base, subs / "dara-okafor")
    lab = made["dara-okafor"] / "labs" / STAGE_KEYS["01"] / INSTRUCTIONS
    shutil.copyfile(ROOT / "failure_labs" / STAGE_KEYS["01"] / INSTRUCTIONS, lab)  # the fault lab, not fixed
    made["eli-novak"] = make_control(base, subs / "eli-novak")
    made["fay-ruiz"] = derive_handed_in(base, subs / "fay-ruiz")
    _starter(made["fay-ruiz"])
    made["gus-tanaka"] = make_control(base, subs / "gus-tanaka")
    context = HostileContext(token="class-report", course=str(ROOT), out=str(folder / "graded"), submissions=str(subs),
                             repo=str(ROOT), port=9, unix_socket="/nonexistent.sock", abstract_socket="nonexistent")
    _append(made["gus-tanaka"] / INSTRUCTIONS, "always-equal", context, ALWAYS_EQUAL)
    _diagnosis(made["bo-chen"], "01", right=True, attempts=3, first_right=2, rungs=4)
    _diagnosis(made["cai-wen"], "01", right=False, attempts=2, first_right=None, rungs=6)
    for name, record in _records().items():
        _write_record(made[name], record)
    assert sorted(path.name for path in subs.iterdir()) == sorted(NAMES)
    return {name: str(made[name]) for name in NAMES}


def grade(paths: list[str], out: Path, *extra: str) -> dict[str, Any]:
    """``forgelab grade`` over the class on this machine (the run the Slurm shards are compared with)."""
    started = time.monotonic()
    done = run_cli(ROOT, "grade", *paths, "--stages", STAGES_ARG, "--jobs", "2", "--out", str(out), *extra,
                   timeout=1500)
    return {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr, "out": str(out),
            "wall_s": round(time.monotonic() - started, 1)}


def shared_class(tmp_path_factory: Any) -> dict[str, Any]:
    """The class, built once per test session: ``folder``, ``submissions`` (the folder) and ``paths`` by name."""
    base = shared_base(tmp_path_factory)

    def make(folder: Path) -> dict[str, Any]:
        paths = build_class(folder, base)
        return {"folder": str(folder), "submissions": str(folder / "submissions"), "paths": paths}

    return shared(tmp_path_factory, "report-class", make)


def shared_graded_class(tmp_path_factory: Any) -> dict[str, Any]:
    """The class graded once on this machine, in one run (shared by the report tests and the Slurm test)."""
    made = shared_class(tmp_path_factory)

    def make(folder: Path) -> dict[str, Any]:
        folder.mkdir(parents=True, exist_ok=True)
        paths = sorted(str(path) for path in Path(made["submissions"]).iterdir())
        return {**made, "single": grade(paths, folder / "single")}

    return shared(tmp_path_factory, "report-class-graded", make)
