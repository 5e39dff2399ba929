"""Each harness's hook contract: what its payload says, and how to answer it.

Payloads come in, one JSON object on stdin. Answers go out in the harness's
own shape. An allowed call gets no output at all (exit 0): every harness reads
that as "no objection", and the harness's own permission rules still apply. An
explicit ``allow`` would also approve the call past the user's permission
prompts, which a counter has no business doing.
"""

from __future__ import annotations

import json

# typing costs ~3 ms of imports on every tool call; annotations need it only for mypy.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HARNESSES = ("claude-code", "codex", "copilot", "pi", "vibe")

# Events that are tool calls (counted and decided) and events that close one
# model step with tools (counted as an iteration).
TOOL_EVENTS: dict[str, frozenset[str]] = {
    "claude-code": frozenset({"PreToolUse"}),
    "codex": frozenset({"PreToolUse"}),
    "copilot": frozenset({"preToolUse", "PreToolUse"}),
    "pi": frozenset({"tool_call"}),
    "vibe": frozenset({"pre_tool"}),
}
BATCH_EVENTS: dict[str, frozenset[str]] = {
    "claude-code": frozenset({"PostToolBatch"}),
    "codex": frozenset(),
    "copilot": frozenset(),
    "pi": frozenset(),
    "vibe": frozenset(),
}

# Events fired before each model request: the requests before it were iterations
# with tools, and the budget is checked before the next one starts.
MODEL_CALL_EVENTS: dict[str, frozenset[str]] = {
    "claude-code": frozenset(),
    "codex": frozenset(),
    "copilot": frozenset(),
    "pi": frozenset({"model_request"}),
    "vibe": frozenset(),
}

KIND_TOOL = "tool"
KIND_BATCH = "batch"
KIND_MODEL_CALL = "model_call"
KIND_OTHER = "other"


class PayloadError(ValueError):
    """The payload is not what the harness's contract promises."""


# Besides the tool calls, permission requests keep the tool's input in the
# event log (the watchdog names it in its wake message), notifications their text.
PERMISSION_EVENTS = frozenset({"PermissionRequest", "permissionRequest"})
NOTIFICATION_EVENTS = frozenset({"Notification", "notification"})

# The event log keeps a tool's input as JSON cut to this many characters, and a
# notification's text cut to MESSAGE_MAX.
TOOL_INPUT_MAX = 2048
MESSAGE_MAX = 300
_NO_DETAIL = (None, None, None, None, None)


class HookCall:
    """The parts of a hook payload the gate needs.

    ``detail`` is what the event log keeps for the watchdog besides:
    (notification_type, message, tool_input, cwd, transcript_path).
    """

    __slots__ = ("batch_key", "detail", "event", "kind", "session_id", "tool_name", "tool_use_id")

    def __init__(
        self,
        event: str,
        kind: str,
        session_id: str | None,
        tool_name: str | None,
        tool_use_id: str | None,
        batch_key: str | None,
        detail: tuple[str | None, ...] = _NO_DETAIL,
    ) -> None:
        self.event = event
        self.kind = kind
        self.session_id = session_id
        self.tool_name = tool_name
        self.tool_use_id = tool_use_id
        self.batch_key = batch_key
        self.detail = detail


def _text(payload: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = payload.get(name)
        if value is None:
            continue
        if isinstance(value, str):
            return value or None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        raise PayloadError(f"field {name!r} is {type(value).__name__}, not a string")
    return None


def _optional(payload: dict[str, Any], *names: str) -> str | None:
    """A field the gate only records: anything but a non-empty string is left out."""
    for name in names:
        value = payload.get(name)
        if isinstance(value, str) and value:
            return value
    return None


ELLIPSIS = "\u2026"


def _clipped_json(value: Any, limit: int) -> str:
    """``json.dumps(value, ensure_ascii=False)``, cut to ``limit`` characters (ending in …)."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + ELLIPSIS


def _detail(payload: dict[str, Any], event: str, with_input: bool) -> tuple[str | None, ...]:
    kind = _optional(payload, "notification_type", "notificationType")
    message = _optional(payload, "message") if kind or event in NOTIFICATION_EVENTS else None
    if message is not None and len(message) > MESSAGE_MAX:
        message = message[: MESSAGE_MAX - 1] + ELLIPSIS
    tool_input = None
    if with_input:
        for name in ("tool_input", "toolInput", "toolArgs"):
            value = payload.get(name)
            if value is not None:
                tool_input = _clipped_json(value, TOOL_INPUT_MAX)
                break
    cwd = _optional(payload, "cwd")
    transcript = _optional(payload, "transcript_path", "transcriptPath")
    return (kind, message, tool_input, cwd, transcript)


def _batch_key(payload: dict[str, Any]) -> str | None:
    explicit = _text(payload, "batch_id", "turn_key")
    if explicit:
        return explicit
    calls = payload.get("tool_calls")
    if not isinstance(calls, list):
        return None
    ids: list[str] = []
    for call in calls:
        value = call.get("tool_use_id") if isinstance(call, dict) else None
        if isinstance(value, str) and value:
            ids.append(value)
    return "batch:" + ",".join(ids) if ids else None


def parse(harness: str, payload: object, event_override: str | None = None) -> HookCall:
    """Read a decoded payload; raises PayloadError when a needed field is missing."""
    if not isinstance(payload, dict):
        raise PayloadError(f"the payload is a JSON {type(payload).__name__}, not an object")
    event = event_override or _text(payload, "hook_event_name", "hookEventName", "event")
    if not event:
        raise PayloadError("no hook_event_name in the payload (and no --event given)")
    session = _text(payload, "session_id", "sessionId")
    tool_name = _text(payload, "tool_name", "toolName")
    tool_use_id = _text(payload, "tool_use_id", "toolUseId", "toolCallId", "tool_call_id")
    if event in TOOL_EVENTS[harness]:
        if not tool_name:
            raise PayloadError(f"{event} payload has no tool name")
        if not tool_use_id:
            tool_use_id = call_fingerprint(payload, tool_name)
        detail = _detail(payload, event, with_input=True)
        return HookCall(event, KIND_TOOL, session, tool_name, tool_use_id, None, detail)
    detail = _detail(payload, event, with_input=event in PERMISSION_EVENTS)
    if event in BATCH_EVENTS[harness]:
        return HookCall(event, KIND_BATCH, session, None, None, _batch_key(payload), detail)
    if event in MODEL_CALL_EVENTS[harness]:
        return HookCall(event, KIND_MODEL_CALL, session, None, None, None, detail)
    return HookCall(event, KIND_OTHER, session, tool_name, tool_use_id, None, detail)


def _instant(value: object) -> str | None:
    """A payload's timestamp as UTC ISO text to the millisecond: Copilot sends epoch
    milliseconds in its own hooks and ISO text in the Claude Code style ones."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        import time

        seconds, millis = divmod(value, 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"
    if isinstance(value, str) and len(value) >= 20 and value[10] == "T":
        return value
    return None


def call_fingerprint(payload: dict[str, Any], tool_name: str) -> str | None:
    """An id for a tool call whose payload carries none (Copilot CLI).

    Copilot runs every hook file it reads for the same call at the same
    instant: its own ``preToolUse`` hooks and the ``PreToolUse`` hooks of
    ``.claude/settings.json``, with the same timestamp, tool and input but in
    two shapes. This id is equal for all of them, so the call is counted once
    however many of those files hold the gate.
    """
    instant = _instant(payload.get("timestamp"))
    if instant is None:
        return None
    args = None
    for name in ("toolArgs", "tool_input", "toolInput"):
        if name in payload:
            args = payload[name]
            break
    import zlib

    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"), default=repr)
    digest = zlib.crc32(canonical.encode("utf-8", "replace"))
    return f"call@{instant}:{tool_name.lower()}:{digest:08x}"


def _dump(answer: dict[str, Any]) -> str:
    return json.dumps(answer)


def deny(harness: str, message: str) -> str:
    """Refuse a tool call."""
    if harness in ("claude-code", "codex"):
        return _dump(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": message,
                }
            }
        )
    if harness == "copilot":
        return _dump({"permissionDecision": "deny", "permissionDecisionReason": message})
    if harness == "vibe":
        # Vibe's pre_tool answer; the reason becomes the tool error the model reads.
        return _dump({"decision": "deny", "reason": message})
    return _dump({"block": True, "reason": message})


def stop(harness: str, message: str) -> str | None:
    """End the agent's loop before its next model call (where the harness can)."""
    if harness == "claude-code":
        return _dump({"continue": False, "stopReason": message})
    if harness == "pi":
        return _dump({"stop": True, "reason": message})
    return None


def warning(harness: str, message: str) -> str | None:
    """Let the call through, showing the user a warning where the harness can."""
    if harness in ("claude-code", "codex"):
        return _dump({"systemMessage": f"tether-gate: {message}"})
    if harness == "pi":
        return _dump({"warning": f"tether-gate: {message}"})
    if harness == "vibe":
        return _dump({"system_message": f"tether-gate: {message}"})
    return None
