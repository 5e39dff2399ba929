"""When did the orchestrator last do something, and does its harness say it is busy?

Idle detection must not need the orchestrator's cooperation. Its last activity
is the latest of:

- its registration (a fresh orchestrator is not idle from the first second);
- an explicit touch: each ``tether subagents wait`` call it makes;
- hook events the gate recorded for its sessions (tool calls, prompt submits,
  stops — not ``Notification``, which is a harness saying the session sits idle);
- growth of its log file (``--log``, or the run's ``events.jsonl``);
- the ``last_activity`` its wake endpoint reports (Pi extension, rewake hook).

A busy signal only vetoes a wake, it is never required: Pi's ``ctx.isIdle()``
being false, or a turn the gate saw start (prompt submit, tool call) with no
stop after it. A veto older than ``busy_veto_max`` is ignored — a turn can end
without a stop event (an interrupted Claude Code turn fires none), and a stale
veto must not silence the watchdog for good.

If the orchestrator's own newest event is a permission request (or a
notification of type ``permission_prompt``), it is waiting for its human:
typing a wake message into that dialog could answer it, so the watchdog only
notifies the human then. A newest notification of type ``idle_prompt`` (or
``elicitation_dialog``) says the turn is over: it lifts the busy veto of a turn
whose stop the gate never saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tether.clock import from_iso
from tether.core import process_tree as gate_proc
from tether.core.session_identity import process_key
from tether.gate.eventlog import GateEvent, GateReader
from tether.watch.confirm import (
    NOTIFICATION_EVENTS,
    PERMISSION_EVENTS,
    TURN_END_EVENTS,
    notice_kind,
)
from tether.watch.endpoints import Endpoint
from tether.watch.registry import Orchestrator


@dataclass(frozen=True)
class Activity:
    last: float  # epoch seconds
    source: str
    busy: str | None  # why a harness says it is busy (None: no busy signal)
    own_permission: bool  # its newest event is its own permission request


def gate_process_key(pid: int) -> str | None:
    """The context key the gate uses for hook calls whose agent is process ``pid``."""
    info = gate_proc.read_proc(pid)
    return None if info is None else process_key(info)


def _mtime(path: str | Path | None) -> float | None:
    if not path:
        return None
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return None


def _gate_view(
    events: Sequence[GateEvent], now: float, busy_veto_max: float
) -> tuple[float | None, str | None, str | None, bool]:
    """(latest activity, its event, busy reason, own permission) from newest-first events."""
    notice = "untyped"
    if events and events[0].event in NOTIFICATION_EVENTS:
        notice = notice_kind(events[0])
    latest = next((e for e in events if e.event not in NOTIFICATION_EVENTS), None)
    if latest is None:
        return None, None, None, notice == "confirmation"
    own_permission = latest.event in PERMISSION_EVENTS or notice == "confirmation"
    busy = None
    if (
        not own_permission
        and notice != "input"
        and latest.event not in TURN_END_EVENTS
        and now - latest.at < busy_veto_max
    ):
        busy = f"turn open since {latest.event}"
    return latest.at, latest.event, busy, own_permission


class Watched(Protocol):
    """Where an orchestrator's activity shows (``survey.OrchestratorView`` is one)."""

    @property
    def orchestrator(self) -> Orchestrator: ...
    @property
    def sessions(self) -> Sequence[str]: ...  # its gate sessions
    @property
    def endpoints(self) -> Sequence[Endpoint]: ...  # its harness endpoints
    @property
    def log(self) -> Path | None: ...  # its transcript, found beside the registered log


def orchestrator_activity(
    view: Watched, *, gate: GateReader, now: float, busy_veto_max: float
) -> Activity:
    """When the orchestrator last did something, by what, and whether it is busy now."""
    orch = view.orchestrator
    added_at = from_iso(orch.added_at).timestamp()
    candidates: list[tuple[float, str]] = [(added_at, "registered")]
    if orch.last_activity is not None:
        candidates.append((orch.last_activity, orch.last_activity_source or "touch"))
    events = gate.recent(list(view.sessions), limit=20)
    at, event, busy, own_permission = _gate_view(events, now, busy_veto_max)
    if at is not None:
        candidates.append((at, f"hook {event}"))
    for path in (orch.log_path, view.log):
        grown = _mtime(path)
        if grown is not None:
            candidates.append((grown, "log"))
    for endpoint in view.endpoints:
        if endpoint.last_activity is not None:
            candidates.append((endpoint.last_activity, f"{endpoint.kind} endpoint"))
        if (
            endpoint.idle is False
            and endpoint.last_activity is not None
            and now - endpoint.last_activity < busy_veto_max
        ):
            busy = f"{endpoint.kind} says it is streaming"
    last, source = max(candidates, key=lambda c: c[0])
    return Activity(last=last, source=source, busy=busy, own_permission=own_permission)
