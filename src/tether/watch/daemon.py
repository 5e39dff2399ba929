"""The watchdog: while a subagent runs, the orchestrator is not idle.

Each cycle (every ``interval`` seconds) looks at the subagents and the
registered orchestrators (``survey``) and, for every orchestrator that is
alive, has shown no activity for ``idle_threshold`` seconds, has no fresh busy
signal and was not woken in the last ``wake_min_interval`` seconds, while at
least one subagent runs: wakes it (``wake``) and records the wake. With no
orchestrator registered, the human is told instead, at the same rate.

It ends by itself: one interval after it noticed that no subagent runs any more
(or, when it never saw one, after ``startup_grace``), unless told to run on.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tether.clock import Clock, SystemClock, from_iso, to_iso
from tether.config.schema import WatchSettings
from tether.store.db import transaction
from tether.watch.acks import deaf_endpoints, settle
from tether.watch.activity import orchestrator_activity
from tether.watch.registry import (
    WakeRecord,
    bind_session,
    last_wake_at,
    record_wake,
    swap_channels,
    update_wake,
)
from tether.watch.survey import OrchestratorView, Survey, Surveyor
from tether.watch.tmux import Tmux
from tether.watch.wake import (
    HUMAN_TAIL,
    Delivery,
    SubagentView,
    Waker,
    compose,
    running_phrase,
    status_text,
)


@dataclass
class Decision:
    orchestrator_id: int | None
    name: str
    action: str  # "woken", "human-only", or why not: "active", "busy", "rate-limited", …
    idle_seconds: float | None = None
    activity_source: str | None = None
    wake_id: int | None = None
    note: str | None = None  # e.g. why the orchestrator is gone

    def as_dict(self) -> dict[str, Any]:
        return {
            "orchestrator_id": self.orchestrator_id,
            "name": self.name,
            "action": self.action,
            "idle_seconds": None if self.idle_seconds is None else round(self.idle_seconds, 1),
            "activity_source": self.activity_source,
            "wake_id": self.wake_id,
            "note": self.note,
        }


@dataclass
class CycleReport:
    at: str
    survey: Survey
    decisions: list[Decision] = field(default_factory=list)
    wakes: list[WakeRecord] = field(default_factory=list)

    @property
    def running(self) -> int:
        return len(self.survey.running)

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "running": self.running,
            "subagents": [subagent_dict(v) for v in self.survey.subagents],
            "orchestrators": [d.as_dict() for d in self.decisions],
            "wakes": [w.as_dict() for w in self.wakes],
            "not_counted": [n.as_dict() for n in self.survey.not_counted],
        }


@dataclass(frozen=True)
class HeldStatus:
    """A wake's tmux status message, held on the orchestrator's pane for the person."""

    tmux: Tmux
    pane: str
    text: str
    since: float  # the wake's time: activity after it clears the message


def subagents_dict(survey: Survey) -> dict[str, Any]:
    """What ``subagents list --json`` (and its MCP tool) prints: the subagents, how many run,
    and the agent processes seen but not counted, each with its reason."""
    return {
        "running": len(survey.running),
        "subagents": [subagent_dict(v) for v in survey.subagents],
        "not_counted": [n.as_dict() for n in survey.not_counted],
    }


def subagent_dict(view: SubagentView) -> dict[str, Any]:
    sub, wait = view.subagent, view.wait
    return {
        "key": sub.key,
        "kind": sub.kind,
        "label": sub.label,
        "state": view.state,
        "running": sub.running,
        "agent": None if sub.agent is None else {"pid": sub.agent.pid, "name": sub.agent.name},
        "pane": None if sub.pane is None else sub.pane.pane_id,
        "pane_command": None if sub.pane is None else sub.pane.current_command,
        "run_id": sub.run_id,
        "stop_reason": sub.stop_reason,
        "cwd": sub.cwd,
        "log": None if sub.log is None else str(sub.log),
        "wait": None
        if wait is None
        else {
            "kind": wait.kind,
            "tool": wait.tool,
            "input": wait.input,
            "call_id": wait.call_id,
            "since": wait.since,
            "signal": wait.signal,
        },
    }


class Watchdog:
    def __init__(
        self,
        settings: WatchSettings,
        home: Path,
        conn: sqlite3.Connection,
        *,
        clock: Clock | None = None,
        tmux: Tmux | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings
        self.home = Path(home)
        self.conn = conn
        self.clock = clock or SystemClock()
        self.log = log or (lambda line: None)
        self.surveyor = Surveyor(settings, self.home, tmux)
        self.waker = Waker(
            self.home,
            prefer=settings.wake_prefer,
            command=settings.wake_command,
            notify=settings.notify,
            notify_command=settings.notify_command,
            log=lambda line: self.log(f"wake: {line}"),
        )
        self.stop_event = threading.Event()
        # per orchestrator: the status message held for the person until it is active again
        self._held: dict[int, HeldStatus] = {}

    def close(self) -> None:
        self.surveyor.close()

    # --- one cycle ---------------------------------------------------------

    def check(self) -> CycleReport:
        moment = self.clock.now()
        now = moment.timestamp()
        survey = self.surveyor.look(self.conn, now)
        report = CycleReport(to_iso(moment), survey)
        running = survey.running
        for view in survey.orchestrators:
            report.decisions.append(self._decide(view, running, now, report))
        if running and not survey.orchestrators:
            report.decisions.append(self._human_only(running, now, report))
        return report

    def _decide(
        self, view: OrchestratorView, running: list[SubagentView], now: float, report: CycleReport
    ) -> Decision:
        orch = view.orchestrator
        decision = Decision(orch.id, orch.name, "no-subagent")
        for endpoint in view.endpoints:
            if endpoint.session_id and endpoint.session_id not in orch.sessions:
                bind_session(
                    self.conn,
                    endpoint.session_id,
                    orch.id,
                    harness=endpoint.kind,
                    source="endpoint",
                    clock=self.clock,
                )
        activity = orchestrator_activity(
            orch,
            gate=self.surveyor.gate,
            sessions=view.sessions,
            endpoints=view.endpoints,
            logs=(view.log,),
            added_at=from_iso(orch.added_at).timestamp(),
            now=now,
            busy_veto_max=self.settings.busy_veto_max,
        )
        decision.idle_seconds = max(0.0, now - activity.last)
        decision.activity_source = activity.source
        self._keep_status(orch.id, activity.last if view.alive else None)
        unanswered = settle(self.conn, self.home, orch.id, now, self.settings.ack_timeout)
        if unanswered is not None:
            self.log(f"wake #{unanswered.id}: {_untaken(unanswered)}")
        if not running:
            return decision
        if not view.alive:
            # like no orchestrator at all: nobody will start a turn, so the human is told
            decision.action, decision.note = "orchestrator-gone", view.gone
            head = (
                f"The registered orchestrator {orch.name} is gone ({view.gone}) while "
                f"{running_phrase(len(running))}."
            )
            wake = self._tell_human(orch.id, "orchestrator-gone", head, running, now, orch.name)
            if wake is not None:
                report.wakes.append(wake)
                decision.wake_id = wake.id
            return decision
        if decision.idle_seconds < self.settings.idle_threshold:
            decision.action = "active"
            return decision
        if activity.busy is not None:
            decision.action = f"busy ({activity.busy})"
            return decision
        if unanswered is not None:
            # the endpoint did not take the wake: the pane (and the human) now, not next slot
            wake = self._fall_back(view, unanswered, now, activity.own_permission)
            decision.note = _untaken(unanswered)
        else:
            found = self._wake(view, running, now, decision.idle_seconds, activity.own_permission)
            if found is None:
                decision.action = "rate-limited"
                return decision
            wake = found
        report.wakes.append(wake)
        # "woken" only when a channel that starts a turn took it; "requested" while a
        # harness request waits to be taken; else only the human knows
        decision.action = wake_action(wake)
        decision.wake_id = wake.id
        return decision

    def _keep_status(self, orchestrator_id: int, last_activity: float | None) -> None:
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

    def _fall_back(
        self, view: OrchestratorView, wake: WakeRecord, now: float, own_permission: bool
    ) -> WakeRecord:
        """Deliver a wake whose harness request nobody took through the pane and the human."""
        first = wake.subagent or ""
        values = _values(wake.reason, first, wake.pending_tool, view.orchestrator.name)
        delivery = self.waker.deliver(
            wake.message,
            tmux=view.tmux,
            pane=view.pane,
            endpoints=(),
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

    def _wake(
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
        delivery = self.waker.deliver(
            message,
            tmux=view.tmux,
            pane=view.pane,
            endpoints=view.endpoints,
            values=values,
            at=now,
            starts_turn=not own_permission,
            deaf=deaf_endpoints(self.conn, view.orchestrator.id) if view.endpoints else (),
        )
        self._hold_status(view, message, delivery, now)
        return self._finish(claimed, delivery)

    def _human_only(self, running: list[SubagentView], now: float, report: CycleReport) -> Decision:
        decision = Decision(None, "(none registered)", "rate-limited")
        head = f"No orchestrator is registered while {running_phrase(len(running))}."
        wake = self._tell_human(None, "no-orchestrator", head, running, now)
        if wake is not None:
            report.wakes.append(wake)
            decision.action, decision.wake_id = "human-only", wake.id
        return decision

    def _tell_human(
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
        delivery = self.waker.deliver(
            message, tmux=None, pane=None, endpoints=(), values=values, at=now, starts_turn=False
        )
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

    # --- the loop ----------------------------------------------------------

    def run(self, wait: Callable[[float], bool] | None = None, forever: bool = False) -> str:
        """Cycle until no subagent runs any more (or stopped); returns the final line."""
        pause = wait or self.stop_event.wait
        interval = self.settings.interval
        started = self.clock.monotonic()
        seen_any = False
        none_since: float | None = None
        previous: dict[str, str] = {}
        ignored: set[str] = set()
        while True:
            report = self.check()
            previous = self._log_changes(report, previous)
            ignored = self._log_not_counted(report, ignored)
            now = self.clock.monotonic()
            if report.running:
                seen_any, none_since = True, None
            elif not forever:
                if seen_any:
                    none_since = now if none_since is None else none_since
                    if now - none_since >= interval:
                        return (
                            f"tether watch: no subagent has run for {round(now - none_since)} s "
                            f"since the last one ended; watching ends."
                        )
                elif now - started >= self.settings.startup_grace:
                    return (
                        f"tether watch: no subagent appeared within {round(now - started)} s; "
                        f"watching ends."
                    )
            if pause(interval):
                return "tether watch: stopped by signal; watching ends."

    def _log_not_counted(self, report: CycleReport, before: set[str]) -> set[str]:
        """Name each agent process seen but not counted, once, with the reason."""
        now = {item.describe() for item in report.survey.not_counted}
        for line in sorted(now - before):
            self.log(f"seen, not counted: {line}")
        return now

    def _log_changes(self, report: CycleReport, previous: dict[str, str]) -> dict[str, str]:
        states = {v.subagent.key: v.state for v in report.survey.subagents}
        for key, state in states.items():
            if previous.get(key) != state:
                label = next(
                    v.subagent.label for v in report.survey.subagents if v.subagent.key == key
                )
                self.log(f"subagent {label}: {state}")
        for key in previous.keys() - states.keys():
            self.log(f"subagent {key}: gone")
        return states


def wake_action(wake: WakeRecord) -> str:
    """The decision's action for a wake just made: ``woken``, ``requested`` or ``human-only``."""
    if wake.delivered:
        return "woken"
    waiting = any(
        c.get("channel") == "harness" and c.get("ok") and not c.get("withdrawn")
        for c in wake.channels
    )
    return "requested" if waiting else "human-only"


def _untaken(wake: WakeRecord) -> str:
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
