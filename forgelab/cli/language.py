"""``--lang``, one real option of every command, and argparse speaking the chosen language.

The language must be known before the parsers are built (their help texts are translated as they are written),
so :func:`wanted` reads ``--lang X`` / ``--lang=X`` from the raw arguments first — without taking it out — and
:func:`speak` installs argparse's own words ("usage:", "options:", "the following arguments are required", "invalid
choice" …) from our ``argparse`` catalog (``forgelab/locale/<lang>/LC_MESSAGES/argparse.po``). argparse looks its
words up through the module-level ``_``/``ngettext`` it imported from :mod:`gettext`; :func:`speak` points them at
the catalog of the chosen language (and back at plain gettext for English).

Then argparse itself parses ``--lang``: every parser gets it from a parent parser (:data:`LANGUAGE`, ``choices`` en
and zh; :data:`EDITIONS` adds ``all`` for ``release`` and ``site build``, which read it as the editions to build),
before or after the command, so ``forgelab --lang fr`` is refused by argparse with its own message, in the language
the command speaks. Its default is suppressed, so a sub-command's parser never overwrites a value given before the
command.
"""

from __future__ import annotations

import argparse
import gettext
import re
from collections.abc import Sequence
from typing import Any

from forgelab.core import i18n
from forgelab.core.display import fill
from forgelab.core.i18n import _

# (the sub-parsers' dest, the command) that read --lang en|zh|all as the edition(s) to build
EDITION_COMMANDS = frozenset({("command", "release"), ("command", "site"), ("site_command", "build")})


def _language_parent(choices: Sequence[str], help_text: str) -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--lang", choices=tuple(choices), default=argparse.SUPPRESS, help=help_text)
    return parent


def language_parent() -> argparse.ArgumentParser:
    """The parent parser of every command: ``--lang en|zh``."""
    return _language_parent(i18n.LANGUAGES, _("the language to speak: en or zh (else FORGE_LANG, else the "
                                              "workbook's edition, else your locale)"))


def editions_parent() -> argparse.ArgumentParser:
    """The parent parser of ``release`` and ``site build``: ``--lang en|zh|all``, the edition(s) to build."""
    return _language_parent((*i18n.LANGUAGES, "all"), _("the edition(s) to build and the language to speak: en "
                                                        "(default), zh, or all"))


class LanguageSubParsers(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Sub-commands that each take ``--lang`` from a parent parser (and pass it on to their own sub-commands), and
    whose own ``--help`` opens with what the command does (its one-line help, where it has no longer description)."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        parent = editions_parent() if (self.dest, name) in EDITION_COMMANDS else language_parent()
        kwargs["parents"] = [*kwargs.get("parents", []), parent]
        if kwargs.get("help") is argparse.SUPPRESS:
            del kwargs["help"]  # a hidden command stays out of the list (argparse 3.11 would print ==SUPPRESS==)
        if "description" not in kwargs and kwargs.get("help") is not None:
            kwargs["description"] = kwargs["help"]  # `forgelab NAME --help` says what the command does, as the list does
        return super().add_parser(name, **kwargs)  # type: ignore[no-any-return]


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped by display columns (a Chinese character takes two) and between Chinese characters,
    never inside an English word (:func:`forgelab.core.display.fill`)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return _fill(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(indent + line for line in _fill(text, width))


_CLOSING = "）】」』》〉。，、；：！？"


def _fill(text: str, width: int) -> list[str]:
    """:func:`fill`, and a closing mark that would open a line after a narrow character (``默认 5`` / ``）``) stays
    on the line it closes (one column over the width rather than a line of its own)."""
    lines: list[str] = []
    for line in fill(text, width):
        while lines and line and line[0] in _CLOSING:
            lines[-1], line = lines[-1] + line[0], line[1:].lstrip()
        if line:
            lines.append(line)
    return lines


_HEADING = re.compile(r"^(\S[^\n]*[\u4e00-\u9fff]):$", re.M)


class Parser(argparse.ArgumentParser):
    """An argument parser whose sub-commands take ``--lang`` too, and whose help reads well in Chinese."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("action", LanguageSubParsers)
        return super().add_subparsers(**kwargs)

    def format_help(self) -> str:
        # argparse ends a section's heading with an ASCII colon; a Chinese heading ends with a full-width one
        return _HEADING.sub(r"\1：", super().format_help())


def wanted(arguments: Sequence[str]) -> str | None:
    """The value of the last ``--lang`` in ``arguments`` (None without one), read before any parser exists."""
    chosen = None
    for index, item in enumerate(arguments):
        if item == "--":
            break
        if item == "--lang" and index + 1 < len(arguments):
            chosen = arguments[index + 1]
        elif item.startswith("--lang="):
            chosen = item.split("=", 1)[1]
    return chosen


def speak(language: str) -> None:
    """Speak ``language`` from now on: the tools' words (:func:`forgelab.core.i18n.use`) and argparse's own."""
    i18n.use(language)
    catalog = i18n.argparse_catalog(language)
    argparse._ = catalog.gettext if language != "en" else gettext.gettext  # type: ignore[attr-defined]
    argparse.ngettext = catalog.ngettext if language != "en" else gettext.ngettext  # type: ignore[attr-defined]
