"""Copies found, side by side: ``forgelab grade`` compares every submission's stage modules with each other and with the
course's own (reference, fault-lab variant, known-wrong mutants) and flags the copies for the instructor only.

The class (``similarity_fixtures.py``): four learners who wrote stages 01 and 02 independently, a fault-lab copy, a
renamed copy of the reference, two learners sharing a module with renamed variables, two untouched starters. It is
graded at ``--jobs 1`` and ``--jobs 2`` (once per test session): exactly the three copies are flagged, each with its
page, the same bytes both times, and no feedback page says a word about it. The comparison itself, its thresholds,
its figures across processes and its robustness to hostile files are proved without grading, on the same modules.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, pristine_starters, run_cli
from grading_fixtures import shared
from similarity_fixtures import COPIES, HONEST, INSTRUCTIONS, NAMES, STAGES, build_class, modules

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.grading import similarity
from forgelab.grading.similarity import HandedModule, Status, Thresholds

pytestmark = [pytest.mark.xdist_group("similarity-class"), pytest.mark.timeout(1500)]
COURSE = load_course(ROOT)
WORKBOOK = Workbook.locate(ROOT)
STAGE_OBJECTS = [COURSE.stage(number) for number in STAGES]


def _handed(written: dict[str, dict[str, str]]) -> dict[str, list[HandedModule]]:
    """The fixture modules as grading reads them (a stage left out is the starter)."""
    starter = pristine_starters()
    found: dict[str, list[HandedModule]] = {}
    for name, mine in written.items():
        found[name] = []
        for stage in STAGE_OBJECTS:
            text = mine.get(stage.module) or (starter / stage.module).read_text(encoding="utf-8")
            digest = hashlib.sha256(text.encode()).hexdigest()
            found[name].append(HandedModule(stage.number, stage.module, Status.TEXT, digest, text))
    return found


def _flagged(pairs: list[Any]) -> set[tuple[str, str, str]]:
    """(stage, submission, other) with every course-made module called "course"."""
    return {(p.stage, p.left.name if hasattr(p, "left") else p.submission,
             (p.right.name if p.right.kind is similarity.Kind.SUBMISSION else "course") if hasattr(p, "right")
             else (p.other if p.kind is similarity.Kind.SUBMISSION else "course")) for p in pairs}


# ---------------------------------------------------------------- the comparison, without grading


def test_the_copies_and_only_the_copies_are_flagged() -> None:
    comparison = similarity.compare(WORKBOOK, STAGE_OBJECTS, _handed(modules(pristine_starters())), Thresholds())
    assert _flagged(comparison.pairs) == COPIES
    kinds = {(p.stage, p.left.name): p.right.kind for p in comparison.pairs if p.right.kind is not similarity.Kind.SUBMISSION}
    assert kinds == {("01", "hal"): similarity.Kind.REFERENCE, ("02", "gil"): similarity.Kind.FAULT_LAB}
    assert comparison.compared == sum(45 + 10 * len(similarity.course_modules(WORKBOOK, stage)) for stage in STAGE_OBJECTS)
    assert not comparison.not_compared and not comparison.unparsable


def test_the_honest_solutions_share_little_and_the_starters_nothing() -> None:
    """Below the default thresholds with room to spare: the closest honest pair shares under 55 % of either's code."""
    comparison = similarity.compare(WORKBOOK, STAGE_OBJECTS, _handed(modules(pristine_starters())),
                                    Thresholds(percent=1, min_tokens=1))
    for found in comparison.pairs:
        names = {found.left.name, found.right.name}
        if names <= {*HONEST, "ivy"} or (found.left.name in HONEST and found.right.kind is not similarity.Kind.SUBMISSION):
            assert max(found.percent, found.other_percent) < 55, (found.stage, names, found.percent)
        assert not names & {"kim", "lou"}, f"an untouched starter shares code: {names}"
    assert not [p for p in comparison.pairs if p.stage == "02" and {p.left.name, p.right.name} & {"hal", "ivy", "jon"}]


def test_thresholds_decide_what_is_flagged() -> None:
    handed = _handed(modules(pristine_starters()))
    strict = similarity.compare(WORKBOOK, STAGE_OBJECTS, handed, Thresholds(percent=95))
    assert _flagged(strict.pairs) == COPIES - {("02", "gil", "course")}  # 94 % of the fault lab is in gil's copy
    loose = similarity.compare(WORKBOOK, STAGE_OBJECTS, handed, Thresholds(percent=20, min_tokens=50))
    assert _flagged(loose.pairs) > COPIES and ("02", "alice", "bruno") in _flagged(loose.pairs)
    few = similarity.compare(WORKBOOK, STAGE_OBJECTS, handed, Thresholds(min_tokens=450))
    assert _flagged(few.pairs) == {("02", "gil", "course")}  # 477 tokens shared; the others fewer


COMPARE_IN_A_PROCESS = """
import json, sys
sys.path.insert(0, {tests!r})
from conftest import pristine_starters
from similarity_fixtures import modules
from test_similarity import STAGE_OBJECTS, WORKBOOK, _handed
from forgelab.grading import similarity
found = similarity.compare(WORKBOOK, STAGE_OBJECTS[:1], _handed(modules(pristine_starters())),
                           similarity.Thresholds(percent=1, min_tokens=1))
print(json.dumps([[p.stage, p.left.name, p.right.name, p.percent, p.other_percent, p.tokens, p.slices]
                  for p in found.pairs]))
"""


def test_the_same_figures_in_every_process() -> None:
    """copydetect hashes with hash(), salted per process: without the module's own hash these differ."""
    code = COMPARE_IN_A_PROCESS.format(tests=str(Path(__file__).parent))
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                              cwd=ROOT, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) > 10


def _module(tmp_path: Path, name: str, data: bytes) -> HandedModule:
    path = tmp_path / name
    path.write_bytes(data)
    return similarity.read_module(path, STAGE_OBJECTS[0])


def test_hostile_modules_are_named_not_crashed_on(tmp_path: Path) -> None:
    reference = (ROOT / "solutions" / INSTRUCTIONS).read_text(encoding="utf-8")
    huge = _module(tmp_path, "huge.py", b"x = 1\n" * (similarity.MAX_MODULE_BYTES // 6 + 1))
    binary = _module(tmp_path, "binary.py", reference.encode() + b"\0\xff")
    latin = _module(tmp_path, "latin.py", "# caf\xe9\n".encode("latin-1") + reference.encode())
    broken = _module(tmp_path, "broken.py", reference.replace("def explain(", "def explain((").encode())
    nested = _module(tmp_path, "nested.py", ("x = " + "-" * 5_000 + "1\n").encode())  # too deep for ast.parse
    (tmp_path / "link.py").symlink_to(ROOT / "solutions" / INSTRUCTIONS)
    link = similarity.read_module(tmp_path / "link.py", STAGE_OBJECTS[0])
    assert [m.status for m in (huge, binary, latin, broken, nested, link)] == [
        Status.TOO_LARGE, Status.BINARY, Status.NOT_UTF8, Status.SYNTAX_ERROR, Status.SYNTAX_ERROR, Status.MISSING]
    assert huge.text == binary.text == latin.text == link.text == ""
    handed = {name: [module] for name, module in
              (("huge", huge), ("binary", binary), ("latin", latin), ("broken", broken), ("nested", nested),
               ("link", link))}
    started = time.monotonic()
    comparison = similarity.compare(WORKBOOK, STAGE_OBJECTS[:1], handed, Thresholds())
    assert time.monotonic() - started < 120
    assert ("01", "broken", "course") in _flagged(comparison.pairs)  # a copy with a syntax error is still a copy
    assert sorted(comparison.not_compared) == [("binary", "01", Status.BINARY), ("huge", "01", Status.TOO_LARGE),
                                               ("latin", "01", Status.NOT_UTF8), ("link", "01", Status.MISSING)]
    pairs, index = similarity.write_pages(COURSE, tmp_path / "out", comparison, Thresholds(), "en")
    text = index.read_text(encoding="utf-8")
    for words in ("larger than 64 KB", "binary data", "not UTF-8", "does not parse as Python"):
        assert words in text, words
    page = (tmp_path / "out" / pairs[0].page).read_text(encoding="utf-8")
    assert "does not parse as Python" in page


def test_a_module_cannot_write_into_the_page(tmp_path: Path) -> None:
    reference = (ROOT / "solutions" / INSTRUCTIONS).read_text(encoding="utf-8")
    planted = reference.replace('"""Decide every key', '"""</pre><script>alert(1)</script> Decide every key')
    handed = {"<b>eve</b>": [HandedModule("01", INSTRUCTIONS, Status.TEXT, "x", planted)]}
    comparison = similarity.compare(WORKBOOK, STAGE_OBJECTS[:1], handed, Thresholds())
    pairs, index = similarity.write_pages(COURSE, tmp_path, comparison, Thresholds(), "en")
    page = (tmp_path / pairs[0].page).read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;eve&lt;/b&gt;" in page
    assert "<b>eve</b>" not in index.read_text(encoding="utf-8")


def test_the_pages_speak_chinese(tmp_path: Path) -> None:
    handed = _handed(modules(pristine_starters()))
    comparison = similarity.compare(WORKBOOK, STAGE_OBJECTS, handed, Thresholds())
    pairs, index = similarity.write_pages(COURSE, tmp_path, comparison, Thresholds(), "zh")
    text = index.read_text(encoding="utf-8")
    assert 'lang="zh-CN"' in text and "参考答案" in text and "Similar code" not in text
    page = (tmp_path / pairs[0].page).read_text(encoding="utf-8")
    assert "共有" in page and "For the instructor" not in page


# ---------------------------------------------------------------- the class, graded


def _grade(paths: list[str], out: Path, *extra: str) -> dict[str, Any]:
    started = time.monotonic()
    done = run_cli(ROOT, "grade", *paths, "--stages", ",".join(STAGES), "--out", str(out), *extra, timeout=1500)
    return {"returncode": done.returncode, "output": done.output, "out": str(out),
            "wall_s": round(time.monotonic() - started, 1)}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The class graded at --jobs 1 and at --jobs 2 (once per test session)."""

    def make(folder: Path) -> dict[str, Any]:
        paths = build_class(folder / "submissions")
        listed = [paths[name] for name in NAMES]
        return {"paths": paths, "one": _grade(listed, folder / "jobs-1", "--jobs", "1"),
                "two": _grade(listed, folder / "jobs-2", "--jobs", "2")}

    made = shared(tmp_path_factory, "similarity-class", make)
    for run in ("one", "two"):
        assert made[run]["returncode"] == 0, made[run]["output"][-3000:]
    print(f"similarity class graded in {made['one']['wall_s']} s (--jobs 1) and {made['two']['wall_s']} s (--jobs 2)")
    return made


def _table(out: str) -> list[tuple[object, ...]]:
    connection = sqlite3.connect(Path(out) / "gradebook.sqlite")
    try:
        return list(connection.execute("SELECT * FROM similarity ORDER BY stage, submission, other"))
    finally:
        connection.close()


@pytest.mark.slow
def test_grading_flags_exactly_the_copies_each_with_its_page(graded: dict[str, Any]) -> None:
    out = Path(graded["two"]["out"])
    rows = _table(str(out))
    assert {(stage, submission, "course" if kind != "submission" else other)
            for stage, submission, other, kind, *_rest in rows} == COPIES
    for stage, submission, other, kind, percent, other_percent, tokens, page in rows:
        text = (out / str(page)).read_text(encoding="utf-8")
        assert str(submission) in text and f"Stage {stage}" in text and "<mark>" in text
        assert (str(other) if kind == "submission" else {"reference": "solutions/forge/",
                                                         "fault_lab": "failure_labs/02-"}[str(kind)]) in text
        assert max(float(str(percent)), float(str(other_percent))) >= 60 and int(str(tokens)) >= 150
    index = (out / "similarity" / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{Path(str(row[7])).name}"' in index for row in rows)
    assert "3 pair(s) flagged for review" in graded["two"]["output"] and "similarity/index.html" in graded["two"]["output"]
    with (out / "totals.csv").open(encoding="utf-8") as handle:
        totals = {row["submission"]: row["similarity"] for row in csv.DictReader(handle)}
    assert totals["jon"].startswith("01: ivy ") and totals["ivy"].startswith("01: jon ")
    assert totals["hal"].startswith("01: reference 100% similarity/01-")
    assert totals["gil"].startswith("02: fault_lab 94% similarity/02-")
    assert not any(totals[name] for name in (*HONEST, "kim", "lou"))
    with (out / "gradebook.csv").open(encoding="utf-8") as handle:
        flagged = {(row["submission"], row["stage"]) for row in csv.DictReader(handle) if row["similarity"]}
    assert flagged == {("gil", "02"), ("hal", "01"), ("ivy", "01"), ("jon", "01")}


@pytest.mark.slow
def test_the_honest_solutions_are_correct(graded: dict[str, Any]) -> None:
    """The honest set is honest work: every one passes its stage's tests (what a learner's check would show)."""
    with (Path(graded["two"]["out"]) / "gradebook.csv").open(encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if row["item"] == "stage_tests"]
    for name in (*HONEST, "ivy", "jon", "hal"):
        for row in rows:
            if row["submission"] == name and (row["stage"] == "01" or name in HONEST):
                assert row["outcome"] == "passed", (name, row["stage"], row["reason"])


@pytest.mark.slow
def test_jobs_1_and_jobs_2_write_the_same_bytes(graded: dict[str, Any]) -> None:
    one, two = Path(graded["one"]["out"]), Path(graded["two"]["out"])
    assert _table(str(one)) == _table(str(two)) and _table(str(one))
    pages = sorted(path.name for path in (one / "similarity").iterdir())
    assert pages == sorted(path.name for path in (two / "similarity").iterdir()) and len(pages) == 4
    for name in pages:
        assert (one / "similarity" / name).read_bytes() == (two / "similarity" / name).read_bytes(), name
    for name in ("gradebook.csv", "totals.csv"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name


@pytest.mark.slow
def test_no_feedback_page_says_a_word_about_it(graded: dict[str, Any]) -> None:
    out = Path(graded["two"]["out"])
    assert _table(str(out)), "nothing was flagged: this test would prove nothing"
    for name in NAMES:
        page = (out / "feedback" / f"{name}.html").read_text(encoding="utf-8")
        others = [other for other in NAMES if other != name]
        for word in ("similar", "Similar", "similarity/", "reference solution", "fault lab's broken", "mutant",
                     "shared"):
            assert word not in page, (name, word)
        for other in others:  # as a word: "hal" is in "challenge"
            assert not re.search(rf"\b{other}\b", page), (name, other)


@pytest.mark.slow
def test_the_thresholds_are_flags_of_grade(graded: dict[str, Any], tmp_path: Path) -> None:
    paths = graded["paths"]
    done = _grade([paths["gil"], paths["hal"]], tmp_path / "strict", "--similarity-percent", "95")
    assert done["returncode"] == 0, done["output"][-3000:]
    assert [(row[0], row[1]) for row in _table(done["out"])] == [("01", "hal")]
    assert "1 pair(s) flagged" in done["output"]
    settings = sqlite3.connect(Path(done["out"]) / "gradebook.sqlite").execute("SELECT settings FROM runs").fetchone()[0]
    assert json.loads(settings)["similarity"] == {"percent": 95, "min_tokens": 150, "noise": 35}
    refused = run_cli(ROOT, "grade", paths["gil"], "--similarity-percent", "101", "--out", str(tmp_path / "x"))
    assert refused.returncode == 2 and "more than 100" in refused.output
