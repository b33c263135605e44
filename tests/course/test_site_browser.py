"""The course page in a real browser: progress states, the self-check, every failure explanation,
every malformed input, no network, keyboard and phone width — in both editions (``site_tab`` opens the
English and the Chinese page in turn; the words are compared with the catalog's, ``tab.say``).
Screenshots: test-artifacts/site/ (the Chinese edition's start with ``zh-``)."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from forgelab.core.registry import load_course
from browser import (  # noqa: F401  (fixtures are used by name)
    ARTIFACTS, EDITIONS, ROOT, STAGE_01, Evidence, Say, SitePage, as_bytes, built_site, chromium, edition_base, evidence,
    open_tab, sealed, site_tab,
)

# built_site and evidence are made once per run: both site modules share one xdist worker (--dist loadgroup)
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("course-site")]

ALL_CHECKS = ["schema", "experiment", "required-tests", "fault-lab", "diagnosis", "transfer", "design-answer",
              "test-digests", "integrity"]


def second_stage_key() -> str | None:
    stages = [stage for stage in load_course(ROOT).stages if stage.number != "01"]
    return stages[0].key if stages else None


# ---------------------------------------------------------------- states


def test_the_five_states_in_order_and_they_persist(site_tab: SitePage, evidence: Evidence) -> None:
    tab = site_tab.open_stage()
    assert tab.state() == "not-started"
    assert tab.page.inner_text("#check-state") == tab.say("State: {state} (step {step} of {total}).",
                                                          state=Say("Not started"), step=1, total=5)
    tab.screenshot("state-1-not-started")

    tab.scroll_to_read()
    assert tab.state() == "reading"
    tab.screenshot("state-2-reading")

    download = tab.download_bundle()
    assert download.suggested_filename == {"en": "forge-workbook-lab.zip", "zh": "forge-workbook-lab-zh.zip"}[tab.language]
    assert tab.state() == "lab-downloaded"
    tab.screenshot("state-3-lab-downloaded")

    tab.pick_document(evidence.starter)
    assert tab.state() == "results-read"
    assert re.fullmatch(tab.pattern(Say("Not passed yet: {failing} of {count} checks need work", {"count": 9})),
                        tab.headline()), tab.headline()
    tab.screenshot("state-4-results-read")

    tab.pick_document(evidence.passing)
    assert tab.state() == "self-check-passed"
    assert tab.headline() == tab.say("Self-check passed")
    tab.screenshot("state-5-self-check-passed")

    labels = tab.page.eval_on_selector_all(
        "#check-steps li", "items => items.map(li => [li.dataset.step, li.querySelector('.step-status').textContent])")
    done, current = tab.say("done"), tab.say("current")
    assert labels == [["not-started", done], ["reading", done], ["lab-downloaded", done],
                      ["results-read", done], ["self-check-passed", current]]

    tab.page.reload()
    assert tab.state() == "self-check-passed"
    assert tab.headline() == tab.say("Self-check passed")
    assert tab.page.inner_text("#report .report-caption") == tab.say("Last result, saved in this browser: {file}",
                                                                     file="verification.json")

    tab.open("index.html")
    assert tab.page.get_attribute('[data-progress-for="01"]', "data-state") == "self-check-passed"
    assert tab.page.inner_text('[data-progress-for="01"]') == tab.say("Self-check passed")


def test_a_failing_file_after_a_passing_one_goes_back_to_results_read(site_tab: SitePage, evidence: Evidence) -> None:
    tab = site_tab.open_stage()
    tab.pick_document(evidence.passing)
    assert tab.state() == "self-check-passed"
    tab.pick_document(evidence.starter)
    assert tab.state() == "results-read"


def _steps(tab: SitePage) -> dict[str, str]:
    return dict(tab.page.eval_on_selector_all(
        "#check-steps li", "items => items.map(li => [li.dataset.step, li.querySelector('.step-status').textContent])"))


def _of_another_stage(document: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The same evidence, sealed as if it were the evidence of the course's second stage."""
    other = [stage for stage in load_course(ROOT).stages if stage.number != "01"][0]
    return sealed({**document, "experiment_id": other.experiment_id}), other.number


def test_a_wrong_stage_file_after_a_passing_one_takes_the_pass_away_and_says_why(
        site_tab: SitePage, evidence: Evidence) -> None:
    tab = site_tab.open_stage()
    tab.pick_document(evidence.passing, "mine.json")
    assert tab.state() == "self-check-passed"
    assert tab.page.is_hidden("#previous-report")

    wrong, number = _of_another_stage(evidence.passing_copy())
    tab.pick_document(wrong, "stage-two.json")
    assert tab.state() == "results-read"  # no longer "self-check passed"
    belongs = tab.say("This file belongs to Stage {number}", number=number)
    assert tab.headline() == belongs
    state_line = tab.page.inner_text("#check-state")
    assert state_line.startswith(tab.say("State: {state} (step {step} of {total}).", state=Say("Results read"),
                                         step=4, total=5))
    assert tab.say(" Your last pick, {file}, is not a result for this stage ({why}), so this stage is not marked as "
                   "passed.", file="stage-two.json", why=belongs) in state_line
    previous = tab.page.inner_text("#previous-report")
    assert tab.page.is_visible("#previous-report")
    assert previous.startswith(tab.say("Previous result — no longer the current verdict: ").strip())
    assert tab.say("Self-check passed") in previous and "mine.json" in previous
    assert tab.page.query_selector("#previous-report details[open]") is None  # folded: not the verdict
    tab.screenshot("wrong-stage-after-passed")
    tab.panel_screenshot("wrong-stage-after-passed")

    tab.page.reload()  # the replaced verdict is remembered, and still explained
    assert tab.state() == "results-read"
    problem, text = tab.message()
    assert problem == "other-stage" and belongs in text and "stage-two.json" in text
    assert tab.say("Previous result — no longer the current verdict: ").strip() in tab.page.inner_text("#previous-report")
    tab.open("index.html")
    assert tab.page.get_attribute('[data-progress-for="01"]', "data-state") == "results-read"

    tab.open_stage()
    tab.pick_document(evidence.passing, "mine.json")  # a valid pick is the current verdict again
    assert tab.state() == "self-check-passed"
    assert tab.message() == (None, "")
    assert tab.page.is_hidden("#previous-report")
    assert tab.page.inner_text("#check-state") == tab.say("State: {state} (step {step} of {total}).",
                                                          state=Say("Self-check passed"), step=5, total=5)


def test_a_wrong_stage_file_first_is_no_progress_and_no_previous_result(site_tab: SitePage, evidence: Evidence) -> None:
    wrong, number = _of_another_stage(evidence.passing_copy())
    tab = site_tab.open_stage()
    tab.pick_document(wrong, "stage-two.json")
    assert tab.state() in ("not-started", "reading")
    assert tab.page.is_hidden("#previous-report")
    assert "stage-two.json" in tab.page.inner_text("#check-state")


def test_lab_downloaded_only_after_a_click_on_the_download_link(site_tab: SitePage, evidence: Evidence) -> None:
    tab = site_tab.open_stage()
    tab.pick_document(evidence.starter)  # results read, without reading or downloading first
    assert tab.state() == "results-read"
    steps = _steps(tab)
    assert steps["lab-downloaded"] == tab.say("not downloaded here") and steps["results-read"] == tab.say("current")
    assert steps["not-started"] == tab.say("done") and steps["reading"] in (tab.say("skipped"), tab.say("done"))
    assert "done" not in (tab.page.get_attribute('#check-steps li[data-step="lab-downloaded"]', "class") or "")
    tab.panel_screenshot("results-read-without-download")

    tab.pick_document(evidence.passing)
    assert tab.state() == "self-check-passed"
    assert _steps(tab)["lab-downloaded"] == tab.say("not downloaded here")  # still: passing is no download
    tab.page.reload()
    assert _steps(tab)["lab-downloaded"] == tab.say("not downloaded here")

    tab.download_bundle()
    assert _steps(tab)["lab-downloaded"] == tab.say("done")
    tab.panel_screenshot("passed-then-downloaded")
    assert "done" in tab.page.get_attribute('#check-steps li[data-step="lab-downloaded"]', "class")
    tab.page.reload()
    assert _steps(tab)["lab-downloaded"] == tab.say("done")


def test_clear_progress_returns_to_not_started(site_tab: SitePage, evidence: Evidence) -> None:
    tab = site_tab.open_stage()
    tab.pick_document(evidence.passing)
    tab.page.click("#clear-progress")
    assert tab.state() == "not-started"
    assert tab.page.inner_text("#report") == ""
    tab.page.reload()
    assert tab.state() in ("not-started", "reading")  # a reload may restore the scroll position
    assert tab.page.inner_text("#report") == ""


def test_clear_all_progress_on_the_index(site_tab: SitePage, evidence: Evidence) -> None:
    tab = site_tab.open_stage()
    tab.pick_document(evidence.passing)
    tab.open("index.html")
    tab.page.click("#clear-all-progress")
    assert tab.page.get_attribute('[data-progress-for="01"]', "data-state") == "not-started"
    assert tab.page.inner_text("#index-status") == tab.say("Progress for every stage was cleared in this browser.")
    tab.open_stage()
    assert tab.page.inner_text("#report") == ""


def test_damaged_local_storage_is_treated_as_no_progress(site_tab: SitePage) -> None:
    tab = site_tab.open_stage()
    tab.page.evaluate("localStorage.setItem('forge-workbook:prompt-context-output:01-instruction-hierarchy', '{oops')")
    tab.page.reload()
    assert tab.state() in ("not-started", "reading")


# ---------------------------------------------------------------- a passing file


def test_the_reference_evidence_passes_every_check(site_tab: SitePage, evidence: Evidence) -> None:
    tab = site_tab.open_stage()
    tab.pick_document(evidence.passing)
    statuses = tab.checks()
    assert {key: statuses[key] for key in ALL_CHECKS} == dict.fromkeys(ALL_CHECKS, "pass")
    status, text = tab.check("target")
    assert status == "note" and tab.say("This file was produced against the reference solution (target “solution”), "
                                        "not against your own forge/. It shows the course works; it does not show "
                                        "that you built the stage.") in text
    assert tab.page.get_attribute("#report", "data-outcome") == "passed"
    assert tab.foreign_requests() == []


def test_learner_target_has_no_target_note(site_tab: SitePage, evidence: Evidence) -> None:
    document = evidence.passing_copy()
    document["target"] = {"name": "learner", "kind": "learner"}
    tab = site_tab.open_stage()
    tab.pick_document(sealed(document))
    assert tab.headline() == tab.say("Self-check passed")
    assert "target" not in tab.checks()


def test_the_file_of_stage_01_on_another_stage_page_says_where_it_belongs(site_tab: SitePage, evidence: Evidence) -> None:
    other = second_stage_key()
    if other is None:
        pytest.skip("the course has only stage 01 so far")
    tab = site_tab.open(f"{other}.html")
    tab.pick_document(evidence.passing)
    assert tab.headline() == tab.say("This file belongs to Stage {number}", number="01")
    status, text = tab.check("experiment")
    title = load_course(ROOT).stages[0].text(tab.language).title
    assert status == "fail" and tab.say("Go to Stage {number} · {title}", number="01", title=title) in text
    assert tab.page.get_attribute('#report .check[data-check="experiment"] a', "href") == f"{STAGE_01}.html"
    assert tab.checks()["required-tests"] == "skip"
    assert tab.state() in ("not-started", "reading")  # another stage's file is no progress on this one
    tab.screenshot("other-stage-file")


# ---------------------------------------------------------------- each failure explained

def _fail_required(doc: dict[str, Any]) -> None:
    row = next(r for r in doc["tests"] if r["name"] == "test_input_is_not_mutated")
    row.update(outcome="failed", cause="AssertionError: the input list changed")


def _drop_required(doc: dict[str, Any]) -> None:
    doc["tests"] = [r for r in doc["tests"] if r["name"] != "test_empty_input_gives_an_empty_result"]


def _fault(status: str, detail: str) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc["fault_lab"].update(status=status, detail=detail)


def _diagnosis(status: str, detail: str) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc["fault_lab"].update(diagnosis={"status": status, "detail": detail})


def _transfer(status: str, detail: str) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc["transfer"].update(status=status, detail=detail)


def _design(status: str, detail: str) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc["design_answer"].update(status=status, detail=detail, words=3)


def _edited_tests(doc: dict[str, Any]) -> None:
    doc["digests"]["tests"][0]["sha256"] = hashlib.sha256(b"an edited test file").hexdigest()


FAILURES: dict[str, tuple[Callable[[dict[str, Any]], None], str, list[str | Say]]] = {
    "required-test-failed": (_fail_required, "required-tests",
                             [Say("{failing} of {total} required tests do not pass yet", {"failing": 1, "total": 13}),
                              Say("{name} — {outcome}: {cause}", {"name": "test_input_is_not_mutated", "outcome":
                                  Say("failed"), "cause": "AssertionError: the input list changed"})]),
    "required-test-missing": (_drop_required, "required-tests",
                              [Say("{name} — not in the file: it did not run (were the stage tests edited?)",
                                   {"name": "test_empty_input_gives_an_empty_result"})]),
    "fault-lab-not-started": (_fault("not_started", "start it with `forgelab fault start 01`"), "fault-lab",
                              [Say("Fault lab not started"), Say("Start it with `forgelab fault start {number}`, find "
                                                                 "the defect in the lab copy of {file}, fix it there "
                                                                 "and check again.", {"number": "01"})]),
    "fault-lab-broken": (_fault("broken", "test_lower_trust_instruction_cannot_override_system still fails"),
                         "fault-lab", [Say("Fault lab not fixed yet"), Say("The lab copy still fails: {detail}", {
                             "detail": "test_lower_trust_instruction_cannot_override_system still fails."})]),
    "diagnosis-not-stated": (_diagnosis("missing", "not stated yet"), "diagnosis",
                             [Say("Fault lab diagnosis not stated"),
                              Say("Say what is wrong in the lab before you repair it: `forgelab fault diagnose {number}` "
                                  "(or part 7 of the notebook) asks which test shows the defect, where it lies and what "
                                  "it is.", {"number": "01"})]),
    "diagnosis-not-right": (_diagnosis("not_right", "stated, not right yet (where it lies)"), "diagnosis",
                            [Say("Fault lab diagnosis not right yet"), "stated, not right yet (where it lies)."]),
    "transfer-not-written": (_transfer("not_written", "still the starter"), "transfer",
                             [Say("Transfer test not written yet"), "still the starter."]),
    "transfer-failed": (_transfer("failed", "test_office failed: assert 'allow' == 'deny'"), "transfer",
                        [Say("Transfer test fails"), "assert 'allow' == 'deny'"]),
    "transfer-cannot-tell": (_transfer("cannot_tell", "1 transfer test(s) pass, but it passes on the stage's "
                                                      "known-wrong implementation too"), "transfer",
                             [Say("Transfer test cannot tell right from wrong"), "known-wrong implementation"]),
    "design-answer-missing": (_design("missing", "no answer yet"), "design-answer", [Say("No design answer yet")]),
    "design-answer-too-short": (_design("too_short", "3 words; a real answer needs at least 40"), "design-answer",
                                [Say("Design answer too short"), "at least 40"]),
    "tests-edited": (_edited_tests, "test-digests",
                     [Say("Stage tests were edited"), "tests/stages/test_01_instruction_hierarchy.py",
                      Say("The file was produced with stage tests that differ from the published course version, so it "
                          "proves nothing about the real tests. Restore the original test file and run `forgelab check "
                          "{number}` again.", {"number": "01"})]),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_each_failing_part_is_explained(site_tab: SitePage, evidence: Evidence, case: str) -> None:
    mutate, check_id, phrases = FAILURES[case]
    document = evidence.passing_copy()
    mutate(document)
    tab = site_tab.open_stage()
    tab.pick_document(sealed(document))
    status, text = tab.check(check_id)
    assert status == "fail"
    for phrase in phrases:
        assert tab.shows(phrase, text), (phrase, text)
    others = {key: value for key, value in tab.checks().items() if key in ALL_CHECKS and key != check_id}
    assert set(others.values()) == {"pass"}, others
    assert tab.headline() == tab.say("Not passed yet: {failing} of {count} checks need work", failing=1, count=9)
    assert tab.state() == "results-read"
    tab.screenshot(f"failure-{case}")


def test_the_starter_evidence_names_the_failing_tests(site_tab: SitePage, evidence: Evidence) -> None:
    tab = site_tab.open_stage()
    tab.pick_document(evidence.starter)
    status, text = tab.check("required-tests")
    assert status == "fail" and tab.shows(Say("{failing} of {total} required tests do not pass yet",
                                              {"failing": 12, "total": 13}), text)
    failed = Say("{name} — {outcome}: {cause}", {"name": "test_lower_trust_instruction_cannot_override_system",
                                                  "outcome": Say("failed")})
    assert re.search(tab.pattern(failed) + "not implemented yet", text), text
    assert tab.check("fault-lab")[0] == "fail"
    assert tab.check("transfer")[0] == "fail"
    assert tab.check("design-answer")[0] == "fail"
    assert tab.check("integrity")[0] == "pass"


def test_a_hand_edited_file_fails_the_integrity_check(site_tab: SitePage, evidence: Evidence) -> None:
    document = evidence.starter.copy()
    document["accepted"] = True  # edited without re-sealing
    tab = site_tab.open_stage()
    tab.pick_document(document)
    status, text = tab.check("integrity")
    assert status == "fail" and tab.shows(Say("The file was edited by hand"), text)
    assert tab.shows(Say("The integrity digest recomputed here ({recomputed}…) does not match the one in the file "
                         "({stored}…): its content changed after forgelab wrote it. Run the check again instead of "
                         "editing verification.json.", {"stored": document["integrity"]["digest"][:12]}), text)
    tab.screenshot("failure-hand-edited")


def test_file_content_is_shown_as_text_never_as_html(site_tab: SitePage, evidence: Evidence) -> None:
    document = evidence.passing_copy()
    document["transfer"].update(status="failed", detail='<img src="http://example.invalid/x.png" id="injected">')
    tab = site_tab.open_stage()
    tab.pick_document(sealed(document))
    assert tab.page.query_selector("#injected") is None
    assert '<img src="http://example.invalid/x.png"' in tab.check("transfer")[1]
    assert tab.foreign_requests() == []


# ---------------------------------------------------------------- malformed input


def _png() -> bytes:
    return b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


DIR = "evidence/prompt-context-output/01-instruction-hierarchy"
NOT_JSON = Say("This is not a JSON file")
MALFORMED: dict[str, tuple[Callable[[Evidence], bytes], str, str, list[str | Say]]] = {
    "empty": (lambda e: b"", "verification.json", "empty",
              [Say("The file is empty"), Say("It has 0 bytes. Pick the verification.json that `forgelab check {number}` "
                                             "wrote into {dir}/.", {"number": "01", "dir": DIR})]),
    "blank": (lambda e: b"  \n\n ", "verification.json", "empty",
              [Say("The file is empty"), Say("It contains only blank space. Run `forgelab check {number}` again to "
                                             "write a fresh verification.json.", {"number": "01"})]),
    "too-large": (lambda e: b"{" + b" " * (1024 * 1024 + 10) + b"}", "verification.json", "too-large",
                  [Say("The file is too large"), Say("It is {size} KB; this page reads at most {max} KB, and a real "
                                                     "verification.json is a few KB. Pick the verification.json from "
                                                     "{dir}/.", {"size": 1025, "max": 1024, "dir": DIR})]),
    "png": (lambda e: _png(), "screenshot.png", "not-json",
            [NOT_JSON, Say("It looks like {what}. Pick the verification.json from {dir}/.",
                           {"what": Say("a PNG image"), "dir": DIR})]),
    "binary": (lambda e: b"\x00\x01\x02garbage", "verification.json", "not-json",
               [NOT_JSON, Say("It looks like {what}. Pick the verification.json from {dir}/.",
                              {"what": Say("a binary file"), "dir": DIR})]),
    "latin-1": (lambda e: "{\"caf\xe9\": 1}".encode("latin-1"), "verification.json", "not-json",
                [NOT_JSON, Say("It is not UTF-8 text, so it cannot be a verification.json. Pick the file that forgelab "
                               "wrote.")]),
    "plain-text": (lambda e: b"all tests passed, trust me\n", "verification.json", "not-json",
                   [NOT_JSON, Say("It is plain text that begins with “{start}”. A verification.json begins with "
                                  "{brace}. Pick the verification.json from {dir}/.",
                                  {"start": "all tests passed, trust me", "brace": "“{”", "dir": DIR})]),
    "truncated-json": (lambda e: as_bytes(e.passing)[:500], "verification.json", "malformed-json",
                       [Say("The JSON is malformed"), Say("The file starts like JSON but cannot be read ({error}). It "
                                                          "may be cut off or edited by hand. Run `forgelab check "
                                                          "{number}` again to write a fresh one.", {"number": "01"}),
                        Say("the text ends before the JSON does")]),
    # what is wrong and where, in the page's language (the browser's English only for a mistake the page does not know)
    "trailing-comma": (lambda e: b'{"schema_version": 1,}', "verification.json", "malformed-json",
                       [Say("The JSON is malformed"),
                        Say("line {line}, column {column}: {what}", {
                            "line": 1, "column": 22, "what": Say("a property name in double quotes should come here")})]),
    "json-list": (lambda e: b"[1, 2, 3]", "verification.json", "wrong-shape",
                  [Say("This JSON is not a verification.json"),
                   Say("It is valid JSON, but {what} instead of an object with the check results.",
                       {"what": Say("a list")})]),
    "json-other-object": (lambda e: b'{"name": "forge", "version": "1"}', "package.json", "wrong-shape",
                          [Say("This JSON is not a verification.json"),
                           Say("It is valid JSON, but it has none of the fields forgelab writes (it has: {keys}). Pick "
                               "the verification.json from your evidence folder.", {"keys": "name, version"})]),
    "missing-parts": (lambda e: as_bytes({k: v for k, v in e.passing.items() if k not in ("tests", "summary")}),
                      "verification.json", "wrong-shape",
                      [Say("This JSON is not a complete verification.json"), Say("{where} is missing", {"where": "tests"}),
                       Say("{where} is missing", {"where": "summary"})]),
    "wrong-types": (lambda e: as_bytes({**e.passing, "accepted": "true", "tests": {}}), "verification.json",
                    "wrong-shape", [Say("{where} should be {expected}, but is {actual}", {
                        "where": "accepted", "expected": Say("true or false"), "actual": Say("text")}),
                        Say("{where} should be {expected}, but is {actual}", {
                            "where": "tests", "expected": Say("a list"), "actual": Say("an object")})]),
    # a file from before the fault lab recorded its diagnosis (schema version 1)
    "schema-version-1": (lambda e: as_bytes({**e.passing, "schema_version": 1}), "verification.json",
                         "unsupported-version",
                         [Say("Schema version not supported"),
                          Say("This file uses schema version {version}; this page reads version {supported}. Use the "
                              "page that comes with the same course version as your workbook, or run the check again "
                              "with this workbook.", {"version": 1, "supported": 2})]),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_each_malformed_input_has_its_own_message_and_replaces_the_verdict(
        site_tab: SitePage, evidence: Evidence, case: str) -> None:
    make, name, code, phrases = MALFORMED[case]
    tab = site_tab.open_stage()
    tab.pick_document(evidence.passing)
    assert tab.state() == "self-check-passed"

    tab.pick(make(evidence), name)
    problem, text = tab.message()
    assert problem == code
    for phrase in phrases:
        assert tab.shows(phrase, text), (phrase, text)
    assert tab.say("File: {file}", file=name) in text
    # the new pick replaced the verdict: no longer passed, and the state line says why
    assert tab.state() == "results-read"
    assert tab.shows(Say(" Your last pick, {file}, is not a result for this stage ({why}), so this stage is not marked "
                         "as passed.", {"file": name}), tab.page.inner_text("#check-state"))
    assert tab.page.inner_text("#report") == ""
    # the previous valid result stays visible, marked as the previous one
    previous = tab.page.inner_text("#previous-report")
    assert previous.startswith(tab.say("Previous result — no longer the current verdict: ") + tab.say("Self-check passed"))
    tab.screenshot(f"malformed-{case}")
    if case == "truncated-json":
        tab.panel_screenshot("malformed-after-passed")

    tab.pick_document(evidence.passing)  # and the page still works
    assert tab.message() == (None, "")
    assert tab.state() == "self-check-passed" and tab.page.is_hidden("#previous-report")


# ---------------------------------------------------------------- no network, from file:// and from serve


def test_nothing_leaves_the_page_while_checking(site_tab: SitePage, evidence: Evidence) -> None:
    tab = site_tab.open_stage()
    tab.scroll_to_read()
    tab.download_bundle()
    for document in (evidence.starter, evidence.passing):
        tab.pick_document(document)
    tab.pick(_png(), "x.png")
    assert tab.requests, "the recorder saw no request at all"
    assert all(url.startswith("file://") for url in tab.requests), tab.requests


@pytest.mark.parametrize("language", EDITIONS)
def test_the_served_site_works_on_127_0_0_1(chromium: Any, built_site: Path, evidence: Evidence, language: str) -> None:
    from forgelab.site.serve import make_server, url_of

    server = make_server(built_site, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = url_of(server).removesuffix("index.html") + ("" if language == "en" else f"{language}/index.html")
        context, tab = open_tab(chromium, url.removesuffix("index.html"), language=language)
        try:
            tab.open("index.html")
            tab.page.click(f'a[href="{STAGE_01}.html"]')
            tab.page.wait_for_url(f"**/{STAGE_01}.html")  # loaded, so the pick below talks to the stage page
            tab.pick_document(evidence.passing)
            assert tab.state() == "self-check-passed"
            assert all(u.startswith(url_of(server).removesuffix("index.html")) for u in tab.requests), tab.requests
            assert tab.errors == []
        finally:
            context.close()
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------- the in-browser sha256 (Web Crypto)


def test_the_browser_sha256_and_canonical_form_match_python(site_tab: SitePage, evidence: Evidence) -> None:
    from forgelab.core.evidence import canonical_bytes

    tab = site_tab.open_stage()
    samples = ["", "abc", "a" * 55, "a" * 56, "a" * 64, "a" * 1000, "é→😀中\u2028\"\\\n\t\x01"]
    in_browser = tab.page.evaluate("s => Promise.all(s.map(ForgeVerify.sha256Hex))", samples)
    assert in_browser == [hashlib.sha256(s.encode("utf-8")).hexdigest() for s in samples]
    document = sealed({**evidence.passing_copy(), "problems": ["non-ASCII: é → 😀 中文", "quote \" and \\ and \u0007"]})
    canonical = tab.page.evaluate(
        "d => { const b = {...d}; delete b.integrity; return ForgeVerify.canonicalJson(b); }", document)
    assert canonical.encode("utf-8") == canonical_bytes(document)
    assert tab.page.evaluate("d => ForgeVerify.integrityDigest(d)", document) == document["integrity"]["digest"]
    assert tab.page.evaluate("() => window.isSecureContext") is True  # a page opened as a file has crypto.subtle


NO_WEB_CRYPTO = "Object.defineProperty(Crypto.prototype, 'subtle', { get: () => undefined, configurable: true });"


def test_without_web_crypto_the_integrity_check_says_so_and_never_passes(site_tab: SitePage, evidence: Evidence) -> None:
    """A page served over plain http to another machine has no crypto.subtle: the page says it cannot check the seal
    and how to open it instead, and the self-check does not pass (the page's hand-written SHA-256 passed it)."""
    tab = site_tab
    tab.page.add_init_script(NO_WEB_CRYPTO)
    tab.open_stage()
    assert tab.page.evaluate("() => window.crypto.subtle") is None
    tab.pick_document(evidence.passing)
    status, text = tab.check("integrity")
    assert status == "fail" and tab.shows(Say("Integrity cannot be checked in this browser"), text), text
    assert tab.shows(Say("This page cannot compute SHA-256 digests here: a browser offers its Web Crypto (crypto.subtle) "
                         "only to a page opened as a file on this computer, from 127.0.0.1 or localhost, or over "
                         "https. Open it with `forgelab page {number}` (the copy in your workbook's page/ folder, as a "
                         "file) and pick the file again. Until then the self-check cannot pass.", {"number": "01"}),
                     text), text
    assert tab.headline() == tab.say("Not passed yet: {failing} of {count} checks need work", failing=1, count=9)
    assert tab.state() == "results-read"
    tab.screenshot("failure-no-web-crypto")


# ---------------------------------------------------------------- the schema check (Ajv's generated validator)

SHAPES: dict[str, tuple[Callable[[dict[str, Any]], None], list[Say]]] = {
    "nested-enum": (lambda d: d["tests"][0].update(outcome="green"),
                    [Say("{where} should be {expected}, but is {actual}", {"where": "tests[0].outcome"})]),
    "nested-pattern": (lambda d: d["stage"].update(number="1"),
                       [Say("{where} has an unexpected form: {value}", {"where": "stage.number", "value": '"1"'})]),
    "nested-missing": (lambda d: d["fault_lab"]["diagnosis"].pop("status"),
                       [Say("{where} is missing", {"where": "fault_lab.diagnosis.status"})]),
    "unknown-field": (lambda d: d["transfer"].update(trusted=True),
                      [Say("{where} is not a field of a verification.json", {"where": "transfer.trusted"})]),
    "negative-count": (lambda d: d["design_answer"].update(words=-1),
                       [Say("{where} should be at least {minimum}", {"where": "design_answer.words", "minimum": 0})]),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_a_wrong_part_deep_in_the_file_is_named_by_its_path(site_tab: SitePage, evidence: Evidence, case: str) -> None:
    mutate, phrases = SHAPES[case]
    document = evidence.passing_copy()
    mutate(document)
    tab = site_tab.open_stage()
    tab.pick_document(sealed(document))
    problem, text = tab.message()
    assert problem == "wrong-shape" and tab.shows(Say("This JSON is not a complete verification.json"), text), text
    for phrase in phrases:
        assert tab.shows(phrase, text), (phrase, text)


# ---------------------------------------------------------------- keyboard, labels, phone width


def _tab_to(tab: SitePage, element_id: str, limit: int = 60) -> None:
    for _ in range(limit):
        tab.page.keyboard.press("Tab")
        if tab.page.evaluate("document.activeElement && document.activeElement.id") == element_id:
            return
    raise AssertionError(f"#{element_id} cannot be reached with the Tab key")


def test_controls_are_labelled_and_keyboard_operable(site_tab: SitePage, evidence: Evidence) -> None:
    tab = site_tab.open_stage()
    assert tab.page.get_by_label(tab.say("Pick your verification.json")).count() == 1
    # intercept the file dialog before any key is pressed: switching it on takes a round trip, and on a busy machine
    # a Space that arrives first would open a real (invisible) dialog instead of raising the event
    tab.page.on("filechooser", lambda chooser: None)

    _tab_to(tab, "verification-file")
    assert tab.page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"  # visible focus
    with tab.page.expect_file_chooser() as chooser:
        tab.page.keyboard.press("Space")
    chooser.value.set_files(files=[{"name": "verification.json", "mimeType": "application/json",
                                    "buffer": as_bytes(evidence.passing)}])
    tab.page.wait_for_selector('#local-check[data-state="self-check-passed"]')

    _tab_to(tab, "clear-progress")
    assert tab.page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    tab.page.keyboard.press("Enter")
    assert tab.state() == "not-started"
    tab.screenshot("keyboard-cleared")


@pytest.mark.parametrize("language", EDITIONS)
def test_readable_at_phone_width(chromium: Any, built_site: Path, evidence: Evidence, language: str) -> None:
    context, tab = open_tab(chromium, edition_base(built_site, language), width=375, height=740, language=language)
    try:
        for name in ("index.html", f"{STAGE_01}.html"):
            tab.open(name)
            if name != "index.html":
                tab.pick_document(evidence.starter)
            overflow = tab.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{name} is {overflow}px wider than a 375px screen"
            tab.screenshot(f"phone-{name.removesuffix('.html')}")
        assert tab.errors == []
    finally:
        context.close()


# ---------------------------------------------------------------- figures


@pytest.mark.parametrize("language", EDITIONS)
def test_every_figure_shows_with_the_network_blocked(chromium: Any, built_site: Path, language: str) -> None:
    """Each stage page's figures load from the site alone, with the edition's alt text; a screenshot of each lands
    in test-artifacts/site/."""
    from forgelab.core import figures

    course = load_course(ROOT)
    context, tab = open_tab(chromium, edition_base(built_site, language), width=1280, height=900, language=language)
    blocked: list[str] = []

    def only_local(route: Any) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    tab.page.route("**/*", only_local)
    try:
        for stage in course.stages:
            tab.open_stage(stage.key)
            expected = figures.stage_figures(stage.source_dir)
            tab.page.wait_for_function(
                "n => { const images = [...document.querySelectorAll('#figure img')];"
                " return images.length === n && images.every(i => i.complete); }", arg=len(expected))
            shown = tab.page.eval_on_selector_all(
                "#figure img", "images => images.map(i => [i.naturalWidth, i.naturalHeight,"
                " Math.round(i.getBoundingClientRect().width), i.alt])")
            for figure, (natural_width, natural_height, width, alt) in zip(expected, shown):
                assert (natural_width, natural_height) == figures.svg_size(figure.svg_in(language)), f"{stage.key}: {figure.name} did not load"
                assert 300 <= width <= 1280 and alt == figure.alt_in(language)
                locator = tab.page.locator(f'#figure figure[data-figure="{figure.name}"]')
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                prefix = "" if language == "en" else f"{language}-"
                locator.screenshot(path=str(ARTIFACTS / f"{prefix}figure-{stage.key}-{figure.name}.png"))
        assert blocked == [] and tab.foreign_requests() == []
        assert tab.errors == []
    finally:
        context.close()


@pytest.mark.parametrize("language", EDITIONS)
def test_figures_fit_a_phone_screen(chromium: Any, built_site: Path, language: str) -> None:
    context, tab = open_tab(chromium, edition_base(built_site, language), width=390, height=800, language=language)
    try:
        tab.open_stage("08-requirement-extractor")
        tab.page.wait_for_function("[...document.querySelectorAll('#figure img')].every(i => i.complete && i.naturalWidth)")
        widths = tab.page.eval_on_selector_all("#figure img", "images => images.map(i => i.getBoundingClientRect().right)")
        assert widths and all(right <= 390 for right in widths)
        assert tab.page.evaluate("document.documentElement.scrollWidth") <= 390
        tab.screenshot("figure-phone-08")
    finally:
        context.close()
