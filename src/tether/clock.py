"""Time, injectable: wall-clock (UTC, aware) for records, monotonic for intervals.

Code that measures intervals or stamps records takes a ``Clock`` so tests can
drive time with a ``FakeClock`` instead of sleeping.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

_ISO_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime:
        """The current wall-clock time, timezone-aware, in UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards (for intervals only)."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class FakeClock:
    """A clock that moves only when told to; wall and monotonic time move together."""

    def __init__(self, start: datetime | None = None, monotonic_start: float = 1000.0) -> None:
        start = start or datetime(2025, 1, 1, tzinfo=UTC)
        if start.tzinfo is None:
            raise ValueError("FakeClock needs a timezone-aware start time")
        self._now = start.astimezone(UTC)
        self._monotonic = monotonic_start

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._monotonic

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock does not go backwards")
        self._now += timedelta(seconds=seconds)
        self._monotonic += seconds


def to_iso(moment: datetime) -> str:
    """The one timestamp format of records: UTC, microseconds, ``Z`` (sorts as text)."""
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return moment.astimezone(UTC).strftime(_ISO_FORMAT)


def from_iso(text: str) -> datetime:
    """Parse a record timestamp (any ISO 8601 form with an offset) into aware UTC."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no timezone")
    return moment.astimezone(UTC)
