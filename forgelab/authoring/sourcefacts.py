"""The curriculum's facts in the code: each stage's ``[[source_facts]]`` compared with its modules.

A learner reads the curriculum beside the course, so every reason code, constant, notice text and
formula letter a stage takes from it must appear in the code under the name the stage declares
(:class:`forgelab.core.registry.SourceFact`). :func:`problems` reads the reference module
(``solutions/<module>``) and the starter (``forge/<module>``) as syntax trees — nothing is imported
or run — and says, per fact, what does not match:

* ``code``: the string occurs as a literal in the reference module (docstrings do not count; the
  constant parts of an f-string do);
* ``constant``: the module-level ``NAME`` (or the keyword ``field`` of the call that builds
  ``NAME``, for ``NAME.field``) holds exactly ``value``, in the reference and in the starter where
  the starter gives it too;
* ``name``: the function, class, ``function.parameter`` or ``Class.field`` exists in both modules,
  and with a ``value`` the parameter's or field's default is that value.

``tests/course/test_source_facts.py`` runs it for every stage; ``forgelab verify-course`` reports it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from forgelab.core.registry import Course, SourceFact, Stage
from forgelab.core import pyast


@dataclass
class ModuleFacts:
    """What a module defines at its top level, as far as source facts ask."""

    assignments: dict[str, ast.expr] = field(default_factory=dict)
    functions: dict[str, ast.arguments] = field(default_factory=dict)
    classes: dict[str, dict[str, ast.expr | None]] = field(default_factory=dict)  # field or method → default
    strings: set[str] = field(default_factory=set)


def read_module(path: Path) -> ModuleFacts:
    tree = pyast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    facts = ModuleFacts()
    docstrings = {id(body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  for body in [node.body] if body and isinstance(body[0], ast.Expr)
                  and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            facts.strings.add(node.value)
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            facts.assignments[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            facts.assignments[node.target.id] = node.value
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            facts.functions[node.name] = node.args
        elif isinstance(node, ast.ClassDef):
            members: dict[str, ast.expr | None] = {}
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members[item.target.id] = item.value
                elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    members[item.name] = None
            facts.classes[node.name] = members
    return facts


def plain(value: object) -> object:
    """A value as TOML can write it: tuples, lists and sets become lists, the items plain too."""
    if isinstance(value, (tuple, list)):
        return [plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted(plain(item) for item in value)  # type: ignore[type-var]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def _literal(node: ast.expr | None) -> tuple[bool, object]:
    if node is None:
        return False, None
    try:
        return True, plain(ast.literal_eval(node))
    except ValueError:
        return False, None


def _defaults(arguments: ast.arguments) -> dict[str, ast.expr | None]:
    positional = [*arguments.posonlyargs, *arguments.args]
    found: dict[str, ast.expr | None] = {arg.arg: None for arg in [*positional, *arguments.kwonlyargs]}
    for arg, default in zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults):
        found[arg.arg] = default
    for arg, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        found[arg.arg] = kw_default
    return found


def _constant(module: ModuleFacts, name: str) -> tuple[str, object] | None:
    """``("ok", value)``, or ``None`` when the module does not define it, or ``("why", None)``."""
    head, _, keyword = name.partition(".")
    node = module.assignments.get(head)
    if node is None:
        return None
    if keyword:
        if not isinstance(node, ast.Call):
            return f"{head} is not built by a call, so it has no keyword {keyword!r}", None
        node = next((item.value for item in node.keywords if item.arg == keyword), None)
        if node is None:
            return f"the call that builds {head} passes no {keyword}=", None
    known, value = _literal(node)
    return ("ok", value) if known else (f"{name} is not a literal", None)


def _member(module: ModuleFacts, name: str) -> tuple[bool, ast.expr | None]:
    """(exists, its default) for ``function``, ``Class``, ``function.parameter`` or ``Class.member``."""
    head, _, member = name.partition(".")
    if not member:
        return head in module.functions or head in module.classes or head in module.assignments, None
    if head in module.functions:
        defaults = _defaults(module.functions[head])
        return member in defaults, defaults.get(member)
    if head in module.classes:
        return member in module.classes[head], module.classes[head].get(member)
    return False, None


def check_fact(fact: SourceFact, reference: ModuleFacts, starter: ModuleFacts | None) -> list[str]:
    """What does not match for one fact (empty: it holds)."""
    where = f"{fact.source} · {fact.section}"
    found: list[str] = []
    if fact.kind == "code":
        if fact.name not in reference.strings:
            found.append(f"code {fact.name!r} ({where}) does not occur in the reference module")
        return found
    for label, module in (("reference", reference), ("starter", starter)):
        if module is None:
            continue
        if fact.kind == "constant":
            result = _constant(module, fact.name)
            if result is None:
                if label == "reference":
                    found.append(f"constant {fact.name} ({where}) is not defined in the reference module")
            elif result[0] != "ok":
                found.append(f"{label}: {result[0]}")
            elif result[1] != plain(fact.value):
                found.append(f"{label}: {fact.name} is {result[1]!r}, but the stage declares {plain(fact.value)!r} "
                             f"({where})")
        else:
            exists, default = _member(module, fact.name)
            if not exists:
                found.append(f"{label}: {fact.name} ({where}) is not in the module")
            elif fact.value is not None and _literal(default) != (True, plain(fact.value)):
                found.append(f"{label}: the default of {fact.name} is not {plain(fact.value)!r} ({where})")
    return found


def problems(course: Course, stage: Stage) -> list[str]:
    """Every declared source fact of ``stage`` that its modules do not match, in plain words."""
    reference_path = course.root / stage.solution_module
    starter_path = course.root / stage.module
    if not reference_path.is_file():
        return []  # the learner bundle has no reference modules: nothing to compare
    reference = read_module(reference_path)
    starter = read_module(starter_path) if starter_path.is_file() else None
    found: list[str] = []
    for fact in stage.source_facts:
        found += [f"{stage.key}: {problem}" for problem in check_fact(fact, reference, starter)]
    return found
