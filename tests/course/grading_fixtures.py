"""Fixture submissions for the grading tests, generated from a copy of the workbook.

Every submission is built the way a learner would build it — modules written into ``forge/``,
``forgelab fault start`` and a fixed lab file, the transfer test, ``forgelab answer`` and finally
``forgelab check`` for the evidence — and then handed in without ``solutions/`` and ``instructor/``.
The base is complete for :data:`BASE_STAGES` (01 for the variants below, 05 for the Hypothesis test
that once flaked under load, 07 for the stage whose tests hand the learner's code a callable).
The variants change one thing each, in stage 01:

=============  =====================================================================================
correct        reference modules, reference transfer tests and answers, fault labs fixed with their
               regression tests (the course's examples), evidence
wrong          same-rank conflicts resolved last-wins (a subtle, plausible mistake)
hangs          ``explain`` loops forever
syntax         a syntax error in ``forge/instructions.py``
edited-tests   the wrong solution, with the stage tests that catch it weakened, and evidence from
               those edited tests
forged         the wrong solution; verification.json edited to claim every pass, then resealed
hand-edited    the same claims without resealing (broken integrity digest); handed in as a zip
transfer-typo  the correct submission whose transfer test got a syntax error after its last check
trivial        the correct submission with a transfer test that cannot fail (an import and
               ``assert True``), checked again so that its evidence is honest (not accepted)
=============  =====================================================================================

The hostile submissions (each one attack on top of the ``wrong`` defect) live in
``hostile_submissions.py``.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conftest import WorkbookCopy, copy_workbook

from forgelab.core import evidence
from forgelab.verdicts.diagnosis import reference_answers

STAGE = "01"
BASE_STAGES = ("01", "05", "07")
KEY = "01-instruction-hierarchy"
MODULE = "forge/instructions.py"
EVIDENCE = f"evidence/prompt-context-output/{KEY}/verification.json"
TEST_FILE = "tests/stages/test_01_instruction_hierarchy.py"
SAME_RANK_FIND = "key=lambda index: (-ranks[index], index)"
SAME_RANK_LAST_WINS = "key=lambda index: (-ranks[index], -index)"
HANDED_IN = ("forge", "transfer", "labs", "evidence", "tests")  # what grading reads from a workbook folder


def _checked(copy: WorkbookCopy, *args: str, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)) -> str:
    result = copy.run(*args, env=env, timeout=600)
    assert result.returncode in ok, f"forgelab {' '.join(args)} → {result.returncode}\n{result.output}"
    return result.output


def hand_in(copy: WorkbookCopy) -> Path:
    """What a learner hands in has no reference solutions and no instructor material."""
    for folder in ("solutions", "instructor"):
        shutil.rmtree(copy.root / folder, ignore_errors=True)
    return copy.root


def build_correct(destination: Path, stages: tuple[str, ...] = BASE_STAGES) -> WorkbookCopy:
    copy = copy_workbook(destination)
    solutions = copy.root / "solutions"
    for module in sorted((solutions / "forge").glob("*.py")):
        shutil.copyfile(module, copy.root / "forge" / module.name)
    for test in sorted((solutions / "transfer").glob("*.py")):
        shutil.copyfile(test, copy.root / "transfer" / test.name)
    from forgelab.core.registry import load_course

    course = load_course(copy.root)
    for number in stages:
        stage = course.stage(number)
        _checked(copy, "fault", "start", number)
        test, function, defect = reference_answers(copy.root, stage)  # the lab counts once it is diagnosed too
        _checked(copy, "fault", "diagnose", number, "--test", test, "--function", function, "--defect", defect,
                 "--because", "the broken copy does what the defect says and the failing test shows it")
        fixed = solutions / "forge" / stage.fault.fault_file.removeprefix("forge/")
        shutil.copyfile(fixed, copy.root / "labs" / stage.key / stage.fault.fault_file)
        # the lab's regression test, which earns its diagnosis points: the course's own example (an honest one)
        shutil.copyfile(copy.root / stage.reference_regression_test, copy.root / stage.regression_test)
        answer = solutions / "answers" / f"{stage.key}.md"
        if answer.is_file():
            _checked(copy, "answer", number, "--file", str(answer))
        _checked(copy, "check", number)
    return copy


def derive(base: WorkbookCopy, destination: Path) -> WorkbookCopy:
    shutil.copytree(base.root, destination, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return WorkbookCopy(destination)


def derive_handed_in(base: Path, destination: Path) -> Path:
    """A copy of only what a learner hands in and grading reads (fast: no course material)."""
    destination.mkdir(parents=True)
    for name in HANDED_IN:
        if (base / name).is_dir():
            shutil.copytree(base / name, destination / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return destination


def break_module(copy: WorkbookCopy | Path, find: str, replace: str, module: str = MODULE) -> None:
    root = copy.root if isinstance(copy, WorkbookCopy) else copy
    path = root / module
    text = path.read_text(encoding="utf-8")
    assert find in text, f"{find!r} is no longer in the reference {module}: update the grading fixtures"
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
    _checked(copy, "check", STAGE, "--cpu-limit", "2", ok=(1,))
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
    assert failing, "the same-rank mistake no longer fails a stage test: update the grading fixtures"
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
    copy.run("check", STAGE, timeout=600)
    document = copy.evidence(KEY)
    return {row["name"] for row in document["tests"] if row["outcome"] != "passed"}


def _claim_everything(document: dict) -> dict:
    claimed = json.loads(json.dumps(document))
    for row in claimed["tests"]:
        row["outcome"], row["cause"] = "passed", ""
    summary = claimed["summary"]
    for key in ("failed", "error", "skipped", "timeout", "not_run"):
        if key in summary:
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
    _checked(copy, "check", STAGE, ok=(1,))  # not accepted: the checker sees it pass on the known-wrong variant too
    return hand_in(copy)


def snapshot(path: Path, max_depth: int = 64) -> dict[str, bytes]:
    """Every file under a folder (or the zip itself), for byte-for-byte comparison. Walked iteratively and never
    through a link, to ``max_depth`` levels: a hostile submission may hold a folder nested thousands deep."""
    from forgelab.core.files import walk

    if path.is_file():
        return {path.name: path.read_bytes()}
    return {file.relative_to(path).as_posix(): file.read_bytes() for file, _depth in sorted(walk(path, max_depth))
            if file.is_file() and not file.is_symlink()}


def tree_digests(path: Path, max_depth: int = 64) -> dict[str, str]:
    """sha256 of every file under a folder (or of the zip itself), read in chunks (a file may be 500 MB)."""
    import hashlib

    from forgelab.core.files import walk

    files = [(path.name, path)] if path.is_file() else \
        [(file.relative_to(path).as_posix(), file) for file, _depth in sorted(walk(path, max_depth))
         if file.is_file() and not file.is_symlink()]
    found = {}
    for name, file in files:
        digest = hashlib.sha256()
        with open(file, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        found[name] = digest.hexdigest()
    return found


def build_base(folder: Path) -> Path:
    """The complete, correct submission for :data:`BASE_STAGES`, handed in (the others derive from it)."""
    return hand_in(build_correct(folder, BASE_STAGES))


def build_all(folder: Path, base: Path) -> dict[str, Path]:
    """Every variant above, derived from the handed-in correct ``base`` (which is not changed)."""
    # the variants are checked again by `forgelab check`, which needs the course material: put it back
    work = copy_workbook(folder / "work")
    for name in HANDED_IN:
        shutil.rmtree(work.root / name, ignore_errors=True)
        if (base / name).is_dir():
            shutil.copytree(base / name, work.root / name)
    made = {
        "wrong": make_wrong(work, folder / "wrong"),
        "hangs": make_hangs(work, folder / "hangs"),
        "syntax": make_syntax(work, folder / "syntax"),
        "edited-tests": make_edited_tests(work, folder / "edited-tests"),
        "forged": make_forged(work, folder / "forged"),
        "hand-edited": make_hand_edited_zip(work, folder / "zips"),
        "transfer-typo": make_transfer_typo(work, folder / "transfer-typo"),
        "trivial": make_trivial_transfer(work, folder / "trivial"),
    }
    shutil.copytree(base, folder / "correct")
    shutil.rmtree(work.root)
    return {"correct": folder / "correct", **made}




# ---------------------------------------------------------------- sharing expensive work between xdist workers


@contextmanager
def locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def shared(tmp_path_factory: Any, name: str, make: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """``make(folder)`` once per test session, shared by every xdist worker; its JSON result is kept.

    Under pytest-xdist each worker has its own base temporary folder inside the session's folder: the
    work is done in that shared parent, under a file lock, by whichever worker asks first.
    """
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "grading-shared"
    folder, done = root / name, root / f"{name}.json"
    with locked(root / f"{name}.lock"):
        if not done.is_file():
            done.write_text(json.dumps(make(folder)), encoding="utf-8")
    return json.loads(done.read_text(encoding="utf-8"))


def shared_base(tmp_path_factory: Any) -> Path:
    """The handed-in correct submission for :data:`BASE_STAGES`, built once per test session."""
    return Path(shared(tmp_path_factory, "base", lambda folder: {"path": str(build_base(folder))})["path"])



def digest(path: Path) -> str:
    """One sha256 over every file of a folder (names and bytes), or of a zip."""
    import hashlib

    total = hashlib.sha256()
    for name, data in sorted(snapshot(path).items()):
        total.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return total.hexdigest()


def shared_submissions(tmp_path_factory: Any) -> dict[str, Any]:
    """The variants of :func:`build_all`, built once per test session: their paths and digests."""
    base = shared_base(tmp_path_factory)

    def make(folder: Path) -> dict[str, Any]:
        paths = build_all(folder, base)
        return {"paths": {name: str(path) for name, path in paths.items()},
                "digests": {name: digest(path) for name, path in paths.items()}}

    return shared(tmp_path_factory, "submissions", make)


__all__ = ["BASE_STAGES", "build_all", "build_base", "derive_handed_in", "digest", "shared", "shared_base",
           "shared_submissions", "snapshot"]
