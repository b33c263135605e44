"""What one learner process prints: read on threads, kept up to a cap, counted to the byte.

Contract:

* :meth:`PrintedOutput.read` reads one of the process's pipes (its own descriptor, closed here) on a daemon thread
  until every writer is gone; the first ``cap`` bytes are kept, every byte is counted.
* :meth:`PrintedOutput.settle` returns once every byte written into those pipes before the call has been counted
  (or the output is already over the cap). A pipe is read and counted under one lock, so "the pipes are empty"
  seen under that lock means "all counted". The judge settles before it acts on an answer or an end: whether a
  process that printed 100 MB and then answered is over its output limit must not depend on whether the reading
  thread had run yet (a verdict that moved with load: the flood of the hostile batch passed 1 run in 4).
* :attr:`PrintedOutput.flooded`: more than ``cap`` bytes were counted.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import termios
import threading

SETTLE_S = 2.0  # the longest settle waits for a process that keeps printing without ever flooding


def _unread(fd: int) -> int:
    """The bytes waiting in the pipe ``fd``."""
    return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])


class PrintedOutput:
    """The output of one process, from its pipes (see the module's contract)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.printed = 0  # every byte counted
        self._kept = bytearray()
        self._open: set[int] = set()  # the descriptors still read
        self._changed = threading.Condition(threading.Lock())

    @property
    def flooded(self) -> bool:
        with self._changed:
            return self.printed > self.cap

    def read(self, fd: int) -> threading.Thread:
        """Read ``fd`` (this object's own copy: it is closed here) on a daemon thread; the thread."""
        os.set_blocking(fd, False)
        with self._changed:
            self._open.add(fd)
        thread = threading.Thread(target=self._read, args=(fd,), daemon=True)
        thread.start()
        return thread

    def _read(self, fd: int) -> None:
        try:
            while True:
                select.select([fd], [], [])
                with self._changed:
                    try:
                        chunk = os.read(fd, 65536)
                    except BlockingIOError:  # woken for nothing
                        continue
                    if not chunk:
                        return
                    self.printed += len(chunk)
                    self._kept += chunk[: max(0, self.cap - len(self._kept))]
                    self._changed.notify_all()
        except (OSError, ValueError):
            pass
        finally:
            with self._changed:
                self._open.discard(fd)
                os.close(fd)
                self._changed.notify_all()

    def settle(self, timeout_s: float = SETTLE_S) -> None:
        """Wait until what was written before now is counted, or the output is over the cap (at most ``timeout_s``:
        a process that keeps printing a little at a time never leaves its pipe empty for long)."""
        with self._changed:
            self._changed.wait_for(lambda: self.printed > self.cap or not any(_unread(fd) for fd in self._open),
                                   timeout_s)

    def restart(self) -> str:
        """What was kept since the last take, as text; from now on the count starts again at 0 (the tester begins
        its next file, which has an output limit of its own). Settles first: every byte printed before now is the
        last file's."""
        self.settle()
        with self._changed:
            text = self._kept.decode("utf-8", errors="replace")
            self._kept = bytearray()
            self.printed = 0
        return text

    def take(self) -> str:
        """What was kept since the last take, as text."""
        with self._changed:
            text = self._kept.decode("utf-8", errors="replace")
            self._kept = bytearray()
        return text
