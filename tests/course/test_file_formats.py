"""Every JSON file forgelab reads has a Pydantic model: a malformed one gets one line naming the file, the field and
what to do — never a traceback, never a silent guess (forgelab/core/fileformat.py).

The formats: a checkpoint pack's manifest.json, the workspace state (.forgelab/state.json), a backup's backup.json, and
the project driver's request and answer.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, WorkbookCopy

from forgelab.core.checkpoint import MANIFEST, PackError, manifest_for, pack_bytes, read_pack
from forgelab.core.paths import Workbook
from forgelab.learner import backups, state


# ---------------------------------------------------------------- checkpoint manifest
def _pack(course, tmp_path: Path, change) -> Path:  # type: ignore[no-untyped-def]
    """A checkpoint pack of stages 01–02 whose manifest went through ``change`` (a dict → None)."""
    modules = {stage.number: (stage.module, (ROOT / "solutions" / stage.module).read_bytes())
               for stage in course.stages if stage.number <= "02"}
    good = pack_bytes("02", manifest_for(course, "02", modules, "abc"), modules)
    files = {}
    with zipfile.ZipFile(io.BytesIO(good)) as archive:
        files = {info.filename: archive.read(info) for info in archive.infolist()}
    name = f"forge-workbook-checkpoint-02/{MANIFEST}"
    manifest = json.loads(files[name])
    change(manifest)
    files[name] = json.dumps(manifest).encode()
    path = tmp_path / "forge-workbook-checkpoint-02.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for entry, data in files.items():
            archive.writestr(entry, data)
    return path


@pytest.mark.parametrize(("change", "field", "problem"), [
    (lambda manifest: manifest["modules"][1].pop("sha256"), "modules[1].sha256", "missing"),
    (lambda manifest: manifest["modules"][0].update(sha256=7), "modules[0].sha256", "valid string"),
    (lambda manifest: manifest.update(checkpoint=2), "checkpoint", "valid string"),
    (lambda manifest: manifest.update(signed_by="me"), "signed_by", "not a field of this file"),
    (lambda manifest: manifest.update(format="forge-workbook-checkpoint/2"), "format",
     "expected 'forge-workbook-checkpoint/1'"),
])
def test_a_malformed_manifest_names_the_file_the_field_and_what_to_do(course, tmp_path: Path, change, field: str,
                                                                      problem: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PackError) as refused:
        read_pack(_pack(course, tmp_path, change), course)
    message = str(refused.value)
    assert message.startswith(f"forge-workbook-checkpoint-02.zip/manifest.json: {field}: "), message
    assert problem in message and "download it again" in message


# ---------------------------------------------------------------- .forgelab/state.json
@pytest.mark.parametrize(("content", "field"), [
    ('{"hints": {"03": "two"}}', "hints.03"),
    ('{"fault_lab": {"02": {"status": "fixed"}}}', "fault_lab.02.file_sha256"),
    ('{"predictions": {"01": {"choice": 1, "correct": "false"}}}', "predictions.01.correct"),
    ('{"hints": {}, "hnits": {}}', "hnits"),
    ('{"hints": ', "the whole document"),
])
def test_a_malformed_state_is_named_set_aside_and_started_afresh(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 content: str, field: str) -> None:
    workbook = Workbook(tmp_path, tmp_path)
    path = tmp_path / ".forgelab" / "state.json"
    path.parent.mkdir()
    path.write_text(content, encoding="utf-8")
    assert state.revealed_hints(workbook, "03") == ()
    said = capsys.readouterr().err
    assert f"state.json: {field}: " in said, said
    assert "edited by hand" in said and "set aside as state.damaged.json" in said
    assert (tmp_path / ".forgelab" / "state.damaged.json").read_text(encoding="utf-8") == content
    state.hide_fault_hints(workbook, "03")  # a fresh state is written, and read back without a word
    assert state.fault_hints_shown(workbook, "03") == 0 and capsys.readouterr().err == ""


def test_a_change_that_breaks_the_state_format_is_refused_before_it_is_written(tmp_path: Path) -> None:
    workbook = Workbook(tmp_path, tmp_path)
    state.hide_fault_hints(workbook, "01")
    with pytest.raises(ValueError, match="fault_hints"):
        state.modify(workbook, lambda data: data.fault_hints.__setitem__("01", "three"))
    assert state.fault_hints_shown(workbook, "01") == 0


# ---------------------------------------------------------------- a backup's backup.json
def test_a_malformed_backup_manifest_names_the_file_and_the_field(tmp_path: Path) -> None:
    workbook = Workbook(tmp_path, tmp_path)
    (tmp_path / "forge").mkdir()
    (tmp_path / "forge" / "instructions.py").write_text("x = 1\n", encoding="utf-8")
    taken = backups.take(workbook, "starter-01")
    assert json.loads((taken.path / "backup.json").read_text(encoding="utf-8")) == {"reason": "starter-01",
                                                                                    "whole_forge": True}
    (taken.path / "backup.json").write_text('{"reason": "starter-01", "whole_forge": "yes"}', encoding="utf-8")
    with pytest.raises(backups.BackupError) as refused:
        backups.plan_restore(workbook, taken.name)
    message = str(refused.value)
    assert f"{taken.name}/backup.json: whole_forge: " in message and "edited by hand" in message, message
    assert "forgelab backup list" in message


# ---------------------------------------------------------------- the project driver's request and answer
def test_the_driver_names_a_malformed_request_in_its_answer(tmp_path: Path) -> None:
    answer = tmp_path / "answer.json"
    done = subprocess.run([sys.executable, "-m", "forgelab.project.driver", str(answer), str(tmp_path)],
                          input='{"action": "extract", "scenario": "software"}', capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    error = json.loads(answer.read_text(encoding="utf-8"))["error"]
    assert error["kind"] == "usage"
    assert error["message"].startswith("the driver's request: extract.request: missing — ") and "report it" in error["message"]


def test_an_answer_file_the_learners_code_overwrote_is_named_not_a_traceback(workbook: WorkbookCopy) -> None:
    extractor = workbook.root / "forge" / "extractor.py"
    extractor.write_text(extractor.read_text(encoding="utf-8")
                         + '\nimport os, sys\nopen(sys.argv[1], "w").write(\'{"ok": "yes"}\')\nos._exit(0)\n',
                         encoding="utf-8")
    done = workbook.run("extract", "--scenario", "software", "add a search box")
    assert done.returncode != 0 and "Traceback" not in done.output, done.output
    assert "the extractor's answer file: ok: " in done.stderr, done.stderr
    assert "code in forge/ wrote into that file" in done.stderr
