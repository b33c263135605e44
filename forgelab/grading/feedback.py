"""One static HTML feedback page per submission, written for the learner.

Each stage is a table of the seven items: points, the result in plain words, what was checked,
why points were lost, and what to do next. Every piece of text is HTML-escaped. The instructor
checks appear by name and outcome only — the rows never carry their code or assertion messages
(see :func:`forgelab.grading.items.grade_instructor_checks`), and this page adds nothing
from them.
"""

from __future__ import annotations

import html
from pathlib import Path

from forgelab.grading.items import is_grader_failure, is_unlaid
from forgelab.grading.rubric import REVIEW, SPEC, GradeItem
from forgelab.core.submission import safe_name
from forgelab.core.registry import Course

RESULT_WORDS = {
    "passed": "Full marks.",
    "partial": "Partly there.",
    "failed": "Not yet.",
    "timeout": "Stopped at a limit: it ran too long or used too much (the reason says which limit, and what to look for).",
    "error": "Could not run.",
    "missing": "Not handed in.",
    "not_graded": "Not graded for this stage.",
}
GRADER_FAILED_WORDS = "The grader failed here, not you."
GRADER_FAILED_NEXT = ("Nothing for you to do: this item was not graded because the grading tool itself failed. Your "
                      "instructor will grade it again.")
GRADER_FAILED_NOTE = ("Some items below could not be graded because the grading tool failed — not because of your work. "
                      "They show 0 points for now; your instructor will grade them again.")
UNLAID_NEXT = ("Your submission could not be graded as you handed it in — the reason below says what in it is wrong and "
               "which limit it breaks. Remove that, and hand in your workbook again.")

NEXT_STEPS = {
    "stage_tests": "Run `forgelab check {n}`, read the cause of each failing test, fix {module}, and check again.",
    "instructor_checks": "These checks test the same contract as the stage tests with other inputs: re-read the "
                         "contract in the module docstring and the edge cases in the notebook.",
    "notebook": "Run the worked demonstration (part 5) and the test table (part 6) of notebook {n} and compare your "
                "output with the expected output described there.",
    "fault_lab": "Run `forgelab fault check {n}`, fix the file in labs/, and hand in the labs/ folder.",
    "transfer": "Write your test in {transfer} so that it asserts the exact results the transfer challenge asks for "
                "(a test that only runs the code passes on wrong code too). Grading runs it on the course's correct "
                "implementation, where it must pass, so it must expect what the contract says, not what your own "
                "code happens to do; `forgelab check {n}` runs it on your code.",
    "design_answer": "Answer the design question in notebook part 9 (it is saved with your evidence).",
    "evidence": "Run `forgelab check {n}` on your final code and hand in the evidence/ folder as the checker wrote it.",
}

STYLE = """
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;line-height:1.45}
table{border-collapse:collapse;width:100%;margin:0.5rem 0 1.5rem}
th,td{border:1px solid #ccc;padding:0.35rem 0.5rem;text-align:left;vertical-align:top}
th{background:#f2f2f2} td.points{white-space:nowrap;text-align:right}
tr.passed td.points{color:#0a6b2d} tr.failed td.points,tr.timeout td.points,tr.error td.points,
tr.missing td.points{color:#a40000} tr.partial td.points{color:#8a5a00}
.why{color:#333} .next{color:#555;font-size:0.92em} .note{background:#f7f7f7;padding:0.6rem 0.8rem}
code{background:#f2f2f2;padding:0 0.2em}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _inline_code(text: str) -> str:
    """Escape, then show `backticked` parts as code."""
    parts = _e(text).split("`")
    return "".join(f"<code>{part}</code>" if index % 2 else part for index, part in enumerate(parts))


def page(course: Course, submission: str, content_sha256: str, items: list[GradeItem]) -> str:
    stages = sorted({item.stage for item in items})
    total, top = sum(i.points for i in items), sum(i.max_points for i in items)
    out = [
        "<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f"<title>Feedback · {_e(submission)}</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
        f"<h1>Feedback for {_e(submission)}</h1>",
        f"<p>{_e(course.text('title'))} · {_e(total)} of {_e(top)} points over {len(stages)} stage(s).</p>",
        '<p class="note">How this was graded: your <code>forge/</code> was run against the course\'s own stage tests '
        "(your copy of the tests is not used), the graded cells of the course's reference notebooks, and a few "
        "instructor checks that are listed by name only. Your fault-lab fix was re-run, your transfer test was run on "
        "the course's reference implementation (where it must pass) and on its known-wrong ones (where it must fail), "
        "your design answer was read, and your verification.json was compared with what grading saw."
        + (f" Graded files digest: <code>{_e(content_sha256[:16])}</code>." if content_sha256 else "") + "</p>",
    ]
    unlaid = bool(items) and all(is_unlaid(item) for item in items if item.max_points)
    if unlaid:
        out.append(f'<p class="note"><strong>{_e(UNLAID_NEXT)}</strong></p>')
    if any(is_grader_failure(item) for item in items):
        out.append(f'<p class="note"><strong>{_e(GRADER_FAILED_NOTE)}</strong></p>')
    for number in stages:
        stage = course.stage(number)
        rows = sorted((i for i in items if i.stage == number), key=lambda i: i.sort_key)
        points, maximum = sum(i.points for i in rows), sum(i.max_points for i in rows)
        out.append(f"<h2>Stage {_e(number)} · {_e(stage.text().title)} — {_e(points)}/{_e(maximum)}</h2>")
        out.append("<table><thead><tr><th>item</th><th>points</th><th>result</th></tr></thead><tbody>")
        for item in rows:
            spec = SPEC[item.item]
            step = NEXT_STEPS[item.item].format(n=number, module=stage.module, transfer=stage.transfer_file)
            grader = is_grader_failure(item)
            words = GRADER_FAILED_WORDS if grader else RESULT_WORDS[item.outcome]
            result = [f"<strong>{_e(words)}</strong> <span class=\"why\">{_inline_code(item.reason)}</span>"]
            result.append(f'<div class="next">Checked: {_inline_code(spec.checks)}.</div>')
            if grader:
                result.append(f'<div class="next">{_e(GRADER_FAILED_NEXT)}</div>')
            elif item.points < item.max_points and not unlaid:
                result.append(f'<div class="next">Next step: {_inline_code(step)}</div>')
            if item.flag == REVIEW and not grader:
                result.append('<div class="next">Your instructor will look at this item personally.</div>')
            out.append(f'<tr class="{_e(item.outcome)}"><td>{_e(spec.title)}</td>'
                       f'<td class="points">{_e(item.points)}/{_e(item.max_points)}</td><td>{"".join(result)}</td></tr>')
        out.append("</tbody></table>")
    out += ["<p class=\"next\">Generated by forgelab grade. The same submission always gets the same rows.</p>",
            "</body>", "</html>", ""]
    return "\n".join(out)


def page_names(submissions: list[str]) -> dict[str, str]:
    """A unique, file-name-safe page name per submission id, decided over the whole set.

    Ids that map to the same safe name ("alice smith", "alice-smith") get ``-2``, ``-3``… in the sorted
    order of their ids, so the same set of submissions always gets the same names — also when shards
    are merged.
    """
    names: dict[str, str] = {}
    taken: set[str] = set()
    for submission in sorted(set(submissions)):
        base = safe_name(submission)
        name, count = base, 1
        while name.lower() in taken:
            count += 1
            name = f"{base}-{count}"
        taken.add(name.lower())
        names[submission] = f"{name}.html"
    return names


def write_pages(course: Course, out: Path, records: dict[str, str], items: list[GradeItem]) -> dict[str, Path]:
    """Write ``out/feedback/<page>.html`` for each submission in ``records`` (id → content digest)."""
    folder = out / "feedback"
    folder.mkdir(parents=True, exist_ok=True)
    names = page_names(list(records))
    written: dict[str, Path] = {}
    for submission, digest in sorted(records.items()):
        mine = [item for item in items if item.submission == submission]
        path = folder / names[submission]
        path.write_text(page(course, submission, digest, mine), encoding="utf-8")
        written[submission] = path
    return written
