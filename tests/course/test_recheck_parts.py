"""The notebook's re-check on save shows the stage tests' verdict first and judges the slow parts next, only when their
files changed (issue 32), as watch mode does — and what a partial check leaves behind stays true: a transfer verdict
judged on the files as they were before a save is never remembered for ``status`` as the verdict on the files as they
are, and evidence written after a partial check judges again every part whose files changed.

The workbook is the grading suite's correct submission of stages 01, 05 and 07 (module, transfer test, fault lab
repaired and diagnosed, design answer): the state a learner is in at the end of a stage.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import WorkbookCopy, wait_until
from finished_stages import workbook  # noqa: F401 - the fixture, used by name
from grading_fixtures import MODULE

WAIT_S = 240  # a check on a crowded 2-CPU machine, with room to spare
EVERY_RUN = {"target", "lab", "known-wrong", "regression-fixed", "regression-broken"}


def _ran(outcome: Any) -> set[str]:
    """The judge's targets that ran in this check (a part taken from an earlier check ran nothing)."""
    return {row.target for row in outcome.report.rows}


def _comparable(document: dict[str, Any]) -> dict[str, Any]:
    document = {key: value for key, value in document.items() if key not in ("checked_at", "integrity")}
    document["tests"] = [{k: v for k, v in row.items() if k != "duration_ms"} for row in document["tests"]]
    return document


def test_a_partial_check_keeps_no_stale_transfer_and_evidence_after_it_is_true(workbook: WorkbookCopy) -> None:
    from forgelab.core import verification
    from forgelab.core.paths import Workbook
    from forgelab.core.registry import load_course
    from forgelab.learner import state
    from forgelab.learner.check import TESTS, TRANSFER
    from forgelab.learner.status import stage_key
    from forgelab.learner.workbench import Workbench

    root = workbook.root
    bench = Workbench(Workbook(root=root, workspace=root), load_course(root))
    stage = bench.course.stage("01")
    whole = bench.check(stage)
    assert whole.accepted and _ran(whole) == EVERY_RUN and not whole.stale
    # the module saved as the known-wrong one: its stage tests fail, and so does the transfer test on it
    (root / MODULE).write_bytes((root / stage.fault_variant).read_bytes())
    first = bench.check(stage, parts=frozenset({TESTS}), write=False, record=False)
    assert _ran(first) == {"target"} and first.stale == frozenset({TRANSFER})
    assert first.transfer.status == "passed"  # the verdict on the files before the save, shown as still being judged
    bench.record(first, write=False)
    key = stage_key(bench.course, bench.workbook, stage)
    assert getattr(state.remembered_status(bench.workbook, stage.number), "key", None) != key  # not kept as now's
    # evidence written next, even by a check asked for the tests only, judges the transfer test on the saved module
    written = bench.check(stage, parts=frozenset({TESTS}))
    assert written.stale == frozenset() and "target" in _ran(written)
    assert written.transfer.status != "passed" and not written.accepted
    on_disk = verification.read(root / stage.evidence_file)
    assert on_disk.transfer.status == written.transfer.status
    fresh = Workbench(Workbook(root=root, workspace=root), load_course(root)).check(stage, write=False, record=False)
    assert _comparable(written.document) == _comparable(fresh.document)
    remembered = state.remembered_status(bench.workbook, stage.number)
    assert remembered is not None and remembered.key == key and remembered.transfer == written.transfer.status


@pytest.fixture
def tools(workbook: WorkbookCopy, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("FORGELAB_ROOT", str(workbook.root))
    monkeypatch.setenv("FORGELAB_WORKSPACE", str(workbook.root))
    from forgelab.learner.notebook import stage_tools

    made = stage_tools("01", lang="en")
    yield made
    made._stop_rechecking()


def test_the_notebook_recheck_shows_the_tests_first_then_judges_only_what_changed(
        tools: Any, workbook: WorkbookCopy, monkeypatch: pytest.MonkeyPatch) -> None:
    from forgelab.learner import state
    from forgelab.learner.status import stage_key

    shown: list[Any] = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    checks: list[tuple[set[str], set[str]]] = []  # per check: what was asked for, what the judge ran
    checked = tools.bench.check

    def check(*args: Any, **kwargs: Any) -> Any:
        outcome = checked(*args, **kwargs)
        checks.append((set(kwargs.get("parts", ())), _ran(outcome)))
        return outcome

    monkeypatch.setattr(tools.bench, "check", check)
    tools.recheck_on_save()
    (box,) = shown
    toggle, live = box.children
    seen: list[str] = []
    live.observe(lambda change: seen.append(change["new"]), names="value")
    toggle.value = True
    wait_until(lambda: "every save of forge/instructions.py checks again" in live.value or None, timeout=WAIT_S,
               what="the first re-check")
    assert checks == [({"tests"}, EVERY_RUN)]  # nothing judged before in this kernel: the whole check
    assert "required tests: 13/13 passed" in live.value
    del checks[:], seen[:]
    module = workbook.root / MODULE
    module.write_text(module.read_text(encoding="utf-8") + "\n# saved again\n", encoding="utf-8")
    wait_until(lambda: "re-checked after saving forge/instructions.py; the next save" in live.value or None,
               timeout=WAIT_S, what="the re-check after the save")
    # the stage tests alone first, their table on screen while the transfer test was judged; then the transfer test on
    # the saved forge/ only (its run on the known-wrong module and the fault lab's runs read no file that changed)
    assert checks == [({"tests"}, {"target"}), ({"transfer"}, {"target"})], checks
    pending = [value for value in seen if "still judging: transfer" in value]
    assert pending and "stage tests re-checked after saving forge/instructions.py" in pending[0]
    assert "required tests: 13/13 passed" in pending[0]
    assert seen.index(pending[0]) < len(seen) - 1 and "still judging" not in live.value
    # what status remembers is the verdict on the files as they are now, once every part was judged on them
    key = stage_key(tools.bench.course, tools.bench.workbook, tools.stage)
    remembered = wait_until(lambda: (entry if (entry := state.remembered_status(tools.bench.workbook, "01")) is not None
                                     and entry.key == key else None), timeout=WAIT_S, what="the re-check's records")
    assert remembered.transfer == "passed"
