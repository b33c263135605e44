"""Re-check on save, for the notebook's test cell: a daemon thread that runs a check once, then again after every
save of one file, until it is stopped.

:class:`Rechecker` knows nothing of widgets or of the judge: the notebook (:meth:`forgelab.learner.notebook.StageTools
.recheck_on_save`) hands it the file to watch and the function to call — which runs the stage tests through the same
sandboxed path as ``lab.run_tests()`` and updates the table in place. Saves are gathered with :mod:`watchfiles`
(debounced: an editor's write, rename and chmod count as one save); a save made while a check runs is judged right
after it. The watch covers the file's own folder, not recursively (editors save by writing a new file and renaming
it over the old one).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

DEBOUNCE_MS = 400  # the longest a burst of saves is gathered
STEP_MS = 5  # a burst ends after this long without a further change (a save is seen 5-10 ms after it)
TICK_MS = 200  # how often the thread looks whether it was stopped while nothing changes


class Rechecker:
    """Calls ``check(saved)`` once at the start (``saved`` empty), then after each save of ``path`` (``[path]``)."""

    def __init__(self, path: Path, check: Callable[[list[Path]], None]) -> None:
        self.path = path.resolve()
        self.check = check
        self._stop = threading.Event()
        # the thread runs in a copy of its maker's context: it speaks the notebook's language (forgelab.core.i18n)
        self._thread = threading.Thread(target=contextvars.copy_context().run, args=(self._run,),
                                        name=f"forgelab-recheck-{path.name}", daemon=True)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def stopped(self) -> bool:
        """It was asked to stop (a check still running then finishes, and its result should not be shown)."""
        return self._stop.is_set()

    def start(self) -> Rechecker:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching; a check that is running finishes first (up to ``timeout`` seconds are waited for)."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _saved(self, _change: watchfiles.Change, path: str) -> bool:
        return Path(path).resolve() == self.path

    def _run(self) -> None:
        """The first check runs once the watcher has started (its first yield): a save made meanwhile is not lost."""
        first = True
        for changes in watchfiles.watch(self.path.parent, watch_filter=self._saved, debounce=DEBOUNCE_MS, step=STEP_MS,
                                        rust_timeout=TICK_MS, yield_on_timeout=True, stop_event=self._stop,
                                        recursive=False, raise_interrupt=False):
            if self._stop.is_set():
                return
            if first:
                first = False
                self.check([])
            elif changes and self.path.is_file():
                self.check([self.path])
