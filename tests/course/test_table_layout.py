"""One table renderer (forgelab/core/display.py): when the last column (a cause, a detail, a next step) would be
narrower than STACK_BELOW columns, each row is one line and its last cell follows on indented lines at the full
width; on a wide terminal each row is one line. Widths are display columns, in both editions."""

from __future__ import annotations

import re

import pytest

from conftest import WorkbookCopy
from forgelab.core.display import INDENT, STACK_BELOW, columns, fill, table, table_header, table_row

CAUSE = "close_dependencies() is not transitive: 'b' depends on 'c', which was dropped from the closure it returned"
ZH_CAUSE = "close_dependencies() 返回的闭包少了 'c'：'b' 依赖它，它却被丢掉了，所以这个请求不该被接受，也不该被记为缺少依赖"
ROWS = [("test_a_fragment_without_its_dependencies_is_a_missing_dependency", "FAILED", CAUSE),
        ("test_the_same_revision_expires_nothing", "passed", "")]


@pytest.mark.parametrize(("headers", "cause"), [(("test", "outcome", "cause"), CAUSE), (("测试", "结果", "原因"), ZH_CAUSE)])
def test_a_narrow_cause_column_is_stacked_under_its_row(headers: tuple[str, str, str], cause: str) -> None:
    rows = [(ROWS[0][0], ROWS[0][1], cause), ROWS[1]]
    lines = table(headers, rows, 80).splitlines()
    assert max(columns(line) for line in lines) <= 80
    assert lines[0].split() == list(headers[:2]) and lines[1] == " " * INDENT + headers[2]
    assert re.fullmatch(r"-+  -+", lines[2])
    assert lines[3].split() == [ROWS[0][0], ROWS[0][1]]
    under = []
    for line in lines[4:]:
        if not line.startswith(" " * INDENT):
            break
        under.append(line[INDENT:])
    assert len(under) >= 2 and columns(under[0]) > STACK_BELOW  # full width, not 16-column slivers
    assert "".join(part.replace(" ", "") for part in under) == cause.replace(" ", "")  # nothing cut
    assert lines[-1].split() == [ROWS[1][0], ROWS[1][1]]  # an empty cause adds no line


def test_a_wide_terminal_keeps_one_line_per_row() -> None:
    lines = table(("test", "outcome", "cause"), ROWS, 200).splitlines()
    assert lines[0].split() == ["test", "outcome", "cause"] and len(lines) == 4
    assert lines[2].split(maxsplit=2) == [ROWS[0][0], "FAILED", CAUSE]


def test_a_table_printed_row_by_row_stacks_by_its_widths() -> None:
    narrow, wide = [28, 5, 17], [28, 5, 40]
    assert table_header(["stage", "tests", "first open item"], narrow).splitlines()[1] == " " * INDENT + "first open item"
    row = table_row(["01 Instruction hierarchy", "13/13", "start the fault lab: `forgelab fault start 01`"], narrow)
    assert row.splitlines()[0].split() == ["01", "Instruction", "hierarchy", "13/13"]
    assert row.splitlines()[1] == " " * INDENT + "start the fault lab: `forgelab fault start 01`"
    assert len(table_row(["01 Instruction hierarchy", "13/13", "ACCEPTED"], wide).splitlines()) == 1


@pytest.mark.parametrize("language", ["en", "zh"])
def test_check_on_the_starter_at_80_and_200_columns(workbook: WorkbookCopy, language: str) -> None:
    """`forgelab check 11` on the starter: long test names leave no room for a cause column at 80 columns."""
    env = {"FORGELAB_WIDTH": "", "COLUMNS": "80", "FORGE_LANG": language}
    narrow = workbook.run("check", "11", env=env)
    assert narrow.returncode == 1, narrow.output
    lines = narrow.stdout.splitlines()
    assert max(columns(line) for line in lines) <= 80, narrow.stdout
    tests = [line for line in lines if line.startswith("test_")]
    assert tests and not any("()" in line for line in tests), narrow.stdout  # test and outcome only: no cause
    causes = [line for line in lines if line.startswith(" " * INDENT + "close_dependencies()")]
    assert causes and columns(causes[0]) > STACK_BELOW, narrow.stdout  # under its row, at the full width
    wide = workbook.run("check", "11", env={**env, "COLUMNS": "200"})
    failed = "失败" if language == "zh" else "FAILED"
    first = next(line for line in wide.stdout.splitlines() if line.startswith("test_") and f" {failed} " in line)
    assert "close_dependencies()" in first and len(first.split()) > 2, wide.stdout  # the cause on the row itself


@pytest.mark.parametrize("size", [52, 56, 60, 64, 68])
def test_a_line_never_breaks_inside_a_command_or_a_code_span(size: int) -> None:
    from forgelab.core.display import fill

    for text, whole in (("explain() is not implemented yet — see hints 4–6 (forgelab hint 01)", "(forgelab hint 01)"),
                        ("explain() 尚未实现——见提示 4–6，然后运行 `forgelab check 01` 看结果（forgelab hint 01）",
                         "（forgelab hint 01）"),
                        ("the reference passes: compare with `forgelab check 01 --target solution` and read why",
                         "`forgelab check 01 --target solution`")):
        lines = fill(text, size)
        assert all(columns(line) <= size for line in lines), lines
        assert any(whole in line for line in lines), lines  # the command, whole, on one line
        assert "".join(lines).replace(" ", "") == text.replace(" ", ""), lines  # nothing dropped


def test_a_code_span_longer_than_a_line_still_breaks_between_its_words() -> None:
    from forgelab.core.display import fill

    lines = fill("x `a very long code span that cannot fit on any line at all here` y", 20)
    assert lines == ["x `a very long code", "span that cannot fit", "on any line at all", "here` y"], lines


def test_a_path_longer_than_its_column_folds_after_a_slash_and_nothing_is_lost() -> None:
    """The notebook's evidence table (96 columns) folded the design answer's path as 'design-answe' / 'r.md'."""
    path = "evidence/prompt-context-output/01-instruction-hierarchy/design-answer.md"
    lines = fill(f"no answer yet: save it to {path}", 68)
    assert lines == ["no answer yet: save it to", "evidence/prompt-context-output/01-instruction-hierarchy/",
                     "design-answer.md"]
    assert fill("test_same_rank_conflict_keeps_the_earlier_instruction", 30) == [
        "test_same_rank_conflict_keeps_", "the_earlier_instruction"]
    # a mark too early in the line (less than half of it) is not worth a short line: folded where the line ends
    assert fill("ab/cdefghijklmnopqrstuvwxyz", 10) == ["ab/cdefghi", "jklmnopqrs", "tuvwxyz"]


def test_widths_are_the_columns_rich_lays_the_table_out_in() -> None:
    """core/display.py counts columns as rich does (rich.cells), not by a table of its own: a zero-width space or a
    combining accent takes no column, an emoji two, so a table holding them still lines up."""
    assert columns("中文，。") == 8 and columns("e\u0301") == 1 and columns("🙂") == 2
    assert columns("a\u200bb") == 2  # a zero-width space (a hand-written East-Asian-width count made it 3)
    rows = table(["name", "outcome"], [["a\u200bb", "ok"], ["ab", "ok"]], total_width=60).splitlines()
    assert [columns(line[:line.index("ok")]) for line in rows[2:]] == [rows[0].index("outcome")] * 2
