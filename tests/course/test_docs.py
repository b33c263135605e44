"""The documents: a short front door, one document per role in both editions, and no lab notebook in them.

README.md and README.zh-CN.md are the front door (at most 200 lines each); docs/ holds the learner, instructor,
authoring and architecture documents, each with its Chinese edition beside it. Measured figures live in
benchmarks/RESULTS.md with the machine state they were measured in; the documents a reader follows — README, docs/
and the learner bundle's README — hold no load average, no commit hash, no date or time of a measurement run and
no word about who else was using the machine. Chinese paragraphs are one line each (a hard line break inside a
Chinese paragraph shows as a space between two characters in some renderers).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
ROLES = ("learner", "instructor", "authoring", "architecture")
FRONT_DOORS = ("README.md", "README.zh-CN.md")
BUNDLE_READMES = ("course/learner/README.md", "course/learner/README.zh-CN.md")

# What a lab notebook says and a document must not: the machine's load, a commit, when a run was made, and who else
# was on the machine. Words, not figures: "load-proof limits" (负载) and "a test helper" are fine.
LAB_NOTEBOOK = {
    "a load average": re.compile(r"load average|load avg|负载平均值|平均负载|负载均值", re.I),
    "a commit hash": re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/-])"),
    "a time of day in UTC": re.compile(r"\bUTC\b|\d{1,2}:\d{2}\s*(?:–|-|to)\s*\d{1,2}:\d{2}\b"),
    "a date of a run": re.compile(r"\b\d{1,2} (?:January|February|March|April|May|June|July|August|September|"
                                  r"October|November|December) \d{4}\b|\d{4} 年 ?\d{1,2} 月 ?\d{1,2} 日"),
    "other people on the machine": re.compile(
        r"(?<![-\w])(?:engineers?|colleagues?|someone|somebody|other (?:people|users|helpers?|sessions))\b|\bhelpers'"
        r"|this (?:shared )?machine|shared (?:2-CPU )?machine|machine(?:s)? (?:is |was )?(?:shared|crowded)"
        r"|工程师|助手|多人共用|这台(?:共享|共用)?(?:的)?机器", re.I),
}


def documents() -> list[str]:
    return [*FRONT_DOORS, *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")), *BUNDLE_READMES]


def lab_notebook_lines(text: str) -> list[str]:
    """Each line of ``text`` that reads like a lab notebook, with what it says."""
    return [f"{number}: {what}: {line.strip()[:120]}" for number, line in enumerate(text.splitlines(), 1)
            for what, pattern in LAB_NOTEBOOK.items() if pattern.search(line)]


def broken_chinese_paragraphs(text: str) -> list[str]:
    """Lines of a Chinese Markdown text that continue the paragraph of the line before (outside code and tables),
    and full-width punctuation followed by an ASCII space."""
    found: list[str] = []
    fenced = False
    previous = ""
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced, previous = not fenced, ""
            continue
        if fenced:
            continue
        if re.search(r"[，。；：、！？）】》」』] (?!\|)", line):
            found.append(f"{number}: an ASCII space after full-width punctuation: {line.strip()[:80]}")
        starts_block = not line.strip() or re.match(r"\s*(?:[#|>*-]|\d+\.\s|<)", line)
        if previous and not starts_block and re.search(r"[\u4e00-\u9fff]", previous + line):
            found.append(f"{number}: a line break inside a paragraph: {line.strip()[:80]}")
        previous = "" if not line.strip() or line.lstrip().startswith(("#", "|")) else line
    return found


@pytest.mark.parametrize("name", FRONT_DOORS)
def test_the_readme_is_a_front_door_of_at_most_200_lines(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200, f"{name} has {len(text.splitlines())} lines: move detail into docs/"
    for command in ("make lab", "make test"):
        assert command in text, f"{name} does not name `{command}`"
    for role in ROLES:
        target = f"docs/{role}.md" if name == "README.md" else f"docs/{role}.zh-CN.md"
        assert f"]({target}" in text, f"{name} does not link {target}"
    assert "](benchmarks/RESULTS.md)" in text, f"{name} does not link the measured figures"


def test_every_role_document_has_both_editions() -> None:
    for role in ROLES:
        for name in (f"docs/{role}.md", f"docs/{role}.zh-CN.md"):
            assert (ROOT / name).is_file(), f"{name} is missing"
    english = {p.name.removesuffix(".md") for p in (ROOT / "docs").glob("*.md") if not p.name.endswith(".zh-CN.md")}
    chinese = {p.name.removesuffix(".zh-CN.md") for p in (ROOT / "docs").glob("*.zh-CN.md")}
    assert english == chinese, f"only in English: {sorted(english - chinese)}; only in Chinese: {sorted(chinese - english)}"


@pytest.mark.parametrize("name", documents())
def test_no_document_reads_like_a_lab_notebook(name: str) -> None:
    assert lab_notebook_lines((ROOT / name).read_text(encoding="utf-8")) == [], name


def test_the_lab_notebook_check_notices_what_the_old_readme_said() -> None:
    said = ["How long the first `make lab` takes, re-measured on this shared 2-CPU machine while other engineers'",
            "test suites ran (load average 1.5–5 over the runs)",
            "| with bytecode compiled at install (commit `ea538f6`), a crowded machine |",
            "measured on 2 December 2026, an hour apart (14:37 and 15:25 UTC)",
            "the suite walks past a 1,991-level folder someone left in `/tmp`",
            "在这台多人共用的 2 CPU 机器上（负载平均值 2 到 5）", "当时另外两位助手的工作正在运行"]
    assert all(lab_notebook_lines(line) for line in said), [line for line in said if not lab_notebook_lines(line)]
    fine = ["**Load-proof limits.** An endless loop is CPU time", "One wait helper: `conftest.wait_until`",
            "sha256 digests of `forge/instructions.py`", "`forgelab check 01 --why test_x`", "不受负载影响的限制",
            "04:39:46 · after saving forge/instructions.py", "a course-made module (reference, fault variants)"]
    assert [line for line in fine if lab_notebook_lines(line)] == []


@pytest.mark.parametrize("name", ["README.zh-CN.md", *(f"docs/{role}.zh-CN.md" for role in ROLES)])
def test_chinese_paragraphs_are_one_line(name: str) -> None:
    assert broken_chinese_paragraphs((ROOT / name).read_text(encoding="utf-8")) == [], name


def test_the_paragraph_check_notices_a_hard_break_and_a_space_after_punctuation() -> None:
    assert broken_chinese_paragraphs("第一行说了一半，\n第二行接着说。\n")
    assert broken_chinese_paragraphs("一句话。 下一句话。\n")
    assert broken_chinese_paragraphs("# 标题\n\n一段话。\n\n* 一项\n* 另一项\n\n| a | b |\n|---|---|\n") == []


def test_the_measured_figures_live_in_results_with_the_machine_state() -> None:
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    assert "load average" in results and "2 CPUs" in results
    for benchmark in ("bench_make_lab.py", "bench_check.py", "bench_watch.py", "bench_grading.py", "bench_stages.py",
                      "mutation.py"):
        assert benchmark in results, benchmark


def test_a_role_document_without_its_chinese_edition_fails_the_build_check(workbook) -> None:  # noqa: ANN001
    (workbook.root / "docs" / "authoring.zh-CN.md").unlink()
    result = run_cli(workbook.root, "build", "--check", timeout=600)
    assert result.returncode == 2
    assert "docs/authoring.md has no Chinese edition: write docs/authoring.zh-CN.md beside it" in result.stdout
