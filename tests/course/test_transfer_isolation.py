"""A learner's own test file never shares a process with the forge it tests (forgelab/judge/relay.py).

Each test here runs one transfer test file through the judge — against a forge folder (the learner's)
and, where it matters, against the same forge with the stage's known-wrong module laid over it, the
way ``forgelab check`` and ``forgelab grade`` do — and looks at the rows:

* forge code that patches pytest at import changes no outcome (it is not in the test's process);
* the test sees the same module, files, paths and tracebacks in both runs — only behaviour differs;
* forge code cannot reach into the test's process through a callable the test hands it;
* the test can call only what the course's interface offers;
* an endless loop in forge, called from the test, is a timeout of that test with the CPU limit named;
* a callback that changes its argument in place changes forge's object too (copy-restore), so a test
  can still tell a deep copy from a shallow one across the boundary;
* without bubblewrap (a learner's own machine) the same runs as plain processes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import WorkbookCopy, copy_with_reference_forge
from hostile_submissions import REPORT_PATCH  # forge code that marks every pytest report passed

from forgelab.judge import core, sandbox
from forgelab.verdicts import jobs
from forgelab.judge.core import LearnerTests, TargetSpec
from forgelab.judge.outcomes import Limit, Outcome, RunReport
from forgelab.judge.settings import JudgeSettings, SandboxMode
from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course

TRANSFER_01 = "transfer/test_01_instruction_hierarchy.py"
TRANSFER_07 = "transfer/test_07_prompt_regression_suite.py"
SETTINGS = JudgeSettings(test_cpu_s=2)

FAILING_TEST = '''from forge.instructions import Instruction, resolve


def test_a_wrong_expectation() -> None:
    accepted, _ = resolve([Instruction("system", "write", "deny")])
    assert accepted == {"write": "allow"}
'''

PROBE_TEST = '''"""Records everything a test could use to tell which forge it was given, then fails with a digest of it."""
import hashlib
import inspect
import json
import os
import sys
import traceback

import forge
import forge.instructions as module
from forge.instructions import Instruction, resolve


def _listing(folder):
    found = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [os.path.join(top, name) for name in sorted(files)]
    return found


def test_probe() -> None:
    here = os.path.dirname(os.path.dirname(module.__file__))
    seen = {"file": module.__file__, "package": forge.__file__, "source": inspect.getsource(module),
            "resolve": repr(resolve), "cwd": os.getcwd(), "argv": sys.argv, "path": sys.path,
            "listing": _listing(here), "modules": sorted(name for name in sys.modules if name.startswith("forge")),
            "environ": sorted(os.environ.items())}
    for path in seen["listing"]:
        with open(path, "rb") as handle:
            seen[path] = hashlib.sha256(handle.read()).hexdigest()
    kind = "no error"
    try:
        resolve([Instruction("admin", "write", "allow")])
    except BaseException as error:  # noqa: BLE001
        kind = type(error).__name__
        seen["error"] = ["".join(traceback.format_exception(error)), getattr(error, "__notes__", None), str(error)]
    digest = hashlib.sha256(json.dumps(seen, sort_keys=True, default=str).encode()).hexdigest()
    raise AssertionError(f"probe {kind} {digest}")
'''

REACHING_TEST = '''from forge.prompt_regression import RegressionCase, run_suite

REACHED = []


def test_the_callback_is_only_a_callback() -> None:
    case = RegressionCase("decision-brief", {"request": "compare"}, frozenset({"goal", "acceptance"}), True)
    failures = run_suite([case], lambda payload: {"goal": "recommend a supplier", "write_allowed": True})
    assert REACHED == []
    assert failures == {"decision-brief": ["anything but this"]}
'''

REACHING_FORGE = '''

_original_run_suite = run_suite


def run_suite(cases, invoke):
    server = object.__getattribute__(invoke, "_server")
    handle = object.__getattribute__(invoke, "_handle")
    for name in ("__globals__", "__builtins__", "__code__", "_server"):
        try:
            found = server.callback({"op": "getattr", "handle": handle, "name": name}, (), {})
        except BaseException as error:  # noqa: BLE001
            print("refused", name, type(error).__name__)
            continue
        try:  # with the test's globals: mark the test as reached, and make its assertion pass
            found["REACHED"].append(1)
        except BaseException:  # noqa: BLE001
            pass
    return _original_run_suite(cases, invoke)
'''

RAW_FRAMES_TEST = '''import pytest

from forgelab.judge import remote
from forge.instructions import Instruction, resolve


@pytest.mark.parametrize("target", ["forge.instructions:os.getcwd", "forge.instructions:__loader__",
                                    "forge.instructions:_hidden", "forge:__file__", "builtins:open"])
def test_only_the_interface_can_be_called(target) -> None:
    host = remote.active_pool().current_host()
    with pytest.raises(Exception, match="is not a function or class of the course.s forge"):
        host.request({"op": "call", "target": target}, (), {})


def test_the_interface_still_works() -> None:
    accepted, _ = resolve([Instruction("system", "write", "deny")])
    assert accepted == {"write": "deny"}
'''

CHANGING_CALLBACK_TEST = '''from forge.prompt_regression import RegressionCase, run_suite


def test_a_callback_cannot_change_the_fixed_case() -> None:
    case = RegressionCase("nested", {"request": "inspect", "files": ["a.ts"]}, frozenset({"goal"}), False)
    seen = []

    def invoke(payload):
        seen.append(list(payload["files"]))
        payload["files"].append("b.ts")
        return {"goal": "g", "write_allowed": False}

    run_suite([case], invoke)
    run_suite([case], invoke)
    assert seen == [["a.ts"], ["a.ts"]]
'''

LOOPING_FORGE = '''

def resolve(instructions):
    print("looping now")
    while True:
        pass
'''


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> WorkbookCopy:
    return copy_with_reference_forge(tmp_path_factory.mktemp("isolation") / "workbook")


def forge_with(book: WorkbookCopy, folder: Path, module: str = "", code: str = "") -> Path:
    forge = folder / "forge"
    shutil.copytree(book.root / "forge", forge, ignore=shutil.ignore_patterns("__pycache__"))
    if module:
        path = folder / module
        path.write_text(path.read_text(encoding="utf-8") + code, encoding="utf-8")
    return forge


def run_transfer(book: WorkbookCopy, forge: Path, shown: str, test_text: str, stage: str,
                 settings: JudgeSettings = SETTINGS, plain: bool = False) -> RunReport:
    """The test file against ``forge`` (label ``mine``) and with the stage's known-wrong module over it (``wrong``)."""
    course = load_course(book.root)
    workbook = Workbook(book.root, book.root)
    number = course.stage(stage)
    test_file = forge.parent / "the-test" / Path(shown).name
    test_file.parent.mkdir(parents=True, exist_ok=True)
    test_file.write_text(test_text, encoding="utf-8")
    targets = [TargetSpec("mine", (forge,), stage), TargetSpec("wrong", (forge, jobs.fault_variant(workbook, number)), stage)]
    suites = [LearnerTests("mine", ((test_file, shown),)), LearnerTests("wrong", ((test_file, shown),))]
    job = jobs.job(course, workbook, targets, [], suites)
    isolation = sandbox.Isolation(False, "", "switched off") if plain else None
    return core.run(job, settings, isolation)


def only(report: RunReport, label: str):  # type: ignore[no-untyped-def]
    rows = report.for_target(label)
    assert len(rows) == 1, (label, rows, report.target_problems, report.collect_errors)
    return rows[0]


def sandboxed() -> bool:
    return sandbox.isolation(SandboxMode.AUTO).sandboxed


def test_forge_that_patches_pytest_at_import_changes_no_outcome(book: WorkbookCopy, tmp_path: Path) -> None:
    forge = forge_with(book, tmp_path, "forge/instructions.py", REPORT_PATCH)
    report = run_transfer(book, forge, TRANSFER_01, FAILING_TEST, "01")
    for label in ("mine", "wrong"):
        row = only(report, label)
        assert row.outcome is Outcome.FAILED, (label, row)
        assert "assert" in row.cause


@pytest.mark.skipif(not sandboxed(), reason="the runs look alike from inside only in the sandbox (same mount points)")
def test_both_runs_look_the_same_from_inside_the_test(book: WorkbookCopy, tmp_path: Path) -> None:
    forge = forge_with(book, tmp_path)
    report = run_transfer(book, forge, TRANSFER_01, PROBE_TEST, "01")
    mine, wrong = only(report, "mine"), only(report, "wrong")
    assert mine.outcome is wrong.outcome is Outcome.FAILED
    assert mine.cause.startswith("AssertionError: probe ValueError "), mine.cause  # forge was called, and raised
    assert mine.cause == wrong.cause  # the same module, files, paths, traceback: one digest
    # the learner still reads where their code raised: the judge adds it to the detail, outside the test's reach
    assert 'File "forge/instructions.py", line' in mine.detail


def test_forge_cannot_reach_into_the_test_through_a_callback(book: WorkbookCopy, tmp_path: Path) -> None:
    forge = forge_with(book, tmp_path, "forge/prompt_regression.py", REACHING_FORGE)
    report = run_transfer(book, forge, TRANSFER_07, REACHING_TEST, "07")
    row = only(report, "mine")
    assert row.outcome is Outcome.FAILED
    assert "anything but this" in row.detail and "REACHED" not in row.cause, row.detail
    for name in ("__globals__", "__builtins__", "__code__", "_server"):
        assert f"refused {name} AttributeError" in row.printed, row.printed


def test_a_test_can_call_only_what_the_interface_offers(book: WorkbookCopy, tmp_path: Path) -> None:
    forge = forge_with(book, tmp_path, "forge/instructions.py", "\n\ndef _hidden():\n    return 'hidden'\n")
    report = run_transfer(book, forge, TRANSFER_01, RAW_FRAMES_TEST, "01")
    rows = report.for_target("mine")
    assert len(rows) == 6 and all(row.outcome is Outcome.PASSED for row in rows), [(r.name, r.cause) for r in rows]


def test_an_endless_loop_in_forge_is_a_timeout_of_that_test_with_the_cpu_limit_named(book: WorkbookCopy,
                                                                                   tmp_path: Path) -> None:
    forge = forge_with(book, tmp_path, "forge/instructions.py", LOOPING_FORGE)
    test_text = FAILING_TEST + '''

def test_after_the_loop() -> None:
    assert resolve is not None
'''
    report = run_transfer(book, forge, TRANSFER_01, test_text, "01")
    rows = {row.name: row for row in report.for_target("mine")}
    looping = rows["test_a_wrong_expectation"]
    assert looping.outcome is Outcome.TIMEOUT and looping.limit is Limit.CPU, looping
    assert "more than 2 s of CPU time" in looping.cause
    assert "looping now" in looping.printed
    assert rows["test_after_the_loop"].outcome is Outcome.PASSED  # the next test gets a fresh host
    wrong = {row.name: row.outcome for row in report.for_target("wrong")}
    assert wrong == {"test_a_wrong_expectation": Outcome.FAILED, "test_after_the_loop": Outcome.PASSED}  # no loop there


def test_a_callback_that_changes_its_argument_changes_forges_object(book: WorkbookCopy, tmp_path: Path) -> None:
    """The payload crosses as data, so without copy-restore a shallow copy in forge would go unnoticed."""
    deep = run_transfer(book, forge_with(book, tmp_path / "deep"), TRANSFER_07, CHANGING_CALLBACK_TEST, "07")
    assert only(deep, "mine").outcome is Outcome.PASSED, only(deep, "mine")
    shallow_forge = forge_with(book, tmp_path / "shallow")
    module = shallow_forge / "prompt_regression.py"
    text = module.read_text(encoding="utf-8")
    assert "invoke(copy.deepcopy(case.payload))" in text
    module.write_text(text.replace("invoke(copy.deepcopy(case.payload))", "invoke(dict(case.payload))"), encoding="utf-8")
    shallow = run_transfer(book, shallow_forge, TRANSFER_07, CHANGING_CALLBACK_TEST, "07")
    row = only(shallow, "mine")
    assert row.outcome is Outcome.FAILED and "b.ts" in row.detail, row


def test_without_the_sandbox_the_test_still_runs_in_its_own_process(book: WorkbookCopy, tmp_path: Path) -> None:
    """A learner on macOS (no bubblewrap): two plain child processes, the same verdicts."""
    solution = (book.root / "solutions" / "transfer" / "test_01_instruction_hierarchy.py").read_text(encoding="utf-8")
    forge = forge_with(book, tmp_path, "forge/instructions.py", REPORT_PATCH)
    report = run_transfer(book, forge, TRANSFER_01, solution, "01", plain=True)
    assert only(report, "mine").outcome is Outcome.PASSED
    assert only(report, "wrong").outcome is Outcome.FAILED
    assert report.sandbox.startswith("sandbox: none")
    looping = run_transfer(book, forge_with(book, tmp_path / "loop", "forge/instructions.py", LOOPING_FORGE),
                           TRANSFER_01, FAILING_TEST, "01", plain=True)
    row = only(looping, "mine")
    assert row.outcome is Outcome.TIMEOUT and row.limit is Limit.CPU, row


def test_a_syntax_error_in_the_test_file_names_its_line(book: WorkbookCopy, tmp_path: Path) -> None:
    broken = "from forge.instructions import resolve\n\n\ndef test_broken(:\n    assert resolve\n"
    report = run_transfer(book, forge_with(book, tmp_path), TRANSFER_01, broken, "01")
    causes = [error.cause for error in report.collect_errors if error.target == "mine"]
    assert causes and causes[0].startswith("line 4: SyntaxError"), causes
