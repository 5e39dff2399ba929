"""Sending a wake: claim the slot, deliver, record; hold the tmux status message.

A wake is claimed (the rate limit checked and the wake logged in one write
transaction), then delivered through the :class:`~tether.watch.wake.Waker`,
then its channels recorded. A wake whose harness request nobody took falls back
to the pane and the human. The status message a wake showed on the
orchestrator's pane is shown again each cycle until the orchestrator is active.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace

from tether.clock import Clock, to_iso
from tether.config.schema import WatchSettings
from tether.store.state_db import transaction
from tether.watch.acks import deaf_endpoints
from tether.watch.registry import WakeRecord, last_wake_at, record_wake, swap_channels, update_wake
from tether.watch.survey import OrchestratorView
from tether.watch.tmux import Tmux
from tether.watch.wake import (
    HUMAN_TAIL,
    Delivery,
    Reach,
    SubagentView,
    Waker,
    compose,
    status_text,
)


@dataclass(frozen=True)
class HeldStatus:
    """A wake's tmux status message, held on the orchestrator's pane for the person."""

    tmux: Tmux
    pane: str
    text: str
    since: float  # the wake's time: activity after it clears the message


class WakeSender:
    def __init__(
        self,
        settings: WatchSettings,
        conn: sqlite3.Connection,
        waker: Waker,
        clock: Clock,
        log: Callable[[str], None],
    ) -> None:
        self.settings = settings
        self.conn = conn
        self.waker = waker
        self.clock = clock
        self.log = log
        # per orchestrator: the status message held for the person until it is active again
        self._held: dict[int, HeldStatus] = {}

    def keep_status(self, orchestrator_id: int, last_activity: float | None) -> None:
        """Keep the held status message until the orchestrator is active again.

        A key press in the client takes a ``-d 0`` message away; it is shown again
        each cycle until the orchestrator did something after the wake (the wake was
        taken up), then taken away. ``None``: the orchestrator is gone, so is its pane.
        """
        held = self._held.get(orchestrator_id)
        if held is None:
            return
        if last_activity is None or last_activity > held.since:
            del self._held[orchestrator_id]
            if last_activity is not None:
                held.tmux.clear_message(held.pane)
                self.log(f"orchestrator {orchestrator_id} is active again: status message cleared")
            return
        held.tmux.display_message(held.pane, held.text, hold=True)

    def _hold_status(
        self, view: OrchestratorView, message: str, delivery: Delivery, now: float
    ) -> None:
        shown = any(c.channel == "tmux-status" and c.ok for c in delivery.channels)
        if shown and view.tmux is not None and view.pane is not None:
            self._held[view.orchestrator.id] = HeldStatus(
                view.tmux, view.pane, status_text(message), now
            )

    def fall_back(
        self, view: OrchestratorView, wake: WakeRecord, now: float, own_permission: bool
    ) -> WakeRecord:
        """Deliver a wake whose harness request nobody took through the pane and the human."""
        first = wake.subagent or ""
        values = _values(wake.reason, first, wake.pending_tool, view.orchestrator.name)
        delivery = self.waker.deliver(
            wake.message,
            Reach(view.tmux, view.pane),
            values=values,
            at=now,
            starts_turn=not own_permission,
        )
        self._hold_status(view, wake.message, delivery, now)
        extra = tuple({**c.as_dict(), "fallback": True} for c in delivery.channels)
        done = replace(
            wake, channels=wake.channels + extra, delivered=wake.delivered or delivery.delivered
        )
        if swap_channels(self.conn, wake, done.channels, done.delivered):
            return done
        return wake  # another daemon recorded something meanwhile; what it wrote stands

    def wake(
        self,
        view: OrchestratorView,
        running: list[SubagentView],
        now: float,
        idle_seconds: float,
        own_permission: bool,
    ) -> WakeRecord | None:
        """Claim the wake slot, deliver, record the outcome; None when rate-limited."""
        message = compose(running, idle_seconds, now, self.settings.message_max_chars)
        first = _first_waiting(running) or running[0]
        wait = first.wait
        reason = "idle"
        if wait is not None and wait.kind in ("confirmation", "input"):
            reason = wait.kind
        if own_permission:
            reason = "own-permission"
        claimed = self._claim(view.orchestrator.id, reason, first, idle_seconds, message, now)
        if claimed is None:
            return None
        values = _values(
            reason, first.subagent.label, wait.tool if wait else None, view.orchestrator.name
        )
        deaf = deaf_endpoints(self.conn, view.orchestrator.id) if view.endpoints else ()
        delivery = self.waker.deliver(
            message,
            Reach(view.tmux, view.pane, view.endpoints, deaf),
            values=values,
            at=now,
            starts_turn=not own_permission,
        )
        self._hold_status(view, message, delivery, now)
        return self._finish(claimed, delivery)

    def tell_human(
        self,
        orchestrator_id: int | None,
        reason: str,
        head: str,
        running: list[SubagentView],
        now: float,
        orchestrator_name: str = "",
    ) -> WakeRecord | None:
        """A wake for the human only (rate-limited per orchestrator); None when rate-limited."""
        message = compose(
            running, 0.0, now, self.settings.message_max_chars, head=head, tail=HUMAN_TAIL
        )
        first = _first_waiting(running) or running[0]
        claimed = self._claim(orchestrator_id, reason, first, None, message, now)
        if claimed is None:
            return None
        wait = first.wait
        values = _values(
            reason, first.subagent.label, wait.tool if wait else None, orchestrator_name
        )
        delivery = self.waker.deliver(message, Reach(), values=values, at=now, starts_turn=False)
        return self._finish(claimed, delivery)

    def _claim(
        self,
        orchestrator_id: int | None,
        reason: str,
        first: SubagentView,
        idle_seconds: float | None,
        message: str,
        now: float,
    ) -> WakeRecord | None:
        """Check the rate limit and log the wake in one write transaction.

        Two daemons (or a daemon and a ``watch once``) cannot both wake within
        one interval; delivery happens after the commit, so a slow wake command
        never holds the database lock.
        """
        wait = first.wait
        record = WakeRecord(
            at=to_iso(self.clock.now()),
            orchestrator_id=orchestrator_id,
            reason=reason,
            subagent=first.subagent.label,
            pending_tool=wait.tool if wait else None,
            pending_call_id=wait.call_id if wait else None,
            idle_seconds=None if idle_seconds is None else round(idle_seconds, 1),
            message=message,
            channels=(),
            delivered=False,
        )
        with transaction(self.conn):
            last = last_wake_at(self.conn, orchestrator_id)
            if last is not None and now - last < self.settings.wake_min_interval:
                return None
            wake_id = record_wake(self.conn, record)
        return replace(record, id=wake_id)

    def _finish(self, claimed: WakeRecord, delivery: Delivery) -> WakeRecord:
        channels = tuple(result.as_dict() for result in delivery.channels)
        done = replace(claimed, channels=channels, delivered=delivery.delivered)
        assert done.id is not None
        update_wake(self.conn, done.id, done.channels, done.delivered)
        return done


def wake_action(wake: WakeRecord) -> str:
    """The decision's action for a wake just made: ``woken``, ``requested`` or ``human-only``."""
    if wake.delivered:
        return "woken"
    waiting = any(
        c.get("channel") == "harness" and c.get("ok") and not c.get("withdrawn")
        for c in wake.channels
    )
    return "requested" if waiting else "human-only"


def untaken(wake: WakeRecord) -> str:
    """Which endpoints did not take a wake request (it was withdrawn)."""
    keys = sorted(str(c.get("endpoint")) for c in wake.channels if c.get("withdrawn"))
    return f"{', '.join(keys)} did not take the wake request; it was withdrawn"


def _values(reason: str, subagent: str, tool: str | None, orchestrator: str) -> dict[str, str]:
    """What a wake command gets filled in (and as TETHER_WAKE_* in its environment)."""
    return {
        "reason": reason,
        "subagent": subagent,
        "tool": tool or "",
        "orchestrator": orchestrator,
    }


def _first_waiting(running: list[SubagentView]) -> SubagentView | None:
    """The subagent that has waited longest for confirmation (else for input)."""
    for kind in ("confirmation", "input"):
        waiting = [v for v in running if v.wait is not None and v.wait.kind == kind]
        if waiting:
            return min(waiting, key=lambda v: v.wait.since if v.wait else 0.0)
    return None
