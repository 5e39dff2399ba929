"""Is a subagent waiting for someone? Its harness's signals first, its log second.

Two sources, best first:

1. The hook events the gate records for the subagent's session. Claude Code's
   and Codex's ``PermissionRequest`` and Copilot's ``permissionRequest`` say
   outright that a permission dialog is open (with the tool's name and input).
   Claude Code's ``Notification`` and Copilot's ``notification`` say what they
   are in the ``notification_type`` the gate records: ``permission_prompt`` is
   a confirmation wait (for the tool whose call or permission request came
   right before it), ``idle_prompt`` and ``elicitation_dialog`` a wait for
   input; types that only inform (``auth_success``, ``shell_completed``,
   ``agent_completed``, ``agent_idle``, ...) are passed over. A notification
   without a type (rows an older gate wrote) or with a type tether does not
   know is read from the event before it: right after a tool call started it
   is taken for a permission prompt, otherwise for a wait for input.
2. The log: a tool call with no result after it (see ``transcript``). Open for
   ``confirm_after`` seconds or more it is reported as a confirmation wait only
   when its tool is one that asks for permission in that harness's mode
   (``permissions``: Claude Code's ``Bash`` in the default mode, never Pi's
   ``bash``); otherwise as a long-running tool ("runs a long tool (N s)").

The tool's input shown in a wait comes from the gate's record when it has one
(the input the harness asks about), else from the log.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from tether.gate.eventlog import GateEvent
from tether.watch.transcript import OpenCall, clip

WaitKind = Literal["confirmation", "input", "tool", "long-tool"]
NoticeKind = Literal["confirmation", "input", "info", "untyped"]

PERMISSION_EVENTS = frozenset({"PermissionRequest", "permissionRequest"})
NOTIFICATION_EVENTS = frozenset({"Notification", "notification"})
# notification_type values, as Claude Code's and Copilot CLI's hook references list them
PERMISSION_NOTIFICATIONS = frozenset({"permission_prompt"})
INPUT_NOTIFICATIONS = frozenset({"idle_prompt", "elicitation_dialog"})
INFO_NOTIFICATIONS = frozenset(
    {"auth_success", "shell_completed", "shell_detached_completed", "agent_completed", "agent_idle"}
)
TOOL_START_EVENTS = frozenset({"PreToolUse", "preToolUse", "tool_call", "pre_tool"})
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
        "post_agent",
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
    # "PermissionRequest", "Notification permission_prompt", … (a harness said so),
    # "log" or "hook" (inferred)
    signal: str

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
        if self.kind == "long-tool":
            return f"runs a long tool ({waited} s): {shown}"
        return f"runs {shown} ({waited} s)"


def notice_kind(event: GateEvent) -> NoticeKind:
    """What a notification's recorded type says; ``untyped`` when there is none to go by."""
    kind = event.notification_type
    if kind in PERMISSION_NOTIFICATIONS:
        return "confirmation"
    if kind in INPUT_NOTIFICATIONS:
        return "input"
    if kind in INFO_NOTIFICATIONS:
        return "info"
    return "untyped"


def show_input(raw: str | None) -> str:
    """The gate's recorded tool input as the wait shows it (one line, cut)."""
    if not raw:
        return ""
    try:
        value = json.loads(raw)
    except ValueError:
        return clip(raw)  # the gate cut a long input: shown as it is
    return clip(value)


def _pending(events: Sequence[GateEvent]) -> tuple[str | None, str | None, str | None]:
    """(tool, call id, raw input) of the permission request or tool start that comes first.

    ``events`` newest first, notifications skipped. A permission request takes
    the id and input of the same tool's start right before it where it lacks
    them; any other event ends the search.
    """
    tool = call = raw = None
    for event in events:
        if event.event in NOTIFICATION_EVENTS:
            continue
        asks = event.event in PERMISSION_EVENTS
        if not asks and event.event not in TOOL_START_EVENTS:
            break
        if tool is not None and event.tool_name not in (None, tool):
            break
        tool = tool or event.tool_name
        call = call or event.tool_use_id
        raw = raw or event.tool_input
        if not asks:
            break
    return tool, call, raw


def _informs(event: GateEvent) -> bool:
    return event.event in NOTIFICATION_EVENTS and notice_kind(event) == "info"


def from_gate(events: Sequence[GateEvent]) -> Wait | None:
    """A wait the harness signalled; ``events`` newest first."""
    events = [e for e in events if not _informs(e)]
    if not events:
        return None
    newest = events[0]
    if newest.event in PERMISSION_EVENTS:
        tool, call, raw = _pending(events)
        return Wait("confirmation", tool, show_input(raw), call, newest.at, newest.event)
    if newest.event in NOTIFICATION_EVENTS:
        kind = notice_kind(newest)
        signal = newest.event
        if newest.notification_type:
            signal = f"{newest.event} {newest.notification_type}"
        if kind == "untyped":
            before = next((e for e in events[1:] if e.event not in NOTIFICATION_EVENTS), None)
            asked = before is not None and before.event in TOOL_START_EVENTS | PERMISSION_EVENTS
            kind = "confirmation" if asked else "input"
        if kind == "confirmation":
            tool, call, raw = _pending(events[1:])
            return Wait("confirmation", tool, show_input(raw), call, newest.at, signal)
        return Wait("input", None, "", None, newest.at, signal)
    if newest.event in TOOL_START_EVENTS:
        shown = show_input(newest.tool_input)
        return Wait("tool", newest.tool_name, shown, newest.tool_use_id, newest.at, "hook")
    return None


def wait_state(
    open_call: OpenCall | None,
    events: Sequence[GateEvent],
    now: float,
    confirm_after: float,
    asks: Callable[[str | None], bool] = lambda tool: True,
) -> Wait | None:
    """Combine both sources; an explicit harness signal wins, the log adds the input.

    A call without a result for ``confirm_after`` seconds is a confirmation wait
    only when ``asks`` says its tool asks for permission (``permissions``);
    otherwise it is a long-running tool.
    """
    signalled = from_gate(events)
    if signalled is not None and signalled.explicit:
        if open_call is not None and (
            signalled.call_id in (None, open_call.call_id) or signalled.tool == open_call.tool
        ):
            return Wait(
                signalled.kind,
                signalled.tool or open_call.tool,
                signalled.input or open_call.input,
                signalled.call_id or open_call.call_id,
                signalled.since,
                signalled.signal,
            )
        return signalled
    if open_call is not None:
        kind: WaitKind = "tool"
        if now - open_call.since >= confirm_after:
            kind = "confirmation" if asks(open_call.tool) else "long-tool"
        call = open_call
        return Wait(kind, call.tool, call.input, call.call_id, call.since, "log")
    if signalled is not None:  # a tool started (hook) and nothing since
        kind = "tool"
        if now - signalled.since >= confirm_after:
            kind = "confirmation" if asks(signalled.tool) else "long-tool"
        return Wait(
            kind, signalled.tool, signalled.input, signalled.call_id, signalled.since, "hook"
        )
    return None
