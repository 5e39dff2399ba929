"""Cancelling runs: a signal to the supervisor, or every run of the process at once.

A cancel is orderly: the run's loop sees it between two reads of the stream,
stops the agent's group and writes the run's report and record as cancelled.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

# Set: every run this process supervises ends as cancelled, and new ones at once.
_CANCEL_ALL = threading.Event()


def cancel_all_runs() -> None:
    """End every run of this process as cancelled (a fleet worker that lost its lease)."""
    _CANCEL_ALL.set()


def allow_runs() -> None:
    """Runs of this process may go on again (``cancel_all_runs`` undone)."""
    _CANCEL_ALL.clear()


class Cancel:
    """SIGINT/SIGTERM/SIGHUP to the supervisor become an orderly cancel of the agent."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self) -> bool:
        return self.requested or _CANCEL_ALL.is_set()

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        def handler(signum: int, frame: FrameType | None) -> None:
            self.requested = True

        # SIGHUP too: a closed terminal ends the run in order, with its report
        old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        try:
            for s in old:
                signal.signal(s, handler)
        except ValueError:  # not the main thread: the caller handles signals
            old = {}
        try:
            yield
        finally:
            for s, h in old.items():
                signal.signal(s, h)
