from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from tether.clock import Clock, FakeClock, SystemClock, from_iso, to_iso


def test_system_clock_is_utc_aware_and_monotonic() -> None:
    clock = SystemClock()
    assert isinstance(clock, Clock)
    assert clock.now().tzinfo is UTC
    first = clock.monotonic()
    assert clock.monotonic() >= first


def test_fake_clock_moves_only_when_told() -> None:
    clock = FakeClock(datetime(2025, 6, 1, 8, tzinfo=UTC), monotonic_start=5.0)
    assert isinstance(clock, Clock)
    assert clock.now() == datetime(2025, 6, 1, 8, tzinfo=UTC)
    assert clock.monotonic() == 5.0
    clock.advance(90.5)
    assert clock.now() == datetime(2025, 6, 1, 8, 1, 30, 500000, tzinfo=UTC)
    assert clock.monotonic() == 95.5
    with pytest.raises(ValueError, match="backwards"):
        clock.advance(-1)
    with pytest.raises(ValueError, match="timezone-aware"):
        FakeClock(datetime(2025, 1, 1))


def test_iso_round_trip_and_ordering() -> None:
    moment = datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=timezone(timedelta(hours=2)))
    text = to_iso(moment)
    assert text == "2025-01-02T01:04:05.000006Z"
    assert from_iso(text) == moment
    assert to_iso(datetime(2025, 1, 2, tzinfo=UTC)) < text
    with pytest.raises(ValueError, match="timezone-aware"):
        to_iso(datetime(2025, 1, 1))
    with pytest.raises(ValueError, match="no timezone"):
        from_iso("2025-01-01T00:00:00")
