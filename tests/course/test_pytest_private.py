"""pytest is pinned to the minor version the judge's uses of its private internals were tested against, and every
such use is in one module, forgelab/judge/pytest_private.py, which lists them (``HOOKS``).

A pytest release may move a private part (``_pytest.*``) without notice: the pin keeps an install from picking up a
release nobody tested, each listed hook is resolved in the installed pytest here, and a ``_pytest`` import or a use of
one of these names anywhere else in forgelab/ fails, naming the file and line — so the list stays the whole truth.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import re
import tomllib
from pathlib import Path

from forgelab.judge import pytest_private

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = Path(pytest_private.__file__).resolve()
# the attribute names of the listed hooks that mean pytest's internals wherever they are read or patched (the public
# hook name ``pytest_assertrepr_compare`` is also the judge's own hook, so it is known by its import only)
NAMES = frozenset(hook.rsplit(".", 1)[1] for hook in pytest_private.HOOKS) - {"pytest_assertrepr_compare"}


def private_uses(source: str, where: str) -> list[str]:
    """Each place in ``source`` that imports ``_pytest`` or uses a listed private name, as ``where:line: what``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"{where}:{node.lineno}: import {alias.name}" for alias in node.names
                      if alias.name == "_pytest" or alias.name.startswith("_pytest.")]
        elif isinstance(node, ast.ImportFrom) and node.module and (node.module == "_pytest"
                                                                    or node.module.startswith("_pytest.")):
            found.append(f"{where}:{node.lineno}: from {node.module} import …")
        elif isinstance(node, ast.Attribute) and node.attr in NAMES:
            found.append(f"{where}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"getattr", "setattr"} \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in NAMES:
            found.append(f"{where}:{node.lineno}: {node.func.id}(…, {node.args[1].value!r})")
    return sorted(found, key=lambda place: int(place.split(":")[1]))


def test_pytest_is_pinned_to_the_installed_minor_version() -> None:
    installed = importlib.metadata.version("pytest")
    major, minor = (int(part) for part in installed.split(".")[:2])
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pins = [spec for spec in dependencies if re.match(r"pytest\s*[<>=!~]", spec)]
    assert pins == [f"pytest>={major}.{minor},<{major}.{minor + 1}"], (pins, installed)


def test_every_listed_hook_exists_in_the_installed_pytest() -> None:
    missing = []
    for hook in pytest_private.HOOKS:
        parts = hook.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable module, then attributes
            try:
                value: object = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for name in parts[cut:]:
                value = getattr(value, name, missing)
            break
        else:
            value = missing
        if value is missing:
            missing.append(hook)
    assert missing == [], f"pytest {importlib.metadata.version('pytest')} lacks {missing}"


def test_no_other_module_of_forgelab_touches_pytests_internals() -> None:
    found = []
    for path in sorted((ROOT / "forgelab").rglob("*.py")):
        if path.resolve() != PRIVATE:
            found += private_uses(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert found == [], "move these into forgelab/judge/pytest_private.py (and list them in HOOKS):\n" + "\n".join(found)


def test_the_hook_module_itself_uses_what_it_lists() -> None:
    uses = private_uses(PRIVATE.read_text(encoding="utf-8"), "pytest_private.py")
    assert uses, "pytest_private.py uses no private part of pytest: empty HOOKS, or the check is blind"
    source = PRIVATE.read_text(encoding="utf-8")
    assert [hook for hook in pytest_private.HOOKS if hook.rsplit(".", 1)[1] not in source] == []


def test_the_check_names_an_import_and_a_patch_elsewhere() -> None:
    planted = ("import _pytest.config\nfrom _pytest import fixtures\nfixtures.FixtureManager.parsefactories = f\n"
               "manager.load_setuptools_entrypoints(group)\nsetattr(m, 'get_config', g)\n")
    assert private_uses(planted, "x.py") == [
        "x.py:1: import _pytest.config", "x.py:2: from _pytest import …", "x.py:3: .parsefactories",
        "x.py:4: .load_setuptools_entrypoints", "x.py:5: setattr(…, 'get_config')"]
    assert private_uses("import pytest\npytest.main(['-q'])\nexplain.pytest_assertrepr_compare(c, '==', 1, 2)\n",
                        "ok.py") == []
