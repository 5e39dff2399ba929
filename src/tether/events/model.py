"""Harness-neutral events.

Every adapter turns one line of its harness's stream into zero or more of these.
They are frozen msgspec structs: cheap to build, hashable, and encodable as JSON
with their ``kind`` tag (``msgspec.json.encode(event)``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec

RunStatus = Literal["success", "failure", "cancelled", "unknown"]


class Event(msgspec.Struct, frozen=True, tag_field="kind"):
    kind: ClassVar[str]


class SessionStarted(Event, frozen=True, tag="session_started"):
    kind: ClassVar[Literal["session_started"]] = "session_started"
    session_id: str


class StepStarted(Event, frozen=True, tag="step_started"):
    """A model step became visible. ``message_id`` is the model's own response id.

    Several ``StepStarted`` in a row with the same ``message_id`` are one step
    (Claude Code prints one line per content block of a response).
    """

    kind: ClassVar[Literal["step_started"]] = "step_started"
    message_id: str | None = None


class StepEnded(Event, frozen=True, tag="step_ended"):
    kind: ClassVar[Literal["step_ended"]] = "step_ended"
    message_id: str | None = None
    stop_reason: str | None = None


class AssistantText(Event, frozen=True, tag="assistant_text"):
    kind: ClassVar[Literal["assistant_text"]] = "assistant_text"
    text: str
    message_id: str | None = None


class ToolCallStarted(Event, frozen=True, tag="tool_call_started"):
    kind: ClassVar[Literal["tool_call_started"]] = "tool_call_started"
    call_id: str
    name: str
    input: Any = None
    message_id: str | None = None


class ToolResult(Event, frozen=True, tag="tool_result"):
    kind: ClassVar[Literal["tool_result"]] = "tool_result"
    call_id: str
    is_error: bool = False
    output_size: int = 0


class PermissionRequested(Event, frozen=True, tag="permission_requested"):
    kind: ClassVar[Literal["permission_requested"]] = "permission_requested"
    tool_name: str | None = None
    call_id: str | None = None


class PermissionDenied(Event, frozen=True, tag="permission_denied"):
    kind: ClassVar[Literal["permission_denied"]] = "permission_denied"
    tool_name: str | None = None
    call_id: str | None = None
    reason: str | None = None


class Usage(Event, frozen=True, tag="usage"):
    """Token usage. ``cumulative`` marks a run-wide total that replaces, not adds."""

    kind: ClassVar[Literal["usage"]] = "usage"
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    cumulative: bool = False
    # the model message these figures belong to, where one message's usage is
    # repeated on several lines (Claude Code): the latest figures of a message count
    message_id: str | None = None


class TodoItem(msgspec.Struct, frozen=True):
    text: str
    done: bool = False


class PlanUpdated(Event, frozen=True, tag="plan_updated"):
    """The agent's own todo list or plan (Claude Code TodoWrite, Codex todo_list)."""

    kind: ClassVar[Literal["plan_updated"]] = "plan_updated"
    items: tuple[TodoItem, ...] = ()


class ModelRequested(Event, frozen=True, tag="model_requested"):
    """The harness sent a model request (before any answer came back).

    Only harnesses that print one say so (Copilot's ``model.call_start``); it lets
    a stop show a request already under way that no step of the stream shows yet.
    """

    kind: ClassVar[Literal["model_requested"]] = "model_requested"
    request_id: str | None = None


class HarnessWarning(Event, frozen=True, tag="harness_warning"):
    """A non-fatal notice from the harness (e.g. Codex's ``error`` *item*)."""

    kind: ClassVar[Literal["harness_warning"]] = "harness_warning"
    message: str


class RunEnded(Event, frozen=True, tag="run_ended"):
    kind: ClassVar[Literal["run_ended"]] = "run_ended"
    status: RunStatus
    stop_reason: str | None = None
    message: str | None = None


class MalformedLine(Event, frozen=True, tag="malformed_line"):
    """A line that is not valid JSON (or too long to keep). ``raw`` is cut to 2 KiB."""

    kind: ClassVar[Literal["malformed_line"]] = "malformed_line"
    raw: str
    error: str = ""


class UnknownLine(Event, frozen=True, tag="unknown_line"):
    """Valid JSON of a type the adapter does not know. ``raw`` is cut to 2 KiB."""

    kind: ClassVar[Literal["unknown_line"]] = "unknown_line"
    raw: str
    type: str | None = None


AnyEvent = (
    SessionStarted
    | StepStarted
    | StepEnded
    | AssistantText
    | ToolCallStarted
    | ToolResult
    | PermissionRequested
    | PermissionDenied
    | Usage
    | PlanUpdated
    | ModelRequested
    | HarnessWarning
    | RunEnded
    | MalformedLine
    | UnknownLine
)

RAW_KEEP = 2048


def clip(raw: bytes | str) -> str:
    """The recorded excerpt of a bad line: at most ``RAW_KEEP`` characters."""
    if isinstance(raw, bytes):
        raw = raw[: RAW_KEEP * 4].decode("utf-8", "replace")
    return raw[:RAW_KEEP]


def malformed(raw: bytes | str, error: str = "not JSON") -> MalformedLine:
    return MalformedLine(raw=clip(raw), error=error)


def unknown(raw: bytes | str, type_: str | None) -> UnknownLine:
    return UnknownLine(raw=clip(raw), type=type_)
