"""Course-author tooling for the tools' catalogs: extract, check, compile (Babel; a development dependency).

* :func:`extract` finds every message marked with ``_()``, ``N_()`` or ``ngettext()`` in forgelab/ (in its
  Jinja2 templates, ``forgelab/data/templates/*.j2``, too; and
  with ``t()`` in the course page's scripts, ``forgelab/site/assets/*.js``, whose words the site build
  writes into each edition's ``assets/strings.js``) and merges them into each ``forgelab/locale/<lang>/LC_MESSAGES/forgelab.po``: new ids are added without a
  translation, translations of ids still in use are kept, unused ones are dropped.
* :func:`problems` lists what makes an edition incomplete: an id without a translation, an id in the
  catalog that the code no longer uses, a compiled ``.mo`` that is out of date with its ``.po``.
* :func:`compile_all` writes the ``.mo`` files the tools load at run time (standard-library gettext).

The command line's own words — argparse's "usage:", "options:", "the following arguments are required" — are
the messages of the standard library's ``argparse`` module; they live in a second domain,
``forgelab/locale/<lang>/LC_MESSAGES/argparse.po``, extracted from the running Python's ``argparse`` and
checked and compiled like the first (``forgelab.cli.language`` installs it before the parsers are built).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from forgelab.core.i18n import ARGPARSE_DOMAIN, DOMAIN, LANGUAGES, LOCALE_DIR, _

KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
SCRIPT_KEYWORDS = {"t": None}  # the course page's scripts: t("English text", {name: value})
SOURCE = Path(__file__).resolve().parents[1]  # forgelab/


@dataclass(frozen=True)
class CatalogProblem:
    language: str
    what: str

    def __str__(self) -> str:
        return _("catalog {language}: {what}").format(language=self.language, what=self.what)


DOMAINS = (DOMAIN, ARGPARSE_DOMAIN)


def po_path(language: str, domain: str = DOMAIN) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{domain}.po"


def mo_path(language: str, domain: str = DOMAIN) -> Path:
    return po_path(language, domain).with_suffix(".mo")


def argparse_ids() -> dict[str, tuple[str, ...]]:
    """Message id → where it is used, for the running Python's ``argparse`` (its gettext domain ``argparse``)."""
    import argparse

    from babel.messages.extract import extract_from_file

    found: dict[str, list[str]] = {}
    for lineno, message, _comments, _context in extract_from_file("python", argparse.__file__, keywords=KEYWORDS):
        key = message if isinstance(message, str) else "\x00".join(message)
        found.setdefault(key, []).append(f"argparse.py:{lineno}")
    return {key: tuple(places) for key, places in sorted(found.items())}


def _ids(domain: str) -> dict[str, tuple[str, ...]]:
    return extracted() if domain == DOMAIN else argparse_ids()


def extracted() -> dict[str, tuple[str, ...]]:
    """Message id (singular, or (singular, plural)) → the places that use it, from forgelab's source."""
    from babel.messages.extract import extract_from_dir

    found: dict[str, list[str]] = {}
    python = extract_from_dir(str(SOURCE), method_map=[("**.py", "python")], keywords=KEYWORDS, comment_tags=(),
                              strip_comment_tags=True)
    scripts = extract_from_dir(str(SOURCE / "site" / "assets"), method_map=[("**.js", "javascript")],
                               keywords=SCRIPT_KEYWORDS, comment_tags=(), strip_comment_tags=True)
    templates = extract_from_dir(str(SOURCE / "data" / "templates"), method_map=[("**.j2", "jinja2.ext:babel_extract")],
                                 options_map={"**.j2": {"extensions": "jinja2.ext.i18n", "trim_blocks": "true",
                                                        "lstrip_blocks": "true"}},
                                 keywords=KEYWORDS, comment_tags=(), strip_comment_tags=True)
    for folder, results in (("forgelab/", python), ("forgelab/site/assets/", scripts),
                            ("forgelab/data/templates/", templates)):
        for filename, lineno, message, _comments, _context in results:
            if "judge/host.py" in filename or "judge/wire.py" in filename:
                continue  # these run inside the sandbox, where no catalog exists
            key = message if isinstance(message, str) else "\x00".join(message)
            found.setdefault(key, []).append(f"{folder}{filename}:{lineno}")
    return {key: tuple(places) for key, places in sorted(found.items())}


def _read(language: str, domain: str = DOMAIN):  # type: ignore[no-untyped-def]
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po

    path = po_path(language, domain)
    if not path.is_file():
        return Catalog(locale=language, domain=domain, project="forge-workbook")
    with path.open("rb") as handle:
        return read_po(handle, locale=language, domain=domain)


def _po_bytes(catalog: object) -> bytes:
    from babel.messages.pofile import write_po

    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, no_location=True, omit_header=False, sort_output=True)  # type: ignore[arg-type]
    return buffer.getvalue()


def _mo_bytes(catalog: object) -> bytes:
    from babel.messages.mofile import write_mo

    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)  # type: ignore[arg-type]
    return buffer.getvalue()


def extract() -> dict[str, int]:
    """Merge the extracted ids into every non-English catalog; returns language → untranslated count."""
    from babel.messages.catalog import Catalog

    result: dict[str, int] = {}
    for domain in DOMAINS:
        ids = _ids(domain)
        for language in LANGUAGES:
            if language == "en":
                continue
            old = _read(language, domain)
            # the old catalog's dates: extracting without a change leaves the file (and so the compiled .mo) as it is
            new = Catalog(locale=language, domain=domain, project="forge-workbook", charset="utf-8",
                          creation_date=old.creation_date, revision_date=old.revision_date)
            for key in ids:
                message_id: str | tuple[str, str] = tuple(key.split("\x00")) if "\x00" in key else key  # type: ignore[assignment]
                existing = old.get(message_id)
                new.add(message_id, existing.string if existing is not None else ("", "") if isinstance(message_id, tuple) else "")
            path = po_path(language, domain)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(_po_bytes(new))
            result[language] = result.get(language, 0) + sum(1 for message in new if message.id and not _translated(message))
    return result


def _translated(message: object) -> bool:
    string = getattr(message, "string", "")
    return all(string) if isinstance(string, tuple) else bool(string)


def compile_all() -> list[Path]:
    written = []
    for domain in DOMAINS:
        for language in LANGUAGES:
            if language == "en" or not po_path(language, domain).is_file():
                continue
            mo_path(language, domain).write_bytes(_mo_bytes(_read(language, domain)))
            written.append(mo_path(language, domain))
    return written


def problems() -> list[CatalogProblem]:
    """Everything that makes an edition of the tools' words (or of argparse's) incomplete or stale."""
    found: list[CatalogProblem] = []
    for domain in DOMAINS:
        ids = _ids(domain)
        for language in LANGUAGES:
            if language != "en":
                found += _domain_problems(language, domain, ids)
    return found


def _domain_problems(language: str, domain: str, ids: dict[str, tuple[str, ...]]) -> list[CatalogProblem]:
    po, mo = po_path(language, domain), mo_path(language, domain)
    if not po.is_file():
        return [CatalogProblem(language, _("{path} is missing: run `forgelab i18n extract`").format(path=po))]
    found: list[CatalogProblem] = []
    catalog = _read(language, domain)
    present = {message.id if isinstance(message.id, str) else "\x00".join(message.id): message
               for message in catalog if message.id}
    missing = [key for key in ids if key not in present]
    untranslated = [key for key in ids if key in present and not _translated(present[key])]
    unused = [key for key in present if key not in ids]
    def quoted(key: str) -> str:
        return repr(key.split(chr(0))[0][:70])

    for key in missing[:5]:
        found.append(CatalogProblem(language, _("message {message} ({place}) is not in the catalog: run `forgelab i18n "
                                                "extract`, then translate it").format(message=quoted(key),
                                                                                      place=ids[key][0])))
    for key in untranslated[:5]:
        found.append(CatalogProblem(language, _("message {message} ({place}) has no translation in {path}").format(
            message=quoted(key), place=ids[key][0], path=po.relative_to(SOURCE.parent))))
    for key in unused[:5]:
        found.append(CatalogProblem(language, _("message {message} is no longer used: run `forgelab i18n extract`").format(
            message=quoted(key))))
    if len(missing) + len(untranslated) + len(unused) > 15:
        found.append(CatalogProblem(language, _("{missing} missing, {untranslated} untranslated, {unused} unused "
                                                "messages in all").format(missing=len(missing),
                                                                          untranslated=len(untranslated),
                                                                          unused=len(unused))))
    if not mo.is_file() or mo.read_bytes() != _mo_bytes(catalog):
        found.append(CatalogProblem(language, _("{name} is out of date: run `forgelab i18n compile`").format(
            name=mo.name)))
    return found
