"""`forgelab grade` against submissions written to attack the grader (see hostile_submissions.py).

One batch — the control (the stage-01 same-rank mistake, stage 05 forgetting ``~~~`` fences) and one
submission per attack, each the control plus that attack — is built and graded once per test session
(``--stages 01,05,07 --jobs 2``),
from a copy of the course, while the test listens on a TCP port, a Unix socket and an abstract
socket. Right after grading it records every file, process and connection that carries the
session's token, then removes them. Every attack must then:

* gain nothing: on every item at most the control's points;
* leak nothing hidden: no line of the reference solutions the submission does not hold, of the
  instructor checks or of the mutants appears in the gradebook, the CSV files, the feedback pages
  or what ``forgelab grade`` printed;
* write nothing outside the sandbox's scratch (the course, ``--out``, the submissions, the host's
  /tmp, /var/tmp, /dev/shm, $HOME, the venv's site-packages);
* leave no process behind and reach no socket of the host;
* not stop the batch: every submission gets its 21 rows.

Attacks on the transfer item (forge code patching pytest, a test that fingerprints the module it is
given) must also leave that item as it is for the control: a transfer test never shares a process
with the forge it tests, and its two runs differ only in what forge does.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import signal
import socket
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, copy_workbook, run_cli
from grading_fixtures import shared, shared_base, snapshot
from hostile_submissions import (ATTACKS, CONTROL, FINGERPRINT_LINE, FINGERPRINT_TESTS, HOSTILE_STAGES, HostileContext,
                                 build_hostile)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

NAMES = (CONTROL, *ATTACKS)
ROW_KEYS = ("submission", "stage", "item", "points", "max_points", "outcome", "reason", "flag")


# ---------------------------------------------------------------- what the attacks may reach on the host


@contextmanager
def listening(token: str) -> Iterator[tuple[int, str, str, list[str]]]:
    """A TCP port on 127.0.0.1, a Unix socket in /tmp and an abstract socket; what anyone sends is kept."""
    received: list[str] = []
    tcp = socket.create_server(("127.0.0.1", 0))
    unix_path = f"/tmp/forgelab-listen-{token}.sock"
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(unix_path)
    unix.listen(8)
    abstract_name = f"forgelab-listen-{token}"
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0" + abstract_name)
    abstract.listen(8)
    stop = threading.Event()

    def serve(server: socket.socket, kind: str) -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            with connection:
                connection.settimeout(2)
                try:
                    data = connection.recv(4096)
                except OSError:
                    data = b""
            received.append(f"{kind}: {data[:200].decode(errors='replace')}")

    threads = [threading.Thread(target=serve, args=(s, k), daemon=True)
               for s, k in ((tcp, "tcp"), (unix, "unix"), (abstract, "abstract"))]
    for thread in threads:
        thread.start()
    try:
        yield tcp.getsockname()[1], unix_path, abstract_name, received
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=5)
        for server in (tcp, unix, abstract):
            server.close()
        Path(unix_path).unlink(missing_ok=True)


def processes_with(text: str) -> list[tuple[int, str]]:
    """(pid, command line) of every process on this machine whose command line contains ``text``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in command:
            found.append((int(entry), command.strip()[:300]))
    return found


def _places(context: HostileContext) -> list[tuple[Path, bool]]:
    """(folder, recursive?) wherever a marker must not appear."""
    home = Path(os.path.expanduser("~"))
    places = [(Path(context.course), True), (Path(context.out), True), (Path(context.submissions), True),
              (Path("/tmp"), True), (Path("/var/tmp"), True), (Path("/dev/shm"), True), (home, False),
              (ROOT, False), (ROOT / "instructor" / "checks", False), (ROOT / "tests" / "stages", False),
              (ROOT / "solutions" / "forge", False), (ROOT / "forge", False)]
    places += [(Path(entry), False) for entry in sorted(set(sys.path)) if entry and Path(entry).is_dir()]
    return places


def markers_left(context: HostileContext) -> list[str]:
    """Every file that carries the session's marker, by name or (sitecustomize / usercustomize) by content."""
    needle = f"forgelab-hostile-{context.token}"
    found: set[str] = set()

    def look(folder: Path, recursive: bool) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            if needle in entry.name:
                found.add(entry.path)
            elif entry.name in ("sitecustomize.py", "usercustomize.py") and entry.is_file(follow_symlinks=False):
                try:
                    if needle in Path(entry.path).read_text(encoding="utf-8", errors="replace"):
                        found.add(entry.path)
                except OSError:
                    pass
            if recursive and entry.is_dir(follow_symlinks=False) and entry.name not in (".venv", ".git", "proc"):
                look(Path(entry.path), True)

    for folder, recursive in _places(context):
        look(folder, recursive)
    return sorted(found)


def _rows(out: Path) -> list[list[Any]]:
    connection = sqlite3.connect(out / "gradebook.sqlite")
    try:
        return [list(row) for row in connection.execute(
            f"SELECT {', '.join(ROW_KEYS)} FROM grades ORDER BY submission, stage, item_order")]
    finally:
        connection.close()


def _digests(folder: Path) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in snapshot(folder).items()}


def _grade_hostile(base: Path, folder: Path) -> dict[str, Any]:
    token = uuid.uuid4().hex[:12]
    course = copy_workbook(folder / "course")
    out, submissions = folder / "out", folder / "submissions"
    with listening(token) as (port, unix_path, abstract_name, received):
        context = HostileContext(token, str(course.root), str(out), str(submissions), str(ROOT), port, unix_path,
                                 abstract_name)
        paths = build_hostile(submissions, base, context)
        before = {name: _digests(path) for name, path in paths.items()}
        started = time.monotonic()
        result = run_cli(course.root, "grade", *(str(paths[name]) for name in NAMES), "--out", str(out),
                         "--stages", ",".join(HOSTILE_STAGES), "--jobs", "2", timeout=1400)
        seconds = time.monotonic() - started
        time.sleep(2)  # anything that was only slow to die has died by now
        lingering = processes_with(context.marker(""))
        connections = list(received)
    markers = markers_left(context)
    after = {name: _digests(path) for name, path in paths.items()}
    # clean up what a broken sandbox let through, so that nothing outlives the test session
    for pid, _ in lingering:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for path in markers:
        Path(path).unlink(missing_ok=True)
    rows = _rows(out) if (out / "gradebook.sqlite").is_file() else []
    return {"context": context.__dict__, "paths": {name: str(path) for name, path in paths.items()},
            "returncode": result.returncode, "stdout": result.stdout, "stderr": result.stderr, "rows": rows,
            "seconds": seconds, "lingering": lingering, "connections": connections, "markers": markers,
            "files_before": before, "files_after": after}


@pytest.fixture(scope="session")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = shared_base(tmp_path_factory)
    return shared(tmp_path_factory, "hostile", lambda folder: _grade_hostile(base, folder))


def items(graded: dict[str, Any], submission: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(row[1], row[2]): dict(zip(ROW_KEYS, row)) for row in graded["rows"] if row[0] == submission}


def _attack_marker(graded: dict[str, Any], attack: str) -> str:
    return f"forgelab-hostile-{graded['context']['token']}-{attack}"


# ---------------------------------------------------------------- the batch


def test_the_batch_of_hostile_submissions_finishes(hostile: dict[str, Any]) -> None:
    output = hostile["stdout"] + hostile["stderr"]
    assert hostile["returncode"] == 0, output[-3000:]
    assert "Traceback" not in output
    assert "sandbox: bubblewrap" in hostile["stdout"], "grading must run in the sandbox on this machine"
    for name in NAMES:
        assert len(items(hostile, name)) == 7 * len(HOSTILE_STAGES), name
        assert f"] {name}: " in hostile["stdout"]
    assert f"[{len(NAMES)}/{len(NAMES)}]" in hostile["stdout"]
    # the 100 MB flood and the 30 MB message were cut, not passed on
    assert len(output) < 200_000
    for path in (Path(hostile["context"]["out"]) / "gradebook.csv", *Path(hostile["context"]["out"]).glob("feedback/*")):
        assert path.stat().st_size < 500_000, path
    assert all(len(row[6]) <= 1000 for row in hostile["rows"])


def test_the_control_loses_what_the_mistake_costs(hostile: dict[str, Any]) -> None:
    control = items(hostile, CONTROL)
    assert control[("01", "stage_tests")]["outcome"] == "partial"
    assert "test_same_rank_conflict_keeps_the_earlier_instruction" in control[("01", "stage_tests")]["reason"]
    assert control[("01", "instructor_checks")]["points"] < control[("01", "instructor_checks")]["max_points"]
    assert control[("01", "notebook")]["points"] < control[("01", "notebook")]["max_points"]
    assert control[("05", "stage_tests")]["outcome"] == "partial"
    assert "~~~" in control[("05", "stage_tests")]["reason"]
    for item in ("stage_tests", "instructor_checks", "notebook", "fault_lab", "transfer", "design_answer"):
        assert control[("07", item)]["outcome"] == "passed", control[("07", item)]


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_attack_gains_no_points_over_the_same_mistake(hostile: dict[str, Any], attack: str) -> None:
    control, attacked = items(hostile, CONTROL), items(hostile, attack)
    assert attacked.keys() == control.keys()
    gained = [f"{stage} {item}: {attacked[(stage, item)]['points']} > {row['points']} "
              f"({attacked[(stage, item)]['reason'][:160]})"
              for (stage, item), row in sorted(control.items()) if attacked[(stage, item)]["points"] > row["points"]]
    assert not gained, f"{attack} gained points over the control: " + "; ".join(gained)
    assert sum(r["max_points"] for r in attacked.values()) == sum(r["max_points"] for r in control.values()), \
        f"{attack} changed what the stages are worth"


# ---------------------------------------------------------------- nothing hidden leaks


def _lines(text: str, shortest: int = 30) -> set[str]:
    return {line.strip() for line in text.splitlines() if len(line.strip()) >= shortest}


def hidden_text(submissions: list[Path]) -> set[str]:
    """Lines of the reference solutions, instructor checks and mutants that a learner cannot know."""
    import tomllib

    from forgelab.site.release import select_files

    hidden: set[str] = set()
    for path in sorted((ROOT / "solutions").rglob("*")) + sorted((ROOT / "instructor" / "checks").glob("*.py")):
        if path.is_file() and path.suffix in (".py", ".md"):
            hidden |= _lines(path.read_text(encoding="utf-8"))
    for path in sorted((ROOT / "course" / "stages").glob("*/mutants.toml")):
        for mutant in tomllib.loads(path.read_text(encoding="utf-8")).get("mutant", []):
            hidden |= {text for text in (mutant["name"], *mutant["replace"].splitlines()) if len(text.strip()) >= 20}
    public: set[str] = set()
    for relative in select_files(ROOT):
        try:
            public |= _lines((ROOT / relative).read_text(encoding="utf-8"), 1)
        except (UnicodeDecodeError, OSError):
            continue
    for folder in submissions:
        for file in folder.rglob("*"):
            if file.is_file():
                try:
                    public |= _lines(file.read_text(encoding="utf-8"), 1)
                except (UnicodeDecodeError, OSError):
                    continue
    hidden = {line for line in hidden if line.strip() not in public and not any(line in text for text in public)}
    assert len(hidden) > 100, "the hidden material is nearly empty: the leak check would prove nothing"
    return hidden


def outputs(graded: dict[str, Any]) -> dict[str, str]:
    """Everything `forgelab grade` wrote or printed that a person reads."""
    out = Path(graded["context"]["out"])
    found = {"stdout": graded["stdout"] + graded["stderr"]}
    for path in sorted(out.rglob("*")):
        if path.suffix in (".csv", ".html"):
            found[path.relative_to(out).as_posix()] = html.unescape(path.read_text(encoding="utf-8"))
    connection = sqlite3.connect(out / "gradebook.sqlite")
    for table in ("grades", "submissions", "runs"):
        found[f"gradebook.sqlite:{table}"] = "\n".join(
            " ".join(str(value) for value in row) for row in connection.execute(f"SELECT * FROM {table}"))
    connection.close()
    return found


def test_no_hidden_text_reaches_any_output(hostile: dict[str, Any]) -> None:
    hidden = hidden_text([Path(path) for path in hostile["paths"].values()])
    leaks = sorted({(where, line) for where, text in outputs(hostile).items() for line in hidden if line in text})
    assert not leaks, f"{len(leaks)} hidden line(s) reached the output, e.g. " + "; ".join(
        f"{where}: {line[:120]!r}" for where, line in leaks[:6])


@pytest.mark.parametrize("attack", ["fs-search", "callback-leak"])
def test_an_attack_that_looks_for_hidden_text_finds_none(hostile: dict[str, Any], attack: str) -> None:
    hidden = hidden_text([Path(path) for path in hostile["paths"].values()])
    rows = "\n".join(row["reason"] for row in items(hostile, attack).values())
    page = html.unescape(next((Path(hostile["context"]["out"]) / "feedback").glob(f"{attack}*.html")).read_text(
        encoding="utf-8"))
    leaked = sorted(line for line in hidden if line in rows or line in page)
    assert not leaked, f"{attack} sent {len(leaked)} hidden line(s) into its rows or page, e.g. {leaked[:3]}"


# ---------------------------------------------------------------- writes, processes, sockets


@pytest.mark.parametrize("attack", ["markers", "callback-escape", "fs-search", "daemon", "network"])
def test_an_attack_writes_nothing_outside_its_scratch(hostile: dict[str, Any], attack: str) -> None:
    mine = [path for path in hostile["markers"] if _attack_marker(hostile, attack) in path
            or (Path(path).name in ("sitecustomize.py", "usercustomize.py") and attack == "markers")]
    assert not mine, f"{attack} wrote outside the sandbox: {mine[:8]}"


def test_no_marker_is_left_anywhere(hostile: dict[str, Any]) -> None:
    assert hostile["markers"] == [], hostile["markers"][:10]


def test_submissions_are_untouched_by_their_own_code(hostile: dict[str, Any]) -> None:
    assert hostile["files_after"] == hostile["files_before"]


@pytest.mark.parametrize("attack", ["daemon", "network"])
def test_an_attack_leaves_no_process_behind(hostile: dict[str, Any], attack: str) -> None:
    mine = [entry for entry in hostile["lingering"] if _attack_marker(hostile, attack) in entry[1]]
    assert not mine, f"{attack} left processes running after the batch: {mine}"
    assert not processes_with(f"forgelab-hostile-{hostile['context']['token']}")


def test_the_network_attack_reaches_no_socket_of_the_host(hostile: dict[str, Any]) -> None:
    assert hostile["connections"] == []
    rows = items(hostile, "network")
    assert rows[("01", "stage_tests")] == {**items(hostile, CONTROL)[("01", "stage_tests")], "submission": "network"}


# ---------------------------------------------------------------- each attack's own verdict


def test_patched_pytest_reports_change_nothing(hostile: dict[str, Any]) -> None:
    for attack in ("report-patch", "report-patch-own", "plugin-files"):
        rows = items(hostile, attack)
        for key, row in items(hostile, CONTROL).items():
            if key[1] != "evidence":
                assert (rows[key]["points"], rows[key]["outcome"]) == (row["points"], row["outcome"]), (attack, key)


@pytest.mark.parametrize("attack", sorted(FINGERPRINT_TESTS))
def test_a_transfer_test_cannot_tell_which_forge_it_is_given_but_by_behaviour(hostile: dict[str, Any],
                                                                           attack: str) -> None:
    """A transfer test that passes only where it recognises the learner's own module — by its source, its file or
    a traceback — sees the same module in both runs (the course's interface; no traceback from forge), so it fails
    on the submission's own forge too and earns nothing."""
    row = items(hostile, attack)[("05", "transfer")]
    assert (row["points"], row["outcome"]) == (0, "failed"), row["reason"]
    assert row["reason"].startswith("transfer/test_05_bounded_output_repair.py does not pass:"), row["reason"]
    # the learner's own test names the fingerprint in its assertion; the module's line never reaches a row
    assert FINGERPRINT_LINE not in json.dumps(list(items(hostile, attack).values()))


def test_code_over_the_memory_limit_is_stopped_and_named(hostile: dict[str, Any]) -> None:
    tests = items(hostile, "memory")[("01", "stage_tests")]
    assert tests["points"] == 0 and tests["outcome"] == "timeout"
    assert "memory" in tests["reason"]


def test_a_flood_of_output_is_cut_and_named(hostile: dict[str, Any]) -> None:
    """100 MB printed at import: cut (the batch's output stays small, see above) and named where it stopped a run."""
    rows = items(hostile, "flood")
    stopped = [row for row in rows.values() if "printed too much" in row["reason"]]
    assert stopped, "the 100 MB flood is named nowhere"
    assert all(row["points"] == 0 for row in stopped)
    tests = rows[("01", "stage_tests")]
    assert tests["points"] == 0 and "printed too much" in tests["reason"] or \
        tests["points"] == items(hostile, CONTROL)[("01", "stage_tests")]["points"], tests["reason"][:300]


def test_a_huge_exception_message_is_cut(hostile: dict[str, Any]) -> None:
    rows = items(hostile, "huge-exception")
    assert "HHHHHHHHHH" in rows[("01", "stage_tests")]["reason"]  # the message is shown …
    assert all(len(row["reason"]) <= 1000 for row in rows.values())  # … but only its start


def test_objects_that_equal_everything_do_not_pass(hostile: dict[str, Any]) -> None:
    rows = items(hostile, "always-equal")
    assert "test_same_rank_conflict_keeps_the_earlier_instruction" in rows[("01", "stage_tests")]["reason"]
    assert rows[("01", "stage_tests")]["points"] <= items(hostile, CONTROL)[("01", "stage_tests")]["points"]
    assert rows[("01", "instructor_checks")]["outcome"] != "passed"


def test_exceptions_dressed_as_skips_and_assumptions_do_not_pass(hostile: dict[str, Any]) -> None:
    rows = items(hostile, "masquerade")
    assert rows[("01", "stage_tests")]["outcome"] != "passed"
    assert "test_same_rank_conflict_keeps_the_earlier_instruction" in rows[("01", "stage_tests")]["reason"]
    assert rows[("01", "instructor_checks")]["outcome"] != "passed"


def test_exceptions_dressed_as_hypothesis_assumptions_do_not_hide_wrong_examples(hostile: dict[str, Any]) -> None:
    """Raising (a class named) ``hypothesis.errors.UnsatisfiedAssumption`` exactly where the code is wrong must
    fail the property test like the wrong answer does, not make Hypothesis discard those examples."""
    attacked, control = items(hostile, "hypothesis-assumption"), items(hostile, CONTROL)
    assert attacked[("05", "stage_tests")]["points"] <= control[("05", "stage_tests")]["points"], \
        attacked[("05", "stage_tests")]["reason"][:400]


def test_code_that_runs_in_the_sandbox_says_where_it_ran(hostile: dict[str, Any]) -> None:
    connection = sqlite3.connect(Path(hostile["context"]["out"]) / "gradebook.sqlite")
    sandbox, network = connection.execute("SELECT sandbox, network FROM runs").fetchone()
    connection.close()
    assert sandbox.startswith("sandbox: bubblewrap") and network == "none"


def test_the_sandbox_hides_what_fs_search_looks_for(hostile: dict[str, Any]) -> None:
    # it found the course path (leaked into its code) but nothing there: it is not mounted
    rows = items(hostile, "fs-search")
    assert rows[("01", "stage_tests")]["points"] <= items(hostile, CONTROL)[("01", "stage_tests")]["points"]
    assert "found-reference" not in json.dumps(list(rows.values()))
