"""Course commands: build, verify-course."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

from forgelab.cli.context import (UNSANDBOXED_WARNING, add_unsandboxed_flag, judge_settings, open_workbook,
                                  sandbox_refusal, sandbox_settings)
from forgelab.core.display import fail
from forgelab.core.registry import RegistryError
from forgelab.core.i18n import _

if TYPE_CHECKING:
    from forgelab.core.registry import Course, Stage


def cmd_build(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.authoring.build import SCHEMA_FILE, build_opening, build_schema, opening_notebook, stale_artefacts
    from forgelab.authoring.build import stale_opening, stale_schema
    from forgelab.authoring.build import editions as built_editions
    from forgelab.authoring.build import build_stage

    workbook, course = open_workbook()
    stages = [course.stage(s) for s in args.stages] if args.stages else list(course.stages)
    with_opening = not args.stages  # the opening is built with the whole course
    if args.check:
        problems = [(item.artefact, item.reason) for item in stale_artefacts(course, stages)]
        problems += [(opening_notebook(language), reason) for language in built_editions(course)
                     for reason in (stale_opening(course, language) if with_opening else [])]
        problems += [(SCHEMA_FILE, reason) for reason in [stale_schema(course)] if reason]
        # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
        from forgelab.site.builder import stale_schema_check

        problems += [("forgelab/site/assets/schema-check.js", reason) for reason in [stale_schema_check()] if reason]
        for artefact, reason in problems:
            print(_("out of date: {artefact} — {reason}").format(artefact=artefact, reason=reason))
        editions = _edition_problems(course, stages, whole_course=with_opening)
        for artefact, reason in editions:
            print(_("out of date: {artefact} — {reason}").format(artefact=artefact, reason=reason))
        # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
        from forgelab.authoring import terminology

        terms = terminology.problems(course)
        for line in terms:
            print(_("terminology: {problem}").format(problem=line))
        if problems or editions or terms:
            causes = [_("{count} generated artefact(s) are out of date with their source").format(
                count=len(problems))] if problems else []
            causes += [_("{count} item(s) exist in one edition and not in the other").format(
                count=len(editions))] if editions else []
            causes += [_("{count} place(s) in the Chinese edition depart from course/glossary.toml").format(
                count=len(terms))] if terms else []
            steps = [_("run `forgelab build` and commit the result")] if problems else []
            steps += [_("complete the other edition (`forgelab i18n extract`, translate, `forgelab i18n compile` for "
                        "the tools' words)")] if editions else []
            steps += [_("write each term as the glossary gives it (or put code in backticks), then `forgelab build` "
                        "for the notebooks")] if terms else []
            return fail(_("; ").join(causes), _("; ").join(steps))
        print(_("all generated artefacts are current ({count} stage(s)); both editions are complete and speak the "
                "glossary's terms").format(count=len(stages)))
        return 0
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.authoring.build import BuildError

    if build_schema(course):
        print(_("wrote {file} from its model (forgelab/core/verification.py)").format(file=SCHEMA_FILE), flush=True)
    for stage in stages:
        started = time.monotonic()
        print(_("building stage {number} ({slug})…").format(number=stage.number, slug=stage.slug), flush=True)
        try:
            written = build_stage(course, workbook, stage, run=not args.no_execute)
        except BuildError as error:
            return fail(_("stage {number}: {error}").format(number=stage.number, error=error))
        print(_("  wrote {files} in {seconds} s").format(files=_(", ").join(written),
                                                        seconds=f"{time.monotonic() - started:.1f}"), flush=True)
    for language in built_editions(course) if with_opening else ():
        started = time.monotonic()
        print(_("building the opening ({language})…").format(language=language), flush=True)
        try:
            written = build_opening(course, workbook, run=not args.no_execute, language=language)
        except BuildError as error:
            return fail(_("the opening ({language}): {error}").format(language=language, error=error))
        print(_("  wrote {files} in {seconds} s").format(files=_(", ").join(written),
                                                        seconds=f"{time.monotonic() - started:.1f}"), flush=True)
    return 0


def _edition_problems(course: Course, stages: list[Stage], *, whole_course: bool) -> list[tuple[str, str]]:
    """(what, why) for everything present in one edition and missing in the other: the tools' catalogs
    (:mod:`forgelab.authoring.catalogs`) and the course's texts, demos and docstrings (:mod:`forgelab.authoring.editions`)."""
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    import importlib.util

    from forgelab.authoring import editions
    from forgelab.authoring.catalogs import SOURCE, po_path

    found: list[tuple[str, str]] = []
    if importlib.util.find_spec("babel") is None:
        found.append(("forgelab/locale", "Babel is not installed, so the tools' catalogs cannot be checked: run "
                                         "`make install` (the dev extra)"))
    else:
        # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
        from forgelab.authoring.catalogs import problems as catalog_problems

        for problem in catalog_problems():
            found.append((po_path(problem.language).relative_to(SOURCE.parent).as_posix(), problem.what))
    texts = editions.problems(course) if whole_course else [
        *editions.course_problems(course), *(item for stage in stages for item in editions.stage_problems(course, stage))]
    found += [("editions", text) for text in texts]
    return found


def cmd_verify(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.authoring.verify import verify_course

    workbook, course = open_workbook()
    stages = [course.stage(s) for s in args.stages] if args.stages else list(course.stages)
    report = verify_course(workbook, course, stages, progress=print, mutants=args.mutants)
    print(report.summary)
    return 0 if report.ok else 1


def cmd_new_stage(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.authoring import scaffold

    workbook, course = open_workbook()
    if not workbook.has_solutions:
        return fail(_("new stages are added in the course repository, not in a learner bundle"),
                    _("run this in the repository that has solutions/"))
    try:
        plan = scaffold.plan(course, args.number, args.slug, args.module, args.title or "")
    except RegistryError as error:
        return fail(str(error))
    written = scaffold.write(course, plan)
    print(_("stage {number} ({slug}) scaffolded: {count} new files, no existing file changed").format(
        number=plan.number, slug=plan.slug, count=len(written)))
    for path in written:
        print(f"  {path}")
    print(_("every file says {todo}; `forgelab verify-course` lists the stage as incomplete until none does").format(
        todo=scaffold.TODO))
    print(_("next: write the texts, the reference and the tests, then `forgelab build {number}` (to undo: delete the "
            "files listed above)").format(number=plan.number))
    return 0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    new = sub.add_parser("new-stage", help=_("scaffold every file a new stage needs (course authors)"))
    new.add_argument("number", help=_("the new stage's two-digit number, e.g. 11"))
    new.add_argument("slug", help=_("lower-case words joined by hyphens, e.g. tool-call-budget"))
    new.add_argument("--module", required=True, help=_("the learner's new module, e.g. forge/tool_budget.py"))
    new.add_argument("--title", help=_("the stage's title (default: from the slug)"))
    new.set_defaults(handler=cmd_new_stage)

    build = sub.add_parser("build", help=_("regenerate notebooks (executed against the solution) and fault contracts"))
    build.add_argument("stages", nargs="*", help=_("stage numbers (default: all)"))
    build.add_argument("--check", action="store_true", help=_("only report artefacts that are out of date; exit 1 if any"))
    build.add_argument("--no-execute", action="store_true", help=_("write notebooks without running them"))
    build.set_defaults(handler=cmd_build)

    verify = sub.add_parser("verify-course", help=_("prove every stage's contract: solution passes, starter unsolved, fault holds, artefacts current"))
    verify.add_argument("stages", nargs="*", help=_("stage numbers (default: all)"))
    verify.add_argument("--mutants", action="store_true", help=_("also prove that every known-wrong variant in mutants.toml fails a stage test"))
    verify.set_defaults(handler=cmd_verify)

    register_nbval(sub)


def cmd_nbval(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.judge.sandbox import SandboxUnavailable, isolation
    from forgelab.authoring.nbval import run_nbval
    from forgelab.core.targets import resolve_target

    from forgelab.authoring.build import editions, opening_notebook

    workbook, course = open_workbook()
    notebooks = [opening_notebook(language) if s in ("0", "00", "opening") else course.stage(s).notebook_in(language)
                 for language in editions(course) for s in args.stages] if args.stages else None
    settings = judge_settings(args)
    someone_elses = resolve_target(args.target, workbook, course).kind == "path"
    if someone_elses:  # someone else's code: the sandbox `grade` uses, or a refusal
        settings = sandbox_settings(settings, args.unsandboxed)
        if args.unsandboxed:
            print(_(UNSANDBOXED_WARNING), flush=True)
        else:
            try:
                isolation(settings.sandbox)
            except SandboxUnavailable as error:
                return sandbox_refusal(error.reason)
    code = run_nbval(workbook, course, args.target, notebooks=notebooks, lax=args.lax,
                     extra=["-k", args.keyword] if args.keyword else None, settings=settings)
    if someone_elses and args.unsandboxed:  # at the end too: the output may be long
        print(_(UNSANDBOXED_WARNING), flush=True)
    return code


def register_nbval(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    nbval = sub.add_parser("nbval", help=_("check the stage notebooks: nbval against the reference, a sandboxed replay "
                                           "of the worked demonstrations against learner code"))
    nbval.add_argument("stages", nargs="*", help=_("stage numbers, 00 for the opening (default: all notebooks)"))
    nbval.add_argument("--target", default="solution",
                       help=_("solution (default: real nbval), or learner / a workbook path (replayed through the judge)"))
    nbval.add_argument("--lax", action="store_true", help=_("compare only cells tagged nbval-check-output (grading mode)"))
    nbval.add_argument("-k", dest="keyword", help=_("passed to pytest -k (select cells)"))
    add_unsandboxed_flag(nbval)
    nbval.set_defaults(handler=cmd_nbval)
