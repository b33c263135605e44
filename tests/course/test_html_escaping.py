"""HTML is escaped in two places only: the Jinja2 templates (autoescape) and :mod:`forgelab.core.text`.

Every page forgelab writes — the course site, the feedback pages, the class report — is a template under
``forgelab/data/``, and text put into HTML anywhere else goes through ``forgelab.core.text`` (``esc``, ``md``,
``inline``). This test reads forgelab's Python and the site's scripts and finds no escaping done by hand: no
``html.escape`` or ``markupsafe.escape`` of its own, no entity such as ``&lt;`` written out, no
``.replace("<", …)``. The planted cases prove that it finds each kind.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "forgelab"
TEXT_MODULE = PACKAGE / "core" / "text.py"
ENTITY = re.compile(r"&(lt|gt|amp|quot|apos|#x?[0-9a-fA-F]+);")
SPECIAL = {"<", ">", "&", '"', "'"}


def hand_escaping(source: str) -> list[str]:
    """Where ``source`` (Python) escapes HTML by hand: ``line: what``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(alias.name == "html" for alias in node.names):
            found.append(f"{node.lineno}: imports the html module")
        elif isinstance(node, ast.ImportFrom) and node.module in ("html", "markupsafe") \
                and any(alias.name == "escape" for alias in node.names):
            found.append(f"{node.lineno}: imports escape from {node.module}")
        elif isinstance(node, ast.Attribute) and node.attr == "escape" and isinstance(node.value, ast.Name) \
                and node.value.id in ("html", "markupsafe", "Markup"):
            found.append(f"{node.lineno}: calls {node.value.id}.escape")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and ENTITY.search(node.value):
            found.append(f"{node.lineno}: writes the entity {ENTITY.search(node.value).group(0)}")  # type: ignore[union-attr]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace" \
                and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in SPECIAL:
            found.append(f"{node.lineno}: replaces {node.args[0].value!r} by hand")
    return found


def test_no_python_module_but_the_text_module_escapes_html() -> None:
    found = [f"{path.relative_to(ROOT).as_posix()}:{where}" for path in sorted(PACKAGE.rglob("*.py"))
             if path != TEXT_MODULE for where in hand_escaping(path.read_text(encoding="utf-8"))]
    assert found == [], "escape HTML with forgelab.core.text (esc, md, inline) or in a template:\n" + "\n".join(found)


def test_the_site_scripts_write_no_entities() -> None:
    found = [f"{path.relative_to(ROOT).as_posix()}: {match.group(0)}" for path in sorted((PACKAGE / "site").rglob("*.js"))
             for match in ENTITY.finditer(path.read_text(encoding="utf-8"))]
    assert found == [], "the page's scripts set textContent; they never build escaped HTML by hand:\n" + "\n".join(found)


def test_the_pages_are_templates() -> None:
    pages = ast.parse((PACKAGE / "site" / "pages.py").read_text(encoding="utf-8"))
    docstrings = {id(node.value) for node in ast.walk(pages) if isinstance(node, ast.Expr)}
    markup = [node.value for node in ast.walk(pages) if isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings and re.search(r"</?[a-z]+[ >]", node.value)]
    assert markup == [], "the course page's HTML belongs in data/templates/site/"
    assert sorted(path.name for path in (PACKAGE / "data" / "templates" / "site").glob("*.j2")) == [
        "index.html.j2", "layout.html.j2", "parts.html.j2", "stage.html.j2"]


@pytest.mark.parametrize(("planted", "kind"), [
    ("import html\nhtml.escape(x)\n", "imports the html module"),
    ("from html import escape\n", "imports escape from html"),
    ("from markupsafe import escape\n", "imports escape from markupsafe"),
    ("import markupsafe\nmarkupsafe.escape(x)\n", "calls markupsafe.escape"),
    ("y = x.replace('<', '&lt;')\n", "writes the entity &lt;"),
    ("y = x.replace('&', 'and')\n", "replaces '&' by hand"),
    ("y = f'<p title=\"{x}\">&#39;</p>'\n", "writes the entity &#39;"),
])
def test_each_kind_of_hand_escaping_is_found(planted: str, kind: str) -> None:
    assert any(kind in where for where in hand_escaping(planted))


def test_text_without_escaping_passes() -> None:
    assert hand_escaping("from forgelab.core.text import esc\ny = f'<p>{esc(x)}</p>'\nz = s.replace('-', '_')\n") == []
