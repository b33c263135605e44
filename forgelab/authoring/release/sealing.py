"""Sealing the fault labs of a bundle: each lab's broken module ships only encrypted (:mod:`forgelab.core.seal`).

The reference modules, as committed, answer every stage's seal probes (``course/stages/NN-slug/seal.py``) in one
judge run; each stage's answers make the key its lab module (in the bundle's edition) is encrypted with, and the
bundle gets ``failure_labs/NN-slug/sealed-lab.json`` in place of ``failure_labs/NN-slug/forge/<module>``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from forgelab.authoring.release.source import Committed, ReleaseError
from forgelab.core import seal
from forgelab.core.i18n import _
from forgelab.core.registry import Course
from forgelab.judge import core
from forgelab.judge.core import CourseTests, Job, TargetSpec
from forgelab.judge.settings import DEFAULT, JudgeSettings
from forgelab.verdicts import seal as seal_verdict


def reference_answers(committed: Committed, course: Course, settings: JudgeSettings = DEFAULT) -> dict[str, dict[str, str]]:
    """Stage number → probe name → the committed reference's answer (JSON text), every stage in one judge run."""
    missing = [stage.seal_probes for stage in course.stages if stage.seal_probes not in committed.files]
    if missing:
        raise ReleaseError(_("no seal probes for {files} at HEAD ({commit}): a fault lab ships only sealed, with a key "
                             "made from the reference's answers to them; write the probes (see "
                             "course/stages/06-injection-boundary/seal.py) and commit them").format(
            files=_(", ").join(missing), commit=committed.commit[:12]))
    with tempfile.TemporaryDirectory(prefix="forgelab-seal-") as scratch:
        base = Path(scratch)
        for path, data in committed.files.items():
            if path.startswith(("forge/", "solutions/forge/", "course/")):
                (base / path).parent.mkdir(parents=True, exist_ok=True)
                (base / path).write_bytes(data)
        modules = tuple(sorted({stage.module for stage in course.stages}))
        target = TargetSpec(seal_verdict.SEAL_TARGET, (base / "forge", base / "solutions" / "forge"))
        files = tuple(stage.seal_probes for stage in course.stages)
        job = Job(base, base, modules, (target,), (CourseTests(seal_verdict.SEAL_TARGET, files),))
        report = core.run(job, settings)
    answers: dict[str, dict[str, str]] = {}
    for stage in course.stages:
        run = seal_verdict.read_run(stage, report)
        if run.unanswered or not run.answers:
            why = run.problem or _(", ").join(run.unanswered) or _("no probe test ran")
            raise ReleaseError(_("the reference does not answer the seal probes of stage {number} ({file}: {why}): "
                                 "every probe must pass on the reference and record its answer with "
                                 "forgelab_record").format(number=stage.number, file=stage.seal_probes, why=why))
        answers[stage.number] = run.answers
    return answers


def sealed_labs(committed: Committed, course: Course, contents: dict[str, bytes], language: str) -> dict[str, bytes]:
    """``contents`` with every stage's lab module replaced by its sealed file (encrypted in this edition)."""
    answers = reference_answers(committed, course)
    result = dict(contents)
    for stage in course.stages:
        plaintext = result.pop(stage.fault_variant, None)
        if plaintext is None:
            raise ReleaseError(_("{path} is not committed: `forgelab build` writes it; commit it and release "
                                 "again").format(path=stage.fault_variant))
        context = f"{committed.commit}\0{language}".encode()
        sealed = seal.seal(stage.number, stage.fault_variant, plaintext, stage.seal_probes,
                           committed.files[stage.seal_probes], answers[stage.number], context)
        result[stage.sealed_lab] = seal.dump(sealed)
    return result
