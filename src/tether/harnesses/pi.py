"""Pi: ``pi --mode json``.

The first line is the session header (``{"type":"session","id":…}``). One model
call is one ``message_end`` whose ``message.role`` is ``assistant`` (it carries
``responseId``, ``stopReason`` and that call's ``usage``); tools run between
``tool_execution_start`` and ``tool_execution_end``; ``agent_end`` ends the run.

``message_update`` lines repeat the whole partial message on every token
delta and make up most of the stream, so the line envelope keeps ``message`` as
undecoded :class:`msgspec.Raw` and only ``message_end`` decodes it.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from tether.core.errors import ConfigError
from tether.events.model import (
    AnyEvent,
    AssistantText,
    HarnessWarning,
    RunEnded,
    RunStatus,
    SessionStarted,
    StepEnded,
    StepStarted,
    ToolCallStarted,
    ToolResult,
    Usage,
    unknown,
)
from tether.harnesses.base import IterationSource, RunSpec, ToolAllowance, decode_line
from tether.harnesses.pi_models import agent_dir, require_prices


def allow_args(allow: ToolAllowance) -> list[str]:
    """Pi's own allow-list for ``allow``: ``--tools`` keeps only ``bash`` (and ``write``).

    Pi's allow-list names whole tools: it cannot narrow ``bash`` to some commands
    nor ``write`` to one file; the gate's extension does that.
    """
    return ["--tools", "bash,write" if allow.write_file is not None else "bash"]


class _Line(msgspec.Struct):
    type: str | None = None
    # session header
    id: str | None = None
    # message_* / turn_end: decoded on demand only
    message: msgspec.Raw = msgspec.Raw(b"")
    # tool_execution_*
    toolCallId: str | None = None  # noqa: N815 - pi's own field name
    toolName: str | None = None  # noqa: N815
    args: Any = None
    result: msgspec.Raw = msgspec.Raw(b"")
    isError: bool | None = None  # noqa: N815
    # agent_end
    messages: msgspec.Raw = msgspec.Raw(b"")
    # auto_retry_start
    errorMessage: str | None = None  # noqa: N815


class _Cost(msgspec.Struct):
    total: float | None = None


class _Usage(msgspec.Struct):
    input: int = 0
    output: int = 0
    cacheRead: int = 0  # noqa: N815
    cacheWrite: int = 0  # noqa: N815
    cost: _Cost | None = None


class _Block(msgspec.Struct):
    type: str = ""
    text: str | None = None


class _Message(msgspec.Struct):
    role: str | None = None
    content: list[_Block] | str | None = None
    responseId: str | None = None  # noqa: N815
    timestamp: int | float | None = None
    stopReason: str | None = None  # noqa: N815
    errorMessage: str | None = None  # noqa: N815
    usage: _Usage | None = None


class _EndMessage(msgspec.Struct):
    """What ``agent_end`` needs of each message: roles and stop reasons only."""

    role: str | None = None
    stopReason: str | None = None  # noqa: N815
    errorMessage: str | None = None  # noqa: N815


_decoder = msgspec.json.Decoder(_Line)
_message_decoder = msgspec.json.Decoder(_Message)
_end_decoder = msgspec.json.Decoder(list[_EndMessage])

_QUIET_TYPES = frozenset(
    {
        "agent_start",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "tool_execution_update",
        "queue_update",
        "compaction_start",
        "compaction_end",
        "auto_retry_end",
    }
)
_END_STATUS: dict[str, RunStatus] = {"error": "failure", "aborted": "cancelled"}


class PiHarness:
    name: ClassVar[str] = "pi"
    executable: ClassVar[str] = "pi"
    iteration_source: ClassVar[IterationSource] = "stream"
    # ``--session <id>`` opens an existing session (a resume), so it is never used.
    accepts_session_id: ClassVar[bool] = False
    # pi 0.73 has no flag that caps model calls.
    has_turn_cap: ClassVar[bool] = False
    # every message_end carries usage.cost.total
    reports_cost: ClassVar[bool] = True

    def preflight(
        self,
        env: Mapping[str, str],
        cwd: Path,
        args: Iterable[str] = (),
        model: str | None = None,
        cost_usd: float | None = None,
    ) -> None:
        """Refuse (``ConfigError``) a cost limit on a model Pi prices at nothing."""
        if cost_usd is not None:
            require_prices(env, cwd, args, model)

    def build_command(self, spec: RunSpec) -> list[str]:
        argv = [self.executable, "--mode", "json"]
        if spec.model:
            argv += ["--model", spec.model]
        if spec.settings_path is not None:
            # pi's hooks are extensions (``pi.on("tool_call", …)`` can block a call).
            if spec.settings_path.suffix not in (".ts", ".js", ".mjs"):
                raise ConfigError(
                    f"pi loads per-run hooks as an extension module (.ts/.js); "
                    f"{spec.settings_path} is not one.",
                    path=str(spec.settings_path),
                )
            argv += ["--extension", str(spec.settings_path)]
        argv += list(spec.extra_args)
        if spec.allow is not None:
            argv += allow_args(spec.allow)
        argv.append(_message_arg(spec.prompt))
        return argv

    def parse_line(self, line: bytes) -> list[AnyEvent]:
        obj = decode_line(_decoder, line)
        if isinstance(obj, list):
            return obj
        kind = obj.type
        if kind in _QUIET_TYPES:
            return []
        if kind == "message_end":
            return _message_end(obj, line)
        if kind == "tool_execution_start":
            if not obj.toolCallId:
                return [unknown(line, "tool_execution_start without toolCallId")]
            return [
                ToolCallStarted(call_id=obj.toolCallId, name=obj.toolName or "", input=obj.args)
            ]
        if kind == "tool_execution_end":
            if not obj.toolCallId:
                return [unknown(line, "tool_execution_end without toolCallId")]
            return [
                ToolResult(
                    call_id=obj.toolCallId,
                    is_error=bool(obj.isError),
                    output_size=len(obj.result),
                )
            ]
        if kind == "session":
            return [SessionStarted(session_id=obj.id)] if obj.id else []
        if kind == "agent_end":
            return _agent_end(obj)
        if kind == "auto_retry_start":
            return [HarnessWarning(message=obj.errorMessage or "pi retries a model call")]
        return [unknown(line, kind)]

    def parse_session_line(self, line: bytes) -> list[AnyEvent]:
        return []

    def session_file(self, session_id: str, env: Mapping[str, str]) -> Path | None:
        """pi names its file ``<timestamp>_<id>.jsonl`` in a per-cwd folder."""
        if not session_id or "/" in session_id:
            return None
        matches = sorted((agent_dir(env) / "sessions").glob(f"*/*_{glob.escape(session_id)}.jsonl"))
        return matches[-1] if matches else None


def _message_arg(prompt: str) -> str:
    # pi reads any argument starting with "-" as a flag and "@" as a file to attach.
    return " " + prompt if prompt.startswith(("-", "@")) else prompt


def _message_end(obj: _Line, line: bytes) -> list[AnyEvent]:
    try:
        msg = _message_decoder.decode(obj.message) if obj.message else _Message()
    except (ValueError, RecursionError) as exc:
        return [unknown(line, f"message_end: unexpected message: {exc}")]
    if msg.role != "assistant":
        return []  # user / toolResult / custom messages are echoes, not model steps
    if msg.stopReason == "aborted" and not msg.responseId and not msg.content:
        # Aborted before any response arrived (e.g. an extension stopped pi ahead of
        # its next request): no model call was answered, so this is not a step.
        return []
    step_id = msg.responseId or (f"ts:{msg.timestamp}" if msg.timestamp is not None else None)
    events: list[AnyEvent] = [StepStarted(message_id=step_id)]
    if isinstance(msg.content, list):
        for block in msg.content:
            if block.type == "text" and block.text:
                events.append(AssistantText(text=block.text, message_id=step_id))
    elif isinstance(msg.content, str) and msg.content:
        events.append(AssistantText(text=msg.content, message_id=step_id))
    u = msg.usage
    if u is not None:
        events.append(
            Usage(
                input_tokens=u.input,
                output_tokens=u.output,
                cache_read_tokens=u.cacheRead,
                cache_write_tokens=u.cacheWrite,
                cost_usd=u.cost.total if u.cost is not None else None,
            )
        )
    if msg.stopReason == "error":
        events.append(HarnessWarning(message=msg.errorMessage or "model call failed"))
    events.append(StepEnded(message_id=step_id, stop_reason=msg.stopReason))
    return events


def _agent_end(obj: _Line) -> list[AnyEvent]:
    try:
        messages = _end_decoder.decode(obj.messages) if obj.messages else []
    except (ValueError, RecursionError):
        messages = []
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    reason = last.stopReason if last is not None else None
    status: RunStatus = _END_STATUS.get(reason or "", "success")
    message = last.errorMessage if last is not None else None
    return [RunEnded(status=status, stop_reason=reason or "agent_end", message=message)]
