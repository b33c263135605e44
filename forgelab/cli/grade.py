"""Instructor command: ``forgelab grade SUBMISSION... [--out DIR] [--jobs N] [--stages 01-07]``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from forgelab.core.display import fail, table
from forgelab.core.i18n import N_, _, active
from forgelab.cli.context import open_workbook
from forgelab.judge.settings import DEFAULT, SandboxMode
from forgelab.core.registry import RegistryError
from forgelab.grading import SIMILARITY_PERCENT, SIMILARITY_TOKENS

if TYPE_CHECKING:  # loaded by the command itself (start-up speed)
    from forgelab.grading.batch import GradingInterrupted


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("{text} is not a whole number").format(text=repr(text))) from None
    if value < 1:
        raise argparse.ArgumentTypeError(_("{text} must be 1 or more").format(text=text))
    return value


def _percent(text: str) -> int:
    value = _positive(text)
    if value > 100:
        raise argparse.ArgumentTypeError(_("{text} is more than 100 (a percentage)").format(text=text))
    return value


def _shown(path: Path) -> str:
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else relative


# how the judge describes its sandbox (forgelab.judge.sandbox.Isolation.description), said in the run's language
SANDBOXED = N_("sandbox: bubblewrap (read-only system, no network, own PID namespace, an unprivileged user, "
               "resource limits)")


def cmd_grade(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.grading.batch import GradingInterrupted, ShardSpec, grade_batch
    from forgelab.grading.gradebook import GradebookError
    from forgelab.grading.similarity import FOLDER, INDEX, Thresholds
    from forgelab.grading.rubric import REGRADE, REVIEW, parse_stages
    from forgelab.core.submission import SubmissionError, discover
    from forgelab.judge.sandbox import SandboxUnavailable

    workbook, course = open_workbook()
    if not workbook.has_solutions and not (workbook.root / "instructor").is_dir():
        print(_("note: this looks like a learner bundle (no solutions/, no instructor/): grading still works, "
                "without the instructor checks"))
    try:
        stages = parse_stages(course, args.stages)
    except RegistryError as error:
        return fail(str(error), _("give --stages as a range or a list of the course's stages, e.g. --stages 01-03"))
    try:
        shard = ShardSpec.parse(args.shard) if args.shard else None
    except ValueError as error:
        return fail(str(error), _("e.g. --shard 1/4 on the first of four machines, 2/4 on the second …"))
    try:
        subs = discover(args.submissions)
    except SubmissionError as error:
        return fail(str(error), _("fix or remove that path and run `forgelab grade` again"))
    out = Path(args.out).expanduser().resolve() if args.out else (workbook.root / "build" / "grading")
    if out.exists() and not out.is_dir():
        return fail(_("--out {path} is a file, not a folder").format(path=args.out),
                    _("give a folder for the gradebook and the feedback pages"))
    for sub in subs:
        if out == sub.path or sub.path in out.parents:
            return fail(_("--out {out} is inside the submission {path}: grading never writes into a submission").format(
                out=out, path=sub.path), _("choose an --out folder outside every submission"))
    settings = DEFAULT.with_(sandbox=SandboxMode.OFF if args.unsandboxed else SandboxMode.REQUIRED,
                             test_cpu_s=args.cpu_limit, test_wall_s=args.wall_limit,
                             submission_wall_s=args.time_budget,
                             language=active())  # the judge's causes (a notebook cell's too) in the class's language
    chosen = shard.select(subs) if shard else subs
    jobs = max(1, min(args.jobs, len(chosen) or 1))
    numbers = ", ".join(s.number for s in stages)
    if shard:
        print(_("grading shard {shard}: {chosen} of {count} submission(s), stage(s) {stages}, {jobs} at a time").format(
            shard=shard, chosen=len(chosen), count=len(subs), stages=numbers, jobs=jobs), flush=True)
    else:
        print(_("grading {count} submission(s), stage(s) {stages}, {jobs} at a time").format(
            count=len(subs), stages=numbers, jobs=jobs), flush=True)
    try:
        result = grade_batch(course, workbook, stages, subs, out, jobs=jobs, settings=settings, shard=shard,
                             progress=lambda line: print(line, flush=True),
                             thresholds=Thresholds(args.similarity_percent, args.similarity_tokens))
    except SandboxUnavailable as error:
        return fail(str(error))
    except GradebookError as error:
        return fail(str(error))
    except GradingInterrupted as stopped:
        return _interrupted(stopped, len(chosen))
    sandbox = _(SANDBOXED) if result.sandbox == SANDBOXED else result.sandbox  # the gradebook keeps the English
    print(_("{sandbox}; limits: {cpu} s of CPU time and {wall} s per test, {budget} s per submission").format(
        sandbox=sandbox, cpu=settings.test_cpu_s, wall=settings.test_wall_s, budget=settings.submission_wall_s))
    if args.unsandboxed:
        print(_("warning: graded WITHOUT the sandbox (--unsandboxed): submissions could read and write what you can; "
                "the gradebook records it"))
    print()
    rows = []
    for graded in result.graded:
        flags = [_("{count} {flag}").format(count=count, flag=flag) for flag in (REVIEW, REGRADE)
                 if (count := sum(1 for item in graded.items if item.flag == flag))]
        rows.append((graded.submission.id, f"{graded.points}/{graded.max_points}", ", ".join(flags),
                     _shown(result.pages[graded.submission.id])))
    print(table([_("submission"), _("points"), _("flags"), _("feedback page")], rows))
    print()
    print(_("gradebook: {book} (SQLite; table grades), {csv}, {totals}").format(
        book=_shown(result.gradebook), csv=_shown(result.csv), totals=_shown(result.totals)))
    index = _shown(out / FOLDER / INDEX)
    if result.similar:
        print(_("similar code: {count} pair(s) flagged for review (table similarity, column similarity of both CSV "
                "files; learners do not see it): {index}").format(count=len(result.similar), index=index))
    else:
        print(_("similar code: no pair above {percent}% and {tokens} tokens: {index}").format(
            percent=args.similarity_percent, tokens=args.similarity_tokens, index=index))
    flagged = sum(1 for g in result.graded for item in g.items if item.flag == REVIEW)
    again = sorted({g.submission for g in result.graded for item in g.items if item.flag == REGRADE},
                   key=lambda sub: sub.id)
    if again:
        command = (f"forgelab grade {' '.join(_shown(sub.path) for sub in again[:3])}{' …' if len(again) > 3 else ''} "
                   f"--out {_shown(out)}")
        print(_("next: the grader failed on {count} submission(s) (rows with flag=regrade; not the learners' "
                "fault): grade them again with `{command}` (their rows are replaced)").format(count=len(again),
                                                                                         command=command))
    if shard:
        print(_("next: when every shard is done, `forgelab gradebook merge OUT1 OUT2 … --into DIR`"))
    elif flagged:
        print(_("next: {count} item(s) are flagged for review — see the rows with flag=review in {csv}").format(
            count=flagged, csv=_shown(result.csv)))
    elif not again:
        print(_("next: read the gradebook, then send each learner their feedback page"))
    return 0


def _interrupted(stopped: GradingInterrupted, total: int) -> int:
    """Ctrl-C: what was recorded, what was not, and the command that grades the rest."""
    from forgelab.grading.gradebook import FILENAME  # lazy: start-up speed (see cmd_grade)

    book = _shown(stopped.out / FILENAME)
    if not stopped.not_graded:
        return fail(_("interrupted after every submission was recorded in {book}").format(book=book))
    rest = stopped.not_graded
    command = (f"forgelab grade {' '.join(_shown(sub.path) for sub in rest[:3])}{' …' if len(rest) > 3 else ''} "
               f"--out {_shown(stopped.out)}")
    names = ", ".join(sub.id for sub in rest)
    said = _("interrupted: {done} of {total} submission(s) graded and recorded in {book} (with their feedback "
             "pages); not graded: {names}").format(done=len(stopped.graded), total=total, book=book, names=names) \
        if stopped.graded else _("interrupted before a submission was graded; not graded: {names}").format(names=names)
    return fail(said,
                _("grade the rest with `{command}` (nothing of theirs was recorded; the others keep their rows)").format(
                    command=command))


def cmd_merge(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.grading.batch import merge
    from forgelab.grading.gradebook import GradebookError

    workbook, course = open_workbook()
    folders = [Path(folder).expanduser().resolve() for folder in args.shards]
    into = Path(args.into).expanduser().resolve()
    if into in folders:
        return fail(_("--into {into} is one of the shard folders").format(into=args.into),
                    _("merge into a new, empty folder"))
    try:
        count, book, csv_path, pages = merge(course, workbook, folders, into, args.allow_partial)
    except GradebookError as error:
        return fail(str(error))
    print(_("merged {shards} shard(s): {count} submission(s), {pages} feedback page(s)").format(
        shards=len(folders), count=count, pages=len(pages)))
    print(_("gradebook: {book}, {csv}").format(book=_shown(book), csv=_shown(csv_path)))
    read, missing = _shards_of(book)
    if read:
        print(_("shards read: {shards}").format(shards=_(", ").join(read)))
    if missing:
        print(_("partial (--allow-partial): shard(s) {shards} of this split are missing, so their submissions are not "
                "in the merged gradebook; its CSV files and class report say partial — merge again with every shard's "
                "folder").format(shards=_(", ").join(missing)))
    print(_("next: `forgelab grade report {folder} --html` shows what the class struggles with").format(
        folder=_shown(into)))
    return 0


def _shards_of(book: Path) -> tuple[list[str], list[str]]:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.grading import gradebook

    connection = gradebook.open_gradebook(book)
    try:
        return gradebook.shards_read(gradebook.run_records(connection))
    finally:
        connection.close()


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    grade = sub.add_parser(
        "grade", help=_("grade learner submissions (folders or zips): stage tests, instructor checks, notebooks, evidence"),
        description=_("Grade each submission with the judge: its code runs only in a sandbox (bubblewrap) and is "
                      "called across a data-only boundary. Writes an SQLite gradebook, CSV exports and one feedback "
                      "page per learner. Submissions are never written. Afterwards, `forgelab grade report OUT [--html]` "
                      "shows what the class struggles with, test by test (aggregates only)."))
    grade.add_argument("submissions", nargs="+", metavar="SUBMISSION", help=_("a learner's workbook folder or its zip"))
    grade.add_argument("--out", help=_("folder for gradebook.sqlite, gradebook.csv, totals.csv and feedback/ "
                                       "(default: build/grading in the course)"))
    grade.add_argument("--jobs", type=_positive, default=1, help=_("submissions graded in parallel (default 1)"))
    grade.add_argument("--stages", help=_("stages to grade: 01-07, 01,03 or 02 (default: all)"))
    grade.add_argument("--shard", metavar="K/N", help=_("grade only the K-th of N deterministic slices of the submissions"))
    grade.add_argument("--cpu-limit", type=_positive, default=10,
                       help=_("CPU seconds a submission's code may use in one test (default 10): an endless loop"))
    grade.add_argument("--wall-limit", type=_positive, default=90,
                       help=_("wall-clock seconds per test for code that waits instead of computing (default 90)"))
    grade.add_argument("--time-budget", type=_positive, default=600, metavar="SECONDS",
                       help=_("wall-clock seconds a submission's code may take in all (default 600): every call of the "
                              "course's tests added up, and its own tests again as much; what is left is not run"))
    grade.add_argument("--similarity-percent", type=_percent, default=SIMILARITY_PERCENT, metavar="PERCENT",
                       help=_("flag two stage modules for review when either shares at least PERCENT of its own code "
                              "with the other (default {default}; the starter's code does not count)").format(
                           default=SIMILARITY_PERCENT))
    grade.add_argument("--similarity-tokens", type=_positive, default=SIMILARITY_TOKENS, metavar="TOKENS",
                       help=_("… and they share at least TOKENS tokens (default {default}), so that a few equal lines "
                              "of a short module are no copy").format(default=SIMILARITY_TOKENS))
    grade.add_argument("--unsandboxed", action="store_true",
                       help=_("grade even where bubblewrap cannot start (NOT safe for hostile code; recorded in the gradebook)"))
    grade.set_defaults(handler=cmd_grade)

    book = sub.add_parser("gradebook", help=_("work with gradebooks: merge the output of `grade --shard` runs"))
    actions = book.add_subparsers(dest="action", metavar="ACTION", required=True)
    merge = actions.add_parser("merge", help=_("combine shard output folders into one gradebook, CSV and feedback set"))
    merge.add_argument("shards", nargs="+", metavar="OUT", help=_("the --out folders of the shard runs"))
    merge.add_argument("--into", required=True, help=_("a new folder for the merged gradebook"))
    merge.add_argument("--allow-partial", action="store_true",
                       help=_("merge even when shards of the split are missing; the merged gradebook is marked partial "
                              "(a last CSV column, the class report)"))
    merge.set_defaults(handler=cmd_merge)
