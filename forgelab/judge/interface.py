"""Build the trusted side's ``forge`` package from the pristine starters (see :mod:`forgelab.judge.remote`).

The interface is a copy of the shipped starter package — ``forge/__init__.py``, the finished
infrastructure in ``forge/project/`` and every stage module — where each stage module ends with a
call to :func:`forgelab.judge.remote.remotify`. The starters are read from the course, never from
the learner's ``forge/``: the data types the judge compares with are the course's.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

FOOTER = """

# ---- added by forgelab's judge: the functions above run in the learner's sandbox, not here ----
from forgelab.judge.remote import remotify as _forgelab_remotify  # noqa: E402

_forgelab_remotify(globals(), __name__, {classes!r})
del _forgelab_remotify
"""


def _is_stub(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """True when the body is only a docstring and ``raise NotImplementedError(...)``: the learner writes it."""
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc
    name = raised.func if isinstance(raised, ast.Call) else raised
    return isinstance(name, ast.Name) and name.id == "NotImplementedError"


def learner_classes(source: str) -> tuple[str, ...]:
    """Top-level classes with at least one method the learner writes (a stub in the starter)."""
    tree = ast.parse(source)
    found = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(
                isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_stub(item) for item in node.body):
            found.append(node.name)
    return tuple(found)


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
        if not path.is_file():
            raise FileNotFoundError(f"the course's starter {module} is missing: the workbook is incomplete")
        source = path.read_text(encoding="utf-8")
        path.write_text(source.rstrip("\n") + FOOTER.format(classes=learner_classes(source)), encoding="utf-8")
    return into
