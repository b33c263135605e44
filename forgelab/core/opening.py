"""The chapter's opening: the course-wide texts it is made of, its three concepts, and the project stage.

The opening notebook (``notebooks/00-opening.ipynb``, made by :mod:`forgelab.authoring.build`) and the course
page's index (:mod:`forgelab.site.pages`) show the same texts, read from ``course/course.toml``'s
``[text.LANG]`` tables (:data:`OPENING_KEYS`); a missing key is an :class:`OpeningError` naming it.
"""

from __future__ import annotations

from forgelab.core.i18n import N_
from forgelab.core.registry import Course, RegistryError, Stage

PROJECT_MODULE = "forge/extractor.py"  # the chapter project's stage shows the recovery point
# course.toml [text.LANG] keys the opening is made of; a missing one fails `build --check`
OPENING_KEYS = (
    "opening_title", "opening_intro", "opening_position", "opening_prerequisites",
    *(f"concept_{concept}_{part}" for concept in ("context", "agent", "verification")
      for part in ("is", "is_not", "in_forge", "misuse")),
    "capability_chain", "opening_outcome", "opening_how_to_work", "recovery_point",
)
CONCEPTS = (("context", N_("Context")), ("agent", N_("Agent")), ("verification", N_("Verification and evaluation")))
CONCEPT_PARTS = (("is", N_("What it is")), ("is_not", N_("What it is not")), ("in_forge", N_("Its place in Forge")),
                 ("misuse", N_("Typical misuse")))


def is_project(stage: Stage) -> bool:
    """The chapter project's stage (its page and notebook show the recovery point)."""
    return stage.module == PROJECT_MODULE


class OpeningError(RegistryError):
    """course.toml lacks a text the opening needs; the message names the key."""


def missing_opening_keys(course: Course, language: str = "en") -> list[str]:
    texts = course.texts.get(language) or course.texts.get("en", {})
    english = course.texts.get("en", {})
    return [key for key in OPENING_KEYS if not (texts.get(key) or english.get(key))]


def opening_texts(course: Course, language: str = "en") -> dict[str, str]:
    """Every opening text of ``language`` (English where a key has no translation)."""
    missing = missing_opening_keys(course, language)
    if missing:
        raise OpeningError(f"course/course.toml [text.{language}]: missing key(s) {', '.join(missing)} "
                           "— the opening (notebooks/00-opening.ipynb and the course page) needs them")
    return {key: course.text(key, language) for key in OPENING_KEYS}
