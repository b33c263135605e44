"""`forgelab grade report`: what a graded class struggles with, from the gradebook alone, aggregates only.

The class of eight (``class_fixtures.py``: correct, partial, wrong, starter and hostile learners, with
evidence, hints and quiz answers in their learning records) is graded once per test session on stages 01
and 05; the report's figures are asserted exactly against what the class was built to be, its HTML is
opened in Chromium with the network blocked (every figure must load), and nothing in it names a learner.
The learning record itself is proved where the tools write it (``forgelab hint``, ``forgelab check``, the
notebook's prediction widget), and the analysis on small hand-made classes: the item flags, the privacy
rules, a class below the threshold, shards that do not belong together.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from browser import CHROMIUM_ARGS, WAIT_MS, chromium, require_chromium  # noqa: F401 (fixture)
from class_fixtures import NAMES, shared_graded_class
from conftest import ROOT, run_cli

from forgelab.core import learning

# the class report (graded, then reported in both editions) is made once per run: one xdist worker (--dist loadgroup)
# grading the class of eight takes minutes on a crowded machine: the module allows 900 s, as test_grading does
pytestmark = [pytest.mark.xdist_group("class-report"), pytest.mark.timeout(900)]

ARTIFACTS = ROOT / "test-artifacts" / "report"
# a first difference as the report shows it: its kind and the path into the course's expected value, never the
# values or messages the learners' code produced (issue 30: test_report_privacy)
SAME_RANK = "values differ at ['format']"


# ---------------------------------------------------------------- the class, graded once


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    made = shared_graded_class(tmp_path_factory)
    single = made["single"]
    assert single["returncode"] == 0, single["stdout"][-3000:] + single["stderr"][-3000:]
    return made


@pytest.fixture(scope="module")
def reported(graded: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report of the class in both editions, over a copy of the graded folder (the Slurm test reads the original)."""
    import shutil

    out = tmp_path_factory.mktemp("class-report") / "graded"
    shutil.copytree(graded["single"]["out"], out)
    runs = {language: run_cli(ROOT, "grade", "report", str(out), "--html", "--lang", language, timeout=600)
            for language in ("en", "zh")}
    for language, done in runs.items():
        assert done.returncode == 0, (language, done.output[-3000:])
        assert "Traceback" not in done.output
    report = json.loads((out / "report" / "report.json").read_text(encoding="utf-8"))
    return {"out": out, "runs": runs, "report": report, **graded}


def _stage(report: dict[str, Any], number: str) -> dict[str, Any]:
    return next(figure for figure in report["stage_figures"] if figure["stage"] == number)


def _test(stage: dict[str, Any], name: str) -> dict[str, Any]:
    return next(test for test in stage["tests"] if test["test"] == name)


def test_the_report_covers_the_class_it_read(reported: dict[str, Any]) -> None:
    report = reported["report"]
    assert (report["submissions"], report["left_out"], report["stages"]) == (8, 0, ["01", "05"])
    assert (report["withheld"], report["has_tests"], report["min_class"]) == (False, True, 5)
    assert [run["shard"] for run in report["shards"]] == [""] and report["missing_shards"] == []
    # totals: three correct (200, 200 and 185 of 200), one partial (175), three wrong in both stages, one starter
    assert report["score_bins"] == [1, 0, 0, 0, 0, 0, 3, 0, 1, 3]
    assert "read from one grading run over the whole class" in reported["runs"]["en"].stdout


def test_the_report_links_the_similarity_index(reported: dict[str, Any]) -> None:
    """Where grading compared the modules, the report links its index (in both editions) and counts the flagged pairs
    — the pages name submissions, so the report itself only links them."""
    from forgelab.grading import gradebook

    connection = sqlite3.connect(reported["out"] / gradebook.FILENAME)
    try:
        [(pairs,)] = connection.execute("SELECT count(*) FROM similarity")
    finally:
        connection.close()
    assert pairs > 0  # the correct learners' modules are the reference's
    report = reported["report"]
    assert report["similarity"] == {"index": "../similarity/index.html", "flagged_pairs": pairs}
    index = (reported["out"] / "similarity" / "index.html").resolve()
    assert index.is_file()
    for name in ("report.html", "report.zh.html"):
        page = (reported["out"] / "report" / name).read_text(encoding="utf-8")
        [href] = re.findall(r'<a id="similarity-index" href="([^"]+)"', page)
        assert (reported["out"] / "report" / href).resolve() == index, name
        assert f'<dd id="flagged-pairs">{pairs}</dd>' in page, name
    assert f"similar code: {pairs} pair(s) flagged for review — the similarity index: " in reported["runs"]["en"].stdout


def test_stage_01_figures(reported: dict[str, Any]) -> None:
    stage = _stage(reported["report"], "01")
    assert (stage["submissions"], stage["mean_points"], stage["max_points"]) == (8, 71.375, 100)  # dara: lab unfixed, test earns 5
    assert (stage["fault_labs_handed_in"], stage["fault_labs_fixed"]) == (7, 6)  # the starter has none, dara's is broken
    assert (stage["transfer_written"], stage["transfer_cannot_tell"]) == (7, 1)  # hana's `assert True`
    # fay handed in no diagnosis, cai's names the wrong defect, bo's was right only at her second attempt
    assert (stage["diagnoses_stated"], stage["diagnoses_right_first_try"]) == (7, 5)
    assert stage["fault_hints"] == {"recorded": 7, "available": 6, "median": 0.0,  # rungs shown by the diagnosis
                                    "depths": [{"value": depth, "count": count}
                                               for depth, count in enumerate([5, 0, 0, 0, 1, 0, 1])]}
    assert (stage["learning_recorded"], stage["learning_unreadable"]) == (5, 2)  # eli has none; gus's and hana's are not trusted
    assert stage["hints"] == {"recorded": 5, "available": 6, "median": 2.0,
                              "depths": [{"value": depth, "count": count}
                                         for depth, count in enumerate([1, 1, 1, 1, 0, 0, 1])]}
    assert (stage["prediction_answered"], stage["prediction_answer"]) == (5, 1)
    assert [choice["count"] for choice in stage["prediction_choices"]] == [2, 2, 0, 1]  # A twice, D once: the wrong ones
    # 40 and 60 minutes: two learners' own times, a group smaller than --min-class (5): withheld
    assert (stage["accepted_timed"], stage["median_minutes_to_accept"]) == (2, None)
    same_rank = _test(stage, "test_same_rank_conflict_keeps_the_earlier_instruction")
    assert (same_rank["label"], same_rank["failing"], same_rank["submissions"], same_rank["fail_share"]) == ("T5", 5, 8, 0.625)
    # cai, dara and eli share the mistake's first difference; gus's lying results and fay's stub differ
    assert same_rank["differences"] == [{"kind": "values_differ_at", "at": "['format']", "count": 3}]
    assert same_rank["unshared"] == 2
    immutable = _test(stage, "test_instructions_are_immutable")
    assert (immutable["failing"], immutable["fail_share"], immutable["differences"]) == (0, 0.0, [])
    starter_only = _test(stage, "test_lower_trust_instruction_cannot_override_system")
    assert (starter_only["failing"], starter_only["differences"], starter_only["unshared"]) == (1, [], 1)
    checks = [test for test in stage["tests"] if test["kind"] == "instructor_check"]
    assert [test["label"] for test in checks] == ["C1", "C2", "C3", "C4"]
    assert all(test["differences"] == [] and test["unshared"] == 0 for test in checks)  # name and share only


def test_stage_05_figures(reported: dict[str, Any]) -> None:
    stage = _stage(reported["report"], "05")
    assert (stage["fault_labs_handed_in"], stage["fault_labs_fixed"]) == (7, 7)
    assert (stage["transfer_written"], stage["transfer_cannot_tell"]) == (7, 0)
    assert (stage["diagnoses_stated"], stage["diagnoses_right_first_try"]) == (7, 7)
    assert (stage["learning_recorded"], stage["learning_unreadable"]) == (5, 1)  # gus's stage 05 is possible: kept
    assert stage["hints"]["median"] == 2.0 and stage["hints"]["available"] == 9
    assert [entry["count"] for entry in stage["hints"]["depths"]] == [1, 1, 1, 0, 1, 0, 0, 0, 0, 1]
    assert [choice["count"] for choice in stage["prediction_choices"]] == [2, 2, 1, 0]
    assert (stage["accepted_timed"], stage["median_minutes_to_accept"]) == (3, None)  # 20, 50, 30 minutes: withheld
    fenced = _test(stage, "test_fenced_json_and_trailing_comma_are_repaired")
    assert (fenced["failing"], fenced["fail_share"]) == (4, 0.5)
    assert fenced["differences"] == [{"kind": "raised", "at": "ValueError", "count": 3}]  # dara, eli, gus: no ~~~


def test_item_analysis_signs(reported: dict[str, Any]) -> None:
    items = {(item["stage"], item["test"]): item for item in reported["report"]["items"]}
    assert len(items) == 13 + 4 + 27 + 3  # stage tests and instructor checks of stages 01 and 05
    immutable = items[("01", "test_instructions_are_immutable")]
    assert (immutable["difficulty"], immutable["discrimination"], immutable["flag"]) == (1.0, None, "everyone_passes")
    # every other test is passed by the stronger submissions and failed by the weaker: a positive correlation
    others = [item for key, item in items.items() if key != ("01", "test_instructions_are_immutable")]
    assert all(item["discrimination"] > 0.2 and item["flag"] == "" for item in others), \
        [(item["label"], item["discrimination"]) for item in others if not item["discrimination"] > 0.2]
    same_rank = items[("01", "test_same_rank_conflict_keeps_the_earlier_instruction")]
    assert same_rank["difficulty"] == 0.375 and same_rank["discrimination"] > 0.5


def test_the_terminal_summary(reported: dict[str, Any]) -> None:
    text = reported["runs"]["en"].stdout
    assert "class report: 8 submission(s), stage(s) 01, 05" in text
    assert f"{SAME_RANK} × 3" in text
    assert re.search(r"fault labs fixed\s+6 of 7 handed in", text)
    assert re.search(r"prediction quiz, wrong options chosen\s+A × 2, D × 1", text)
    assert "items that do not separate strong from weak submissions: 1 of 47" in text
    assert "report.html" in text and "report.json" in text
    zh = reported["runs"]["zh"].stdout
    assert "班级报告" in zh and "× 3" in zh and "class report" not in zh


def test_the_report_names_no_learner_and_no_path(reported: dict[str, Any]) -> None:
    folder = reported["out"] / "report"
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    assert {path.name for path in files} >= {"report.json", "report.html", "report.zh.html", "score-distribution.svg",
                                             "failure-heat-map.svg", "discrimination.svg", "score-distribution.zh.svg"}
    secret = [*NAMES, *reported["paths"].values(), reported["submissions"]]
    for path in files:
        text = path.read_text(encoding="utf-8").lower()
        for word in secret:
            assert word.lower() not in text, f"{path.name} names {word!r}"
    for output in reported["runs"].values():
        for word in secret:
            assert word.lower() not in output.stdout.lower()


def test_figures_are_the_same_bytes_when_drawn_again(reported: dict[str, Any], tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "again"
    shutil.copytree(reported["out"], out, ignore=shutil.ignore_patterns("report"))
    assert run_cli(ROOT, "grade", "report", str(out), "--html", timeout=600).returncode == 0
    for name in ("report.json", "report.html", "figures/score-distribution.svg", "figures/failure-heat-map.svg",
                 "figures/discrimination.svg"):
        assert (out / "report" / name).read_bytes() == (reported["out"] / "report" / name).read_bytes(), name


def test_a_class_smaller_than_the_threshold_gets_no_breakdown(reported: dict[str, Any], tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "small"
    shutil.copytree(reported["out"], out, ignore=shutil.ignore_patterns("report"))
    done = run_cli(ROOT, "grade", "report", str(out), "--html", "--min-class", "9", timeout=300)
    assert done.returncode == 0, done.output
    assert "fewer than 9: per-stage and per-item figures are withheld" in done.stdout
    report = json.loads((out / "report" / "report.json").read_text(encoding="utf-8"))
    assert report["withheld"] and (report["stage_figures"], report["items"], report["score_bins"]) == ([], [], [])
    page = (out / "report" / "report.html").read_text(encoding="utf-8")
    assert 'id="withheld"' in page and "<img" not in page and "test_same_rank" not in page
    # the index is still linked (it is the instructor's), but how many pairs it flags is withheld with the rest
    assert report["similarity"] == {"index": "../similarity/index.html", "flagged_pairs": None}
    assert 'id="similarity-index"' in page and 'id="flagged-pairs"' not in page
    assert not (out / "report" / "figures").exists()


# ---------------------------------------------------------------- the page in Chromium


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_page_in_chromium(reported: dict[str, Any], chromium: Any, language: str) -> None:  # noqa: F811
    from playwright.sync_api import expect

    from forgelab.core.i18n import _, speaking
    from forgelab.grading.report import difference_words

    page_file = reported["out"] / "report" / ("report.html" if language == "en" else "report.zh.html")
    context = chromium.new_context(viewport={"width": 1100, "height": 900}, java_script_enabled=False)
    outside: list[str] = []

    def guard(route: Any) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    try:
        page.goto(page_file.as_uri())
        with speaking(language):
            expect(page.locator("h1")).to_have_text(_("Class report"), timeout=WAIT_MS)
            expect(page.locator("#stage-01 h2")).to_contain_text(_("Stage"))
        images = page.locator("img")
        expect(images).to_have_count(3)
        for index in range(3):
            image = images.nth(index)
            expect(image).to_have_js_property("complete", True, timeout=WAIT_MS)
            assert image.evaluate("(element) => element.naturalWidth") > 100, image.get_attribute("src")
        row = page.locator('#stage-01 table.tests tr[data-test="test_same_rank_conflict_keeps_the_earlier_instruction"]')
        expect(row).to_contain_text("62 %")
        with speaking(language):
            expect(row).to_contain_text(difference_words("values_differ_at", "['format']"))
        expect(page.locator("#stage-01 .fault-labs")).to_contain_text("6")
        expect(page.locator("#stage-01 table.quiz tr.wrong-row")).to_have_count(2)  # A and D
        expect(page.locator("table.flagged tr[data-test]")).to_have_count(1)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"class-report-{language}.png"), full_page=True)
    finally:
        context.close()
    assert outside == []


# ---------------------------------------------------------------- the learning record, where the tools write it


def test_hints_are_recorded_at_their_deepest(tmp_path: Path) -> None:
    env = {"FORGELAB_WORKSPACE": str(tmp_path)}
    for args in (("hint", "01"), ("hint", "01"), ("hint", "01", "--reset"), ("hint", "01"), ("fault", "hint", "01"),
                 ("fault", "hint", "05")):
        done = run_cli(ROOT, *args, env=env)
        assert done.returncode == 0, done.output
    record = learning.parse((tmp_path / "evidence" / learning.FILENAME).read_bytes())
    assert list(record.stages) == ["01"]  # the fault lab's ladder is not part of the learning record
    entry = record.stages["01"]
    assert entry.hints is not None and (entry.hints.deepest, entry.hints.available) == (2, 6)  # a reset undoes nothing
    assert entry.prediction is None and entry.checks is None


def test_a_check_records_the_first_check_and_the_first_acceptance(tmp_path: Path) -> None:
    env = {"FORGELAB_WORKSPACE": str(tmp_path)}
    done = run_cli(ROOT, "check", "01", env=env, timeout=300)
    assert done.returncode == 1, done.output  # the starter: not accepted
    first = learning.parse((tmp_path / "evidence" / learning.FILENAME).read_bytes()).stages["01"].checks
    assert first is not None and (first.count, first.accepted_at) == (1, None)
    done = run_cli(ROOT, "check", "01", "--target", "solution", env=env, timeout=300)  # not the learner's: not counted
    again = learning.parse((tmp_path / "evidence" / learning.FILENAME).read_bytes()).stages["01"].checks
    assert again == first


def test_the_notebook_records_the_first_prediction_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORGELAB_ROOT", str(ROOT))
    monkeypatch.setenv("FORGELAB_WORKSPACE", str(tmp_path))
    from forgelab.learner.notebook import stage_tools

    widget = stage_tools("01", lang="en").predict()
    picks = [row.children[0] for row in widget.children[:-2]]
    button = widget.children[-2]
    picks[3].value = True
    button.click()  # D: wrong
    picks[1].value = True
    button.click()  # B: right, but after the rationale was shown
    record = learning.parse((tmp_path / "evidence" / learning.FILENAME).read_bytes())
    prediction = record.stages["01"].prediction
    assert prediction is not None and (prediction.choice, prediction.options, prediction.correct) == (3, 4, False)


def test_a_damaged_record_is_set_aside_and_a_strange_one_is_refused(tmp_path: Path) -> None:
    from forgelab.core.paths import Workbook

    workbook = Workbook(root=ROOT, workspace=tmp_path)
    (tmp_path / "evidence").mkdir()
    (tmp_path / "evidence" / learning.FILENAME).write_text("{ damaged", encoding="utf-8")
    learning.note_hint(workbook, "01", 1, 6)
    assert (tmp_path / "evidence" / "learning-record.damaged.json").read_text(encoding="utf-8") == "{ damaged"
    assert learning.load(workbook).stages["01"].hints == learning.HintDepth(deepest=1, available=6)
    for bad in (b'{"schema_version": 1, "kind": "forge-workbook/learning-record", "stages": {}, "admin": true}',
                b'{"schema_version": 1, "kind": "forge-workbook/learning-record", "stages": {"1": {}}}',
                b'{"schema_version": 1, "stages": {"01": {"hints": {"deepest": "2", "available": 6}}}}',
                b" " * (learning.MAX_BYTES + 1)):
        with pytest.raises(learning.RecordError):
            learning.parse(bad)


# ---------------------------------------------------------------- the analysis on hand-made classes


def _class(rows: dict[str, list[int]], causes: dict[str, list[str]] | None = None) -> Any:
    """A class of submissions × the 13 stage-01 tests (1 = passed), analysed without grading anything."""
    from forgelab.grading import gradebook
    from forgelab.grading.class_facts import STAGE_TEST, StageFacts, TestResult
    from forgelab.grading.report import analyse
    from forgelab.grading.rubric import GradeItem
    from forgelab.core.registry import load_course

    course = load_course(ROOT)
    names = course.stage("01").required_tests
    tests, grades, facts = [], [], []
    for submission, passed in rows.items():
        for index, (name, ok) in enumerate(zip(names, passed)):
            cause = "" if ok else (causes or {}).get(submission, ["a difference"] * 13)[index]
            tests.append(TestResult(submission, "01", STAGE_TEST, name, "passed" if ok else "failed", cause))
        points = 40 * sum(passed) // len(passed)
        grades.append(GradeItem(submission, "01", "stage_tests", points, 40, "passed" if points == 40 else "partial", ""))
        facts.append((submission, "01", StageFacts(transfer="passed")))
    runs = [gradebook.RunRecord("2026-03-02T09:00:00Z", "2026-03-02T09:01:00Z", "0.1.0", course.version, "01", 2,
                                len(rows), "", "", "")]
    return analyse(course, grades, tests, facts, runs)


def test_items_that_do_not_separate_strong_from_weak_are_flagged() -> None:
    rows = {  # s: strong, w: weak. T1 is failed by the two strongest only; T2 by one strong and one weak one
        "s1": [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0], "s2": [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0],
        "s3": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0], "w1": [1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0],
        "w2": [1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0], "w3": [1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0],
    }
    items = {item.label: item for item in _class(rows).items}
    assert items["T1"].flag == "negative" and items["T1"].discrimination is not None and items["T1"].discrimination < 0
    assert items["T13"].flag == "everyone_fails" and items["T13"].discrimination is None
    assert items["T12"].flag == "everyone_passes"
    assert items["T3"].flag == "" and items["T3"].discrimination is not None and items["T3"].discrimination > 0.5
    assert (items["T1"].difficulty, items["T1"].discrimination) == (0.6667, -0.6325)
    assert (items["T2"].flag, items["T2"].discrimination) == ("weak", 0.052)  # positive, but below 0.2
    assert [label for label, item in items.items() if item.flag == ""] == ["T3", "T4", "T5", "T6", "T7", "T8"]


def test_point_biserial_is_pearson_on_a_zero_one_item() -> None:
    from forgelab.grading.report import point_biserial

    assert point_biserial([1, 1, 0, 0], [3, 3, 1, 1]) == pytest.approx(1.0)
    assert point_biserial([1, 0, 1, 0], [1, 2, 3, 4]) == pytest.approx(-0.4472135955)
    assert point_biserial([1, 1, 1], [1, 2, 3]) is None and point_biserial([1, 0], [2, 2]) is None


def test_a_difference_seen_once_or_naming_a_submission_is_not_listed() -> None:
    fail_first = [0, *[1] * 12]
    causes = {name: ["First difference at ['format']: got 'x', expected 'y'", *[""] * 12] for name in ("ana", "bo", "cai")}
    causes["dee"] = ["ValueError: dee-secret was here", *[""] * 12]
    causes["eva"] = ["EvaError: eva was here", *[""] * 12]
    causes["fin"] = ["EvaError: eva was here", *[""] * 12]  # shared, but an exception class of their own: not named
    report = _class({name: fail_first for name in causes}, causes)
    test = report.stage_figures[0].tests[0]
    assert [(d.words(), d.count) for d in test.differences] == [("values differ at ['format']", 3)]
    assert test.unshared == 3  # dee's ValueError (seen once), and the two EvaErrors
    assert "dee" not in report.model_dump_json() and "eva" not in report.model_dump_json()


def test_merge_refuses_shards_of_two_splits_and_names_missing_shards(tmp_path: Path) -> None:
    from forgelab.grading import gradebook, seal

    def shard(folder: Path, text: str) -> Path:
        folder.mkdir()
        connection = gradebook.open_gradebook(folder / gradebook.FILENAME)
        gradebook.start_run(connection, started_at="2026-03-02T09:00:00Z", tool_version="0.1.0", course_version="0.1.0",
                            stages="01", jobs=2, network="none", submissions=0, shard=text, settings='{"cpu": 10}')
        seal.write(connection, folder)
        connection.close()
        return folder

    one, two, three = shard(tmp_path / "a", "1/4"), shard(tmp_path / "b", "2/3"), shard(tmp_path / "c", "3/4")
    with pytest.raises(gradebook.GradebookError, match=r"shards of 3 and of 4 split the submissions differently"):
        gradebook.merge([one, two], tmp_path / "merged")
    with pytest.raises(gradebook.GradebookError, match=r"shard\(s\) 2/4, 4/4 of this split are missing"):
        gradebook.merge([one, three], tmp_path / "merged-2")
    connection, _records = gradebook.merge([one, three], tmp_path / "merged-2", allow_partial=True)
    try:
        read, missing = gradebook.shards_read(gradebook.run_records(connection))
        rows = list(connection.execute("SELECT shard, merged_from FROM runs ORDER BY run_id"))
    finally:
        connection.close()
    assert (read, missing) == (["1/4", "3/4"], ["2/4", "4/4"])
    assert rows == [("1/4", str(one)), ("3/4", str(three))]
    done = run_cli(ROOT, "grade", "report", str(tmp_path / "merged-2"))
    assert done.returncode == 0, done.output
    assert "missing shard(s): 2/4, 4/4" in done.stdout


def test_report_refuses_a_folder_without_a_gradebook(tmp_path: Path) -> None:
    done = run_cli(ROOT, "grade", "report", str(tmp_path))
    assert done.returncode == 2 and "holds no gradebook.sqlite" in done.stderr
    done = run_cli(ROOT, "grade", "report", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and "is not a folder" in done.stderr


def test_an_older_gradebook_is_reported_without_per_test_figures(tmp_path: Path) -> None:
    from forgelab.grading import gradebook

    folder = tmp_path / "old"
    folder.mkdir()
    connection = sqlite3.connect(folder / gradebook.FILENAME)
    for step in (1, 2, 3):
        connection.executescript(gradebook._MIGRATIONS[step])
    connection.execute("PRAGMA user_version = 3")
    connection.close()
    done = run_cli(ROOT, "grade", "report", str(folder), "--min-class", "1")
    assert done.returncode == 0, done.output
    report = json.loads((folder / "report" / "report.json").read_text(encoding="utf-8"))
    assert report["has_tests"] is False and report["submissions"] == 0
    assert report["similarity"] is None  # no similarity index beside it: nothing to link
