"""The watchdog: while a subagent runs, the orchestrator is not idle.

Each cycle (every ``interval`` seconds) looks at the subagents and the
registered orchestrators (``survey``) and, for every orchestrator that is
alive, has shown no activity for ``idle_threshold`` seconds, has no fresh busy
signal and was not woken in the last ``wake_min_interval`` seconds, while at
least one subagent runs: wakes it (``wake``) and records the wake. With no
orchestrator registered, the human is told instead, at the same rate.

It ends by itself: one interval after it noticed that no subagent runs any more
(or, when it never saw one, after ``startup_grace``), unless told to run on.

Sending a wake (its slot, delivery, record, the held status message) lives in
:mod:`tether.watch.sender`; what a cycle reports in :mod:`tether.watch.cycle_report`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from tether.clock import Clock, SystemClock, to_iso
from tether.config.schema import WatchSettings
from tether.watch.acks import settle
from tether.watch.activity import orchestrator_activity
from tether.watch.cycle_report import CycleReport, Decision
from tether.watch.registry import bind_session
from tether.watch.sender import WakeSender, untaken, wake_action
from tether.watch.survey import OrchestratorView, Surveyor
from tether.watch.tmux import Tmux
from tether.watch.wake import SubagentView, Waker, running_phrase


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
        waker = Waker(
            self.home,
            prefer=settings.wake_prefer,
            command=settings.wake_command,
            notify=settings.notify,
            notify_command=settings.notify_command,
            log=lambda line: self.log(f"wake: {line}"),
        )
        self.sender = WakeSender(settings, conn, waker, self.clock, lambda line: self.log(line))
        self.stop_event = threading.Event()

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
            view, gate=self.surveyor.gate, now=now, busy_veto_max=self.settings.busy_veto_max
        )
        decision.idle_seconds = max(0.0, now - activity.last)
        decision.activity_source = activity.source
        self.sender.keep_status(orch.id, activity.last if view.alive else None)
        unanswered = settle(self.conn, self.home, orch.id, now, self.settings.ack_timeout)
        if unanswered is not None:
            self.log(f"wake #{unanswered.id}: {untaken(unanswered)}")
        if not running:
            return decision
        if not view.alive:
            # like no orchestrator at all: nobody will start a turn, so the human is told
            decision.action, decision.note = "orchestrator-gone", view.gone
            head = (
                f"The registered orchestrator {orch.name} is gone ({view.gone}) while "
                f"{running_phrase(len(running))}."
            )
            wake = self.sender.tell_human(
                orch.id, "orchestrator-gone", head, running, now, orch.name
            )
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
            wake = self.sender.fall_back(view, unanswered, now, activity.own_permission)
            decision.note = untaken(unanswered)
        else:
            found = self.sender.wake(
                view, running, now, decision.idle_seconds, activity.own_permission
            )
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

    def _human_only(self, running: list[SubagentView], now: float, report: CycleReport) -> Decision:
        decision = Decision(None, "(none registered)", "rate-limited")
        head = f"No orchestrator is registered while {running_phrase(len(running))}."
        wake = self.sender.tell_human(None, "no-orchestrator", head, running, now)
        if wake is not None:
            report.wakes.append(wake)
            decision.action, decision.wake_id = "human-only", wake.id
        return decision

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
                sub = next(v.subagent for v in report.survey.subagents if v.subagent.key == key)
                how = f" ({sub.end_text()})" if state in ("ended", "killed") else ""
                self.log(f"subagent {sub.label}: {state}{how}")
        for key in previous.keys() - states.keys():
            if previous[key] not in ("ended", "killed"):
                self.log(f"subagent {key}: gone (no longer seen; how it ended cannot be known)")
        return states
