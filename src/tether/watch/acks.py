"""Did the harness take the wake? Settling the acknowledgement of a wake request.

A wake through a harness endpoint (the Pi extension, the Claude Code rewake
hook) is a request file; the endpoint takes it, starts a turn and writes an
acknowledgement. Until then the wake is only *written*: an endpoint that
never takes its requests (it looks in another tether home, its harness hangs)
would otherwise swallow every wake while the log said "woken".

Each cycle the daemon settles the newest wake of each orchestrator:

- an acknowledgement came: the wake is recorded as delivered (``woken``);
- none came within ``ack_timeout`` seconds: the request is withdrawn (renamed
  away, so it cannot start a late turn), marked ``withdrawn``, and the daemon
  falls back once — the same message typed into the orchestrator's pane when
  it has one, and the human told — without waiting for the next wake slot;
- later wakes pass over an endpoint whose newest request was withdrawn
  (:func:`deaf_endpoints`) until it is replaced (a new Pi process, the next
  Stop's rewake hook), so each of them goes through the pane at once.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

from tether.clock import from_iso
from tether.watch.endpoints import read_ack, withdraw_request
from tether.watch.registry import WakeRecord, list_wakes, swap_channels

DEAF_LOOKBACK = 20  # wakes of one orchestrator searched for an endpoint's newest request


def _pending(channel: dict[str, Any]) -> bool:
    return bool(
        channel.get("channel") == "harness"
        and channel.get("ok")
        and channel.get("request_id")
        and channel.get("acknowledged_at") is None
        and not channel.get("withdrawn")
    )


def acknowledged_at(home: Path, channel: dict[str, Any]) -> float | None:
    """When the endpoint acknowledged this harness channel's request (None: not yet)."""
    request_id = channel.get("request_id")
    if not isinstance(request_id, str):
        return None
    ack = read_ack(home, request_id)
    if ack is None:
        return None
    return 0.0 if ack.delivered_at is None else ack.delivered_at


def settle(
    conn: sqlite3.Connection, home: Path, orchestrator_id: int, now: float, ack_timeout: float
) -> WakeRecord | None:
    """Record what became of the orchestrator's newest harness request.

    Returns that wake when this call gave up on it (withdrawn, not delivered by
    any other channel): the caller falls back, once. Otherwise None.
    """
    newest = list_wakes(conn, limit=1, orchestrator_id=orchestrator_id)
    if not newest or not any(_pending(c) for c in newest[0].channels):
        return None
    wake = newest[0]
    age = now - from_iso(wake.at).timestamp()
    channels = [dict(c) for c in wake.channels]
    delivered, gave_up = wake.delivered, False
    for channel in channels:
        if not _pending(channel):
            continue
        at = acknowledged_at(home, channel)
        if at is None and age >= ack_timeout:
            withdraw_request(home, str(channel.get("endpoint") or ""))
            at = acknowledged_at(home, channel)  # taken just before it was withdrawn?
            if at is None:
                channel["withdrawn"] = True
                gave_up = True
        if at is not None:
            channel["acknowledged_at"] = at
            delivered = True
    settled = tuple(channels)
    if settled == wake.channels or not swap_channels(conn, wake, settled, delivered):
        return None  # nothing new, or another daemon settled it first
    done = replace(wake, channels=settled, delivered=delivered)
    return done if gave_up and not delivered else None


def deaf_endpoints(conn: sqlite3.Connection, orchestrator_id: int) -> set[str]:
    """Endpoints whose newest request (to this orchestrator) was withdrawn untaken."""
    seen: set[str] = set()
    deaf: set[str] = set()
    for wake in reversed(list_wakes(conn, limit=DEAF_LOOKBACK, orchestrator_id=orchestrator_id)):
        for channel in wake.channels:
            endpoint = channel.get("endpoint")
            if channel.get("channel") != "harness" or not isinstance(endpoint, str):
                continue
            if endpoint not in seen:
                seen.add(endpoint)
                if channel.get("withdrawn"):
                    deaf.add(endpoint)
    return deaf


def with_acks(home: Path, wake: WakeRecord) -> WakeRecord:
    """``wake`` as ``watch log`` shows it: acknowledgements that came since it was settled."""
    channels = [dict(c) for c in wake.channels]
    delivered = wake.delivered
    for channel in channels:
        if _pending(channel):
            channel["acknowledged_at"] = acknowledged_at(home, channel)
            delivered = delivered or channel["acknowledged_at"] is not None
    return replace(wake, channels=tuple(channels), delivered=delivered)
