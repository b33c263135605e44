"""The notebook's words say what is true (issue 20, item 9): `lab.summary()` never calls the evidence done while the
stage is not accepted, and the "Why does it fail?" picker is offered only for failing tests."""

from __future__ import annotations

import pytest

from conftest import ROOT, WorkbookCopy

KEY = "01-instruction-hierarchy"


@pytest.fixture
def tools(workbook: WorkbookCopy, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from forgelab.learner.notebook import stage_tools

    monkeypatch.setenv("FORGELAB_ROOT", str(workbook.root))
    monkeypatch.delenv("FORGELAB_WORKSPACE", raising=False)
    monkeypatch.delenv("FORGELAB_TARGET", raising=False)
    monkeypatch.setenv("FORGELAB_WIDTH", "110")
    return lambda target=None: stage_tools("01", target, lang="en")


def _evidence_row(output: str) -> str:
    return next(line for line in output.splitlines() if "evidence" in line and line.startswith("  "))


def test_the_summary_does_not_call_unaccepted_evidence_done(tools, workbook: WorkbookCopy, capsys) -> None:  # noqa: ANN001
    lab = tools()
    lab.summary()
    row = _evidence_row(capsys.readouterr().out)
    assert row.split()[:2] == ["open", "evidence"] and "not written yet" in row
    lab.write_evidence()  # the starter: evidence written, not accepted
    capsys.readouterr()
    lab.summary()
    out = capsys.readouterr().out
    row = _evidence_row(out)
    assert row.split()[:2] == ["open", "evidence"] and "written: not accepted" in row, out
    assert "done evidence" not in out and "Still open:" in out


def test_the_summary_lists_the_diagnosis_apart_from_the_fix(tools, workbook: WorkbookCopy, capsys) -> None:  # noqa: ANN001
    (workbook.root / "forge/instructions.py").write_bytes((ROOT / "solutions/forge/instructions.py").read_bytes())
    assert workbook.run("fault", "start", "01").returncode == 0
    (workbook.root / f"labs/{KEY}/forge/instructions.py").write_bytes(
        (ROOT / "solutions/forge/instructions.py").read_bytes())
    assert workbook.run("fault", "check", "01").returncode == 0
    tools().summary()
    out = capsys.readouterr().out
    assert any(line.split()[:3] == ["done", "fault", "lab"] for line in out.splitlines()), out
    assert any(line.split()[:2] == ["open", "diagnosis"] for line in out.splitlines()), out
    assert "forgelab fault diagnose 01" in out


def test_why_is_offered_only_for_failing_tests(tools, capsys) -> None:  # noqa: ANN001
    import ipywidgets as widgets

    passing = tools("solution")
    passing.run_tests()
    capsys.readouterr()
    shown = passing.why()
    assert isinstance(shown, widgets.HTML) and "All 13 tests pass: there is no failure to explain" in shown.value

    starter = tools()
    before = starter.why()  # no test run yet: every test can be shown, without claiming it fails
    picker, button = before.children[0].children
    assert list(picker.options) == list(starter.stage.required_tests) and button.description == "Show its whole result"
    starter.run_tests()
    capsys.readouterr()
    picker, button = starter.why().children[0].children
    assert button.description == "Why does it fail?"
    assert "test_instructions_are_immutable" not in picker.options  # it passes on the starter
    assert "test_lower_trust_instruction_cannot_override_system" in picker.options


def test_evidence_accepted_earlier_is_not_done_while_a_part_is_open(tools, capsys) -> None:  # noqa: ANN001
    tools("solution").write_evidence()  # a verification.json that says accepted (the reference's)
    capsys.readouterr()
    tools().summary()  # the learner's starter: every part open now
    row = _evidence_row(capsys.readouterr().out)
    assert row.split()[:2] == ["open", "evidence"] and "accepted then; a part is open now" in row, row
