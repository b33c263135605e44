"""One static HTML feedback page per submission, written for the learner in the class's language.

Each stage is a table of the seven items: points, the result in plain words, what was checked,
why points were lost, and what to do next. The page is the template ``forgelab/data/templates/feedback.html.j2``
(Jinja2, autoescaped): its fixed words come from the tools' gettext catalogs (``jinja2.ext.i18n``), and nothing is put
into the page unescaped. A reason can hold text the learner's code produced (an exception message, a value it returned),
so reasons are shown as plain text, never read as Markdown: a learner's ``**bold**`` or code span stays the characters
they wrote. Only course-authored text (the fixed words, what was checked, the next steps) is Markdown, rendered by
:func:`forgelab.core.text.inline`.
The instructor checks appear by name and outcome only — the rows never carry their code or assertion messages
(see :func:`forgelab.grading.items.grade_instructor_checks`), and this page adds nothing from them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forgelab.core.i18n import N_, _, active, speaking
from forgelab.core.registry import Course
from forgelab.core.submission import safe_name
from forgelab.core.text import templates
from forgelab.grading.items import is_grader_failure, is_unlaid
from forgelab.grading.rubric import REVIEW, SPEC, GradeItem

RESULT_WORDS = {
    "passed": N_("Full marks."),
    "partial": N_("Partly there."),
    "failed": N_("Not yet."),
    "timeout": N_("Stopped at a limit: it ran too long or used too much (the reason says which limit, and what to "
                  "look for)."),
    "ended": N_("Your code's process ended (it exited, or a signal ended it): the reason gives its exit status or the "
                "signal."),
    "error": N_("Could not run."),
    "missing": N_("Not handed in."),
    "not_graded": N_("Not graded for this stage."),
}
GRADER_FAILED_WORDS = N_("The grader failed here, not you.")

NEXT_STEPS = {
    "stage_tests": N_("Run `forgelab check {n}`, read the cause of each failing test, fix {module}, and check again."),
    "instructor_checks": N_("These checks test the same contract as the stage tests with other inputs: re-read the "
                            "contract in the module docstring and the edge cases in the notebook."),
    "notebook": N_("Run the worked demonstration (part 5) and the test table (part 6) of notebook {n} and compare your "
                   "output with the expected output described there."),
    "fault_lab": N_("Run `forgelab fault check {n}`, fix the file in labs/, write the lab's regression test (a test "
                    "that fails on the broken copy and passes on your fix; `forgelab fault check {n}` runs it on "
                    "both), and hand in the labs/ folder."),
    "transfer": N_("Write your test in {transfer} so that it asserts the exact results the transfer challenge asks for "
                   "(a test that only runs the code passes on wrong code too). Grading runs it on the course's correct "
                   "implementation, where it must pass, so it must expect what the contract says, not what your own "
                   "code happens to do; `forgelab check {n}` runs it on your code."),
    "design_answer": N_("Answer the design question in notebook part 9 (it is saved with your evidence)."),
    "evidence": N_("Run `forgelab check {n}` on your final code and hand in the evidence/ folder as the checker wrote "
                   "it."),
}
HTML_LANG = {"en": "en", "zh": "zh-CN"}  # the page's <html lang>


def page(course: Course, submission: str, content_sha256: str, items: list[GradeItem], lang: str | None = None) -> str:
    """The feedback page of one submission's ``items`` in ``lang`` (``en`` or ``zh``; default: the active language)."""
    lang = lang or active()
    with speaking(lang):
        unlaid = bool(items) and all(is_unlaid(item) for item in items if item.max_points)
        stages = []
        for number in sorted({item.stage for item in items}):
            stage = course.stage(number)
            rows = sorted((i for i in items if i.stage == number), key=lambda i: i.sort_key)
            stages.append({"number": number, "title": stage.text(lang).title, "rows": [_row(item, stage, unlaid)
                                                                                       for item in rows],
                           "points": sum(i.points for i in rows), "maximum": sum(i.max_points for i in rows)})
        return templates(lang).get_template("feedback.html.j2").render(
            html_lang=HTML_LANG.get(lang, "en"), submission=submission, course_title=course.text("title", lang),
            total=sum(i.points for i in items), top=sum(i.max_points for i in items), stages=stages,
            digest=content_sha256[:16], unlaid=unlaid, grader_failed=any(is_grader_failure(item) for item in items))


def _row(item: GradeItem, stage: Any, unlaid: bool) -> dict[str, object]:
    spec = SPEC[item.item]
    grader = is_grader_failure(item)
    step = _(NEXT_STEPS[item.item]).format(n=stage.number, module=stage.module, transfer=stage.transfer_file)
    return {"outcome": item.outcome, "title": _(spec.title), "points": item.points, "maximum": item.max_points,
            "words": _(GRADER_FAILED_WORDS if grader else RESULT_WORDS[item.outcome]), "reason": item.reason,
            "checks": _(spec.checks), "grader_failed": grader,
            "next_step": step if item.points < item.max_points and not unlaid and not grader else "",
            "review": item.flag == REVIEW and not grader}


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


def write_pages(course: Course, out: Path, records: dict[str, str], items: list[GradeItem],
                lang: str | None = None) -> dict[str, Path]:
    """Write ``out/feedback/<page>.html`` for each submission in ``records`` (id → content digest), in ``lang``."""
    folder = out / "feedback"
    folder.mkdir(parents=True, exist_ok=True)
    names = page_names(list(records))
    written: dict[str, Path] = {}
    for submission, digest in sorted(records.items()):
        mine = [item for item in items if item.submission == submission]
        path = folder / names[submission]
        path.write_text(page(course, submission, digest, mine, lang), encoding="utf-8")
        written[submission] = path
    return written
