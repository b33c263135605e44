"""Folders built once and shared by every grader on the machine: threads, processes, shards.

A cache folder is either absent or complete. :func:`build_once` builds it in a scratch folder whose
name is unique to the call (``tempfile.mkdtemp`` beside it: never a name derived from the process id,
which two threads of one process share), under a file lock (:mod:`filelock`) so that a second builder
waits and then reuses what the first one built, and moves it into place with one atomic rename. A
builder that fails leaves nothing behind but its own scratch, which it removes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

LOCK_TIMEOUT_S = 900  # a builder that holds the lock longer than this is stuck (git has its own 120 s limit)


class CacheError(RuntimeError):
    """A shared cache folder could not be built; the message names it and says what to do."""


def build_once(final: Path, build: Callable[[Path], None], *, timeout_s: float = LOCK_TIMEOUT_S) -> Path:
    """``final``, built by ``build(scratch)`` unless it already exists; safe to call from any thread or process.

    ``build`` fills the empty folder it is given; when it returns, that folder becomes ``final`` in one rename.
    """
    if final.is_dir():
        return final
    # the lock's library loads only when something is to be built (a cold check's path usually finds it built)
    from filelock import FileLock, Timeout

    final.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(final.parent / f".{final.name}.lock"), timeout=timeout_s)
    try:
        with lock:
            if final.is_dir():  # another builder finished while this one waited
                return final
            scratch = Path(tempfile.mkdtemp(prefix=f".{final.name}.partial-", dir=final.parent))
            try:
                build(scratch)
                os.rename(scratch, final)
            except OSError:
                if not final.is_dir():
                    raise
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    except Timeout:
        raise CacheError(f"{final} is still being built by another process after {timeout_s:.0f} s: if no other "
                         f"forgelab is running, delete {final.parent} and run again") from None
    return final
