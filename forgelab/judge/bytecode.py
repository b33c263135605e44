"""Bytecode for the judge's own modules where a process could not keep it: written beside the copy, once compiled.

Every run copies a few modules into folders that a fresh process then imports: the host's wire module into each
target's code folder, the tester's forgelab modules into its folder, the course's interface ``forge/`` into the
run's folder. Those folders are new every run (and read-only in the sandbox), and the judge's processes write no
bytecode, so each process compiled them from source again. :func:`beside` writes the bytecode file next to such a
copy, checked against the source's hash when it is imported (so a file that differs is compiled as before); one
process compiles each source once, whatever folder it is copied to. Only trusted sources go through here — the
course's and the judge's, never the learner's code.

The course's own test files get the same for the trusted session (:func:`rewritten_beside`, when a job asks for it:
grading, which runs the same files in every submission's session; and a run given a warm worker, watch mode, which
runs them at every save): pytest rewrites the asserts of each test module it imports, and finds that rewritten code
in a ``__pycache__`` beside the file when it is there, checked against the source's hash (pytest's own cache format).
The judge rewrites each of the course's files once per process, exactly as the session would (no option of the
session changes what pytest writes), and writes the result beside every copy.
"""

from __future__ import annotations

import hashlib
import importlib.util
import py_compile
import threading
from pathlib import Path

_COMPILED: dict[bytes, bytes] = {}  # a source's hash → its bytecode file, compiled once in this process
_REWRITTEN: dict[bytes, tuple[str, bytes]] = {}  # a test file's SHA-256 → (pytest's file name tail, its pyc)
_REWRITING = threading.Lock()  # two submissions' sessions may be prepared at once (grade --jobs 2)


def beside(path: Path) -> None:
    """Write the bytecode of the trusted module ``path`` into its ``__pycache__`` (checked by hash on import)."""
    data = path.read_bytes()
    cached = Path(importlib.util.cache_from_source(str(path)))
    key = importlib.util.source_hash(data)
    compiled = _COMPILED.get(key)
    try:
        if compiled is None:
            py_compile.compile(str(path), cfile=str(cached), doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            _COMPILED[key] = cached.read_bytes()
        else:
            cached.parent.mkdir(exist_ok=True)
            cached.write_bytes(compiled)
    except (py_compile.PyCompileError, OSError):
        return  # the importing process compiles it then, as before


def copy(source: Path, destination: Path) -> None:
    """Copy the trusted module ``source`` to ``destination``, with its bytecode."""
    destination.write_bytes(source.read_bytes())
    beside(destination)


def rewritten_beside(path: Path) -> None:
    """Write pytest's assert-rewritten bytecode of the course's test module ``path`` where the session's pytest looks
    for it (its ``__pycache__``, checked against the source's hash when the module is imported). Only the course's
    own test files come here: the session imports them, and a file pytest would not rewrite ignores what is written."""
    data = path.read_bytes()
    key = hashlib.sha256(data).digest()
    try:
        with _REWRITING:
            if key not in _REWRITTEN:
                _REWRITTEN[key] = _rewrite(path)
        tail, pyc = _REWRITTEN[key]
        cached = path.parent / "__pycache__" / (path.name[:-3] + tail)
        cached.parent.mkdir(exist_ok=True)
        cached.write_bytes(pyc)
    except (OSError, SyntaxError, ValueError):
        return  # the session rewrites it then, as before


def _rewrite(path: Path) -> tuple[str, bytes]:
    """What pytest's own import hook would write for ``path`` (:func:`forgelab.judge.pytest_private.rewritten_pyc`);
    the name's tail holds pytest's version, so another one ignores it."""
    # a tester sandbox holds a copy of this module without pytest_private.py, and never rewrites
    # lazy: only a grading or watch process loads pytest's rewriter here (a cold check never asks for this)
    from forgelab.judge.pytest_private import rewritten_pyc

    return rewritten_pyc(path)
