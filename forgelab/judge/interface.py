"""Build the trusted side's ``forge`` package from the pristine starters (see :mod:`forgelab.judge.remote`).

The interface is a copy of the shipped starter package — ``forge/__init__.py``, the finished
infrastructure in ``forge/project/`` and every stage module — where each stage module ends with a
call to :func:`forgelab.judge.remote.remotify`, given the methods written in each class body (read
from the syntax tree). The starters are read from the course, never from the learner's ``forge/``:
the data types the judge compares with are the course's.

The same interface is what a learner's own tests import (they run in a sandbox of their own, see
:mod:`forgelab.judge.relay`); :func:`offered` lists what it can call in the learner's process, and
the judge relays nothing else.
"""

from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass
from pathlib import Path

from forgelab.core import pyast
from forgelab.judge import bytecode

FOOTER = """

# ---- added by forgelab's judge: the functions above run in the learner's sandbox, not here ----
from forgelab.judge.remote import remotify as _forgelab_remotify  # noqa: E402

_forgelab_remotify(globals(), __name__, {classes!r})
del _forgelab_remotify
"""


VALIDATORS = frozenset({"field_validator", "model_validator", "validator", "root_validator", "field_serializer",
                        "model_serializer", "computed_field"})


def _decorator_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute):
            names.add(target.attr)
        elif isinstance(target, ast.Name):
            names.add(target.id)
    return names


def class_members(source: str) -> dict[str, dict[str, list[str]]]:
    """For every top-level class: the methods written in its body, by kind.

    Kinds: ``methods`` (instance), ``classmethods``, ``staticmethods``, ``properties``. Dunder methods and
    Pydantic validators are left out: they run while an instance is built, which happens in the learner's
    process anyway (construction is remote).
    """
    tree = pyast.parse(source)
    found: dict[str, dict[str, list[str]]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        kinds: dict[str, list[str]] = {"methods": [], "classmethods": [], "staticmethods": [], "properties": []}
        for item in node.body:
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) or item.name.startswith("__"):
                continue
            decorators = _decorator_names(item)
            if decorators & VALIDATORS:
                continue
            if "property" in decorators or "cached_property" in decorators:
                kinds["properties"].append(item.name)
            elif "classmethod" in decorators:
                kinds["classmethods"].append(item.name)
            elif "staticmethod" in decorators:
                kinds["staticmethods"].append(item.name)
            else:
                kinds["methods"].append(item.name)
        found[node.name] = kinds
    return found


def build_interface(starters: Path, stage_modules: list[str], into: Path) -> Path:
    """Write ``into/forge/`` from ``starters`` (a folder holding the pristine ``forge/``); returns ``into``.

    ``stage_modules`` are workbook paths such as ``forge/instructions.py``.
    """
    source_root = starters / "forge"
    if not source_root.is_dir():
        raise FileNotFoundError(f"the course's starter package {source_root} is missing: the workbook is incomplete")
    destination = into / "forge"
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(source_root, destination, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints"))
    for module in stage_modules:
        path = into / module
        if not path.is_file():  # e.g. a new stage not committed yet: its tests report that they cannot import it
            continue
        source = path.read_text(encoding="utf-8")
        path.write_text(source.rstrip("\n") + FOOTER.format(classes=class_members(source)), encoding="utf-8")
    for file in sorted(destination.rglob("*.py")):  # the course's code: with its bytecode (forgelab.judge.bytecode)
        bytecode.beside(file)
    return into


@dataclass(frozen=True)
class Offered:
    """What the interface calls in the learner's process: ``"forge.x:name"``, ``"forge.x:Class"`` and
    ``"forge.x:Class.member"`` (``calls``), and the classes it may construct, change or ask the shape of."""

    calls: frozenset[str]
    classes: frozenset[str]


def offered(starters: Path, stage_modules: list[str]) -> Offered:
    """The functions, classes and class members of the starters' stage modules (see :func:`remotify`)."""
    calls: set[str] = set()
    classes: set[str] = set()
    for module in stage_modules:
        path = starters / module
        if not path.is_file():
            continue
        source = path.read_text(encoding="utf-8")
        dotted = ".".join(Path(module).with_suffix("").parts)
        for node in pyast.parse(source).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                calls.add(f"{dotted}:{node.name}")
        for name, kinds in class_members(source).items():
            classes.add(f"{dotted}:{name}")
            calls.add(f"{dotted}:{name}")
            calls.update(f"{dotted}:{name}.{member}" for members in kinds.values() for member in members)
    return Offered(frozenset(calls), frozenset(classes))
