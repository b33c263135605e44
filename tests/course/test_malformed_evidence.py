"""A malformed verification.json is never a traceback and never "accepted" (issue 32): status (and watch, which asks
status which stage to open), the notebook's card and summary, and grading read it through its model
(forgelab.core.verification) and say "unreadable: run check again" — in both editions."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, WorkbookCopy

from forgelab.core import verification
from forgelab.core.i18n import speaking
from forgelab.core.registry import load_course

KEY = "01-instruction-hierarchy"
EVIDENCE = f"evidence/prompt-context-output/{KEY}/verification.json"
# the four shapes the issue names: another JSON value, a key of the wrong type, a lone claim, not JSON at all
SHAPES = {"list": "[1, 2]", "digests-list": '{"digests": []}', "accepted-alone": '{"accepted": true}',
          "not-json": '{"accepted": tr'}


@pytest.fixture
def tools(workbook: WorkbookCopy, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from forgelab.learner.notebook import stage_tools

    monkeypatch.setenv("FORGELAB_ROOT", str(workbook.root))
    monkeypatch.delenv("FORGELAB_WORKSPACE", raising=False)
    monkeypatch.delenv("FORGELAB_TARGET", raising=False)
    monkeypatch.setenv("FORGELAB_WIDTH", "110")
    return lambda lang="en": stage_tools("01", lang=lang)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_status_and_watch_call_a_malformed_file_unreadable(workbook: WorkbookCopy, shape: str) -> None:
    from forgelab.core.paths import Workbook
    from forgelab.learner.status import evidence_cell

    workbook.write(EVIDENCE, SHAPES[shape])
    course = load_course(workbook.root)
    assert evidence_cell(Workbook(workbook.root, workbook.root), course.stage("01")) == "unreadable"
    with pytest.raises(verification.Unreadable):
        verification.read(workbook.root / EVIDENCE)


@pytest.mark.parametrize("lang, words", [("en", "unreadable: run check again"), ("zh", "无法读取：请重新运行 check")])
def test_the_status_command_says_unreadable_in_both_editions(workbook: WorkbookCopy, lang: str, words: str) -> None:
    workbook.write(EVIDENCE, SHAPES["list"])
    done = workbook.run("--lang", lang, "status")
    assert done.returncode in (0, 1) and "Traceback" not in done.output, done.output
    row = next(line for line in done.stdout.splitlines() if line.startswith("01"))
    assert words in row, done.stdout


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_notebook_card_calls_a_malformed_file_unreadable(tools, workbook: WorkbookCopy, shape: str,  # noqa: ANN001
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    workbook.write(EVIDENCE, SHAPES[shape])
    tools().card()
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("acceptance"))
    assert row.split(None, 1)[1] == "unreadable: run check again", row
    with speaking("zh"):  # the Chinese notebook's tools keep their language: only for this card
        tools("zh").card()
    assert "无法读取：请重新运行 check" in capsys.readouterr().out


@pytest.mark.parametrize("shape", ["list", "accepted-alone"])
def test_the_notebook_summary_calls_a_malformed_file_unreadable(tools, workbook: WorkbookCopy, shape: str,  # noqa: ANN001
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    workbook.write(EVIDENCE, SHAPES[shape])
    tools().summary()
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.split()[1:2] == ["evidence"])
    assert row.split()[:2] == ["open", "evidence"] and row.endswith("unreadable: run check again"), out
    assert "accepted" not in row


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_grading_finds_a_malformed_file_unreadable_and_flags_it(tmp_path: Path, shape: str) -> None:
    from forgelab.grading import consistency
    from forgelab.grading.rubric import ERROR, REVIEW

    stage = load_course(ROOT).stage("01")
    home = tmp_path / "home"
    (home / EVIDENCE).parent.mkdir(parents=True)
    (home / EVIDENCE).write_text(SHAPES[shape], encoding="utf-8")
    seen = {key: True for key in consistency.ACCEPTANCE_LABELS}
    with speaking("en"):  # a notebook made earlier in this process may have left another language active
        finding = consistency.check(stage, ROOT, home, None, (), seen)
    assert (finding.outcome, finding.flag) == (ERROR, REVIEW), finding
    assert f"{stage.evidence_dir}/verification.json is unreadable (" in finding.reason
    assert "forgelab check 01" in finding.reason


def test_a_written_file_reads_back_through_the_model_byte_for_byte(workbook: WorkbookCopy) -> None:
    """What check writes is the model's document: read back and dumped, it is the same JSON, and its seal holds."""
    import json

    assert workbook.run("check", "01", "--target", "solution").returncode == 0
    path = workbook.root / EVIDENCE
    read = verification.read(path)
    assert read.accepted and verification.intact(read)
    assert verification.document(read) == json.loads(path.read_text(encoding="utf-8"))
