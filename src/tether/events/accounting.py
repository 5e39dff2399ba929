"""Pure counting: a fold of events into a :class:`Ledger`.

The same code counts live in the supervisor, offline over a transcript
(``tether events count``) and in tests. Memory is bounded by the number of tool
calls still open, never by the length of the stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from tether.events.model import (
    AssistantText,
    Event,
    HarnessWarning,
    MalformedLine,
    ModelRequested,
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
    assistant_texts: int = 0
    plan: tuple[TodoItem, ...] = ()
    events: int = 0
    # model requests the harness said it sent (only some print it: ModelRequested)
    model_requests: int = 0
    # steps and requests the stream showed only after tether had stopped the agent:
    # work already under way when the stop landed (set by the supervisor's drain)
    steps_after_stop: int = 0
    requests_after_stop: int = 0

    @property
    def model_work(self) -> int:
        """Model calls begun, by the larger of steps seen and requests announced,
        the ones shown after the stop included."""
        return max(
            self.iterations + self.steps_after_stop,
            self.model_requests + self.requests_after_stop,
        )

    # how ``iterations`` was obtained: "stream" (exact), "session_file" (exact,
    # from the harness's own log) or "bound" (the stream alone gives an upper bound)
    iteration_source: str = "stream"
    _last_step_id: str | None = field(default=None, repr=False)
    _step_open: bool = field(default=False, repr=False)
    _usage_step_tokens: TokenUsage = field(default_factory=TokenUsage, repr=False)
    _usage_message_id: str | None = field(default=None, repr=False)
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


def _tool_call(ledger: Ledger, event: ToolCallStarted) -> None:
    if event.call_id not in ledger.open_calls:
        ledger.tool_calls += 1
        ledger.open_calls[event.call_id] = OpenCall(event.call_id, event.name, event.input)


def _tool_result(ledger: Ledger, event: ToolResult) -> None:
    # A result for a call never seen starting still happened: it counts, so a
    # stream that begins mid-run is not under-reported.
    ledger.open_calls.pop(event.call_id, None)
    ledger.tool_results += 1
    if event.is_error:
        ledger.tool_errors += 1


def _step_started(ledger: Ledger, event: StepStarted) -> None:
    if event.message_id is None or event.message_id != ledger._last_step_id:
        ledger.iterations += 1
        ledger._last_step_id = event.message_id
    ledger._step_open = True


def _step_ended(ledger: Ledger, event: StepEnded) -> None:
    ledger._step_open = False


def _assistant_text(ledger: Ledger, event: AssistantText) -> None:
    if event.text:
        ledger.assistant_texts += 1
        ledger.last_assistant_text = event.text


def _session(ledger: Ledger, event: SessionStarted) -> None:
    if ledger.session_id is None:
        ledger.session_id = event.session_id


def _run_ended(ledger: Ledger, event: RunEnded) -> None:
    ledger.final_status = event.status
    ledger.stop_reason = event.stop_reason
    if event.message:
        ledger.final_message = event.message


def _malformed(ledger: Ledger, event: MalformedLine) -> None:
    ledger.malformed_lines += 1


def _unknown(ledger: Ledger, event: UnknownLine) -> None:
    ledger.unknown_lines += 1


def _plan(ledger: Ledger, event: PlanUpdated) -> None:
    ledger.plan = event.items


def _permission_requested(ledger: Ledger, event: PermissionRequested) -> None:
    ledger.permission_requests += 1


def _permission_denied(ledger: Ledger, event: PermissionDenied) -> None:
    ledger.permission_denials += 1


def _warning(ledger: Ledger, event: HarnessWarning) -> None:
    ledger.warnings += 1


def _model_requested(ledger: Ledger, event: ModelRequested) -> None:
    ledger.model_requests += 1


# One handler per event class: a dict lookup instead of a chain of isinstance
# checks, since this runs for every event of every live run.
_HANDLERS: dict[type[Event], Callable[[Ledger, Any], None]] = {
    ToolCallStarted: _tool_call,
    ToolResult: _tool_result,
    StepStarted: _step_started,
    StepEnded: _step_ended,
    AssistantText: _assistant_text,
    SessionStarted: _session,
    RunEnded: _run_ended,
    MalformedLine: _malformed,
    UnknownLine: _unknown,
    PlanUpdated: _plan,
    PermissionRequested: _permission_requested,
    PermissionDenied: _permission_denied,
    HarnessWarning: _warning,
    ModelRequested: _model_requested,
}


def apply(ledger: Ledger, event: Event) -> Ledger:
    """Fold one event into ``ledger`` (in place, for speed) and return it."""
    ledger.events += 1
    handler = _HANDLERS.get(event.__class__)
    if handler is not None:
        handler(ledger, event)
    elif isinstance(event, Usage):
        _add_usage(ledger, event)
    else:
        for cls, fallback in _HANDLERS.items():
            if isinstance(event, cls):
                fallback(ledger, event)
                break
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
    if event.message_id is not None:
        last = ledger._usage_step_tokens
        if event.message_id == ledger._usage_message_id:
            # the same message again: its newer figures replace the older ones
            u.input_tokens -= last.input_tokens
            u.output_tokens -= last.output_tokens
            u.cache_read_tokens -= last.cache_read_tokens
            u.cache_write_tokens -= last.cache_write_tokens
        ledger._usage_message_id = event.message_id
        ledger._usage_step_tokens = TokenUsage(
            event.input_tokens,
            event.output_tokens,
            event.cache_read_tokens,
            event.cache_write_tokens,
        )
    u.input_tokens += event.input_tokens
    u.output_tokens += event.output_tokens
    u.cache_read_tokens += event.cache_read_tokens
    u.cache_write_tokens += event.cache_write_tokens
    if event.cost_usd is not None:
        u.cost_usd = (u.cost_usd or 0.0) + event.cost_usd


def stream_upper_bound(ledger: Ledger) -> int:
    """At most this many model steps happened, judged from tool calls and texts alone.

    Each model step produces at least one tool call or one assistant text, so
    for a stream without a per-step event (Codex) their sum bounds the steps.
    """
    return ledger.tool_calls + ledger.assistant_texts


def count(events: Iterable[Event], ledger: Ledger | None = None) -> Ledger:
    """Fold a whole event stream."""
    ledger = ledger if ledger is not None else Ledger()
    for event in events:
        apply(ledger, event)
    return ledger
