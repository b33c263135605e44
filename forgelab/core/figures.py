"""The figures of a stage as the course reads them: their sources, captions, alt texts and editions.

A stage folder ``course/stages/NN-slug/`` holds its figure sources — Mermaid (``figure.mmd``,
``figure-NAME.mmd``) or plot scripts (``figure-NAME.py``) — each with one committed SVG per edition next
to it (``figure.svg`` English, ``figure_zh.svg`` Chinese). Every source starts with a ``caption:`` comment
line and may add ``alt:``; another edition's words follow as ``caption.zh:`` and ``alt.zh:`` lines, and a
Mermaid source translates its prose labels in its header (``%% zh: label => 译文``).

This module only *reads* them (:func:`stage_figures`, :class:`Figure`, :func:`svg_size`): the notebooks,
the course page and the edition check need nothing more. Making the SVGs — rendering Mermaid, running the
plot scripts — is course-author work: :mod:`forgelab.authoring.figures`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal



SOURCE_NAME = re.compile(r"^figure(-[a-z0-9]+)*\.(mmd|py)$")


class FigureError(RuntimeError):
    """A figure cannot be read or made; the message names the file and what to do."""


@dataclass(frozen=True)
class Figure:
    """One figure of a stage: its source, the SVG made from it, and the words that go with it."""

    kind: Literal["mermaid", "plot"]
    source: Path  # figure[-NAME].mmd or figure-NAME.py in the stage's folder
    caption: str
    alt: str
    editions: tuple[tuple[str, str, str], ...] = ()  # (language, caption, alt) of the other editions
    labels: tuple[tuple[str, str, str], ...] = ()  # (language, English label, its translation), Mermaid only

    def caption_in(self, language: str) -> str:
        return next((caption for lang, caption, _ in self.editions if lang == language), self.caption)

    def alt_in(self, language: str) -> str:
        return next((alt for lang, _, alt in self.editions if lang == language), self.alt)

    def has_edition(self, language: str) -> bool:
        return language == "en" or any(lang == language for lang, _, _ in self.editions)

    @property
    def name(self) -> str:
        return self.source.stem

    @property
    def svg(self) -> Path:
        return self.source.with_suffix(".svg")

    def svg_in(self, language: str) -> Path:
        """The drawing of one edition: ``figure.svg`` for English, ``figure_zh.svg`` for Chinese.

        The underscore cannot occur in a source's name (:data:`SOURCE_NAME`), so no other figure's SVG
        can be taken for another edition's drawing.
        """
        return self.svg if language == "en" else self.source.with_name(f"{self.source.stem}_{language}.svg")

    def _body(self) -> list[str]:
        lines = [line for line in self.source.read_text(encoding="utf-8").splitlines()
                 if not _META.match(line) and not _LABEL_LINE.match(line)]
        while lines and not lines[0].strip():
            lines.pop(0)
        if not lines:
            raise FigureError(f"{self.source}: no diagram after the caption: add the Mermaid text")
        return lines

    def diagram_labels(self) -> tuple[str, ...]:
        """The label texts of the Mermaid diagram (quoted texts, state-transition labels), in order, once each."""
        if self.kind != "mermaid":
            raise FigureError(f"{self.source}: a plot has no Mermaid text")
        found: dict[str, None] = {}
        for label in _labels(self._body()):
            found[label] = None
        return tuple(found)

    def translations(self, language: str) -> dict[str, str]:
        return {english: words for lang, english, words in self.labels if lang == language}

    def untranslated(self, language: str) -> tuple[str, ...]:
        """The prose labels of the diagram that have no ``%% LANG: label => ...`` line (none for English)."""
        if language == "en" or self.kind != "mermaid":
            return ()
        known = self.translations(language)
        return tuple(label for label in self.diagram_labels() if label not in known and is_prose(label))

    def unused_translations(self, language: str) -> tuple[str, ...]:
        """Translation lines whose English text is no label of the diagram (the label changed or went)."""
        if self.kind != "mermaid":
            return ()
        labels = set(self.diagram_labels())
        return tuple(english for english in self.translations(language) if english not in labels)

    def diagram(self, language: str = "en") -> str:
        """The Mermaid text of one edition, without the caption, alt and translation lines.

        This is what the notebook and the renderer see: another edition's labels are replaced by their
        translations (labels without one keep their words).
        """
        if self.kind != "mermaid":
            raise FigureError(f"{self.source}: a plot has no Mermaid text")
        lines = self._body()
        if language != "en":
            lines = _translated(lines, self.translations(language))
        # the words for screen readers travel with the diagram (Mermaid writes them into the SVG)
        accessible = [f"  accTitle: {_one_line(self.caption_in(language))}",
                      f"  accDescr: {_one_line(self.alt_in(language))}"]
        return "\n".join([lines[0], *accessible, *lines[1:]]).strip() + "\n"

    def source_digest(self, language: str = "en") -> str:
        return hashlib.sha256(self.diagram(language).encode("utf-8")).hexdigest()


def _one_line(text: str) -> str:
    return " ".join(text.replace("{", "(").replace("}", ")").split())


_META = re.compile(r"^\s*(%%|#)\s*(caption|alt)(?:\.([a-z]{2}))?:\s*(.*)$")


# `%% zh: same key:<br/>compare ranks => 同一个键：<br/>比较等级` — one label of the diagram in another edition
_LABEL_LINE = re.compile(r"^\s*%%\s*([a-z]{2}):\s*(.*?)\s*=>\s*(.*?)\s*$")


_QUOTED = re.compile(r'"([^"\n]*)"')


_TRANSITION = re.compile(r"^(\s*\S+\s*-->\s*[^:]+?\s*:\s*)(.+?)\s*$")  # stateDiagram: `a --> b: label`


_ASSIGNMENT = re.compile(r"\S+\s*=\s*\S+")  # `write = deny`: code


_WORD = re.compile(r"^[A-Za-z][a-z]+(?:[-'][a-z]+)*$")  # an ordinary word; identifiers have _ . digits or CamelCase


def is_prose(label: str) -> bool:
    """Whether a label has words to translate (an ordinary word outside identifiers and `key = value`)."""
    text = _ASSIGNMENT.sub(" ", label.replace("<br/>", " "))
    return any(_WORD.match(token) for token in re.split(r"[\s,:;·()+…?!]+", text) if token)


def _is_state_diagram(lines: Sequence[str]) -> bool:
    return bool(lines) and lines[0].strip().startswith("stateDiagram")


def _labels(lines: Sequence[str]) -> Iterator[str]:
    state = _is_state_diagram(lines)
    for line in lines:
        if line.lstrip().startswith("%%"):
            continue
        match = _TRANSITION.match(line) if state else None
        if match:
            yield match.group(2)
        else:
            yield from _QUOTED.findall(line)


def _translated(lines: Sequence[str], words: Mapping[str, str]) -> list[str]:
    state = _is_state_diagram(lines)
    out = []
    for line in lines:
        match = _TRANSITION.match(line) if state and not line.lstrip().startswith("%%") else None
        if match:
            out.append(match.group(1) + words.get(match.group(2), match.group(2)))
        elif line.lstrip().startswith("%%"):
            out.append(line)
        else:
            out.append(_QUOTED.sub(lambda m: '"' + words.get(m.group(1), m.group(1)) + '"', line))
    return out


def _label_lines(path: Path) -> tuple[tuple[str, str, str], ...]:
    found: dict[tuple[str, str], str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = _LABEL_LINE.match(line)
        if not match:
            continue
        language, english, words = match.groups()
        if not english or not words:
            raise FigureError(f"{path}:{number}: a translation line needs both sides: `%% {language}: label => 译文`")
        if '"' in words:
            raise FigureError(f"{path}:{number}: the translation of {english!r} contains a double quote, which ends a "
                              "Mermaid label: use 「」 or ' instead")
        if found.get((language, english), words) != words:
            raise FigureError(f"{path}:{number}: {english!r} is translated twice differently: keep one line")
        found[(language, english)] = words
    return tuple((language, english, words) for (language, english), words in found.items())


def _meta(path: Path) -> tuple[str, str, tuple[tuple[str, str, str], ...]]:
    found: dict[tuple[str, str], str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _META.match(line)
        if match:
            found[(match.group(3) or "en", match.group(2))] = match.group(4).strip()
    caption = found.get(("en", "caption"), "")
    comment = "%%" if path.suffix == ".mmd" else "#"
    if not caption:
        raise FigureError(f"{path}: no caption — start the file with a line `{comment} caption: what the figure shows`")
    others = sorted({lang for lang, _ in found} - {"en"})
    editions = []
    for lang in others:
        other = found.get((lang, "caption"))
        if not other:
            raise FigureError(f"{path}: `alt.{lang}:` without `caption.{lang}:` — add `{comment} caption.{lang}: ...`")
        editions.append((lang, other, found.get((lang, "alt")) or other))
    return caption, found.get(("en", "alt")) or caption, tuple(editions)


def stage_figures(source_dir: Path) -> list[Figure]:
    """The figures of one stage folder, in file-name order (``figure.mmd`` first)."""
    figures = []
    for path in sorted(source_dir.iterdir(), key=lambda p: (p.stem != "figure", p.name)):
        if path.is_file() and SOURCE_NAME.match(path.name):
            caption, alt, editions = _meta(path)
            if path.suffix == ".mmd":
                figures.append(Figure("mermaid", path, caption, alt, editions, _label_lines(path)))
            else:
                figures.append(Figure("plot", path, caption, alt, editions))
    return figures


def svg_size(path: Path) -> tuple[int, int]:
    """The width and height the root ``<svg>`` element declares (every figure SVG declares both)."""
    text = path.read_text(encoding="utf-8")
    match = re.search(r"<svg\b[^>]*>", text)
    width = re.search(r'\swidth="(\d+)"', match.group(0)) if match else None
    height = re.search(r'\sheight="(\d+)"', match.group(0)) if match else None
    if not (width and height):
        raise FigureError(f"{path}: the <svg> element declares no width and height: run `forgelab build`")
    return int(width.group(1)), int(height.group(1))
