"""What the fleet's workflows in one executor process share: the context and the retry policy.

``launch.start`` sets the context once, before DBOS runs any workflow; the
steps (``tether.fleet.engine``) read it. A step that fails for a reason a
retry may cure raises ``RetryLaterError``, which DBOS retries with backoff
(``RETRIES``); when the tries run out, the project stops with the reason.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbos import Queue, SQLAlchemyDatasource

from tether.fleet.fleet_db import FleetStore
from tether.fleet.leases import Lease
from tether.fleet.mirror import Mirror
from tether.fleet.turn import Turn

# what a push may take at most; it starts only with this much lease (and a margin) left
PUSH_SHARE = 0.4


class RetryLaterError(Exception):
    """A step failed for a reason a retry may cure; DBOS retries it with backoff."""


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, RetryLaterError)


RETRIES: dict[str, Any] = {
    "retries_allowed": True,
    "interval_seconds": 1.0,
    "backoff_rate": 1.5,
    "max_attempts": 12,  # about four minutes of trying, then the project stops
    "should_retry": _retryable,
}


@dataclass
class Context:
    """What the workflows of this process need: set once by ``start``."""

    store: FleetStore
    lease: Lease
    state_dir: Path
    workdir: Path
    poll_interval: float
    lease_seconds: float
    mirror: Mirror
    datasource: SQLAlchemyDatasource | None = None
    queue: Queue | None = None
    fenced: threading.Event = field(default_factory=threading.Event)
    turn: Turn = field(default_factory=Turn)
    active: set[str] = field(default_factory=set)  # what a stop waits for (not units in hand)
    # commits this process made, and those it has tried to push (a first push skips the look)
    made: set[str] = field(default_factory=set)
    tried: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def push_timeout(self) -> float:
        return self.lease_seconds * PUSH_SHARE

    @property
    def push_needs(self) -> float:
        """Lease left that a push needs to start: its timeout, and a tenth of the lease."""
        return self.push_timeout + 0.1 * self.lease_seconds


_context: Context | None = None


def set_context(ctx: Context) -> None:
    """What the workflows of this process use from now on (``launch.start``)."""
    global _context
    _context = ctx


def context() -> Context:
    if _context is None:
        raise RuntimeError("the fleet engine was not started in this process")
    return _context
