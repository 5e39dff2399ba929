"""Is a subagent waiting for someone? Its harness's signals first, its log second.

Two sources, best first:

1. The hook events the gate records for the subagent's session. Claude Code's
   and Codex's ``PermissionRequest`` and Copilot's ``permissionRequest`` say
   outright that a permission dialog is open (with the tool's name).
   Claude Code's ``Notification`` and Copilot's ``notification`` carry no type in
   the gate's record: right after a tool call starts it is read as a permission
   prompt, right after the turn stopped as a wait for input.
2. The log: a tool call with no result after it (see ``transcript``). Open for
   ``confirm_after`` seconds or more it is reported as a confirmation wait —
   a hanging confirmation dialog and a very slow tool look the same here, and
   the watchdog errs on the side of telling the orchestrator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from tether.watch.gatedb import GateEvent
from tether.watch.transcript import OpenCall

WaitKind = Literal["confirmation", "input", "tool"]

PERMISSION_EVENTS = frozenset({"PermissionRequest", "permissionRequest"})
NOTIFICATION_EVENTS = frozenset({"Notification", "notification"})
TOOL_START_EVENTS = frozenset({"PreToolUse", "preToolUse", "tool_call"})
TURN_END_EVENTS = frozenset(
    {
        "Stop",
        "agentStop",
        "agent_end",
        "turn_end_text",
        "SessionEnd",
        "sessionEnd",
        "session_shutdown",
        "SubagentStop",
    }
)


@dataclass(frozen=True)
class Wait:
    """What a subagent waits on."""

    kind: WaitKind  # tool: a call is open but not yet for confirm_after seconds
    tool: str | None
    input: str
    call_id: str | None
    since: float  # epoch seconds
    signal: str  # "PermissionRequest" (a harness said so), "log" or "hook" (inferred)

    @property
    def explicit(self) -> bool:
        return self.signal not in ("log", "hook")

    def describe(self, now: float) -> str:
        waited = max(0, round(now - self.since))
        tool = self.tool or "a tool"
        shown = f"{tool} {self.input}".strip() if self.input else tool
        if self.kind == "confirmation":
            if self.explicit:
                return f"waits for confirmation of {shown} ({self.signal}, {waited} s)"
            return f"waits for confirmation: {shown} has had no result for {waited} s"
        if self.kind == "input":
            return f"waits for input ({self.signal}, {waited} s)"
        return f"runs {shown} ({waited} s)"


def _last_tool_start(events: Sequence[GateEvent]) -> GateEvent | None:
    for event in events:
        if event.event in TOOL_START_EVENTS:
            return event
        if event.event in TURN_END_EVENTS:
            return None
    return None


def from_gate(events: Sequence[GateEvent]) -> Wait | None:
    """A wait the harness signalled; ``events`` newest first."""
    if not events:
        return None
    newest = events[0]
    if newest.event in PERMISSION_EVENTS:
        start = _last_tool_start(events[1:])
        tool = newest.tool_name or (start.tool_name if start else None)
        call = newest.tool_use_id or (start.tool_use_id if start else None)
        return Wait("confirmation", tool, "", call, newest.at, newest.event)
    if newest.event in NOTIFICATION_EVENTS:
        before = next((e for e in events[1:] if e.event not in NOTIFICATION_EVENTS), None)
        if before is not None and before.event in TOOL_START_EVENTS | PERMISSION_EVENTS:
            return Wait(
                "confirmation", before.tool_name, "", before.tool_use_id, newest.at, newest.event
            )
        return Wait("input", None, "", None, newest.at, newest.event)
    if newest.event in TOOL_START_EVENTS:
        return Wait("tool", newest.tool_name, "", newest.tool_use_id, newest.at, "hook")
    return None


def wait_state(
    open_call: OpenCall | None,
    events: Sequence[GateEvent],
    now: float,
    confirm_after: float,
) -> Wait | None:
    """Combine both sources; an explicit harness signal wins, the log adds the input."""
    signalled = from_gate(events)
    if signalled is not None and signalled.explicit:
        if open_call is not None and (
            signalled.call_id in (None, open_call.call_id) or signalled.tool == open_call.tool
        ):
            return Wait(
                signalled.kind,
                signalled.tool or open_call.tool,
                open_call.input,
                signalled.call_id or open_call.call_id,
                signalled.since,
                signalled.signal,
            )
        return signalled
    if open_call is not None:
        kind: WaitKind = "confirmation" if now - open_call.since >= confirm_after else "tool"
        call = open_call
        return Wait(kind, call.tool, call.input, call.call_id, call.since, "log")
    if signalled is not None:  # a tool started (hook) and nothing since
        kind = "confirmation" if now - signalled.since >= confirm_after else "tool"
        return Wait(kind, signalled.tool, "", signalled.call_id, signalled.since, "hook")
    return None
