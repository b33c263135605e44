"""`forgelab fault check` shows the declared symptom as the learner reads it (issue 32): the whole line of the target
test's failure that the fault contract's pattern matched, never the matched fragment of the pattern (stage 06's
pattern stops mid-tuple: `('trusted', True, []) == ('untrusted',` was printed as the symptom)."""

from __future__ import annotations

from conftest import WorkbookCopy


def test_the_declared_symptom_is_the_whole_line_of_the_failure(workbook: WorkbookCopy) -> None:
    assert workbook.run("fault", "start", "06").returncode == 0
    check = workbook.run("fault", "check", "06")
    seen = next(line for line in check.stdout.splitlines() if "declared symptom seen:" in line)
    assert seen.strip().endswith("('trusted', True, []) == ('untrusted', False, ['ignore previous', 'run shell'])"), seen
