"""GitHub Copilot CLI: ``copilot -p … --output-format json``.

Exactly one ``assistant.message`` per model call (``apiCallId`` is the
completion id), tools between ``tool.execution_start`` and
``tool.execution_complete``, and a final ``result`` line with ``sessionId`` and
``exitCode``. Killed before that line, the stream never names its session, which
is why tether fixes the id up front with ``--session-id`` when it can.

Most lines are ephemeral chatter (``session.background_tasks_changed`` alone is
two thirds of a run). The envelope keeps ``data`` as undecoded
:class:`msgspec.Raw`, and only the few types that matter decode it.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from tether.core.errors import ConfigError
from tether.events.model import (
    AnyEvent,
    AssistantText,
    ModelRequested,
    PermissionDenied,
    PermissionRequested,
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
from tether.harnesses.base import IterationSource, RunSpec, ToolAllowance, decode_line, home_dir


class _Line(msgspec.Struct):
    type: str | None = None
    data: msgspec.Raw = msgspec.Raw(b"")
    # the final ``result`` line
    sessionId: str | None = None  # noqa: N815 - copilot's own field names
    exitCode: int | None = None  # noqa: N815


class _Message(msgspec.Struct):
    messageId: str | None = None  # noqa: N815
    apiCallId: str | None = None  # noqa: N815
    content: str | None = None


class _ToolStart(msgspec.Struct):
    toolCallId: str | None = None  # noqa: N815
    toolName: str | None = None  # noqa: N815
    arguments: Any = None


class _ToolError(msgspec.Struct):
    code: str | None = None
    message: str | None = None


class _ToolComplete(msgspec.Struct):
    toolCallId: str | None = None  # noqa: N815
    success: bool | None = None
    result: msgspec.Raw = msgspec.Raw(b"")
    error: _ToolError | None = None


class _Usage(msgspec.Struct):
    inputTokens: int = 0  # noqa: N815
    outputTokens: int = 0  # noqa: N815
    cacheReadTokens: int = 0  # noqa: N815
    cacheWriteTokens: int = 0  # noqa: N815
    cost: float | None = None


class _SessionError(msgspec.Struct):
    errorType: str | None = None  # noqa: N815
    message: str | None = None


class _Permission(msgspec.Struct):
    toolCallId: str | None = None  # noqa: N815
    toolName: str | None = None  # noqa: N815


_decoder = msgspec.json.Decoder(_Line)
_message_decoder = msgspec.json.Decoder(_Message)
_start_decoder = msgspec.json.Decoder(_ToolStart)


class _CallStart(msgspec.Struct):
    turnId: str | None = None  # noqa: N815 - Copilot's own field name


_call_start_decoder = msgspec.json.Decoder(_CallStart)


def _turn_id(data: msgspec.Raw) -> str | None:
    try:
        return _call_start_decoder.decode(data).turnId
    except msgspec.DecodeError:
        return None


_complete_decoder = msgspec.json.Decoder(_ToolComplete)
_usage_decoder = msgspec.json.Decoder(_Usage)
_error_decoder = msgspec.json.Decoder(_SessionError)
_permission_decoder = msgspec.json.Decoder(_Permission)

# Known types that carry nothing the ledger counts.
_QUIET_TYPES = frozenset(
    {
        "session.background_tasks_changed",
        "session.skills_loaded",
        "session.mcp_servers_loaded",
        "session.tools_updated",
        "session.start",
        "session.resume",
        "session.idle",
        "session.info",
        "session.model_change",
        "session.usage_info",
        "session.truncation",
        "session.handoff",
        "session.compaction_start",
        "session.compaction_complete",
        "user.message",
        "assistant.turn_start",
        "assistant.turn_end",
        "assistant.message_start",
        "assistant.message_delta",
        "assistant.tool_call_delta",
        "assistant.intent",
        "assistant.reasoning",
        "assistant.reasoning_delta",
        "assistant.idle",
        "model.call_finished",
        "model.call_final_result",
        "tool.user_requested",
        "tool.shell_output",
        "tool.execution_partial_result",
        "permission.completed",
        "subagent.started",
        "subagent.completed",
        "subagent.failed",
        "subagent.selected",
        "hook.start",
        "hook.end",
        "abort",
    }
)


class CopilotHarness:
    name: ClassVar[str] = "copilot"
    executable: ClassVar[str] = "copilot"
    iteration_source: ClassVar[IterationSource] = "stream"
    accepts_session_id: ClassVar[bool] = True
    # ``--max-autopilot-continues`` limits continuation prompts in autopilot
    # mode, not model calls, so there is no turn cap to pass.
    has_turn_cap: ClassVar[bool] = False
    # 1.0.102's --output-format json stream carries no token usage (measured
    # against the scripted model server): a token limit could never fire
    reports_tokens: ClassVar[bool] = False

    def build_command(self, spec: RunSpec) -> list[str]:
        prompt = " " + spec.prompt if spec.prompt.startswith("-") else spec.prompt
        argv = [self.executable, "-p", prompt, "--output-format", "json"]
        if spec.model:
            argv += ["--model", spec.model]
        if spec.session_id:
            argv += ["--session-id", spec.session_id]
        if spec.settings_path is not None:
            raise ConfigError(
                "copilot takes no per-run settings file; it reads hooks and settings "
                "from its config folder: set COPILOT_HOME in the run's env instead.",
                path=str(spec.settings_path),
            )
        argv += list(spec.extra_args)
        if spec.allow is not None:
            argv += allow_args(spec.allow)
        return argv

    def parse_line(self, line: bytes) -> list[AnyEvent]:
        obj = decode_line(_decoder, line)
        if isinstance(obj, list):
            return obj
        kind = obj.type
        if kind in _QUIET_TYPES:
            return []
        try:
            return _typed(kind, obj, line)
        except (ValueError, RecursionError) as exc:
            return [unknown(line, f"{kind}: unexpected data: {exc}")]

    def parse_session_line(self, line: bytes) -> list[AnyEvent]:
        return []

    def session_file(self, session_id: str, env: Mapping[str, str]) -> Path | None:
        if not session_id or "/" in session_id:
            return None
        config = env.get("COPILOT_HOME")
        root = Path(config) if config else home_dir(env) / ".copilot"
        return root / "session-state" / session_id / "events.jsonl"


def allow_args(allow: ToolAllowance) -> list[str]:
    """Copilot's own allow-list for ``allow``: only its shell (and file-creating) tool is
    available, a ``shell(program:*)`` rule per program (Copilot matches a command's stem,
    not its subcommands: every ``tether …`` passes it), the one file a ``write(path)``
    rule; ``-p`` without ``--allow-all-tools`` denies every call no rule allows, except
    the read-only commands Copilot approves by itself on paths under its working folder
    (``--disallow-temp-dir`` takes the temp folder out of those). A profile with
    ``--allow-all-tools`` (``--allow-all``, ``--yolo``) widens it again.
    """
    tools = ["bash"]
    # Copilot matches a shell rule on the command's stem (its program) only.
    programs = dict.fromkeys(prefix[0] for prefix in allow.commands if prefix)
    args = [f"--allow-tool=shell({shlex.quote(program)}:*)" for program in programs]
    if allow.write_file is not None:
        tools.append("create")
        args.append(f"--allow-tool=write({allow.write_file})")
    return [f"--available-tools={','.join(tools)}", "--disallow-temp-dir", *args]


def _typed(kind: str | None, obj: _Line, line: bytes) -> list[AnyEvent]:
    data = obj.data if len(obj.data) else msgspec.Raw(b"{}")
    if kind == "assistant.message":
        msg = _message_decoder.decode(data)
        step_id = msg.apiCallId or msg.messageId
        events: list[AnyEvent] = [StepStarted(message_id=step_id)]
        if msg.content:
            events.append(AssistantText(text=msg.content, message_id=step_id))
        events.append(StepEnded(message_id=step_id))
        return events
    if kind == "model.call_start":  # the request is sent; its answer may never be seen
        return [ModelRequested(request_id=_turn_id(data))]
    if kind == "tool.execution_start":
        start = _start_decoder.decode(data)
        if not start.toolCallId:
            return [unknown(line, "tool.execution_start without toolCallId")]
        return [
            ToolCallStarted(
                call_id=start.toolCallId, name=start.toolName or "", input=start.arguments
            )
        ]
    if kind == "tool.execution_complete":
        return _complete(_complete_decoder.decode(data), line)
    if kind == "result":
        return _result(obj)
    if kind == "assistant.usage":
        u = _usage_decoder.decode(data)
        return [
            Usage(
                input_tokens=u.inputTokens,
                output_tokens=u.outputTokens,
                cache_read_tokens=u.cacheReadTokens,
                cache_write_tokens=u.cacheWriteTokens,
                cost_usd=u.cost,
            )
        ]
    if kind == "session.error":
        err = _error_decoder.decode(data)
        return [
            RunEnded(status="failure", stop_reason=err.errorType or "error", message=err.message)
        ]
    if kind == "permission.requested":
        perm = _permission_decoder.decode(data)
        return [PermissionRequested(tool_name=perm.toolName, call_id=perm.toolCallId)]
    return [unknown(line, kind)]


def _complete(done: _ToolComplete, line: bytes) -> list[AnyEvent]:
    if not done.toolCallId:
        return [unknown(line, "tool.execution_complete without toolCallId")]
    events: list[AnyEvent] = [
        ToolResult(
            call_id=done.toolCallId,
            is_error=done.success is False or done.error is not None,
            output_size=len(done.result),
        )
    ]
    if done.error is not None and done.error.code == "denied":
        events.append(
            PermissionDenied(call_id=done.toolCallId, reason=done.error.message or "denied")
        )
    return events


def _result(obj: _Line) -> list[AnyEvent]:
    events: list[AnyEvent] = []
    if obj.sessionId:
        events.append(SessionStarted(session_id=obj.sessionId))
    if obj.exitCode is None:
        events.append(RunEnded(status="unknown", stop_reason="result"))
    else:
        status: RunStatus = "success" if obj.exitCode == 0 else "failure"
        events.append(RunEnded(status=status, stop_reason=f"exit code {obj.exitCode}"))
    return events
