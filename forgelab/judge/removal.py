"""A judge run's folder removed after its verdict is shown, and never left behind.

:func:`remove_soon` removes a folder on a thread of its own, so that the caller's verdict is on screen while the
folder goes. The folder is remembered until that thread is done; :func:`remove_pending` removes, on the calling
thread, every folder still remembered. It runs at the interpreter's normal exit (``atexit``, also after Ctrl-C and
after a closed terminal in watch mode): the removing thread is a daemon, which the interpreter stops at exit
without waiting, so a removal cut short there is finished here. A process that ends with ``os._exit`` runs no
``atexit`` handler and must not call :func:`remove_soon`.
"""

from __future__ import annotations

import atexit
import shutil
import threading
from pathlib import Path

_lock = threading.Lock()
_pending: set[Path] = set()


def remove_soon(folder: Path) -> None:
    """Start removing ``folder`` (and everything in it) on a thread of its own; return at once."""
    with _lock:
        _pending.add(folder)
    threading.Thread(target=_remove, args=(folder,), name="forgelab-judge-cleanup", daemon=True).start()


def remove_pending() -> None:
    """Remove now, on this thread, every folder given to :func:`remove_soon` whose removal has not finished."""
    with _lock:
        folders = sorted(_pending)
    for folder in folders:
        _remove(folder)


def _remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)  # two removals of one folder at once are harmless: each skips what is gone
    with _lock:
        _pending.discard(folder)


atexit.register(remove_pending)
