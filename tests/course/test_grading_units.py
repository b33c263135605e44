"""The parts of `forgelab grade` that need no grading run: bad input, stage ranges, the gradebook
schema, reduced notebooks, submissions from folders and zips, the network guard, escaping."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from forgelab.grading import feedback, gradebook, isolation, known_wrong, notebooks, submission
from forgelab.grading.rubric import ITEMS, GradeItem, parse_stages
from forgelab.registry import RegistryError, load_course


@pytest.fixture(scope="module")
def course():  # type: ignore[no-untyped-def]
    return load_course(ROOT)


def learner_folder(path: Path, marker: str = "") -> Path:
    (path / "forge").mkdir(parents=True)
    (path / "forge" / "__init__.py").write_text(f'"""forge{marker}"""\n', encoding="utf-8")
    (path / "forge" / "instructions.py").write_text("X = 1\n", encoding="utf-8")
    (path / "transfer").mkdir()
    (path / "transfer" / "test_01_x.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
    (path / "forgelab").mkdir()
    (path / "forgelab" / "pytest_plugin.py").write_text("raise SystemExit('never imported')\n", encoding="utf-8")
    (path / "labs" / "01-x" / "forge").mkdir(parents=True)
    (path / "labs" / "01-x" / "forge" / "instructions.py").write_text("X = 2\n", encoding="utf-8")
    (path / "labs" / "01-x" / "conftest.py").write_text("raise SystemExit\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------- bad input: one line, a next step


@pytest.mark.parametrize(("make", "message"), [
    (lambda tmp: str(tmp / "nowhere"), "does not exist"),
    (lambda tmp: str((tmp / "empty").mkdir() or tmp / "empty"), "is not a learner's workbook"),
    (lambda tmp: str((tmp / "bad.zip").write_bytes(b"not a zip at all") and tmp / "bad.zip"), "is not a readable zip"),
    (lambda tmp: str(_zip(tmp / "noforge.zip", {"notes/readme.txt": "hi"})), "has no forge/ folder"),
    (lambda tmp: str(_zip(tmp / "evil.zip", {"forge/__init__.py": "", "../escape.py": "x"})), "unsafe member path"),
])
def test_bad_submissions_get_one_line_and_a_next_step(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli(ROOT, "grade", make(tmp_path), "--out", str(tmp_path / "out"))
    assert result.returncode != 0
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("forgelab: ") and message in lines[0]
    assert lines[1].startswith("next: ")
    assert not (tmp_path / "out").exists()


def _zip(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


@pytest.mark.parametrize("stages", ["42", "03-01", "one", "01-99"])
def test_unknown_stage_ranges_are_refused(tmp_path: Path, stages: str) -> None:
    folder = learner_folder(tmp_path / "alice")
    result = run_cli(ROOT, "grade", str(folder), "--stages", stages, "--out", str(tmp_path / "out"))
    assert result.returncode != 0 and "Traceback" not in result.output
    assert result.stderr.startswith("forgelab: ") and "next: " in result.stderr


def test_jobs_must_be_a_positive_number(tmp_path: Path) -> None:
    result = run_cli(ROOT, "grade", str(learner_folder(tmp_path / "alice")), "--jobs", "0")
    assert result.returncode != 0 and "must be 1 or more" in result.stderr


def test_stage_selection(course) -> None:  # type: ignore[no-untyped-def]
    numbers = [stage.number for stage in course.stages]
    assert [s.number for s in parse_stages(course, None)] == numbers
    assert [s.number for s in parse_stages(course, "01-03")] == ["01", "02", "03"]
    assert [s.number for s in parse_stages(course, "3,1")] == ["01", "03"]
    for bad in ("00", "02-01", "1-2-3", "x", ","):
        with pytest.raises(RegistryError):
            parse_stages(course, bad)


# ---------------------------------------------------------------- submissions


def test_only_what_grading_needs_is_copied_and_a_zip_reads_like_its_folder(tmp_path: Path) -> None:
    folder = learner_folder(tmp_path / "alice")
    archive = tmp_path / "zips" / "alice.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as bundle:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                bundle.write(file, f"alice/{file.relative_to(folder).as_posix()}")
    from_folder, from_zip = submission.discover([str(folder), str(archive)])
    # the same name twice: both are told apart by their parent folder
    assert (from_folder.id, from_zip.id) == (f"{tmp_path.name}/alice", "zips/alice")
    files = submission.read_files(from_folder)
    assert sorted(files) == [("home", "labs/01-x/forge/instructions.py"), ("home", "transfer/test_01_x.py"),
                             ("import", "forge/__init__.py"), ("import", "forge/instructions.py")]
    assert submission.content_digest(files) == submission.content_digest(submission.read_files(from_zip))
    import_dir, home, checker_home = submission.lay_out(files, tmp_path / "scratch")
    assert sorted(p.name for p in import_dir.iterdir()) == ["forge"]  # no learner forgelab/ on the path
    assert (home / "transfer").is_dir() and not (checker_home / "transfer").exists()
    assert (checker_home / "labs" / "01-x" / "forge" / "instructions.py").is_file()


def test_the_same_path_twice_is_refused(tmp_path: Path) -> None:
    folder = learner_folder(tmp_path / "alice")
    with pytest.raises(submission.SubmissionError, match="given twice"):
        submission.discover([str(folder), str(folder)])


# ---------------------------------------------------------------- isolation


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", "-c", textwrap.dedent(code)], env=env, capture_output=True,
                          text=True, timeout=60)


def test_graded_processes_have_no_network_but_keep_loopback(tmp_path: Path) -> None:
    startup = isolation.write_startup_rules(tmp_path / "startup")
    env = isolation.grading_env(tmp_path / "scratch", ROOT, isolation.Limits(), startup)
    env["PYTHONPATH"] = str(startup)
    done = _python("""
        import socket
        for host in ("192.0.2.1", "example.org"):
            try:
                socket.create_connection((host, 80), timeout=2)
            except OSError as error:
                assert "network access is disabled" in str(error), error
            else:
                raise SystemExit(f"connected to {host}")
        server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
        client = socket.create_connection(server.getsockname(), timeout=2)
        client.close(); server.close()
        print("ok")
    """, env)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_network_namespace_has_no_route_out() -> None:
    if not isolation.namespace_works():
        pytest.skip("no unprivileged network namespace on this machine: grading uses the socket guard alone")
    import errno

    done = subprocess.run([*(isolation.namespace_prefix() or []), sys.executable, "-c",
                           "import socket; s = socket.socket(); s.settimeout(3); print(s.connect_ex(('192.0.2.1', 80)))"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) in (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EACCES, errno.EPERM)


def test_graded_processes_run_hypothesis_derandomized_and_skip_slow_optional_imports(tmp_path: Path) -> None:
    startup = isolation.write_startup_rules(tmp_path / "startup")
    env = isolation.grading_env(tmp_path / "scratch", ROOT, isolation.Limits(), startup)
    env.update(PYTHONPATH=str(startup), FORGELAB_SKIP_IMPORTS="rfc3987_syntax")
    done = _python("""
        import hypothesis
        assert hypothesis.settings.default.derandomize is True
        assert hypothesis.settings.default.database is None
        try:
            import rfc3987_syntax
        except ModuleNotFoundError:
            print("ok")
    """, env)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    assert env["HOME"].startswith(str(tmp_path)) and not any(k.lower().endswith("_proxy") and v != "*"
                                                             for k, v in env.items())


def test_a_run_over_its_limit_is_killed_with_its_children(tmp_path: Path) -> None:
    started = isolation.run_limited(
        [sys.executable, "-c", "import subprocess, sys, time; "
         "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"],
        cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, limit_s=2)
    assert started.timed_out and started.seconds < 30


# ---------------------------------------------------------------- notebooks, gradebook, feedback


def test_reduced_notebooks_keep_setup_and_graded_cells_only(course, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stage = course.stage("01")
    written = notebooks.prepare(course, [stage], tmp_path)
    cells = notebooks.graded_cells(written["01"])
    original = json.loads((ROOT / stage.notebook).read_text(encoding="utf-8"))
    tagged = [i for i, c in enumerate(original["cells"]) if "nbval-check-output" in c.get("metadata", {}).get("tags", [])]
    assert [c["original_cell"] for c in cells if c["graded"]] == tagged
    assert not cells[0]["graded"] and "stage_tools" in "".join(original["cells"][cells[0]["original_cell"]]["source"])
    kept = json.loads(written["01"].read_text(encoding="utf-8"))["cells"]
    sources = ["".join(c["source"]) for c in kept]
    assert not any(s.startswith(("lab.predict", "lab.fault", "lab.check", "lab.design")) for s in sources)


def _row(item: str = "stage_tests", points: int = 10, reason: str = "why") -> GradeItem:
    return GradeItem("alice", "01", item, points, 40, "partial", reason)


def test_gradebook_schema_is_versioned_and_rows_are_replaced(tmp_path: Path) -> None:
    path = tmp_path / "gradebook.sqlite"
    connection = gradebook.open_gradebook(path)
    run = gradebook.start_run(connection, started_at="t", tool_version="v", course_version="c", stages="01", jobs=1,
                              network="guard", submissions=1)
    record = gradebook.SubmissionRecord("alice", "0" * 64, "/x", "folder")
    gradebook.record(connection, run, record, [_row(points=10)], [("01", "tests_s", 1.5)])
    gradebook.record(connection, run, record, [_row(points=20)], [("01", "tests_s", 1.0)])
    assert [r.points for r in gradebook.rows(connection)] == [20]
    connection.close()
    assert gradebook.open_gradebook(path).execute("PRAGMA user_version").fetchone()[0] == gradebook.SCHEMA_VERSION
    newer = sqlite3.connect(tmp_path / "newer.sqlite")
    newer.execute(f"PRAGMA user_version = {gradebook.SCHEMA_VERSION + 1}")
    newer.close()
    with pytest.raises(gradebook.GradebookError, match="newer than this forgelab"):
        gradebook.open_gradebook(tmp_path / "newer.sqlite")
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE notes (x)")
    other.close()
    with pytest.raises(gradebook.GradebookError, match="not a gradebook"):
        gradebook.open_gradebook(tmp_path / "other.sqlite")


def test_feedback_escapes_everything_a_learner_controls(course) -> None:  # type: ignore[no-untyped-def]
    rows = [GradeItem("<b>alice</b>", "01", spec.key, 0, spec.max_points, "failed",
                      "got '<script>alert(1)</script>' & more") for spec in ITEMS]
    page = feedback.page(course, "<b>alice</b>", "ab" * 32, rows)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<b>alice</b>" not in page and "&lt;b&gt;alice&lt;/b&gt;" in page


def test_csv_cells_a_learner_controls_are_never_formulas() -> None:
    text = gradebook.csv_text([GradeItem("=cmd|'/c calc'!A1", "01", "stage_tests", 0, 40, "failed", "+1 -1 @x")])
    row = text.splitlines()[1]
    assert row.startswith("'=cmd") and ",'+1 -1 @x" in row


def test_socket_module_is_untouched_in_the_test_process() -> None:
    assert socket.socket.connect.__qualname__ == "socket.connect"  # the guard lives only in graded processes


def test_instructor_checks_never_reach_the_learner_bundle() -> None:
    from forgelab.site.release import select_files

    assert list((ROOT / "instructor" / "checks").glob("test_*.py"))
    assert not [path for path in select_files(ROOT) if path.startswith("instructor/")]


# ---------------------------------------------------------------- the known-wrong variants


def test_known_wrong_variants_are_the_course_fault_targets(course, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stages = [course.stage("01"), course.stage("08")]
    made = known_wrong.prepare(course, stages, tmp_path)
    assert sorted(made) == ["01", "08"]
    solutions = sorted((ROOT / "solutions" / "forge").glob("*.py"))
    for stage in stages:
        folder = known_wrong.variant(tmp_path, stage)
        assert folder == made[stage.number] == tmp_path / "known-wrong" / stage.number
        fault = stage.fault.fault_file
        assert (folder / fault).read_bytes() == (ROOT / stage.failure_lab / fault).read_bytes()
        for module in solutions:  # everything else is the reference solution
            if f"forge/{module.name}" != fault:
                assert (folder / "forge" / module.name).read_bytes() == module.read_bytes()
        assert (folder / "forge" / "project" / "models.py").is_file()  # with the finished infrastructure
    assert known_wrong.variant(tmp_path, course.stage("02")) is None  # not prepared: graded without the check


def test_a_course_without_solutions_has_no_known_wrong_variants(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(ROOT / "course", tmp_path / "bundle" / "course")
    shutil.copyfile(ROOT / "pyproject.toml", tmp_path / "bundle" / "pyproject.toml")
    bundle = load_course(tmp_path / "bundle")
    assert known_wrong.prepare(bundle, list(bundle.stages), tmp_path / "template") == {}
    assert not (tmp_path / "template" / "known-wrong" / "01").exists()
