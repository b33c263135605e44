"""Python source parsed into an ``ast`` tree under one lock, for every tool that parses while other threads run.

CPython 3.11 counts the depth of an AST conversion (C tree to Python objects in :func:`ast.parse`, and back in
``compile`` of a tree) in state that all threads share; two threads converting at once can make one of them fail with
``SystemError: AST constructor recursion depth mismatch`` (python/cpython issue 106905). ``forgelab grade --jobs 2``
grades two submissions on two threads, and ``status`` judges a transfer test on a thread beside the stage tests: a
grade failed that way once. Every parse in forgelab goes through :func:`parse`; a tree is compiled with
:func:`compile_tree`.
"""

from __future__ import annotations

import ast
import threading
from types import CodeType

_LOCK = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, one thread at a time."""
    with _LOCK:
        return ast.parse(source, filename=filename)


def compile_tree(tree: ast.Module | ast.Expression, filename: str, mode: str) -> CodeType:
    """``compile(tree, filename, mode)``, one thread at a time."""
    with _LOCK:
        return compile(tree, filename, mode)
