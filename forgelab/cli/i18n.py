"""``forgelab i18n extract|compile|check``: the gettext catalogs of the tools' own words (course authors).

* ``extract`` merges every message marked with ``_()``, ``N_()`` or ``ngettext()`` in forgelab/ into
  ``forgelab/locale/<lang>/LC_MESSAGES/forgelab.po`` (new messages arrive without a translation, translations
  of messages still in use are kept, unused ones are dropped);
* ``compile`` writes the ``.mo`` files the tools load at run time;
* ``check`` lists what keeps an edition incomplete (exit 1): a message without a translation, one the code no
  longer uses, a ``.mo`` out of date with its ``.po``. ``forgelab build --check`` reports the same.

Babel does the work (:mod:`forgelab.authoring.catalogs`); it is a development dependency, so these commands run in
the course repository only, never in a learner bundle (which ships the compiled catalogs).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from forgelab.core.display import fail
from forgelab.core.paths import Workbook
from forgelab.core.i18n import LANGUAGES, N_, _

BABEL_MISSING = (N_("Babel is not installed in this environment; the catalog tools are a development dependency"),
                 N_("run `make install` (it installs the dev extra), or `.venv/bin/pip install Babel`"))


def _shown(path: Path) -> str:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.authoring.catalogs import SOURCE

    return path.relative_to(SOURCE.parent).as_posix() if path.is_relative_to(SOURCE.parent) else str(path)


def _refusal() -> int | None:
    """The exit status to stop with outside the course repository or without Babel; None to go on."""
    import importlib.util


    workbook = Workbook.locate()
    if not workbook.has_solutions:
        return fail(_("the tools' catalogs are extracted, translated and compiled in the course repository, not in a "
                      "learner bundle (it ships them compiled)"), _("run `forgelab i18n` in the course repository"))
    if importlib.util.find_spec("babel") is None:
        return fail(*(_(words) for words in BABEL_MISSING))
    return None


def cmd_i18n(args: argparse.Namespace) -> int:
    stop = _refusal()
    if stop is not None:
        return stop
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.authoring import catalogs as catalogs

    if args.action == "extract":
        total = len(catalogs.extracted())
        untranslated = catalogs.extract()
        for language, count in sorted(untranslated.items()):
            print(_("catalog {language}: {path} — {total} messages, {count} without a translation").format(
                language=language, path=_shown(catalogs.po_path(language)), total=total, count=count))
        if any(untranslated.values()):
            print(_("next: translate the empty msgstr entries (placeholders such as {name} stay as they are), "
                    "then `forgelab i18n compile`"))
        else:
            print(_("next: `forgelab i18n compile`, then `forgelab i18n check`"))
        return 0
    if args.action == "compile":
        written = catalogs.compile_all()
        if not written:
            return fail(_("there is no catalog to compile"), _("run `forgelab i18n extract` first"))
        for path in written:
            print(_("wrote {path}").format(path=_shown(path)))
        problems = catalogs.problems()
        if problems:
            print(_("note: the catalogs still have {count} problem(s); `forgelab i18n check` lists them").format(
                count=len(problems)))
        return 0

    problems = catalogs.problems()
    for problem in problems:
        print(_("incomplete: {problem}").format(problem=problem))
    if problems:
        return fail(_("{count} catalog problem(s): the Chinese edition of the tools' words is incomplete or stale").format(
                        count=len(problems)),
                    _("`forgelab i18n extract`, translate, `forgelab i18n compile`"))
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.cli.site import EDITION_NAMES

    languages = [_(EDITION_NAMES.get(language, language)) for language in LANGUAGES if language != "en"]
    print(_("catalogs complete: {count} messages translated in {languages}, compiled catalogs current").format(
        count=len(catalogs.extracted()), languages=_(", ").join(languages)))
    return 0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    i18n = sub.add_parser("i18n", help=_("the tools' gettext catalogs: extract messages, compile, check completeness "
                                         "(course authors; needs Babel)"))
    i18n.add_argument("action", choices=["extract", "compile", "check"],
                      help=_("extract: merge the code's messages into the .po files; compile: write the .mo files; "
                             "check: list untranslated, unused and stale entries (exit 1 if any)"))
    i18n.set_defaults(handler=cmd_i18n)
