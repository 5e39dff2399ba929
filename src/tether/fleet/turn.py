"""One unit's tick at a time in an executor, while its next unit waits in hand.

An executor's queue takes two units at a time (``engine.UNITS_IN_HAND``):
while one unit's agent runs, DBOS dequeues the next (another project's: the
queue holds one unit per project) and that unit waits here for its turn. When
the tick before it ends, it takes its project, brings its clone up to date
and ticks at once: the queue's poll and the dequeue no longer come between
two units, and the commit, the checkpoint and the start of the push of the
unit before go on while it ticks. The turn covers taking the project, the
clone and the tick, so an executor still runs one unit's agent at a time.

A unit that waits for its turn has done nothing yet: when the executor stops
(``close``) it never gets it, and stays in DBOS's hands, pending for this
executor, until the worker that takes over the released lease re-enqueues it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Turn:
    """Who ticks in this executor: one unit at a time, in the order they asked."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._busy = False
        self._closed = False

    def _take(self) -> bool:
        with self._cond:
            while self._busy and not self._closed:
                self._cond.wait()
            if self._closed:
                return False
            self._busy = True
            return True

    def _give(self) -> None:
        with self._cond:
            self._busy = False
            self._cond.notify()

    @contextmanager
    def held(self) -> Iterator[Callable[[], None]]:
        """The turn, for the block; the callable yielded gives it back early (after the tick).

        Once the executor stops, a unit asking for its turn waits here until
        the process ends: it must neither tick nor end.
        """
        if not self._take():
            threading.Event().wait()
        given = False

        def give() -> None:
            nonlocal given
            if not given:
                given = True
                self._give()

        try:
            yield give
        finally:
            give()

    def close(self) -> None:
        """The executor stops: no unit gets the turn any more (the one ticking keeps it)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
