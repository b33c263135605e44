"""Fixture submissions for the grading tests, generated from a copy of the workbook.

Every submission is built the way a learner would build it — modules written into ``forge/``,
``forgelab fault start`` and a fixed lab file, the transfer test, ``forgelab answer`` and finally
``forgelab check`` for the evidence — and then handed in without ``solutions/`` and ``instructor/``.
The variants change one thing each:

=============  =====================================================================================
correct        reference modules, reference transfer tests and answers, fault labs fixed, evidence
wrong          stage 01: same-rank conflicts resolved last-wins (a subtle, plausible mistake)
hangs          stage 01: ``explain`` loops forever
syntax         stage 01: a syntax error in ``forge/instructions.py``
edited-tests   the wrong solution, with the stage test that catches it weakened, and evidence from
               those edited tests
forged         the wrong solution; verification.json edited to claim every pass, then resealed
hand-edited    the same claims without resealing (broken integrity digest); handed in as a zip
transfer-typo  the correct submission whose transfer test got a syntax error after its last check
trivial        the correct submission with a transfer test that cannot fail (an import and
               ``assert True``), checked again so that its evidence is honest
=============  =====================================================================================
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

from conftest import WorkbookCopy, copy_workbook

from forgelab import evidence

STAGE = "01"
KEY = "01-instruction-hierarchy"
MODULE = "forge/instructions.py"
EVIDENCE = f"evidence/prompt-context-output/{KEY}/verification.json"
TEST_FILE = "tests/stages/test_01_instruction_hierarchy.py"
SAME_RANK_FIND = "key=lambda index: (-ranks[index], index)"
SAME_RANK_LAST_WINS = "key=lambda index: (-ranks[index], -index)"
FAST = {"FORGELAB_TEST_TIMEOUT": "1", "FORGELAB_PROBE_TIMEOUT": "2"}


def _checked(copy: WorkbookCopy, *args: str, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)) -> str:
    result = copy.run(*args, env=env)
    assert result.returncode in ok, f"forgelab {' '.join(args)} → {result.returncode}\n{result.output}"
    return result.output


def hand_in(copy: WorkbookCopy) -> Path:
    """What a learner hands in has no reference solutions and no instructor material."""
    for folder in ("solutions", "instructor"):
        shutil.rmtree(copy.root / folder, ignore_errors=True)
    return copy.root


def build_correct(destination: Path, stages: tuple[str, ...]) -> WorkbookCopy:
    copy = copy_workbook(destination)
    solutions = copy.root / "solutions"
    for module in sorted((solutions / "forge").glob("*.py")):
        shutil.copyfile(module, copy.root / "forge" / module.name)
    for test in sorted((solutions / "transfer").glob("*.py")):
        shutil.copyfile(test, copy.root / "transfer" / test.name)
    from forgelab.registry import load_course

    course = load_course(copy.root)
    for number in stages:
        stage = course.stage(number)
        _checked(copy, "fault", "start", number)
        fixed = solutions / "forge" / stage.fault.fault_file.removeprefix("forge/")
        shutil.copyfile(fixed, copy.root / "labs" / stage.key / stage.fault.fault_file)
        answer = solutions / "answers" / f"{stage.key}.md"
        if answer.is_file():
            _checked(copy, "answer", number, "--file", str(answer))
        _checked(copy, "check", number)
    return copy


def derive(base: WorkbookCopy, destination: Path) -> WorkbookCopy:
    shutil.copytree(base.root, destination, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return WorkbookCopy(destination)


def break_module(copy: WorkbookCopy, find: str, replace: str) -> None:
    path = copy.root / MODULE
    text = path.read_text(encoding="utf-8")
    assert find in text, f"{find!r} is no longer in the reference {MODULE}: update the grading fixtures"
    path.write_text(text.replace(find, replace, 1), encoding="utf-8")


def make_wrong(base: WorkbookCopy, destination: Path) -> Path:
    copy = derive(base, destination)
    break_module(copy, SAME_RANK_FIND, SAME_RANK_LAST_WINS)
    _checked(copy, "check", STAGE, ok=(1,))  # honest evidence: not accepted
    return hand_in(copy)


def make_hangs(base: WorkbookCopy, destination: Path) -> Path:
    copy = derive(base, destination)
    break_module(copy, '    """Decide every key and keep the reason for every rejection."""\n',
                 '    """Decide every key and keep the reason for every rejection."""\n    while True:\n        pass\n')
    _checked(copy, "check", STAGE, env=FAST, ok=(1,))
    return hand_in(copy)


def make_syntax(base: WorkbookCopy, destination: Path) -> Path:
    copy = derive(base, destination)
    break_module(copy, "def rank_of(instruction: Instruction) -> int:", "def rank_of(instruction: Instruction) -> int")
    _checked(copy, "check", STAGE, ok=(1,))
    return hand_in(copy)


def make_edited_tests(base: WorkbookCopy, destination: Path) -> Path:
    copy = derive(base, destination)
    break_module(copy, SAME_RANK_FIND, SAME_RANK_LAST_WINS)
    tests = copy.root / TEST_FILE
    text = tests.read_text(encoding="utf-8")
    # the learner "fixes" every test that fails on their code by making it assert nothing
    import ast

    tree = ast.parse(text)
    failing = _failing_tests(copy)
    lines = text.splitlines(keepends=True)
    for node in sorted((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in failing),
                       key=lambda n: -n.lineno):
        body_start, body_end = node.body[0].lineno - 1, node.end_lineno or node.body[-1].lineno
        indent = " " * node.body[0].col_offset
        lines[body_start:body_end] = [f"{indent}assert True\n"]
    tests.write_text("".join(lines), encoding="utf-8")
    _checked(copy, "check", STAGE)  # accepted — against the edited tests
    return hand_in(copy)


def _failing_tests(copy: WorkbookCopy) -> set[str]:
    copy.run("check", STAGE)
    document = copy.evidence(KEY)
    return {row["name"] for row in document["tests"] if row["outcome"] != "passed"}


def _claim_everything(document: dict) -> dict:
    claimed = json.loads(json.dumps(document))
    for row in claimed["tests"]:
        row["outcome"], row["cause"] = "passed", ""
    summary = claimed["summary"]
    for key in ("failed", "error", "skipped", "timeout", "not_run"):
        summary[key] = 0
    summary["passed"] = len(claimed["tests"])
    summary["required_passed"] = summary["required_total"]
    claimed["acceptance"] = {key: True for key in claimed["acceptance"]}
    claimed["accepted"] = True
    claimed["problems"] = []
    return claimed


def make_forged(base: WorkbookCopy, destination: Path) -> Path:
    copy = derive(base, destination)
    break_module(copy, SAME_RANK_FIND, SAME_RANK_LAST_WINS)
    _checked(copy, "check", STAGE, ok=(1,))
    path = copy.root / EVIDENCE
    forged = evidence.seal(_claim_everything(evidence.read_document(path)))
    evidence.write_document(path, forged)
    assert evidence.integrity_holds(forged)
    return hand_in(copy)


def make_hand_edited_zip(base: WorkbookCopy, destination: Path) -> Path:
    """Claims edited without resealing, handed in as a zip with a single top folder."""
    copy = derive(base, destination / "hand-edited")
    break_module(copy, SAME_RANK_FIND, SAME_RANK_LAST_WINS)
    _checked(copy, "check", STAGE, ok=(1,))
    path = copy.root / EVIDENCE
    document = evidence.read_document(path)
    edited = _claim_everything(document)
    edited["integrity"] = document["integrity"]  # the old digest: no longer matches
    evidence.write_document(path, edited)
    assert not evidence.integrity_holds(edited)
    folder = hand_in(copy)
    archive = destination / "hand-edited.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bundle:
        for file in sorted(folder.rglob("*")):
            if file.is_file() and ".venv" not in file.parts:
                bundle.write(file, f"hand-edited/{file.relative_to(folder).as_posix()}")
    shutil.rmtree(folder)
    return archive


def make_transfer_typo(base: WorkbookCopy, destination: Path) -> Path:
    copy = derive(base, destination)
    test = copy.root / "transfer" / "test_01_instruction_hierarchy.py"
    test.write_text(test.read_text(encoding="utf-8") + "\ndef test_more(:\n    pass\n", encoding="utf-8")
    return hand_in(copy)  # no new check: the evidence still says the transfer test passed


TRIVIAL_TRANSFER = '''"""My transfer test (it runs the code but checks nothing)."""

from forge.instructions import Instruction, resolve


def test_office_brief_runs() -> None:
    resolve([Instruction("user", "write", "allow")])
    assert True
'''


def make_trivial_transfer(base: WorkbookCopy, destination: Path) -> Path:
    copy = derive(base, destination)
    (copy.root / "transfer" / "test_01_instruction_hierarchy.py").write_text(TRIVIAL_TRANSFER, encoding="utf-8")
    _checked(copy, "check", STAGE)  # accepted: the checker only asks that the transfer test passes
    return hand_in(copy)


def snapshot(path: Path) -> dict[str, bytes]:
    """Every file under a folder (or the zip itself), for byte-for-byte comparison."""
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {file.relative_to(path).as_posix(): file.read_bytes() for file in sorted(path.rglob("*")) if file.is_file()}


def build_all(folder: Path, stages: tuple[str, ...] = (STAGE,)) -> dict[str, Path]:
    base = build_correct(folder / "base", stages)
    made = {
        "wrong": make_wrong(base, folder / "wrong"),
        "hangs": make_hangs(base, folder / "hangs"),
        "syntax": make_syntax(base, folder / "syntax"),
        "edited-tests": make_edited_tests(base, folder / "edited-tests"),
        "forged": make_forged(base, folder / "forged"),
        "hand-edited": make_hand_edited_zip(base, folder / "zips"),
        "transfer-typo": make_transfer_typo(base, folder / "transfer-typo"),
        "trivial": make_trivial_transfer(base, folder / "trivial"),
    }
    shutil.move(str(hand_in(base)), folder / "correct")
    return {"correct": folder / "correct", **made}


__all__ = ["build_all", "snapshot"]
