"""What a Chinese reader still met in English after the first pass of issue 22, each pinned by one test.

The chapter project's report (spec + audit trail) in the Chinese notebook, …
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from forge.project.report import format_extraction

CJK = re.compile(r"[\u4e00-\u9fff]")

DOCUMENT: dict[str, Any] = {
    "spec": {"goal": "为前端仓库增加功能", "inputs": ["repo:readme", "ticket:FE-231"],
             "outputs": ["the new control", "tests"], "acceptance": ["npm test passes"], "write_allowed": True},
    "audit": {"scenario": "software", "request": "为前端仓库增加功能", "mode": "recovery", "schema_version": "v2",
              "accepted": [{"key": "write", "value": "allow", "source": "developer"},
                           {"key": "tone", "value": "short", "source": "user"}],
              "rejected": [{"source": "user", "key": "tests", "value": "skip the tests", "reason": "lower_rank",
                            "winner": "developer"}],
              "context_chosen": ["repo:readme", "ticket:FE-231"], "context_dropped": ["notes:standup"],
              "context_tokens": 140, "context_budget": 145, "examples": ["sw-v2-a", "sw-v2-b"],
              "injection": [{"source": "wiki/guide.md", "flags": []},
                            {"source": "forum/post.md", "flags": ["ignore previous", "delete files"]}],
              "prompt_version": "p-1234", "prompt_tokens": 840, "model": "mock", "repairs": [], "output_tokens": 131},
}
# the English words the report used to print around the data (labels and sentences)
REPORT_ENGLISH = re.compile(r"\b(task spec|goal|inputs|outputs|acceptance|audit trail|instructions|accepted|rejected|"
                            r"won by|context|chosen|dropped|over budget|examples|schema|mode|retrieved|FLAGGED|"
                            r"no flags|kept as data|repairs|none|tokens|prompt|output|estimates|model)\b")


def test_the_project_report_speaks_chinese_around_the_data() -> None:
    english = format_extraction(DOCUMENT)
    chinese = format_extraction(DOCUMENT, language="zh")
    assert english.startswith("task spec · software · prompt p-1234 · model mock\n")  # the English view is unchanged
    assert "rejected: user tests='skip the tests' — lower_rank, won by developer" in english
    assert "(schema v2, recovery mode)" in english
    data = set(re.findall(r"'[^']*'", chinese))  # values quoted from the data stay as they are
    prose = re.sub(r"'[^']*'|ignore previous|delete files|the new control|npm test passes|\btests\b(?==)", " ", chinese)
    assert not REPORT_ENGLISH.search(prose.replace("write_allowed", "")), REPORT_ENGLISH.search(prose)
    assert chinese.startswith("任务规格 · software · Prompt p-1234 · 模型 mock\n")
    assert "审计记录" in chinese and "拒绝：user 的 tests='skip the tests'（lower_rank，developer 胜出）" in chinese
    assert "（Schema v2，恢复模式）" in chinese and "repo:readme、ticket:FE-231（140/145 Token）" in chinese
    assert "'allow'" in str(data)
    assert not re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]|[\u4e00-\u9fff][,;:()]", chinese), chinese
    for line in chinese.splitlines()[1:]:  # the value column starts at the same terminal cell on every row
        if line.startswith("  ") and not line.startswith("   "):
            label = line[2:].split()[0]
            cells = 2 + sum(2 if CJK.match(char) else 1 for char in label)
            assert line[2 + len(label):].startswith(" " * (17 - cells)), line


def test_the_chinese_notebook_of_stage_08_prints_the_chinese_report(repo_root: Path) -> None:
    notebook = json.loads((repo_root / "notebooks" / "zh" / "08-requirement-extractor.ipynb").read_text(encoding="utf-8"))
    printed = "".join("".join(output.get("text", "")) for cell in notebook["cells"] if cell["cell_type"] == "code"
                      for output in cell.get("outputs", []))
    assert "审计记录" in printed and "  验收标准       1. " in printed
    assert "audit trail" not in printed and "task spec ·" not in printed
