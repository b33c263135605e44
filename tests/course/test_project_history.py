"""The regression history: created on first use, versioned, and written one whole run at a time."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from forgelab.project.history import (FILENAME, MIGRATIONS, SCHEMA_VERSION, CaseOutcome, History, HistoryError,
                                      text_sha256, version_id)

OUTCOMES = [CaseOutcome("software-a", "software", ()), CaseOutcome("office-a", "office", ("write permission changed",)),
            CaseOutcome("music-a", "music", ())]


def record(history: History, text: str = "prompt one", outcomes=OUTCOMES, target: str = "solution"):  # type: ignore[no-untyped-def]
    return history.record_run(text=text, label="one", target=target, model="mock", settings={"mode": "standard"},
                              outcomes=outcomes)


def test_the_file_is_created_on_first_use_with_the_current_schema(tmp_path: Path) -> None:
    state = tmp_path / "workspace" / ".forgelab"
    with History.open(state) as history:
        assert history.schema_version == SCHEMA_VERSION == max(MIGRATIONS)
        assert history.counts() == (0, 0, 0)
    assert (state / FILENAME).is_file()


def test_a_run_and_its_cases_are_stored_and_read_back(tmp_path: Path) -> None:
    with History.open(tmp_path) as history:
        run = record(history)
        assert (run.id, run.cases, run.failures, run.target, run.label) == (1, 3, 1, "solution", "one")
        assert run.sha256 == text_sha256("prompt one") and run.version_id == version_id("prompt one")
        assert run.version_id.startswith("p-") and len(run.version_id) == 14
        assert history.results(run.id) == {outcome.case_id: outcome for outcome in OUTCOMES}
        assert history.version(run.sha256).text == "prompt one"  # type: ignore[union-attr]


def test_the_same_prompt_text_is_one_version(tmp_path: Path) -> None:
    with History.open(tmp_path) as history:
        record(history)
        record(history)
        record(history, text="prompt two")
        assert history.counts() == (2, 3, 9)


def test_latest_runs_by_target_version_and_passing(tmp_path: Path) -> None:
    passing = [CaseOutcome("software-a", "software", ())]
    with History.open(tmp_path) as history:
        good = record(history, outcomes=passing)
        bad = record(history, text="prompt two")
        record(history, outcomes=passing, target="learner")
        assert history.latest_run("solution").id == bad.id  # type: ignore[union-attr]
        assert history.latest_run("solution", passing_only=True).id == good.id  # type: ignore[union-attr]
        assert history.latest_run("solution", text_sha256("prompt one")).id == good.id  # type: ignore[union-attr]
        assert history.latest_run("nobody") is None
        assert [v.label for v in history.find_versions(version_id("prompt two"))] == ["one"]
        assert history.find_versions(text_sha256("prompt one")[:8]) and not history.find_versions("p-zz")


def test_an_exception_in_the_middle_of_a_run_leaves_nothing(tmp_path: Path) -> None:
    def outcomes() -> Iterator[CaseOutcome]:
        yield OUTCOMES[0]
        yield OUTCOMES[1]
        raise RuntimeError("the suite crashed")

    with History.open(tmp_path) as history:
        record(history)
        with pytest.raises(RuntimeError, match="the suite crashed"):
            record(history, text="half a run", outcomes=outcomes())
        assert history.counts() == (1, 1, 3)
        assert history.find_versions(version_id("half a run")) == []


def test_a_killed_process_leaves_no_half_written_run(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        from forgelab.project.history import CaseOutcome, History

        def outcomes():
            for number in range(5):
                if number == 3:
                    os.kill(os.getpid(), signal.SIGKILL)  # die in the middle of the transaction
                yield CaseOutcome(f"case-{{number}}", "software", ())

        history = History.open(Path({str(tmp_path)!r}))
        history.record_run(text="killed", label="k", target="solution", model="mock", settings={{}}, outcomes=outcomes())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == -9, done.stderr
    with History.open(tmp_path) as history:
        assert history.counts() == (0, 0, 0)
        record(history)
        assert history.counts() == (1, 1, 3)


def test_an_older_file_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / FILENAME
    db = sqlite3.connect(path)
    for statement in MIGRATIONS[1]:
        db.execute(statement)
    db.execute("INSERT INTO prompt_versions VALUES ('abc', 'p-abc', 'old', 'old text', '2024-01-01T00:00:00Z')")
    db.execute("INSERT INTO runs (sha256, target, model, started_at, cases, failures) "
               "VALUES ('abc', 'solution', 'mock', '2024-01-01T00:00:00Z', 0, 0)")
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    with History(path) as history:
        assert history.schema_version == SCHEMA_VERSION
        [old] = history.runs()
        assert (old.label, old.settings) == ("old", "{}")


def test_a_newer_file_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / FILENAME
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 7}")
    db.close()
    with pytest.raises(HistoryError, match="newer than this forgelab knows"):
        History(path)


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / FILENAME
    path.write_text("this is not a database, " * 100, encoding="utf-8")
    with pytest.raises(HistoryError, match="not a usable regression history"):
        History(path)
