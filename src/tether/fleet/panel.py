"""The fleet as ``tether fleet status`` and ``tether status`` show it: typed records.

Standard library only, so that ``tether status`` can draw the fleet's panel
without loading the fleet's database engine. ``as_dict`` is the document
``tether fleet status --json`` prints and the status object's ``fleet`` key holds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ProjectStatus:
    name: str
    repo: str
    branch: str
    state: str  # running | queued | waiting | paused | stopped
    worker: str | None
    unit_running_for: float | None  # seconds
    last_line: str | None
    last_exit: int | None
    last_at: float | None
    units_done: int
    queue_depth: int  # units enqueued and ready, not started
    next_look_scheduled: bool  # after a STOP: a unit delayed by [fleet] poll_interval
    stopped_reason: str | None


@dataclass(frozen=True)
class WorkerStatus:
    name: str  # the executor: the worker's name, or NAME.K for a worker of concurrency > 1
    worker: str  # the `tether fleet worker --name` it belongs to
    host: str
    pid: int
    alive: bool  # its lease is valid by the database server's clock
    heartbeat_age: float
    lease_left: float  # seconds of lease left (negative: ran out that long ago)
    epoch: int
    concurrency: int  # units it runs at once: always 1 (a worker runs one executor per unit)
    recovered_by: str | None


@dataclass(frozen=True)
class FleetStatus:
    database: str
    workers: list[WorkerStatus]
    projects: list[ProjectStatus]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FleetUnreadable:
    """A fleet this home names whose database could not be read: one line, why."""

    database: str
    error: str

    def as_dict(self) -> dict[str, Any]:
        return {"database": self.database, "error": self.error}


FleetPanel = FleetStatus | FleetUnreadable
