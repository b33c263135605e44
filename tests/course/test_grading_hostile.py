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

The second half (issue 18) grades an honest class beside attacks on stage 01, each next to its honest
twin — the same code without the attack (see hostile_submissions.py) — and has a test per finding:
a fresh clone's empty starter cache under ``--jobs 2`` (1), rewritten inputs (2), a back door for the
learner's own transfer test (3), submissions that cannot be laid out and code that sleeps past its
time budget (4), the process and file-size limits (5; memory is ``memory`` above), sparse and huge
files (6), ``check``/``nbval --target`` outside the sandbox and merging unlike shards (7), and the
suite's own search for leftovers past a folder 1,991 levels deep (8). Each proves the attack earns no
more than its twin and reads the reason: the learner's problem and its limit, never "the grader failed".
"""

from __future__ import annotations

import functools
import html
import json
import os
import shutil
import signal
import socket
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, copy_workbook, run_cli, wait_until
from grading_fixtures import shared, shared_base, shared_submissions, tree_digests
from hostile_submissions import (ATTACKS, CONTROL, DEEP_LEVELS, FINGERPRINT_LINE, FINGERPRINT_TESTS, HONEST,
                                 HOSTILE_STAGES, ISSUE_GRADE_ARGS, TRANSFER_01, TWINS, HostileContext, build_hostile,
                                 build_issue_batch)

# one xdist worker takes the whole module: its two graded batches are made once per session (grading_fixtures.shared)
# and a second worker that got one of its tests only waited for them (90 and 73 s in a fresh-clone run)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500), pytest.mark.xdist_group("grading-hostile")]

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


MARKER_DEPTH = 24  # an attack writes its markers a few levels deep at most; deeper is what others left


def markers_left(context: HostileContext) -> list[str]:
    """Every file that carries the session's marker, by name or (sitecustomize / usercustomize) by content.

    The search walks iteratively (no recursion to overflow), never through a link, at most
    :data:`MARKER_DEPTH` levels deep, and skips whatever vanishes or cannot be read: /tmp is shared with
    other processes, and what they leave there (a folder 1,991 levels deep, say) is not this test's to fail on.
    """
    from forgelab.core.files import walk

    needle = f"forgelab-hostile-{context.token}"
    found: set[str] = set()
    for folder, recursive in _places(context):
        for path, _depth in walk(folder, MARKER_DEPTH if recursive else 1, frozenset({".venv", ".git", "proc"})):
            name = path.name
            if needle in name:
                found.add(str(path))
            elif name in ("sitecustomize.py", "usercustomize.py") and path.is_file() and not path.is_symlink():
                try:
                    if needle in path.read_text(encoding="utf-8", errors="replace"):
                        found.add(str(path))
                except OSError:
                    pass
    return sorted(found)


def _rows(out: Path) -> list[list[Any]]:
    connection = sqlite3.connect(out / "gradebook.sqlite")
    try:
        return [list(row) for row in connection.execute(
            f"SELECT {', '.join(ROW_KEYS)} FROM grades ORDER BY submission, stage, item_order")]
    finally:
        connection.close()


def _digests(folder: Path) -> dict[str, str]:
    return tree_digests(folder)


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
        try:  # anything that is only slow to die gets until then; what is still there after it lingers
            wait_until(lambda: not processes_with(context.marker("")), timeout=60, what="graded processes to end")
        except AssertionError:
            pass
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
    """Lines of the reference solutions, instructor checks and mutants that a learner cannot know (worked out once
    per test process for the same submissions: three tests ask)."""
    return set(_hidden_text(tuple(submissions)))


@functools.cache
def _hidden_text(submissions: tuple[Path, ...]) -> frozenset[str]:
    import tomllib

    from forgelab.authoring.release.source import select_files

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
    # ``line in every public line joined by NUL`` is ``any(line in text for text in public)``: a hidden line holds
    # neither NUL nor a line break, so it cannot match across two public lines (one search, not one per line)
    joined = "\0".join(public)
    hidden = {line for line in hidden if line.strip() not in public and line not in joined}
    assert len(hidden) > 100, "the hidden material is nearly empty: the leak check would prove nothing"
    return frozenset(hidden)


def outputs(graded: dict[str, Any]) -> dict[str, str]:
    """Everything `forgelab grade` wrote or printed that a person reads."""
    out = Path(graded["context"]["out"])
    found = {"stdout": graded["stdout"] + graded["stderr"]}
    for path in sorted(out.rglob("*")):
        # similarity/ is the instructor's side-by-side of a module and what it matches, the reference included (issue
        # 30, point 2): never published to a learner, so it may show course code
        if path.suffix in (".csv", ".html") and "similarity" not in path.relative_to(out).parts:
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


# ================================================================ issue 18: every point earned honestly, every
# failure blamed on the right party. One test (or more) per numbered finding; each compares an attack with its
# honest twin — the same code without the attack (hostile_submissions.TWINS) — and reads the reason's words.


def _grade_issue_batch(base: Path, folder: Path) -> dict[str, Any]:
    course = copy_workbook(folder / "course")
    out = folder / "out"
    paths = build_issue_batch(folder / "submissions", base)
    before = {name: tree_digests(path) for name, path in paths.items() if name not in ("sparse", "huge")}
    started = time.monotonic()
    result = run_cli(course.root, "grade", *(str(paths[name]) for name in (*HONEST, *TWINS)), "--out", str(out),
                     *ISSUE_GRADE_ARGS, timeout=1400)
    seconds = time.monotonic() - started
    after = {name: tree_digests(path) for name, path in paths.items() if name not in ("sparse", "huge")}
    rows = _rows(out) if (out / "gradebook.sqlite").is_file() else []
    connection = sqlite3.connect(out / "gradebook.sqlite") if rows else None
    walls = dict(connection.execute("SELECT submission, seconds FROM timings WHERE phase = 'submission_wall_s'")) \
        if connection else {}
    if connection:
        connection.close()
    from deep_folders import remove_deep

    remove_deep(paths["deep-folder"] / "forge" / "nested")
    for name in ("sparse", "huge"):
        (paths[name] / "forge" / "data.bin").unlink()
    return {"paths": {name: str(path) for name, path in paths.items()}, "returncode": result.returncode,
            "stdout": result.stdout, "stderr": result.stderr, "rows": rows, "seconds": seconds, "walls": walls,
            "out": str(out), "untouched": before == after}


@pytest.fixture(scope="session")
def issue(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = shared_base(tmp_path_factory)
    return shared(tmp_path_factory, "issue-18", lambda folder: _grade_issue_batch(base, folder))


def _no_gain(graded: dict[str, Any], attack: str) -> dict[tuple[str, str], dict[str, Any]]:
    twin = TWINS[attack]
    mine, theirs = items(graded, attack), items(graded, twin)
    assert mine.keys() == theirs.keys() and len(mine) == 7, (attack, sorted(mine))
    gained = [f"{item}: {mine[(stage, item)]['points']} > {row['points']}"
              for (stage, item), row in sorted(theirs.items()) if mine[(stage, item)]["points"] > row["points"]]
    assert not gained, f"{attack} gained over its honest twin {twin}: {gained}"
    assert sum(r["max_points"] for r in mine.values()) == sum(r["max_points"] for r in theirs.values())
    for row in mine.values():  # the learner's doing, never the grader's
        assert row["flag"] != "regrade" and not row["reason"].startswith("the grader failed"), row
    return mine


def test_issue_batch_finishes_and_leaves_the_submissions_as_they_were(issue: dict[str, Any]) -> None:
    output = issue["stdout"] + issue["stderr"]
    assert issue["returncode"] == 0, output[-3000:]
    assert "Traceback" not in output and "grader failed" not in output
    assert "sandbox: bubblewrap" in issue["stdout"] and "60 s per submission" in issue["stdout"]
    for name in (*HONEST, *TWINS):
        assert len(items(issue, name)) == 7, name
    assert issue["untouched"]
    # the honest class: what the code deserves
    assert all(row["points"] == row["max_points"] for row in items(issue, "correct").values())
    assert items(issue, "control")[("01", "stage_tests")]["outcome"] == "partial"


def test_issue_1_a_fresh_clone_with_an_empty_cache_grades_correct_submissions_in_full(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """The first `grade --jobs 2` after `git clone`: two worker threads build the starter cache at once (it
    once failed one of them with FileExistsError and cost a correct submission all its code points), beside
    two busy loops. Every correct submission gets full marks, exactly as a second run with the cache does."""
    import subprocess

    from git_workbook import git_workbook

    correct = Path(shared_submissions(tmp_path_factory)["paths"]["correct"])
    clone = git_workbook(tmp_path / "clone").root
    assert not (clone / ".forgelab").exists() and not (clone / "course" / "starters").exists()
    batch = tmp_path / "batch"
    for name in ("ada", "bo", "cy"):
        shutil.copytree(correct, batch / name)
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        done = run_cli(clone, "grade", *(str(batch / name) for name in ("ada", "bo", "cy")), "--jobs", "2",
                       "--stages", "01,05", "--out", str(tmp_path / "fresh"), timeout=1200)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait(timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    fresh = _rows(tmp_path / "fresh")
    assert len(fresh) == 3 * 14
    for row in fresh:
        assert (row[3], row[5], row[7]) == (row[4], "passed", ""), row
    assert len(list((clone / ".forgelab" / "starters").iterdir())) == 2  # the cache and its lock file
    again = run_cli(clone, "grade", str(batch / "ada"), "--stages", "01,05", "--out", str(tmp_path / "cached"),
                    timeout=1200)
    assert again.returncode == 0, again.stdout + again.stderr
    assert [row[1:] for row in _rows(tmp_path / "cached")] == [row[1:] for row in fresh if row[0] == "ada"]


def test_issue_2_rewriting_the_callers_inputs_gains_nothing(issue: dict[str, Any]) -> None:
    mine = _no_gain(issue, "rewrite-inputs")
    honest = items(issue, "accept-all")
    # fewer required tests pass: test_input_is_not_mutated sees the rewrite (and the rewrite changes the module's own
    # answers); test_judge_arguments.py proves test by test that no test passes for it that fails for its twin …
    passing = r"(\d+) of 13 required tests pass"
    assert _count(mine[("01", "stage_tests")]["reason"], passing) < \
        _count(honest[("01", "stage_tests")]["reason"], passing), (mine, honest)
    # … and nowhere else: the instructor checks' expectations are built from the tests' own objects
    assert mine[("01", "instructor_checks")]["points"] == honest[("01", "instructor_checks")]["points"]
    assert mine[("01", "instructor_checks")]["points"] < mine[("01", "instructor_checks")]["max_points"]


def test_issue_3_a_transfer_test_is_judged_on_the_course_not_on_a_back_door(issue: dict[str, Any]) -> None:
    mine = _no_gain(issue, "backdoor")
    honest = items(issue, "handshake-test")
    for row in (mine[("01", "transfer")], honest[("01", "transfer")]):
        assert (row["points"], row["outcome"]) == (0, "failed"), row
        assert row["reason"].startswith(f"{TRANSFER_01} does not pass: on the course's reference implementation, "
                                        "test_the_handshake failed"), row["reason"]
    assert {key: (row["points"], row["outcome"]) for key, row in mine.items()} == \
        {key: (row["points"], row["outcome"]) for key, row in honest.items()}
    correct = items(issue, "correct")[("01", "transfer")]
    assert correct["points"] == 10 and "pass on the course's reference implementation and fail on its known-wrong " \
        "one" in correct["reason"]


@pytest.mark.parametrize(("attack", "words"), [
    ("deep-folder", f"forge/nested/a/a/…/a is nested more than 32 folders deep — the limit: 32 folder levels"),
    ("zip-clash", "forge/helpers is a file in the zip, and another member needs it as a folder — the limit: a path is "
                  "a file or a folder, not both"),
    ("damaged-zip", "forge/instructions.py is damaged in the zip"),
])
def test_issue_4_a_submission_that_cannot_be_laid_out_is_the_learners_problem(issue: dict[str, Any], attack: str,
                                                                              words: str) -> None:
    rows = _no_gain(issue, attack)
    for row in rows.values():
        if row["max_points"]:
            assert (row["points"], row["outcome"], row["flag"]) == (0, "error", ""), row
            assert row["reason"].startswith("not graded: the submission cannot be laid out for grading: "), row
            assert words in row["reason"] and "a problem of the submission, not of the grader" in row["reason"], row
    assert f"] {attack}: 0/" in issue["stdout"]


def test_issue_4_time_past_the_limits_is_the_learners_and_ends_with_a_timeout(issue: dict[str, Any]) -> None:
    rows = _no_gain(issue, "sleeper")
    tests = rows[("01", "stage_tests")]
    assert tests["outcome"] == "timeout", tests
    for item in ("stage_tests", "instructor_checks", "notebook"):  # what the budget left unrun is a timeout too
        assert rows[("01", item)]["outcome"] == "timeout", rows[("01", item)]
    for item in ("stage_tests", "notebook"):  # (instructor checks are named with their outcome only)
        assert "your code used up this submission's time budget of 60 s" in rows[("01", item)]["reason"], rows
    # it held its slot for about its budget (and the course's own time), not for half an hour
    assert issue["walls"]["sleeper"] < 60 + 240, issue["walls"]
    assert rows[("01", "transfer")]["points"] == items(issue, "correct")[("01", "transfer")]["points"]


def _count(reason: str, pattern: str) -> int:
    import re

    found = re.search(pattern, reason)
    assert found, reason
    return int(found.group(1))


def test_issue_5_the_process_limit_binds(issue: dict[str, Any]) -> None:
    rows = _no_gain(issue, "fork-bomb")
    reason = rows[("01", "stage_tests")]["reason"]
    assert _count(reason, r"forked (\d+) of 150 children") < 64, reason  # RLIMIT_NPROC 64: the uid is not root


def test_issue_5_the_file_size_limit_binds(issue: dict[str, Any]) -> None:
    rows = _no_gain(issue, "file-size")
    reason = rows[("01", "stage_tests")]["reason"]
    assert _count(reason, r"wrote (\d+) MB of 100") <= 64 and "File too large" in reason, reason


@pytest.mark.parametrize(("attack", "words"), [
    ("sparse", "forge/data.bin is 500 MB — the limit: 50 MB per file"),
    ("huge", "forge/data.bin is 60 MB — the limit: 50 MB per file"),
])
def test_issue_6_sparse_and_huge_files_are_refused_before_they_are_copied(issue: dict[str, Any], attack: str,
                                                                          words: str) -> None:
    rows = _no_gain(issue, attack)
    assert all(words in row["reason"] for row in rows.values() if row["max_points"]), rows
    assert all(row["points"] == 0 and row["flag"] == "" for row in rows.values())
    progress = next(line for line in issue["stdout"].splitlines() if f"] {attack}: " in line)
    assert float(progress.split(" in ", 1)[1].split(" s", 1)[0]) < 30, progress  # nothing was copied


def _canary_workbook(folder: Path, token: str) -> tuple[Path, Path]:
    """A submission whose forge writes a file to the host's /tmp at import, and reads the reference solutions."""
    canary = Path(f"/tmp/forgelab-hostile-{token}-canary")
    (folder / "forge").mkdir(parents=True)
    (folder / "forge" / "__init__.py").write_text("", encoding="utf-8")
    module = (ROOT / "solutions" / "forge" / "instructions.py").read_text(encoding="utf-8")
    (folder / "forge" / "instructions.py").write_text(module + f'''

try:
    with open({str(canary)!r}, "w") as _handle:
        _handle.write(open({str(ROOT / "solutions" / "forge" / "instructions.py")!r}).read())
except OSError:
    pass
''', encoding="utf-8")
    return folder, canary


def test_issue_7_check_and_nbval_on_a_path_run_in_the_sandbox(tmp_path: Path) -> None:
    token = uuid.uuid4().hex[:12]
    folder, canary = _canary_workbook(tmp_path / "canary", token)
    try:
        checked = run_cli(ROOT, "check", "01", "--target", str(folder), "--out", str(tmp_path / "evidence.json"),
                          timeout=600)
        assert "13/13" in checked.stdout and "Traceback" not in checked.output, checked.output
        replayed = run_cli(ROOT, "nbval", "01", "--target", str(folder), timeout=600)
        assert replayed.returncode == 0 and "3/3 graded cells" in replayed.stdout, replayed.output
        assert not canary.exists(), "the target's code wrote to the host: it ran outside the sandbox"
        assert "WITHOUT the sandbox" not in checked.output + replayed.output
    finally:
        canary.unlink(missing_ok=True)


def test_issue_7_without_the_sandbox_they_refuse_unless_told_and_then_say_so(tmp_path: Path, capsys,  # type: ignore[no-untyped-def]
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import forgelab.cli.main as cli
    from forgelab.judge import sandbox

    token = uuid.uuid4().hex[:12]
    folder, canary = _canary_workbook(tmp_path / "canary", token)
    monkeypatch.setattr(sandbox, "bwrap_binary", lambda: None)
    monkeypatch.setenv("FORGELAB_ROOT", str(ROOT))
    monkeypatch.setenv("FORGELAB_WORKSPACE", str(tmp_path / "workspace"))
    try:
        for command in (["check", "01", "--target", str(folder)], ["nbval", "01", "--target", str(folder)]):
            assert cli.main(command) != 0
            said = capsys.readouterr()
            assert "refusing to run the target's code" in said.err and "--unsandboxed" in said.err, said
            assert not canary.exists()
        assert cli.main(["check", "01", "--target", str(folder), "--unsandboxed"]) == 1  # not accepted: no lab etc.
        said = capsys.readouterr().out
        assert said.startswith("warning: the target's code ran WITHOUT the sandbox (--unsandboxed)"), said[:300]
        assert canary.exists()  # it did run, unsandboxed, as asked
        canary.unlink()
        assert cli.main(["nbval", "01", "--target", str(folder), "--unsandboxed"]) == 0
        said = capsys.readouterr().out
        assert said.count("ran WITHOUT the sandbox (--unsandboxed)") == 2, said  # first and last line
        # each command removed its private copy of the submission as it returned, not at the interpreter's exit
        assert not list(Path(tempfile.gettempdir()).glob("forgelab-target-*"))
    finally:
        canary.unlink(missing_ok=True)


def test_issue_7_a_path_target_never_follows_a_link_out_of_itself(tmp_path: Path) -> None:
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "forge").symlink_to(ROOT / "solutions" / "forge", target_is_directory=True)
    (folder / "transfer").mkdir()
    (folder / TRANSFER_01).symlink_to(ROOT / "solutions" / TRANSFER_01)
    checked = run_cli(ROOT, "check", "01", "--target", str(folder), "--out", str(tmp_path / "evidence.json"),
                      timeout=600)
    assert checked.returncode == 1 and "13/13" not in checked.stdout and "ACCEPTED" not in checked.stdout.replace(
        "NOT ACCEPTED", ""), checked.output
    assert "0/13" in checked.stdout and "does not exist" in checked.stdout, checked.output
    replayed = run_cli(ROOT, "nbval", "01", "--target", str(folder), timeout=600)
    assert replayed.returncode == 1 and "3/3" not in replayed.stdout and "not run" in replayed.stdout, replayed.output


def test_issue_7_shards_graded_with_different_stages_or_settings_are_not_merged(tmp_path: Path) -> None:
    folder = tmp_path / "alice"
    (folder / "forge").mkdir(parents=True)
    (folder / "forge" / "__init__.py").write_text("", encoding="utf-8")
    bob = tmp_path / "bob"
    shutil.copytree(folder, bob)
    one = run_cli(ROOT, "grade", str(folder), str(bob), "--shard", "1/2", "--stages", "01", "--out",
                  str(tmp_path / "one"), timeout=600)
    two = run_cli(ROOT, "grade", str(folder), str(bob), "--shard", "2/2", "--stages", "01,02", "--out",
                  str(tmp_path / "two"), timeout=600)
    three = run_cli(ROOT, "grade", str(folder), str(bob), "--shard", "2/2", "--stages", "01", "--cpu-limit", "3",
                    "--out", str(tmp_path / "three"), timeout=600)
    assert (one.returncode, two.returncode, three.returncode) == (0, 0, 0), one.output + two.output + three.output
    stages = run_cli(ROOT, "gradebook", "merge", str(tmp_path / "one"), str(tmp_path / "two"), "--into",
                     str(tmp_path / "merged"))
    assert stages.returncode != 0 and "graded with stages 01 but" in stages.stderr and "01,02" in stages.stderr
    limits = run_cli(ROOT, "gradebook", "merge", str(tmp_path / "one"), str(tmp_path / "three"), "--into",
                     str(tmp_path / "merged"))
    assert limits.returncode != 0 and "different settings (test_cpu_s: 10 and 3)" in limits.stderr, limits.stderr
    assert not (tmp_path / "merged").exists()


def test_issue_8_the_leftover_search_walks_past_a_deep_folder_others_left(tmp_path: Path) -> None:
    """The marker search once recursed into /tmp and died with RecursionError on a 1,991-level folder that an
    earlier attack had left there: 45 errors, the judge never at fault. It walks iteratively now, to a bounded
    depth, and what others leave in a shared folder is not its concern."""
    from deep_folders import make_deep, remove_deep

    token = uuid.uuid4().hex[:12]
    leftover = Path(f"/tmp/forgelab-leftover-{token}")
    make_deep(leftover, DEEP_LEVELS, leaf=f"forgelab-hostile-{token}-deep")  # a marker far below the bound
    shallow = leftover / f"forgelab-hostile-{token}-shallow"
    shallow.write_text("marker", encoding="utf-8")
    context = HostileContext(token, str(tmp_path), str(tmp_path), str(tmp_path), str(ROOT), 0, "", "")
    try:
        found = markers_left(context)
    finally:
        remove_deep(leftover)
    assert found == [str(shallow)]
