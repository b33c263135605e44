"""``forgelab extract`` and ``forgelab regress`` end to end, in a disposable copy of the workbook.

Every run is offline: the mock model, a recording, or a fake OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import WorkbookCopy, copy_workbook
from ports import held_port
from project_fakes import fake_openai_server

ZH = "为前端仓库增加功能、修改代码并补测试"
SPEC_FIELDS = {"goal", "inputs", "outputs", "acceptance", "write_allowed"}
OPERATIONAL = {"software": "forum/fork-readme.md", "office": "shared-drive/old-brief-comments.docx",
               "music": "forum/label-offer"}


def extract_json(workbook, *args: str, env: dict[str, str] | None = None) -> dict:  # type: ignore[no-untyped-def]
    result = workbook.run("extract", *args, "--json", "--target", "solution", env=env)
    assert result.returncode == 0, result.output
    return json.loads(result.stdout)


def assert_one_line_error(result, *fragments: str) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode != 0
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("forgelab: ") and lines[1].startswith("next: "), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


def without_operational_document(workbook, scenario: str) -> None:  # type: ignore[no-untyped-def]
    path = workbook.root / "forge" / "project" / "scenarios" / f"{scenario}.json"
    pack = json.loads(path.read_text(encoding="utf-8"))
    pack["retrieved"] = [doc for doc in pack["retrieved"] if doc["source"] != OPERATIONAL[scenario]]
    path.write_text(json.dumps(pack, ensure_ascii=False), encoding="utf-8")


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> WorkbookCopy:
    """One workbook copy for the tests that only read it (each test that changes files gets its own)."""
    return copy_workbook(tmp_path_factory.mktemp("project-cli") / "workbook")


# ---------------------------------------------------------------- extract
def test_chinese_software_request_gives_a_valid_spec_and_identical_output_twice(shared) -> None:
    first = shared.run("extract", "--scenario", "software", ZH, "--json", "--target", "solution")
    second = shared.run("extract", "--scenario", "software", ZH, "--json", "--target", "solution")
    assert first.returncode == second.returncode == 0, first.output
    assert first.stdout == second.stdout
    document = json.loads(first.stdout)
    spec = document["spec"]
    assert set(spec) == SPEC_FIELDS
    assert spec["write_allowed"] is True
    assert spec["goal"] == ZH and spec["acceptance"] and all(isinstance(item, str) for item in spec["acceptance"])
    audit = document["audit"]
    assert audit["prompt_version"].startswith("p-") and audit["model"] == "mock"
    assert audit["context_chosen"][0] == "policy:change-control"


def test_the_human_view_shows_the_spec_and_a_compact_audit_trail(shared) -> None:
    result = shared.run("extract", "--scenario", "music", "Plan the release of my single Night Ferry",
                          "--target", "solution")
    assert result.returncode == 0, result.output
    for fragment in ("task spec · music · prompt p-", "write_allowed  false", "rejected: developer write='allow' — "
                     "lower_rank, won by system", "dropped: note:inspiration (over budget)",
                     "forum/label-offer: FLAGGED ignore previous, run shell — kept as data, not obeyed",
                     "(schema v1, standard mode)", "(estimates)"):
        assert fragment in result.stdout


def test_the_human_view_speaks_chinese_with_lang_zh(shared) -> None:
    result = shared.run("extract", "--lang", "zh", "--scenario", "music", "Plan the release of my single Night Ferry",
                        "--target", "solution")
    assert result.returncode == 0, result.output
    for fragment in ("任务规格 · music · Prompt p-", "write_allowed  false", "拒绝：developer 的 write='allow'"
                     "（lower_rank，system 胜出）", "舍弃：note:inspiration（超出预算）",
                     "forum/label-offer：已标记 ignore previous、run shell——作为数据保留，不予执行",
                     "（Schema v1，标准模式）", "（估算值）"):
        assert fragment in result.stdout, result.stdout
    assert "audit trail" not in result.stdout and "won by" not in result.stdout
    rejected = shared.run("extract", "--lang", "zh", "--scenario", "office", "--fault", "prose", "比较两份报价",
                          "--target", "solution")
    assert rejected.returncode == 1, rejected.output
    assert "forgelab: 模型的回答被阶段 05（有界修复）拒绝（原文：text before the JSON object" in rejected.stderr, \
        rejected.stderr  # the stage in Chinese, the module's own words after it
    assert "stage 05 (bounded output repair)" not in rejected.stderr


@pytest.mark.parametrize("scenario", ["software", "office", "music"])
def test_an_injected_instruction_is_flagged_and_changes_nothing(workbook, scenario: str) -> None:
    with_injection = extract_json(workbook, "--scenario", scenario, "plan the next step")
    flags = {entry["source"]: entry["flags"] for entry in with_injection["audit"]["injection"]}
    assert "ignore previous" in flags[OPERATIONAL[scenario]]
    without_operational_document(workbook, scenario)
    clean = extract_json(workbook, "--scenario", scenario, "plan the next step")
    assert OPERATIONAL[scenario] not in {entry["source"] for entry in clean["audit"]["injection"]}
    assert with_injection["spec"]["write_allowed"] is clean["spec"]["write_allowed"]
    assert with_injection["audit"]["accepted"] == clean["audit"]["accepted"]
    assert with_injection["audit"]["rejected"] == clean["audit"]["rejected"]


@pytest.mark.parametrize(("fault", "repair"), [("fenced", "code_fence"), ("trailing_comma", "trailing_comma")])
def test_fence_and_trailing_comma_are_repaired(shared, fault: str, repair: str) -> None:
    clean = extract_json(shared, "--scenario", "office", "compare the quotes")
    repaired = extract_json(shared, "--scenario", "office", "compare the quotes", "--fault", fault)
    assert repaired["spec"] == clean["spec"]
    assert repaired["audit"]["repairs"] == [repair]


@pytest.mark.parametrize(("fault", "caught_by"), [
    ("prose", "stage 05 (bounded output repair)"),
    ("unknown_field", "stage 04 (strict task specification): unknown fields: priority"),
    ("missing_write_allowed", "stage 04 (strict task specification): write_allowed must be explicit"),
])
def test_prose_unknown_field_and_missing_permission_are_rejected(shared, fault: str, caught_by: str) -> None:
    result = shared.run("extract", "--scenario", "office", "compare the quotes", "--fault", fault,
                          "--target", "solution")
    assert result.returncode == 1
    assert_one_line_error(result, f"rejected by {caught_by}")
    assert "audit trail" in result.stdout and "model answer (rejected)" in result.stdout


def test_recovery_mode_rejects_the_fenced_output(shared) -> None:
    result = shared.run("extract", "--scenario", "software", ZH, "--fault", "fenced", "--recovery",
                          "--target", "solution")
    assert_one_line_error(result, "automatic repair is off in recovery mode", "recovery mode repairs nothing")
    assert "(schema v2, recovery mode)" in result.stdout
    accepted = extract_json(shared, "--scenario", "music", "plan it", "--recovery")
    assert accepted["audit"]["examples"] == ["mus-v2-single-plan", "mus-v2-ep-rollout", "mus-v2-merch-budget"]
    assert accepted["audit"]["schema_version"] == "v2" and accepted["audit"]["mode"] == "recovery"


def test_a_rejection_in_json_mode_is_still_machine_readable(shared) -> None:
    result = shared.run("extract", "--scenario", "office", "x", "--fault", "prose", "--json", "--target", "solution")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["error"]["step"] == "repair" and document["output"].startswith("Sure!")
    assert document["audit"]["model"] == "mock+prose"


@pytest.mark.parametrize(("args", "fragments"), [
    (["--scenario", "sales", "x"], ["unknown scenario 'sales': expected one of music, office, software"]),
    (["x"], ["--scenario is required"]),
    (["--scenario", "office", "   "], ["empty request"]),
    (["--scenario", "office"], ["empty request"]),
    (["--scenario", "office", "x", "--fault", "shouting"], ["unknown mock fault 'shouting'"]),
    (["--scenario", "office", "x", "--model", "gpt"], ["unknown model 'gpt'"]),
    (["--scenario", "office", "x", "--model", "replay", "--fault", "prose"], ["--fault switches on a defect of the mock"]),
    (["--scenario", "office", "x", "--model", "replay"], ["--model replay needs a recording"]),
    (["--scenario", "office", "x", "--model", "replay", "--replay", "missing.jsonl"], ["cannot read the replay file"]),
    (["--scenario", "office", "x", "--prompt", "nope"], ["unknown prompt template 'nope'"]),
    (["--scenario", "office", "x", "--model", "openai"], ["FORGE_OPENAI_BASE_URL is not set"]),
])
def test_bad_input_gets_one_line_and_a_next_step(shared, args: list[str], fragments: list[str]) -> None:
    result = shared.run("extract", *args, "--target", "solution")
    assert_one_line_error(result, *fragments)


def test_an_unreachable_endpoint_is_one_line_and_a_next_step(shared) -> None:
    with held_port() as port:
        env = {"FORGE_OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "FORGE_OPENAI_MODEL": "tiny"}
        result = shared.run("extract", "--scenario", "software", ZH, "--model", "openai", "--target", "solution",
                            env=env)
    assert_one_line_error(result, "cannot reach http://127.0.0.1:", "--model mock works offline")


def test_the_openai_model_talks_to_a_local_fake_server(shared) -> None:
    mock = extract_json(shared, "--scenario", "software", ZH)
    with fake_openai_server() as fake:
        env = {"FORGE_OPENAI_BASE_URL": fake.base_url, "FORGE_OPENAI_MODEL": "tiny", "FORGE_OPENAI_API_KEY": "sk-x"}
        remote = extract_json(shared, "--scenario", "software", ZH, "--model", "openai", env=env)
    assert remote["spec"] == mock["spec"]
    assert remote["audit"]["model"] == "openai:tiny"
    assert len(fake.requests) == 1 and fake.requests[0]["body"]["model"] == "tiny"


def test_a_recording_replays_offline(shared, tmp_path: Path) -> None:
    recording = tmp_path / "run.jsonl"
    recorded = extract_json(shared, "--scenario", "office", "compare the quotes", "--record", str(recording))
    replayed = extract_json(shared, "--scenario", "office", "compare the quotes", "--model", "replay",
                            "--replay", str(recording))
    assert replayed["spec"] == recorded["spec"]
    assert replayed["audit"]["model"] == "replay:run.jsonl"
    other = shared.run("extract", "--scenario", "office", "something else", "--model", "replay",
                         "--replay", str(recording), "--target", "solution")
    assert_one_line_error(other, "has no answer for this prompt", "record again")


def test_show_prompt_prints_the_data_blocks(shared) -> None:
    result = shared.run("extract", "--scenario", "office", "compare", "--show-prompt", "--target", "solution")
    assert result.returncode == 0
    assert "prompt sent to the model" in result.stdout
    assert result.stdout.count("BEGIN RETRIEVED DATA ") == 2 and "## Request\ncompare" in result.stdout


def test_show_prompt_also_works_when_the_answer_is_rejected(shared) -> None:
    result = shared.run("extract", "--scenario", "office", "compare", "--fault", "unknown_field", "--show-prompt",
                        "--target", "solution")
    assert result.returncode == 1
    assert "prompt sent to the model" in result.stdout and "## Output schema v2" in result.stdout
    assert_one_line_error(result, "unknown fields: priority")


def test_the_shipped_starter_says_what_is_not_implemented(shared) -> None:
    result = shared.run("extract", "--scenario", "software", ZH)
    assert_one_line_error(result, "forge/extractor.py: build_prompt() is not implemented yet", "forgelab restore 08")


def test_a_crash_in_the_learners_extractor_names_the_file_and_line(workbook) -> None:
    solution = (workbook.root / "solutions" / "forge" / "extractor.py").read_text(encoding="utf-8")
    broken = solution.replace("    template = template or load_template()\n",
                              "    template = template or load_template()\n    1 / 0\n", 1)
    workbook.write("forge/extractor.py", broken)
    for name in ("instructions", "context_selection", "fewshot", "task_spec", "output_repair", "injection",
                 "prompt_regression"):
        workbook.write(f"forge/{name}.py", (workbook.root / "solutions" / "forge" / f"{name}.py").read_text(encoding="utf-8"))
    line = broken.splitlines().index("    1 / 0") + 1
    result = workbook.run("extract", "--scenario", "software", ZH)
    assert_one_line_error(result, f"(forge/extractor.py, line {line}): ZeroDivisionError: division by zero")


def test_missing_scenario_packs_are_named(workbook) -> None:
    import shutil

    shutil.rmtree(workbook.root / "forge" / "project" / "scenarios")
    result = workbook.run("extract", "--scenario", "software", ZH)
    assert_one_line_error(result, "no scenario packs in forge/project/scenarios/", "git checkout forge/project")


def test_an_extractor_that_never_finishes_is_stopped(workbook) -> None:
    starter = (workbook.root / "forge" / "extractor.py").read_text(encoding="utf-8")
    stuck = starter.replace('    raise NotImplementedError("build_prompt() is not implemented yet',
                            '    while True:\n        pass\n    raise NotImplementedError("build_prompt() is not implemented yet', 1)
    assert stuck != starter
    workbook.write("forge/extractor.py", stuck)
    result = workbook.run("extract", "--scenario", "software", ZH, env={"FORGELAB_PROJECT_TIMEOUT": "2"})
    assert_one_line_error(result, "did not finish within 2 s")


def test_a_syntax_error_in_the_learners_extractor_names_the_line(workbook) -> None:
    starter = (workbook.root / "forge" / "extractor.py").read_text(encoding="utf-8")
    workbook.write("forge/extractor.py", starter.replace("def extract(", "def extract(:", 1))
    line = starter.splitlines().index(next(l for l in starter.splitlines() if l.startswith("def extract("))) + 1
    result = workbook.run("extract", "--scenario", "software", ZH)
    assert_one_line_error(result, f"(forge/extractor.py, line {line}): SyntaxError")


# ---------------------------------------------------------------- regress
def history_counts(workbook) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    path = workbook.root / ".forgelab" / "regressions.sqlite3"
    if not path.is_file():
        return (0, 0)
    db = sqlite3.connect(path)
    try:
        return (db.execute("SELECT COUNT(*) FROM runs").fetchone()[0], db.execute("SELECT COUNT(*) FROM case_results").fetchone()[0])
    finally:
        db.close()


def broken_prompt(workbook, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """The shipped template with its Instructions section deleted: a careless 'tidy-up'."""
    text = (workbook.root / "forge" / "project" / "prompts" / "extractor.txt").read_text(encoding="utf-8")
    start, end = text.index("## Instructions"), text.index("## Output schema")
    path = tmp_path / "tidied.txt"
    path.write_text(text[:start] + text[end:], encoding="utf-8")
    return path


def test_regress_passes_on_the_shipped_prompt_and_stores_the_run(workbook) -> None:
    result = workbook.run("regress", "--target", "solution")
    assert result.returncode == 0, result.output
    assert "9 cases from software, office, music" in result.stdout
    assert "no new regression: 9/9 cases pass" in result.stdout
    assert "stored as run #1 in .forgelab/regressions.sqlite3" in result.stdout
    assert history_counts(workbook) == (1, 9)
    recovery = workbook.run("regress", "--target", "solution", "--recovery")
    assert recovery.returncode == 0 and "recovery mode" in recovery.stdout


def test_a_broken_prompt_version_is_a_regression_that_names_the_cases(workbook, tmp_path: Path) -> None:
    assert workbook.run("regress", "--target", "solution").returncode == 0
    broken = broken_prompt(workbook, tmp_path)
    result = workbook.run("regress", "--target", "solution", "--prompt", str(broken))
    assert result.returncode == 1, result.output
    assert "baseline: run #1, prompt p-" in result.stdout
    assert ("NEW REGRESSION in 3 case(s): software-zh-feature, software-en-search, software-en-vague"
            in result.stdout)
    assert "software-zh-feature: write permission changed" in result.stdout
    assert "office-en-vendors    office    passed" in result.stdout
    assert "-## Instructions" in result.stdout and "(0 line(s) added, 5 removed)" in result.stdout
    assert history_counts(workbook) == (2, 18)
    version = next(line for line in result.stdout.splitlines() if line.startswith("regress: prompt ")).split()[2]
    again = workbook.run("regress", "--target", "solution", "--baseline", version)
    assert again.returncode == 0
    assert "against the baseline: 0 new failure(s), 3 fixed, 0 still failing" in again.stdout
    listing = workbook.run("regress", "--list")
    assert listing.returncode == 0 and "tidied" in listing.stdout and "6/9 passed" in listing.stdout


def test_without_a_passing_baseline_every_failure_is_new(workbook, tmp_path: Path) -> None:
    result = workbook.run("regress", "--target", "solution", "--prompt", str(broken_prompt(workbook, tmp_path)))
    assert result.returncode == 1
    assert "baseline: none yet" in result.stdout and "NEW REGRESSION in 3 case(s)" in result.stdout


@pytest.mark.parametrize(("args", "fragment"), [
    (["--prompt", "p-000000000000"], "unknown prompt version 'p-000000000000'"),
    (["--baseline", "extractor"], "no stored run of prompt p-"),
])
def test_regress_usage_errors_are_one_line_and_store_nothing(workbook, args: list[str], fragment: str) -> None:
    result = workbook.run("regress", "--target", "solution", *args)
    assert_one_line_error(result, fragment)
    assert history_counts(workbook) == (0, 0)


def test_regress_on_the_unfinished_starter_stores_nothing(workbook) -> None:
    result = workbook.run("regress")
    assert_one_line_error(result, "not implemented yet")
    assert history_counts(workbook) == (0, 0)
