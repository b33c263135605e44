"""Grading on a real Slurm cluster: the instructor guide's scripts, unchanged, on a one-node cluster the test starts.

``instructor/slurm/submit.sh`` submits ``instructor/slurm/grade-array.sbatch`` as a job array (four shards, the
script's own ``--array=1-4``) over the class of eight (``class_fixtures.py``, stages 01 and 05), and a job that
waits for every shard, merges them and writes the class report. The merged gradebook — its CSV files,
feedback pages, grade rows, test results and stage facts — must be byte for byte what one machine wrote
grading the same class in one run, and the report's figures the same. The cluster (munged, slurmctld, slurmd
on 127.0.0.1, as root, in the test's temporary folder) is stopped by PID at the end.

Skipped, with the reason, only where Slurm cannot run: not installed (``apt-get install slurm-wlm munge``; .ci/run
installs it) or not root. The instructor guide (docs/instructor.md, both editions) quotes the two scripts as they are
in the repository (tested here too).
The wall times of the array and of the one-machine run go to ``test-artifacts/slurm/wall-times.json``.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import slurm_cluster
from class_fixtures import NAMES, STAGES_ARG, shared_graded_class
from conftest import ROOT, cli_env

# The class is graded on one machine and on the cluster inside the module fixture: on a busy 2-CPU machine that takes
# several minutes, more than the suite's default 300 s per test (the fixture's own deadlines still bound every wait).
# ... and the cluster run is a module fixture: the module keeps to one xdist worker, or each worker that gets one of
# its tests would start a cluster and grade the class on it again (make test runs --dist loadgroup)
pytestmark = [pytest.mark.timeout(2400), pytest.mark.xdist_group("slurm")]

SCRIPTS = ("instructor/slurm/grade-array.sbatch", "instructor/slurm/submit.sh")
ARTIFACTS = ROOT / "test-artifacts" / "slurm"
SHARDS = 4


def _fenced_blocks(text: str) -> list[str]:
    return [match.group(1) for match in re.finditer(r"^```[a-z]*\n(.*?)^```$", text, re.S | re.M)]


@pytest.mark.parametrize("readme", ["docs/instructor.md", "docs/instructor.zh-CN.md"])
def test_the_readme_quotes_the_slurm_scripts_as_they_are(readme: str) -> None:
    blocks = _fenced_blocks((ROOT / readme).read_text(encoding="utf-8"))
    for script in SCRIPTS:
        text = (ROOT / script).read_text(encoding="utf-8")
        assert text in blocks, f"{readme} does not quote {script} verbatim in a code block: copy the file's text there"


def _slurm_time(text: str) -> _dt.datetime:
    return _dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S")


@pytest.fixture(scope="module")
def on_slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    reason = slurm_cluster.unavailable()
    if reason:
        pytest.skip(reason)
    graded = shared_graded_class(tmp_path_factory)
    assert graded["single"]["returncode"] == 0, graded["single"]["stdout"][-3000:] + graded["single"]["stderr"][-3000:]
    folder = tmp_path_factory.mktemp("slurm")
    cluster = slurm_cluster.start(folder / "cluster", cli_env(ROOT))
    try:
        grading = folder / "grading"
        started = time.monotonic()
        submitted = cluster.run(str(ROOT / SCRIPTS[1]), cwd=folder, env={
            "COURSE": str(ROOT), "SUBMISSIONS": graded["submissions"], "GRADING": str(grading), "STAGES": STAGES_ARG})
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr + cluster.logs()
        array = re.search(r"job array (\d+)", submitted.stdout)
        merge = re.search(r"job (\d+) \(runs when", submitted.stdout)
        assert array and merge, submitted.stdout
        cluster.jobs += [array.group(1), merge.group(1)]
        tasks = cluster.wait_for(cluster.jobs, deadline_s=1500)
        waited = time.monotonic() - started
        logs = {path.name: path.read_text(errors="replace") for path in sorted(grading.glob("slurm-*.out"))}
        yield {"graded": graded, "grading": grading, "tasks": tasks, "array": array.group(1), "merge": merge.group(1),
               "logs": logs, "submitted": submitted.stdout, "waited_s": round(waited, 1)}
    finally:
        stubborn = cluster.stop()
        assert not stubborn, f"{stubborn} did not stop on SIGTERM"


def test_every_shard_and_the_merge_succeed(on_slurm: dict[str, Any]) -> None:
    tasks = on_slurm["tasks"]
    shards = sorted(name for name in tasks if name.startswith(on_slurm["array"] + "_"))
    assert shards == [f"{on_slurm['array']}_{index}" for index in range(1, SHARDS + 1)], tasks.keys()
    for name, fields in tasks.items():
        assert (fields["JobState"], fields["ExitCode"]) == ("COMPLETED", "0:0"), (name, fields, on_slurm["logs"])
    for index in range(1, SHARDS + 1):
        log = on_slurm["logs"][f"slurm-{on_slurm['array']}_{index}.out"]
        assert f"shard {index}/{SHARDS}: 2 of 8 submission(s)" in log, log
        assert "Traceback" not in log
    merged = on_slurm["logs"][f"slurm-merge-{on_slurm['merge']}.out"]
    assert f"merged {SHARDS} shard(s): 8 submission(s), 8 feedback page(s)" in merged, merged
    assert "shards read: 1/4, 2/4, 3/4, 4/4" in merged and "of this split are missing" not in merged, merged


def _files(out: Path) -> dict[str, bytes]:
    return {path.relative_to(out).as_posix(): path.read_bytes() for path in sorted(out.rglob("*"))
            if path.suffix in (".csv", ".html") and "report" not in path.relative_to(out).parts}


def _tables(out: Path) -> dict[str, list[tuple[Any, ...]]]:
    connection = sqlite3.connect(out / "gradebook.sqlite")
    try:
        return {table: list(connection.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3"))
                for table in ("grades", "submissions", "tests", "facts")}
    finally:
        connection.close()


def test_the_merged_gradebook_is_the_one_machine_gradebook_byte_for_byte(on_slurm: dict[str, Any]) -> None:
    single, merged = Path(on_slurm["graded"]["single"]["out"]), on_slurm["grading"] / "all"
    one, many = _files(single), _files(merged)
    assert sorted(one) == sorted(many) and len([name for name in one if name.startswith("feedback/")]) == len(NAMES)
    for name in one:
        assert many[name] == one[name], f"{name} differs between the Slurm shards and the one-machine run"
    assert _tables(merged) == _tables(single)
    assert len(_tables(single)["tests"]) == len(NAMES) * (13 + 4 + 27 + 3)  # stage tests and instructor checks of 01, 05


def test_the_class_report_from_the_cluster_is_the_one_machine_report(on_slurm: dict[str, Any]) -> None:
    from conftest import run_cli

    single = Path(on_slurm["graded"]["single"]["out"])
    done = run_cli(ROOT, "grade", "report", str(single), timeout=300)
    assert done.returncode == 0, done.output
    alone = json.loads((single / "report" / "report.json").read_text(encoding="utf-8"))
    merged = json.loads((on_slurm["grading"] / "all" / "report" / "report.json").read_text(encoding="utf-8"))
    assert [run["shard"] for run in merged["shards"]] == [f"{index}/{SHARDS}" for index in range(1, SHARDS + 1)]
    assert [run["merged_from"] for run in merged["shards"]] == [
        str(on_slurm["grading"] / f"shard-{index}") for index in range(1, SHARDS + 1)]
    assert merged["missing_shards"] == [] and [run["shard"] for run in alone["shards"]] == [""]
    for key in ("shards",):
        merged.pop(key), alone.pop(key)
    assert merged == alone
    assert (on_slurm["grading"] / "all" / "report" / "report.html").is_file()


def test_wall_times_are_recorded(on_slurm: dict[str, Any]) -> None:
    tasks = on_slurm["tasks"]
    shards = [fields for name, fields in tasks.items() if name.startswith(on_slurm["array"] + "_")]
    first = min(_slurm_time(fields["StartTime"]) for fields in shards)
    last = max(_slurm_time(fields["EndTime"]) for fields in shards)
    merge = tasks[on_slurm["merge"]]
    times = {
        "one_machine_s": on_slurm["graded"]["single"]["wall_s"],
        "slurm_array_s": (last - first).total_seconds(),
        "slurm_shards_s": sorted((_slurm_time(f["EndTime"]) - _slurm_time(f["StartTime"])).total_seconds()
                                 for f in shards),
        "slurm_merge_and_report_s": (_slurm_time(merge["EndTime"]) - _slurm_time(merge["StartTime"])).total_seconds(),
        "submit_to_report_s": on_slurm["waited_s"],
        "node_cpus": "one node, the machine's CPUs (shards of --cpus-per-task=2 run one after another on 2 CPUs)",
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "wall-times.json").write_text(json.dumps(times, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(times))
    assert times["slurm_array_s"] > 0 and len(times["slurm_shards_s"]) == SHARDS
