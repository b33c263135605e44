"""Issue 30 (6): `forgelab gradebook merge` refuses what is missing or changed.

Every finished grading run seals its gradebook (forgelab/grading/seal.py: a digest over the rows and the run
parameters, ``gradebook-seal.json``). A merge exits 2 naming a shard of the split that was not given, a shard whose
rows no longer match its seal, and a shard with no seal (a run that did not finish); ``--allow-partial`` merges
without the missing shards and the merged gradebook says "partial" in both CSV files and the class report.
The shards here are written through the gradebook's own API (one submission each), as a grading run writes them.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import ROOT, run_cli

from forgelab.grading import gradebook, seal
from forgelab.grading.rubric import GradeItem

SETTINGS = json.dumps({"sandbox": "required", "test_cpu_s": 10, "language": "en"}, sort_keys=True)


def _shard(folder: Path, submission: str, shard: str, sealed: bool = True) -> Path:
    folder.mkdir(parents=True)
    connection = gradebook.open_gradebook(folder / gradebook.FILENAME)
    try:
        run = gradebook.start_run(connection, started_at="2026-03-02T09:00:00Z", tool_version="0.1.0",
                                  course_version="0.1.0", stages="01", jobs=1, network="none", submissions=1,
                                  sandbox="sandbox: bubblewrap", shard=shard, settings=SETTINGS)
        gradebook.record(connection, run, gradebook.SubmissionRecord(submission, "0" * 64, f"/x/{submission}", "folder"),
                         [GradeItem(submission, "01", "stage_tests", 10, 40, "partial", "2 of 8 required tests pass")],
                         [])
        gradebook.finish_run(connection, run, "2026-03-02T09:01:00Z")
        if sealed:
            seal.write(connection, folder)
    finally:
        connection.close()
    return folder


def _four(tmp_path: Path) -> list[Path]:
    return [_shard(tmp_path / f"shard-{k}", name, f"{k}/4") for k, name in enumerate(("ana", "bo", "cai", "dee"), 1)]


def test_merge_of_every_sealed_shard_succeeds_and_is_sealed_itself(tmp_path: Path) -> None:
    shards = _four(tmp_path)
    done = run_cli(ROOT, "gradebook", "merge", *map(str, shards), "--into", str(tmp_path / "all"))
    assert done.returncode == 0, done.output
    assert "shards read: 1/4, 2/4, 3/4, 4/4" in done.stdout and "partial" not in done.stdout
    header = (tmp_path / "all" / gradebook.CSV_NAME).read_text(encoding="utf-8").splitlines()[0]
    assert header == ",".join(gradebook.CSV_COLUMNS)  # a whole gradebook has no partial column
    seal.check(tmp_path / "all", tmp_path / "all" / gradebook.FILENAME)  # the merged gradebook can be merged again


def test_merge_with_three_of_four_shards_exits_2_naming_the_missing_one(tmp_path: Path) -> None:
    shards = _four(tmp_path)
    done = run_cli(ROOT, "gradebook", "merge", *map(str, shards[:2] + shards[3:]), "--into", str(tmp_path / "all"))
    assert done.returncode == 2, done.output
    assert "shard(s) 3/4 of this split are missing" in done.stderr and "--allow-partial" in done.stderr
    assert not (tmp_path / "all" / gradebook.CSV_NAME).exists()


def test_a_shard_edited_after_grading_is_refused_by_name(tmp_path: Path) -> None:
    shards = _four(tmp_path)
    edited = sqlite3.connect(shards[1] / gradebook.FILENAME)
    with edited:
        edited.execute("UPDATE grades SET points = 40, outcome = 'passed'")  # full marks by hand
    edited.close()
    done = run_cli(ROOT, "gradebook", "merge", *map(str, shards), "--into", str(tmp_path / "all"))
    assert done.returncode == 2, done.output
    assert f"the rows of {shards[1]} no longer match its seal" in done.stderr, done.stderr
    assert not (tmp_path / "all" / gradebook.FILENAME).exists()


def test_a_changed_run_parameter_or_an_unsealed_shard_is_refused_by_name(tmp_path: Path) -> None:
    shards = _four(tmp_path)
    edited = sqlite3.connect(shards[2] / gradebook.FILENAME)
    with edited:
        edited.execute("UPDATE runs SET course_version = '0.0.9'")
    edited.close()
    done = run_cli(ROOT, "gradebook", "merge", *map(str, shards), "--into", str(tmp_path / "all"))
    assert done.returncode == 2 and f"the rows of {shards[2]} no longer match its seal" in done.stderr, done.output
    unsealed = _shard(tmp_path / "interrupted", "eve", "4/4", sealed=False)
    done = run_cli(ROOT, "gradebook", "merge", *map(str, shards[:2]), str(unsealed), "--into", str(tmp_path / "b"))
    assert done.returncode == 2 and f"{unsealed} has no {seal.SEAL_NAME}" in done.stderr, done.output


def test_allow_partial_marks_the_csv_files_and_the_report_partial(tmp_path: Path) -> None:
    shards = _four(tmp_path)
    into = tmp_path / "partial"
    done = run_cli(ROOT, "gradebook", "merge", *map(str, shards[:3]), "--into", str(into), "--allow-partial")
    assert done.returncode == 0, done.output
    assert "partial (--allow-partial): shard(s) 4/4 of this split are missing" in done.stdout
    for name in (gradebook.CSV_NAME, gradebook.TOTALS_NAME):
        lines = (into / name).read_text(encoding="utf-8").splitlines()
        assert lines[0].endswith(",partial"), (name, lines[0])
        assert len(lines) > 1 and all(line.endswith(",partial: shard(s) 4/4 missing") for line in lines[1:]), lines
    done = run_cli(ROOT, "grade", "report", str(into), "--html", "--min-class", "1")
    assert done.returncode == 0, done.output
    report = json.loads((into / "report" / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is True and report["missing_shards"] == ["4/4"]
    page = (into / "report" / "report.html").read_text(encoding="utf-8")
    assert 'id="partial"' in page and "shard(s) 4/4 were missing" in page
