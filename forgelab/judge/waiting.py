"""Waiting for another thread without holding up Ctrl-C.

Linux hands a signal sent to a process (Ctrl-C's SIGINT, a closed terminal's SIGHUP) to any one of its threads.
Python sets a flag in whichever thread that is, and raises ``KeyboardInterrupt`` in the main thread at its next
bytecode. A main thread blocked in a lock without a time limit — ``Event.wait()``, ``Future.result()``,
``Thread.join()`` — runs no bytecode until the lock is released, so Ctrl-C waited for the check it was meant to
stop: in watch mode, for as long as the learner's code slept (90 s, the judge's wall limit), and longer on a busy
machine. Every wait here wakes each :data:`TICK_S` seconds, which is when a pending Ctrl-C is raised; what is
awaited is returned as soon as it is there, never a tick later.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from typing import TypeVar

TICK_S = 0.05  # the longest a pending Ctrl-C waits to be raised in the main thread

T = TypeVar("T")


def wait(event: threading.Event) -> None:
    """Until ``event`` is set."""
    while not event.wait(TICK_S):
        pass


def result(future: Future[T]) -> T:
    """``future.result()``, once it is done."""
    while not future.done():
        concurrent.futures.wait([future], timeout=TICK_S)
    return future.result()


def results(futures: Iterable[Future[T]]) -> list[T]:
    """Every future's result, in the order given."""
    return [result(future) for future in futures]


def completed(futures: Iterable[Future[T]]) -> Iterator[Future[T]]:
    """``futures`` as each is done (as :func:`concurrent.futures.as_completed`, without its time limit)."""
    pending = set(futures)
    while pending:
        done, pending = concurrent.futures.wait(pending, timeout=TICK_S, return_when=concurrent.futures.FIRST_COMPLETED)
        yield from done
