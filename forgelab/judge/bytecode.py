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
session changes what pytest writes), and writes the result beside every copy. Given a folder to keep it in (the
workbook's cache), it also keeps that result there, named by the SHA-256 of the file and pytest's own name tail
(Python's cache tag and pytest's version), so the next ``forgelab grade`` does not rewrite it again: rewriting a
graded submission's 22 course test files took about half a second of CPU before its sessions could start. A kept
file is only ever a head start: pytest checks it against the source's hash on import and rewrites the file itself
when it does not match.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import py_compile
import tempfile
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


def rewritten_beside(path: Path, keep: Path | None = None) -> None:
    """Write pytest's assert-rewritten bytecode of the course's test module ``path`` where the session's pytest looks
    for it (its ``__pycache__``, checked against the source's hash when the module is imported). Only the course's
    own test files come here: the session imports them, and a file pytest would not rewrite ignores what is written.
    ``keep``: a folder where the rewritten bytecode is kept for later processes (and taken from when there)."""
    data = path.read_bytes()
    key = hashlib.sha256(data).digest()
    try:
        with _REWRITING:
            if key not in _REWRITTEN:
                _REWRITTEN[key] = _kept(keep, key) or _keeping(keep, key, _rewrite(path))
        tail, pyc = _REWRITTEN[key]
        cached = path.parent / "__pycache__" / (path.name[:-3] + tail)
        cached.parent.mkdir(exist_ok=True)
        cached.write_bytes(pyc)
    except (OSError, SyntaxError, ValueError):
        return  # the session rewrites it then, as before


def _kept_file(keep: Path, key: bytes) -> Path:
    from forgelab.judge.pytest_private import pyc_tail  # lazy: only grading and watch load pytest's rewriter here

    return keep / f"{key.hex()}{pyc_tail()}"


def _kept(keep: Path | None, key: bytes) -> tuple[str, bytes] | None:
    """The rewritten bytecode of the source whose SHA-256 is ``key``, kept in ``keep`` by an earlier process."""
    if keep is None:
        return None
    try:
        kept = _kept_file(keep, key)
        pyc = kept.read_bytes()
    except OSError:
        return None
    return kept.name[len(key.hex()):], pyc


def _keeping(keep: Path | None, key: bytes, made: tuple[str, bytes]) -> tuple[str, bytes]:
    """Keep ``made`` in ``keep`` (whole or not at all: written aside, then renamed); return it."""
    if keep is not None:
        try:
            keep.mkdir(parents=True, exist_ok=True)
            handle, aside = tempfile.mkstemp(dir=keep, prefix=".writing-")
        except OSError:  # a read-only workbook: the next process rewrites it again
            return made
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(made[1])
            os.replace(aside, _kept_file(keep, key))
        except OSError:  # a full disk: nothing half written stays
            Path(aside).unlink(missing_ok=True)
    return made


def _rewrite(path: Path) -> tuple[str, bytes]:
    """What pytest's own import hook would write for ``path`` (:func:`forgelab.judge.pytest_private.rewritten_pyc`);
    the name's tail holds pytest's version, so another one ignores it."""
    # a tester sandbox holds a copy of this module without pytest_private.py, and never rewrites
    # lazy: only a grading or watch process loads pytest's rewriter here (a cold check never asks for this)
    from forgelab.judge.pytest_private import rewritten_pyc

    return rewritten_pyc(path)
