"""Run All never halts: a learner-facing cell shows what went wrong instead of raising.

``%load_ext forgelab.notebook`` installs :class:`NoHaltTransformer` into the kernel. It wraps every
cell's code so that an exception becomes one short, readable output — "not implemented yet — see
hint 1", a syntax error with its file and line, the learner's own traceback lines — and the cell ends
normally, so *Run All* reaches the last cell, which says what is still open. A cell that needs a name
an earlier, unfinished cell never defined says so instead of showing a ``NameError``.

The reference notebooks are built with the same extension: a reference cell that fails prints
:data:`MARKER` first, and ``forgelab build`` refuses a notebook whose output contains it.
"""

from __future__ import annotations

import ast
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

from forgelab.i18n import LANGUAGES, N_, _, speaking

MARKER = N_("⚠ this cell did not finish")  # shown in the notebook's language; build refuses any edition's form
HANDLER = "__forgelab_explain__"
SHOW = "__forgelab_show__"
FAILED = "__forgelab_failed__"


def markers() -> tuple[str, ...]:
    """:data:`MARKER` in every language the tools speak (``forgelab build`` looks for each)."""
    found = []
    for language in LANGUAGES:
        with speaking(language):
            found.append(_(MARKER))
    return tuple(dict.fromkeys(found))


def _learner_lines(tb: TracebackType | None) -> list[str]:
    lines = []
    for frame in traceback.extract_tb(tb):
        parts = Path(frame.filename).parts
        if "forge" in parts and "forgelab" not in parts and "site-packages" not in parts:
            index = len(parts) - 1 - parts[::-1].index("forge")
            shown = "/".join(parts[index:])
            lines.append(f"  {shown}, line {frame.lineno}, in {frame.name}: {(frame.line or '').strip()}")
    return lines[-4:]


def explain(error: BaseException, failed_before: list[str]) -> str:
    """One short text for an exception in a cell (no traceback wall), in the notebook's language."""
    marker = _(MARKER)
    if isinstance(error, NotImplementedError):
        not_yet = _("not implemented yet")
        message = str(error) or _("this function is not implemented yet — see the hints")
        known = ("not implemented yet", not_yet)
        text = message if any(words in message for words in known) else f"{not_yet} — {message}"
        return f"{marker}: {text}"
    if isinstance(error, SyntaxError) and error.filename and "forge" in Path(error.filename).parts:
        return f"{marker}: " + _("syntax error in {file}, line {line}: {message} — fix it and run the cell again").format(
            file=Path(error.filename).name, line=error.lineno, message=error.msg)
    if isinstance(error, NameError) and failed_before:
        return f"{marker}: " + _("skipped — it needs {name}, which an earlier cell could not compute ({cell})").format(
            name=getattr(error, "name", None) or _("a name"), cell=failed_before[-1])
    if isinstance(error, ModuleNotFoundError) and (error.name or "").startswith("forge"):
        return f"{marker}: " + _("cannot import {module}: bring the module back with `forgelab starter NN` "
                                 "(see part 6)").format(module=error.name)
    lines = [f"{marker}: {type(error).__name__}: {error}"]
    learner = _learner_lines(error.__traceback__)
    if learner:
        lines += [_("raised in your code:"), *learner]
    return "\n".join(lines)


class NoHaltTransformer(ast.NodeTransformer):
    """Wraps a cell: ``try: <cell> except Exception as e: __forgelab_explain__(e)``; the last bare
    expression is shown the way IPython would have shown it."""

    def visit_Module(self, node: ast.Module) -> ast.Module:
        if not node.body:
            return node
        body = list(node.body)
        if isinstance(body[-1], ast.Expr):
            body[-1] = ast.Expr(ast.Call(ast.Name(SHOW, ast.Load()), [body[-1].value], []))
        handler = ast.ExceptHandler(
            type=ast.Name("Exception", ast.Load()), name="__forgelab_error__",
            body=[ast.Expr(ast.Call(ast.Name(HANDLER, ast.Load()), [ast.Name("__forgelab_error__", ast.Load())], []))])
        wrapped = ast.Try(body=body, handlers=[handler], orelse=[], finalbody=[])
        module = ast.Module(body=[wrapped], type_ignores=[])
        return ast.fix_missing_locations(ast.copy_location(module, node))


def install(shell: Any) -> None:
    """Install the transformer and its helpers into an IPython shell (idempotent)."""
    user_ns = shell.user_ns
    failed: list[str] = user_ns.setdefault(FAILED, [])

    def handle(error: BaseException) -> None:
        text = explain(error, failed)
        failed.append(text.removeprefix(f"{MARKER}: ").splitlines()[0][:120])
        print(text)

    def show(value: object) -> None:
        if value is not None:
            from IPython.display import display

            display(value)

    user_ns[HANDLER] = handle
    user_ns[SHOW] = show
    transformers = shell.ast_transformers
    if not any(isinstance(t, NoHaltTransformer) for t in transformers):
        transformers.append(NoHaltTransformer())
