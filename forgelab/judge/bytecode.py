"""Bytecode for the judge's own modules where a process could not keep it: written beside the copy, once compiled.

Every run copies a few modules into folders that a fresh process then imports: the host's wire module into each
target's code folder, the tester's forgelab modules into its folder, the course's interface ``forge/`` into the
run's folder. Those folders are new every run (and read-only in the sandbox), and the judge's processes write no
bytecode, so each process compiled them from source again. :func:`beside` writes the bytecode file next to such a
copy, checked against the source's hash when it is imported (so a file that differs is compiled as before); one
process compiles each source once, whatever folder it is copied to. Only trusted sources go through here — the
course's and the judge's, never the learner's code.
"""

from __future__ import annotations

import importlib.util
import py_compile
from pathlib import Path

_COMPILED: dict[bytes, bytes] = {}  # a source's hash → its bytecode file, compiled once in this process


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
