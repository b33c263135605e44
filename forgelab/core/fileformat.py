"""Reading a JSON file forgelab writes (a manifest, the workspace state, a driver's answer) through its Pydantic model.

Every such file has a model; :func:`parse_json` validates the bytes against it and turns a problem into one line
that names the file, the field and what to do::

    forge-workbook-checkpoint-05.zip/manifest.json: modules[2].sha256: missing — download the checkpoint pack again

The remedy depends on whose the file is (a pack the instructor released, a file the tools keep for the learner, a
message between two forgelab processes), so each caller says it.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from forgelab.core.i18n import _

Model = TypeVar("Model", bound=BaseModel)


class FileFormatError(ValueError):
    """A file does not hold what its format says; the message names the file, the field and what to do."""


def field_name(loc: tuple[str | int, ...]) -> str:
    """``modules[2].sha256`` for the location ``("modules", 2, "sha256")``; the whole document for ``()``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or _("the whole document")


def problem(detail: ErrorDetails) -> str:
    """What is wrong with one field, in the active language where Pydantic's own words are not needed."""
    kind = detail["type"]
    if kind == "missing":
        return _("missing")
    if kind == "extra_forbidden":
        return _("not a field of this file")
    if kind == "json_invalid":
        return _("not valid JSON ({error})").format(error=detail.get("ctx", {}).get("error", ""))
    if kind == "literal_error":
        return _("expected {expected}, found {found!r}").format(expected=detail.get("ctx", {}).get("expected", ""),
                                                                found=detail["input"])
    return _("{problem} (found {found})").format(problem=detail["msg"], found=type(detail["input"]).__name__)


def explain(name: str, error: ValidationError, remedy: str) -> str:
    """One line: the file, its first problem's field and what is wrong, then what to do."""
    detail = error.errors()[0]
    return _("{file}: {field}: {problem} — {remedy}").format(file=name, field=field_name(tuple(detail["loc"])),
                                                             problem=problem(detail), remedy=remedy)


def parse_json(name: str, raw: bytes | str, model: type[Model], remedy: str) -> Model:
    """``raw`` (the content of the file called ``name``) as ``model``; :class:`FileFormatError` names the file, the
    field and ``remedy`` when it is not valid JSON or does not fit."""
    try:
        return model.model_validate_json(raw)
    except ValidationError as error:
        raise FileFormatError(explain(name, error, remedy)) from None
