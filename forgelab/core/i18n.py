"""The tools' own words in both editions: English and Simplified Chinese, through gettext catalogs.

Course text (stage problems, hints, quizzes…) lives in the stage sources, keyed by language; the
words of the tools themselves (tables, verdicts, causes, next steps, widget labels) live in the
gettext catalog ``forgelab/locale/zh/LC_MESSAGES/forgelab.po``, extracted and compiled with Babel
(``forgelab i18n extract|compile``; ``forgelab build --check`` fails when a message has no
translation or the compiled catalog is stale). Identifiers, test names, reason codes, JSON fields
and command-line flags are English in both editions.

The language is chosen once per process: ``--lang`` if given, else ``FORGE_LANG``, else the
workbook's edition (``course/edition.toml``, which only a bundle released with ``--lang zh``
carries), else the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG`` starting with ``zh``), else English. Code writes
``_("fault lab {number} started").format(number=...)`` — the message id is the English text.
"""

from __future__ import annotations

import gettext
import os
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

LANGUAGES = ("en", "zh")
DOMAIN = "forgelab"
ARGPARSE_DOMAIN = "argparse"  # the standard library's argparse asks gettext for its own words in this domain
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"  # forgelab/locale
EDITION_FILE = Path("course") / "edition.toml"  # ``language = "zh"``: the edition a released bundle speaks
_ACTIVE: ContextVar[str] = ContextVar("forgelab_language", default="en")


class LanguageError(ValueError):
    """An unknown language was asked for; the message lists the known ones."""


def normalize(code: str) -> str | None:
    """``zh``, ``zh_CN``, ``zh-Hans``, ``zh_CN.UTF-8`` → ``zh``; ``en*`` → ``en``; anything else → None."""
    head = code.strip().replace("-", "_").split(".", 1)[0].split("_", 1)[0].lower()
    return head if head in LANGUAGES else None


def workbook_edition(root: Path) -> str | None:
    """The language of the workbook at ``root`` as released (``course/edition.toml``), or None if it names none."""
    path = root / EDITION_FILE
    try:
        with path.open("rb") as handle:
            value = tomllib.load(handle).get("language")
    except FileNotFoundError:
        return None
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise LanguageError(f"{path}: cannot read it ({error}): it should hold one line, language = \"zh\"") from None
    chosen = normalize(value) if isinstance(value, str) else None
    if chosen is None:
        raise LanguageError(f"{path}: language = {value!r} is not a known language: expected one of {', '.join(LANGUAGES)}")
    return chosen


def resolve(explicit: str | None = None, environ: Mapping[str, str] | None = None, edition: str | None = None) -> str:
    """The language to speak: ``--lang``, then ``FORGE_LANG``, then the workbook's edition, then the locale, then English."""
    env = os.environ if environ is None else environ
    if explicit:
        chosen = normalize(explicit)
        if chosen is None:
            raise LanguageError(f"unknown language {explicit!r}: expected one of {', '.join(LANGUAGES)}")
        return chosen
    if env.get("FORGE_LANG"):
        chosen = normalize(env["FORGE_LANG"])
        if chosen is None:
            raise LanguageError(f"FORGE_LANG={env['FORGE_LANG']!r} is not a known language: expected one of "
                                f"{', '.join(LANGUAGES)}")
        return chosen
    if edition:
        return edition
    for key in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(key, "")
        if value and value not in ("C", "POSIX"):
            return normalize(value) or "en"
    return "en"


def use(language: str) -> None:
    """Speak ``language`` from now on in this process (or context)."""
    if language not in LANGUAGES:
        raise LanguageError(f"unknown language {language!r}: expected one of {', '.join(LANGUAGES)}")
    _ACTIVE.set(language)


def active() -> str:
    return _ACTIVE.get()


@contextmanager
def speaking(language: str) -> Iterator[None]:
    """Speak ``language`` inside the ``with`` block only (e.g. while building one edition's notebook);
    a language without a catalog speaks English."""
    token = _ACTIVE.set(language)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


@lru_cache(maxsize=None)
def _catalog(language: str) -> gettext.NullTranslations:
    if language == "en":
        return gettext.NullTranslations()
    try:
        return gettext.translation(DOMAIN, localedir=str(LOCALE_DIR), languages=[language])
    except OSError:  # a catalog that was not compiled: say it in English rather than fail
        return gettext.NullTranslations()


def argparse_catalog(language: str) -> gettext.NullTranslations:
    """argparse's own words ("usage:", "options:", its errors) in ``language``, from our ``argparse`` catalog."""
    if language == "en":
        return gettext.NullTranslations()
    try:
        return gettext.translation(ARGPARSE_DOMAIN, localedir=str(LOCALE_DIR), languages=[language])
    except OSError:
        return gettext.NullTranslations()


def translations(language: str) -> gettext.NullTranslations:
    """The catalog of ``language`` (English: none) — for a template engine's gettext (``jinja2.ext.i18n``)."""
    return _catalog(language)


def _(message: str) -> str:
    """``message`` in the active language (the English text is its own message id)."""
    return _catalog(active()).gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    return _catalog(active()).ngettext(singular, plural, count)


def renderings(message: str) -> tuple[str, ...]:
    """``message`` in every language, English first — to recognise a text written in any edition's words (e.g. a
    gradebook reason's opening, whichever language the class was graded in)."""
    return tuple(dict.fromkeys(_catalog(language).gettext(message) for language in LANGUAGES))


def N_(message: str) -> str:
    """Marks a message for extraction where it is defined; translate it with ``_()`` where it is shown."""
    return message
