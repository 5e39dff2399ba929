"""``tether subagents wait``: the orchestrator's own polling call.

It blocks until a subagent changes state — starts, begins to wait for a
confirmation or for input, or ends — or until the timeout passes, then returns
every subagent's state. The call counts as activity of the orchestrator it is
made from — when it starts, every few seconds while it waits (a third of the
idle threshold, at most ``TOUCH_EVERY_MAX``), and when it returns — so an
orchestrator blocked in it is never taken for idle, whatever ``--timeout`` is.
It binds the harness's session variable, when the call inherited one, to that
orchestrator, so the gate's hook events of that session count as its activity
from then on.

The daemon stays the safety net for the moment the orchestrator forgets to call
it again.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tether.clock import Clock, SystemClock
from tether.core.session_identity import HARNESS_VARS
from tether.watch.registry import Orchestrator, bind_session, list_orchestrators, touch
from tether.watch.survey import Survey, Surveyor, find_caller

SOURCE = "subagents wait"
TOUCH_EVERY_MAX = 5.0
TOUCH_EVERY_MIN = 0.1


def touch_every(idle_threshold: float) -> float:
    """How often a waiting call counts as activity: well inside the idle threshold."""
    return max(TOUCH_EVERY_MIN, min(TOUCH_EVERY_MAX, idle_threshold / 3))


@dataclass
class WaitOutcome:
    changed: bool
    timed_out: bool
    survey: Survey
    orchestrator: Orchestrator | None
    changes: list[dict[str, str | None]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """What ``subagents wait --json`` prints: the change, and every subagent's state."""
        from tether.watch.cycle_report import subagent_dict

        return {
            "changed": self.changed,
            "timed_out": self.timed_out,
            "changes": self.changes,
            "running": len(self.survey.running),
            "orchestrator": None if self.orchestrator is None else self.orchestrator.id,
            "subagents": [subagent_dict(v) for v in self.survey.subagents],
            "not_counted": [n.as_dict() for n in self.survey.not_counted],
        }


def _states(survey: Survey) -> dict[str, str]:
    return {v.subagent.key: v.state for v in survey.subagents}


def _diff(before: dict[str, str], after: dict[str, str]) -> list[dict[str, str | None]]:
    changes: list[dict[str, str | None]] = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if new is None and old in ("ended", "killed"):
            continue  # an ended pane that closed is no news
        if old is None and new == "starting":
            continue  # a pane whose agent has not started yet: its start will be the news
        changes.append({"key": key, "from": old, "to": new or "gone"})
    return changes


def identify(
    surveyor: Surveyor,
    conn: sqlite3.Connection,
    survey: Survey,
    env: Mapping[str, str],
    pid: int,
    clock: Clock,
) -> Orchestrator | None:
    """Find the calling orchestrator, touch it, and bind its session variable."""
    caller = find_caller(
        list_orchestrators(conn),
        survey.table,
        survey.panes,
        pid=pid,
        tmux_pane=env.get("TMUX_PANE"),
    )
    if caller is None:
        return None
    # the session first: whoever sees the touch sees the binding too
    for harness, names in HARNESS_VARS.items():
        for name in names:
            value = env.get(name)
            if value:
                bind_session(
                    conn, value, caller.id, harness=harness, source=f"env:{name}", clock=clock
                )
    touch(conn, caller.id, clock.now().timestamp(), SOURCE)
    return caller


def wait_for_change(
    surveyor: Surveyor,
    conn: sqlite3.Connection,
    *,
    timeout: float,
    poll: float = 0.5,
    clock: Clock | None = None,
) -> WaitOutcome:
    """Until a subagent's state changes, or ``timeout``; the caller (an orchestrator,
    found by its environment and process tree) counts as active while it waits."""
    clock = clock or SystemClock()
    env = os.environ
    every = touch_every(surveyor.settings.idle_threshold)
    start = clock.monotonic()
    survey = surveyor.look(conn, clock.now().timestamp())
    caller = identify(surveyor, conn, survey, env, os.getpid(), clock)
    touched = clock.monotonic()
    before = _states(survey)
    changes: list[dict[str, str | None]] = []
    timed_out = False
    while True:
        remaining = timeout - (clock.monotonic() - start)
        if remaining <= 0:
            timed_out = True
            break
        pause = min(poll, remaining)
        if caller is not None:
            pause = min(pause, max(every - (clock.monotonic() - touched), 0.0))
        time.sleep(pause)
        if caller is not None and clock.monotonic() - touched >= every:
            touch(conn, caller.id, clock.now().timestamp(), SOURCE)
            touched = clock.monotonic()
        survey = surveyor.look(conn, clock.now().timestamp())
        changes = _diff(before, _states(survey))
        if changes:
            break
    if caller is not None:
        touch(conn, caller.id, clock.now().timestamp(), SOURCE)
    return WaitOutcome(bool(changes), timed_out, survey, caller, changes)
