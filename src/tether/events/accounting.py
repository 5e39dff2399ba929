"""Pure counting: a fold of events into a :class:`Ledger`.

The same code counts live in the supervisor, offline over a transcript
(``tether events count``) and in tests. Memory is bounded by the number of tool
calls still open, never by the length of the stream.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from tether.events.model import (
    AssistantText,
    Event,
    HarnessWarning,
    MalformedLine,
    PermissionDenied,
    PermissionRequested,
    PlanUpdated,
    RunEnded,
    SessionStarted,
    StepEnded,
    StepStarted,
    TodoItem,
    ToolCallStarted,
    ToolResult,
    UnknownLine,
    Usage,
)


@dataclass
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None


@dataclass
class OpenCall:
    call_id: str
    name: str
    input: Any


@dataclass
class Ledger:
    iterations: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    tool_errors: int = 0
    open_calls: dict[str, OpenCall] = field(default_factory=dict)
    usage: TokenUsage = field(default_factory=TokenUsage)
    session_id: str | None = None
    final_status: str | None = None
    stop_reason: str | None = None
    final_message: str | None = None
    malformed_lines: int = 0
    unknown_lines: int = 0
    warnings: int = 0
    permission_requests: int = 0
    permission_denials: int = 0
    last_assistant_text: str | None = None
    plan: tuple[TodoItem, ...] = ()
    events: int = 0
    # how ``iterations`` was obtained: "stream" (exact), "session_file" (exact,
    # from the harness's own log) or "bound" (the stream alone gives an upper bound)
    iteration_source: str = "stream"
    _last_step_id: str | None = field(default=None, repr=False)
    _step_open: bool = field(default=False, repr=False)
    _usage_step_tokens: TokenUsage = field(default_factory=TokenUsage, repr=False)
    _cumulative_seen: bool = field(default=False, repr=False)

    @property
    def open_tool_calls(self) -> int:
        return len(self.open_calls)

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON shape of ``tether events count --json``."""
        usage = asdict(self.usage)
        return {
            "iterations": self.iterations,
            "iterations_exact": self.iteration_source != "bound",
            "iteration_source": self.iteration_source,
            "tool_calls": self.tool_calls,
            "tool_results": self.tool_results,
            "tool_errors": self.tool_errors,
            "open_tool_calls": self.open_tool_calls,
            "open_calls": [
                {"call_id": c.call_id, "name": c.name} for c in self.open_calls.values()
            ],
            "session_id": self.session_id,
            "final_status": self.final_status,
            "stop_reason": self.stop_reason,
            "usage": usage,
            "malformed_lines": self.malformed_lines,
            "unknown_lines": self.unknown_lines,
            "warnings": self.warnings,
            "permission_requests": self.permission_requests,
            "permission_denials": self.permission_denials,
            "events": self.events,
        }


def apply(ledger: Ledger, event: Event) -> Ledger:
    """Fold one event into ``ledger`` (in place, for speed) and return it."""
    ledger.events += 1
    if isinstance(event, ToolCallStarted):
        if event.call_id not in ledger.open_calls:
            ledger.tool_calls += 1
            ledger.open_calls[event.call_id] = OpenCall(event.call_id, event.name, event.input)
    elif isinstance(event, ToolResult):
        if ledger.open_calls.pop(event.call_id, None) is not None:
            ledger.tool_results += 1
            if event.is_error:
                ledger.tool_errors += 1
        else:
            # A result for a call we never saw start still happened; count it so a
            # stream that begins mid-run is not under-reported.
            ledger.tool_results += 1
            if event.is_error:
                ledger.tool_errors += 1
    elif isinstance(event, StepStarted):
        if event.message_id is None or event.message_id != ledger._last_step_id:
            ledger.iterations += 1
            ledger._last_step_id = event.message_id
        ledger._step_open = True
    elif isinstance(event, StepEnded):
        ledger._step_open = False
    elif isinstance(event, AssistantText):
        if event.text:
            ledger.last_assistant_text = event.text
    elif isinstance(event, SessionStarted):
        if ledger.session_id is None:
            ledger.session_id = event.session_id
    elif isinstance(event, Usage):
        _add_usage(ledger, event)
    elif isinstance(event, RunEnded):
        ledger.final_status = event.status
        ledger.stop_reason = event.stop_reason
        if event.message:
            ledger.final_message = event.message
    elif isinstance(event, MalformedLine):
        ledger.malformed_lines += 1
    elif isinstance(event, UnknownLine):
        ledger.unknown_lines += 1
    elif isinstance(event, PlanUpdated):
        ledger.plan = event.items
    elif isinstance(event, PermissionRequested):
        ledger.permission_requests += 1
    elif isinstance(event, PermissionDenied):
        ledger.permission_denials += 1
    elif isinstance(event, HarnessWarning):
        ledger.warnings += 1
    return ledger


def _add_usage(ledger: Ledger, event: Usage) -> None:
    u = ledger.usage
    if event.cumulative:
        # A run-wide total (Claude Code ``result``, Codex ``turn.completed``) replaces
        # the per-step snapshots, which are not reliable totals.
        if not ledger._cumulative_seen:
            ledger._cumulative_seen = True
            u.input_tokens = u.output_tokens = u.cache_read_tokens = u.cache_write_tokens = 0
            u.cost_usd = None
        u.input_tokens += event.input_tokens
        u.output_tokens += event.output_tokens
        u.cache_read_tokens += event.cache_read_tokens
        u.cache_write_tokens += event.cache_write_tokens
        if event.cost_usd is not None:
            u.cost_usd = (u.cost_usd or 0.0) + event.cost_usd
        return
    if ledger._cumulative_seen:
        return
    u.input_tokens += event.input_tokens
    u.output_tokens += event.output_tokens
    u.cache_read_tokens += event.cache_read_tokens
    u.cache_write_tokens += event.cache_write_tokens
    if event.cost_usd is not None:
        u.cost_usd = (u.cost_usd or 0.0) + event.cost_usd


def count(events: Iterable[Event], ledger: Ledger | None = None) -> Ledger:
    """Fold a whole event stream."""
    ledger = ledger if ledger is not None else Ledger()
    for event in events:
        apply(ledger, event)
    return ledger
