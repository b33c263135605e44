"""Issue 30 leftover: an honest solution opens its stage's sealed fault lab.

A released bundle ships each lab's broken module sealed under a key made from the reference's answers to the stage's
seal probes (``course/stages/NN-slug/seal.py``); ``forgelab fault start NN`` judges the stage on the learner's
``forge/`` and opens the lab with the learner's answers. The probes may only ask what the stage's contract fixes:
a probe whose answer depends on how the reference happens to be written (a message's wording, an order the contract
leaves open, the source itself) keeps an honest learner out of their lab for good. So:

* every stage's probes, run together with the stage's tests on the course's solution, pass, and every answer is
  recorded (what ``release`` seals with) — here in one judge run over all stages;
* the independently written honest solutions of stages 01 and 02 (``similarity_fixtures``: four learners, each in
  their own way) pass the stage and give the reference's answers to every probe, so each opens the lab;
* the same comparison catches a probe that goes out of sync with the contract: a planted probe that records the
  wording of the reference's error message (the contract fixes only that it raises) gives honest modules other
  answers, and they would stay locked out.

(The whole path in a released bundle — ``fault start NN`` for every stage on the solution — is
``test_bundle_learner.py::test_every_stages_solution_opens_its_sealed_lab_in_the_bundle``.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT, pristine_starters
from similarity_fixtures import HONEST, STAGES, modules

from forgelab.core import seal
from forgelab.core.paths import Workbook
from forgelab.core.registry import Stage, load_course
from forgelab.judge import core
from forgelab.judge.core import CourseTests, Job, TargetSpec
from forgelab.judge.settings import DEFAULT
from forgelab.verdicts import jobs
from forgelab.verdicts import seal as seal_verdict

COURSE = load_course(ROOT)


def _answers(root: Path, stages: list[Stage], forge: Path) -> dict[str, seal_verdict.SealRun]:
    """Each stage's verdict (required tests passing, probe answers) on the starters with ``forge`` laid over them,
    every stage in one judge run (as ``release`` runs the probes), with ``root`` as the course."""
    starters = jobs.starters(Workbook(ROOT, ROOT))
    target = TargetSpec(seal_verdict.SEAL_TARGET, (starters / "forge", forge))
    files = tuple(name for stage in stages for name in (stage.test_file, stage.seal_probes))
    job = Job(root, starters, jobs.stage_modules(COURSE), (target,), (CourseTests(seal_verdict.SEAL_TARGET, files),))
    report = core.run(job, DEFAULT)
    return {stage.number: seal_verdict.read_run(stage, report) for stage in stages}


def _opens(stage: Stage, probes: bytes, reference: dict[str, str], learner: dict[str, str]) -> bool:
    """Whether a lab sealed with the reference's answers opens with the learner's (as ``fault start`` opens it)."""
    sealed = seal.seal(stage.number, stage.fault_variant, b"the lab", stage.seal_probes, probes, reference, b"test")
    return seal.open_sealed(sealed, probes, learner) == b"the lab"


@pytest.fixture(scope="module")
def reference() -> dict[str, seal_verdict.SealRun]:
    return _answers(ROOT, list(COURSE.stages), ROOT / "solutions" / "forge")


def test_the_solution_passes_every_stage_and_answers_every_probe(reference: dict[str, seal_verdict.SealRun]) -> None:
    for stage in COURSE.stages:
        run = reference[stage.number]
        assert run.problem is None and run.all_pass, (stage.number, run)
        assert run.answers and not run.unanswered, (stage.number, run.unanswered)
        probes = (ROOT / stage.seal_probes).read_bytes()
        assert _opens(stage, probes, run.answers, run.answers)


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each honest learner's ``forge/``: the solution's modules for every other stage, their own for 01 and 02."""
    written = modules(pristine_starters())
    folders = {}
    for name in HONEST:
        forge = tmp_path_factory.mktemp(f"honest-{name}") / "forge"
        shutil.copytree(ROOT / "solutions" / "forge", forge, ignore=shutil.ignore_patterns("__pycache__"))
        for module, text in written[name].items():
            (forge.parent / module).write_text(text, encoding="utf-8")
        folders[name] = forge
    return folders


def test_each_honest_solution_opens_its_labs(reference: dict[str, seal_verdict.SealRun],
                                             honest: dict[str, Path]) -> None:
    stages = [COURSE.stage(number) for number in STAGES]
    for name, forge in honest.items():
        runs = _answers(ROOT, stages, forge)
        for stage in stages:
            run = runs[stage.number]
            assert run.all_pass, (name, stage.number, run)
            probes = (ROOT / stage.seal_probes).read_bytes()
            differ = sorted(probe for probe, answer in reference[stage.number].answers.items()
                            if run.answers.get(probe) != answer)
            assert differ == [], f"{name}'s honest stage {stage.number} answers {differ} otherwise than the reference"
            assert _opens(stage, probes, reference[stage.number].answers, run.answers), (name, stage.number)


OUT_OF_SYNC = '''

def test_the_wording(forgelab_record: Callable[[object], None]) -> None:
    import pytest

    with pytest.raises(ValueError) as refused:
        resolve([Instruction("admin", "tone", "calm")])
    forgelab_record(str(refused.value))  # the reference's wording: the contract fixes only that it raises ValueError
'''


def test_a_probe_out_of_sync_with_the_contract_locks_an_honest_learner_out(honest: dict[str, Path],
                                                                            tmp_path: Path) -> None:
    stage = COURSE.stage("01")
    root = tmp_path / "course"
    shutil.copytree(ROOT / "course", root / "course", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests" / "stages", root / "tests" / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    probes_file = root / stage.seal_probes
    probes_file.write_text(probes_file.read_text(encoding="utf-8") + OUT_OF_SYNC, encoding="utf-8")
    probes = probes_file.read_bytes()
    reference = _answers(root, [stage], ROOT / "solutions" / "forge")[stage.number]
    assert reference.all_pass and "test_the_wording" in reference.answers, reference
    locked = []
    for name, forge in honest.items():
        run = _answers(root, [stage], forge)[stage.number]
        assert run.all_pass, (name, run)  # the stage passes: only the probe that asks too much can differ
        if not _opens(stage, probes, reference.answers, run.answers):
            locked.append(name)
    assert {"bruno", "chen"} <= set(locked), locked  # their messages say it in their own words
