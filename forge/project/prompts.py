"""The prompt template of the extractor and the renderers for its sections.

A template is plain text with ``$placeholders`` (``string.Template`` syntax; a literal dollar is
``$$``). The extractor fills these sections:

    $instructions    the accepted instructions, one ``- key: value`` line each
    $schema_version  ``v1`` or ``v2``
    $schema          the fields of that schema version
    $examples        the chosen few-shot examples with their accepted answers
    $context         the chosen context items
    $retrieved       the retrieved documents, each one a delimited data block (stage 06)
    $request         the user's request, as typed

A template may leave a section out (that is how a careless edit breaks a prompt); a placeholder
that is not in this list is an error. The shipped template is ``prompts/extractor.txt``. Its
version id is a hash of its text, so any edit — even one character — makes a new version.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from forge.project.scenarios import ContextItem, ShotExample

TEMPLATE_DIR = Path(__file__).resolve().parent / "prompts"
DEFAULT_TEMPLATE = "extractor"
PLACEHOLDERS: tuple[str, ...] = ("instructions", "schema_version", "schema", "examples", "context", "retrieved", "request")
NONE = "(none)"


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    text: str

    def placeholders(self) -> list[str]:
        """The placeholder names the template uses, in order of first use; unknown names fail."""
        found: list[str] = []
        for match in string.Template.pattern.finditer(self.text):
            if match.group("invalid") is not None:
                line = self.text.count("\n", 0, match.start()) + 1
                raise ValueError(f"prompt template {self.name!r}, line {line}: a lone '$' (write $$ for a dollar sign)")
            name = match.group("named") or match.group("braced")
            if name is None:
                continue
            if name not in PLACEHOLDERS:
                raise ValueError(f"prompt template {self.name!r}: unknown placeholder ${name}: "
                                 f"expected one of {', '.join('$' + p for p in PLACEHOLDERS)}")
            if name not in found:
                found.append(name)
        return found

    def render(self, sections: Mapping[str, str]) -> str:
        """The prompt text: every placeholder replaced by its section."""
        self.placeholders()
        missing = sorted(set(PLACEHOLDERS) - set(sections))
        if missing:
            raise ValueError(f"sections missing for the prompt: {', '.join(missing)}")
        return string.Template(self.text).substitute(sections)


def load_template(name_or_path: str = DEFAULT_TEMPLATE) -> PromptTemplate:
    """A shipped template by name (``extractor``) or a template file by path."""
    path = Path(name_or_path)
    if path.suffix != ".txt" and "/" not in name_or_path and "\\" not in name_or_path:
        path = TEMPLATE_DIR / f"{name_or_path}.txt"
        if not path.is_file():
            shipped = ", ".join(sorted(p.stem for p in TEMPLATE_DIR.glob("*.txt")))
            raise ValueError(f"unknown prompt template {name_or_path!r}: expected one of {shipped}, or a file path")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"cannot read prompt template {name_or_path}: {error.strerror}") from None
    template = PromptTemplate(path.stem, text)
    template.placeholders()
    return template


def render_instructions(accepted: Mapping[str, str]) -> str:
    """One ``- key: value`` line per accepted instruction, in the order given."""
    return "\n".join(f"- {key}: {value}" for key, value in accepted.items()) or NONE


def render_examples(examples: Sequence[ShotExample]) -> str:
    """Each example as a ``### Example <id>`` heading, its request and its answer on one JSON line."""
    blocks = [f"### Example {example.id}\nRequest: {example.request}\n"
              f"Answer: {json.dumps(example.answer, ensure_ascii=False)}" for example in examples]
    return "\n\n".join(blocks) or NONE


def render_context(items: Sequence[ContextItem]) -> str:
    """Each context item as a ``### <id>`` heading followed by its text."""
    return "\n\n".join(f"### {item.id}\n{item.text}" for item in items) or NONE


def render_retrieved(blocks: Sequence[str]) -> str:
    """Already rendered data blocks (stage 06), separated by blank lines."""
    return "\n\n".join(blocks) or NONE
