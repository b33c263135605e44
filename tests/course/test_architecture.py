"""The dependency rule of forgelab/ holds and is enforced (README, "Architecture"; pyproject.toml [tool.importlinter]).

* ``lint-imports`` keeps every contract on the course as it is;
* an upward import planted into a copy of the package breaks the layers contract, and an import of course
  knowledge planted into the judge breaks the judge's contract — so the contracts can fail;
* no module imports itself through others (no cycle), counting imports inside functions too;
* an import inside a function is there for start-up speed only, and says so (``# lazy:``): none hides a cycle;
* ``forgelab/`` holds sub-packages and its package face only, each sub-package saying what belongs in it.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from conftest import ROOT

PACKAGE = ROOT / "forgelab"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the forgelab package found first on the path from ``root``, with its contracts."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PYTHONPATH"] = str(root)  # before site-packages: the copy, not the installed package, is analysed
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--config", str(root / "pyproject.toml")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "course"
    shutil.copytree(PACKAGE, copy / "forgelab", ignore=shutil.ignore_patterns("__pycache__", "locale", "data", "assets"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    return copy


def test_the_contracts_hold() -> None:
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 2 kept, 0 broken." in done.stdout, done.stdout


@pytest.mark.parametrize(("module", "planted", "contract"), [
    ("core/text.py", "from forgelab.cli import main as _planted", "Packages by purpose, in layers"),
    ("verdicts/parts.py", "from forgelab.learner import workbench as _planted", "Packages by purpose, in layers"),
    ("judge/wire.py", "from forgelab.core import registry as _planted", "The judge knows no course content"),
])
def test_a_planted_import_breaks_a_contract(tmp_path: Path, module: str, planted: str, contract: str) -> None:
    copy = _copy(tmp_path)
    target = copy / "forgelab" / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{planted}  # planted by the test\n", encoding="utf-8")
    done = _lint_imports(copy)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 broken" in done.stdout and f"{contract}" in done.stdout, done.stdout
    importer = "forgelab." + module.removesuffix(".py").replace("/", ".")
    assert importer in done.stdout, done.stdout  # the report names the module that broke the rule


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_module_cycle() -> None:
    graph = grimp.build_graph("forgelab", cache_dir=None)  # every import, inside functions and TYPE_CHECKING too
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / "loop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from loop import b\n")
    (package / "b.py").write_text("from loop import a\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert _cycles(grimp.build_graph("loop", cache_dir=None)) == [["loop.a", "loop.b"]]
    finally:
        sys.path.remove(str(tmp_path))


def _function_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of forgelab inside a function of ``path`` that does not say ``# lazy:``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    unmarked = []
    for function in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "forgelab":
                module = node.module or ""
            elif isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "forgelab" for alias in node.names):
                module = node.names[0].name
            else:
                continue
            block = node.lineno - 1  # the comment above the block of imports this one belongs to
            while block > 0 and lines[block - 1].strip().startswith(("from ", "import ", ")")) \
                    or block > 0 and lines[block - 1].strip() == "" and lines[block - 2].strip().startswith(("from ", "import ")):
                block -= 1
            said = lines[node.lineno - 1] + (lines[block - 1] if block > 0 else "")
            if "# lazy:" not in said:
                unmarked.append((node.lineno, module))
    return unmarked


def test_an_import_inside_a_function_says_why() -> None:
    unmarked = {path.relative_to(ROOT).as_posix(): found for path in sorted(PACKAGE.rglob("*.py"))
                if (found := _function_imports(path))}
    assert unmarked == {}, "imports inside functions hide cycles unless they are for start-up speed: " \
                           "move them to the top, or mark them `# lazy: <why>`"


def test_forgelab_holds_packages_by_purpose_each_saying_what_belongs() -> None:
    flat = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert flat == ["__init__.py", "__main__.py"]
    packages = sorted(path.parent.name for path in PACKAGE.glob("*/__init__.py"))
    assert packages == ["authoring", "cli", "core", "grading", "hub", "judge", "learner", "project", "site", "verdicts"]
    for name in packages:
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc) > 200, f"forgelab/{name}/__init__.py: say what belongs here and what it may import"


FREE_FORM_LIMIT = 30  # issue 33: `dict[str, Any]` only where the data really is free-form, each saying why


def _untyped_dicts(root: Path) -> tuple[list[str], list[str]]:
    """Every ``dict[str, Any]`` in the package under ``root``, and those that do not say why (``free-form`` on the
    line or in the three lines above it: the comment over a definition, or a multi-line definition's first line)."""
    found, silent = [], []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            if "dict[str, Any]" in line:
                where = f"{path.relative_to(root.parent)}:{number}"
                found.append(where)
                if not any("free-form" in text for text in lines[max(0, number - 4):number]):
                    silent.append(where)
    return found, silent


def test_untyped_dicts_are_few_and_each_says_why_it_is_free_form() -> None:
    found, silent = _untyped_dicts(PACKAGE)
    assert silent == [], "say why each of these is free-form (# free-form: …), or type it (Pydantic, a TypedDict)"
    assert len(found) <= FREE_FORM_LIMIT, f"{len(found)} untyped dicts: type the new ones\n" + "\n".join(found)


def test_an_untyped_dict_that_does_not_say_why_is_found(tmp_path: Path) -> None:
    package = tmp_path / "forgelab"
    package.mkdir()
    (package / "said.py").write_text("from typing import Any\n\n# free-form: a plugin's own options\n"
                                     "def options(raw: dict[str, Any]) -> None: ...\n", encoding="utf-8")
    (package / "silent.py").write_text("from typing import Any\n\n\n\n\ndef state(raw: dict[str, Any]) -> None: ...\n",
                                       encoding="utf-8")
    found, silent = _untyped_dicts(package)
    assert found == ["forgelab/said.py:4", "forgelab/silent.py:6"] and silent == ["forgelab/silent.py:6"]


def test_every_parse_goes_through_the_one_lock() -> None:
    """CPython 3.11 fails a parse with "AST constructor recursion depth mismatch" when two threads parse at once (a
    grade at --jobs 2 failed so); forgelab parses only through forgelab.core.pyast, which holds one lock."""
    direct = [f"{path.relative_to(ROOT)}:{number}" for path in sorted(PACKAGE.rglob("*.py")) if path.name != "pyast.py"
              for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
              if "ast.parse(" in line.replace("pyast.parse(", "")]
    assert direct == [], "parse with forgelab.core.pyast.parse"
    from forgelab.core import pyast

    assert [node.__class__.__name__ for node in pyast.parse("x = 1").body] == ["Assign"]
