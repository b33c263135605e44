"""`forgelab grade --shard K/N` and `forgelab gradebook merge`: the shards of a batch, merged, are the
batch graded in one run — the same grade rows, the same CSV files, the same feedback page names
and pages — also for two submissions whose names map to the same file name ("alice smith" and
"alice-smith"), which the two shards grade apart.

The batch (seven submissions, stage 01) is graded three times once per test session: in one run,
and as shard 1/2 and shard 2/2 into two folders that are then merged.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli
from grading_fixtures import shared, shared_submissions

# one xdist worker takes the whole module: a second worker with one of its tests only waited for the shared runs
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("grading-shards")]

CHOSEN = ("correct", "wrong", "syntax", "trivial", "hand-edited")
TWINS = {"alice smith": "correct", "alice-smith": "wrong"}  # two names, one file name
ARGS = ("--stages", "01", "--jobs", "2", "--cpu-limit", "2")


def _tables(out: Path) -> dict[str, list[tuple[Any, ...]]]:
    connection = sqlite3.connect(out / "gradebook.sqlite")
    try:
        return {
            "grades": list(connection.execute("SELECT * FROM grades ORDER BY submission, stage, item_order")),
            "submissions": list(connection.execute("SELECT * FROM submissions ORDER BY submission")),
            "runs": list(connection.execute("SELECT stages, jobs, network, submissions, sandbox, shard FROM runs "
                                            "ORDER BY shard")),
            "timed": sorted({row[0] for row in connection.execute("SELECT submission FROM timings")}),
        }
    finally:
        connection.close()


def _files(out: Path) -> dict[str, str]:
    return {path.relative_to(out).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(out.rglob("*")) if path.suffix in (".csv", ".html")}


def _grade_in_shards(submissions: dict[str, Any], folder: Path) -> dict[str, Any]:
    paths = [submissions["paths"][name] for name in CHOSEN]
    for twin, source in TWINS.items():
        shutil.copytree(submissions["paths"][source], folder / "twins" / twin)
        paths.append(str(folder / "twins" / twin))
    runs = {}
    for name, extra in (("single", ()), ("shard-1", ("--shard", "1/2")), ("shard-2", ("--shard", "2/2"))):
        done = run_cli(ROOT, "grade", *paths, "--out", str(folder / name), *ARGS, *extra, timeout=800)
        runs[name] = {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
    merged = run_cli(ROOT, "gradebook", "merge", str(folder / "shard-1"), str(folder / "shard-2"),
                     "--into", str(folder / "merged"), timeout=300)
    runs["merge"] = {"returncode": merged.returncode, "stdout": merged.stdout, "stderr": merged.stderr}
    return {"runs": runs, **{name: str(folder / name) for name in ("single", "shard-1", "shard-2", "merged")}}


@pytest.fixture(scope="session")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    submissions = shared_submissions(tmp_path_factory)
    return shared(tmp_path_factory, "shards", lambda folder: _grade_in_shards(submissions, folder))


def test_every_shard_run_and_the_merge_succeed(sharded: dict[str, Any]) -> None:
    for name, run in sharded["runs"].items():
        assert run["returncode"] == 0, (name, run["stdout"][-2000:], run["stderr"][-2000:])
        assert "Traceback" not in run["stdout"] + run["stderr"]
    assert "shard 1/2: 4 of 7 submission(s)" in sharded["runs"]["shard-1"]["stdout"]
    assert "shard 2/2: 3 of 7 submission(s)" in sharded["runs"]["shard-2"]["stdout"]
    assert "forgelab gradebook merge" in sharded["runs"]["shard-1"]["stdout"]  # the next step
    assert "merged 2 shard(s): 7 submission(s), 7 feedback page(s)" in sharded["runs"]["merge"]["stdout"]


def test_the_shards_grade_disjoint_halves(sharded: dict[str, Any]) -> None:
    first = {row[0] for row in _tables(Path(sharded["shard-1"]))["submissions"]}
    second = {row[0] for row in _tables(Path(sharded["shard-2"]))["submissions"]}
    assert not first & second
    assert first | second == set(CHOSEN) | set(TWINS)
    assert {"alice smith", "alice-smith"} & first and {"alice smith", "alice-smith"} & second  # the twins part


def test_merged_shards_give_the_rows_of_a_single_run(sharded: dict[str, Any]) -> None:
    single, merged = _tables(Path(sharded["single"])), _tables(Path(sharded["merged"]))
    assert len(single["grades"]) == 7 * (len(CHOSEN) + len(TWINS))
    assert merged["grades"] == single["grades"]
    assert merged["submissions"] == single["submissions"]  # digests, sources and feedback page names
    assert merged["timed"] == single["timed"]  # every submission's timings came along
    assert [run[-1] for run in merged["runs"]] == ["1/2", "2/2"]
    assert {run[:3] + run[4:5] for run in merged["runs"]} == {single["runs"][0][:3] + single["runs"][0][4:5]}


def test_merged_shards_give_the_csv_files_and_feedback_pages_of_a_single_run(sharded: dict[str, Any]) -> None:
    single, merged = _files(Path(sharded["single"])), _files(Path(sharded["merged"]))
    assert sorted(merged) == sorted(single)
    for name in single:
        assert merged[name] == single[name], name


def test_two_names_for_one_file_name_get_two_pages(sharded: dict[str, Any]) -> None:
    pages = {row[0]: row[4] for row in _tables(Path(sharded["merged"]))["submissions"]}
    assert pages["alice smith"] == "alice-smith.html" and pages["alice-smith"] == "alice-smith-2.html"
    feedback = Path(sharded["merged"]) / "feedback"
    assert "Feedback for alice smith<" in (feedback / "alice-smith.html").read_text(encoding="utf-8")
    assert "Feedback for alice-smith<" in (feedback / "alice-smith-2.html").read_text(encoding="utf-8")
    assert len(list(feedback.glob("*.html"))) == len(CHOSEN) + len(TWINS)
