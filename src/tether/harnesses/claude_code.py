"""Claude Code: ``claude -p --output-format stream-json --verbose``.

One model response spans several ``assistant`` lines (one per content block)
sharing ``message.id``; the accounting counts distinct consecutive ids. Tool
results arrive in ``user`` lines; ``result`` ends the run and carries the real
usage totals (per-line ``message.usage`` is a snapshot from ``message_start``,
counted live once per message for token budgets, then replaced by the totals).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from tether.events.model import (
    AnyEvent,
    AssistantText,
    PermissionDenied,
    PlanUpdated,
    RunEnded,
    SessionStarted,
    StepStarted,
    TodoItem,
    ToolCallStarted,
    ToolResult,
    Usage,
    unknown,
)
from tether.harnesses.base import (
    IterationSource,
    RunSpec,
    ToolAllowance,
    decode_line,
    home_dir,
)


class _Block(msgspec.Struct):
    type: str = ""
    id: str | None = None
    name: str | None = None
    input: Any = None
    text: str | None = None
    tool_use_id: str | None = None
    is_error: bool | None = None
    content: msgspec.Raw = msgspec.Raw(b"")


class _Usage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class _Message(msgspec.Struct):
    id: str | None = None
    content: list[_Block] | str | None = None
    usage: _Usage | None = None


class _Line(msgspec.Struct):
    type: str | None = None
    subtype: str | None = None
    session_id: str | None = None
    message: _Message | None = None
    tool_name: str | None = None
    tool_use_id: str | None = None
    # result lines
    is_error: bool | None = None
    terminal_reason: str | None = None
    stop_reason: str | None = None
    result: str | None = None
    errors: Any = None  # an error result's reasons (error_during_execution): a list
    usage: _Usage | None = None
    total_cost_usd: float | None = None


MCP_STARTUP_WAIT = "CLAUDE_CODE_MCP_STARTUP_WAIT_MS"
_decoder = msgspec.json.Decoder(_Line)
_IGNORED_TYPES = frozenset({"stream_event", "rate_limit_event"})


class ClaudeCodeHarness:
    name: ClassVar[str] = "claude-code"
    executable: ClassVar[str] = "claude"
    iteration_source: ClassVar[IterationSource] = "stream"
    accepts_session_id: ClassVar[bool] = True
    has_turn_cap: ClassVar[bool] = True
    # ``result`` carries total_cost_usd (and --max-budget-usd caps it live)
    reports_cost: ClassVar[bool] = True
    # Laid under the agent's environment (a person's own value wins). ``-p`` sends its
    # first model request while the MCP servers still start (``status: pending`` in its
    # init line), so their tools are missing from it; with this variable it waits for
    # them, up to the time given, first (read from Claude Code 2.1.332; --mcp-config
    # makes it wait too, but a project's approved .mcp.json does not).
    agent_env: ClassVar[Mapping[str, str]] = {MCP_STARTUP_WAIT: "30000"}

    def build_command(self, spec: RunSpec) -> list[str]:
        argv = [self.executable, "-p", spec.prompt, "--output-format", "stream-json", "--verbose"]
        if spec.model:
            argv += ["--model", spec.model]
        if spec.session_id:
            argv += ["--session-id", spec.session_id]
        if spec.max_turns is not None:
            argv += ["--max-turns", str(spec.max_turns)]
        if spec.settings_path is not None:
            argv += ["--settings", str(spec.settings_path)]
        if spec.max_cost_usd is not None:
            argv += ["--max-budget-usd", f"{spec.max_cost_usd:g}"]
        argv += list(spec.extra_args)
        if spec.allow is not None:
            argv += allow_args(spec.allow)
        return argv

    def parse_line(self, line: bytes) -> list[AnyEvent]:
        obj = decode_line(_decoder, line)
        if isinstance(obj, list):
            return obj
        kind = obj.type
        if kind == "assistant":
            return _assistant(obj)
        if kind == "user":
            return _user(obj)
        if kind == "system":
            return _system(obj, line)
        if kind == "result":
            return _result(obj)
        if kind in _IGNORED_TYPES:
            return []
        return [unknown(line, kind)]

    def parse_session_line(self, line: bytes) -> list[AnyEvent]:
        return []

    def session_file(self, session_id: str, env: Mapping[str, str]) -> Path | None:
        config = env.get("CLAUDE_CONFIG_DIR")
        root = Path(config) if config else home_dir(env) / ".claude"
        cwd = env.get("PWD") or str(Path.cwd())
        return root / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd) / f"{session_id}.jsonl"


def allow_args(allow: ToolAllowance) -> list[str]:
    """Claude Code's own allow-list for ``allow``: only Bash (and Write for one file) exist,
    ``dontAsk`` denies every call no rule allows, each command is a ``Bash(prefix:*)`` rule
    (Claude Code splits ``&&``, ``;`` and pipes, so a chained command matches no prefix).

    Placed after the profile's flags, so its ``--permission-mode`` is the one that holds;
    a profile that allows ``Bash`` wholesale or skips permissions widens it again.
    """
    tools = ["Bash", "TodoWrite"]
    rules = [f"Bash({shlex.join(prefix)}:*)" for prefix in allow.commands]
    if allow.write_file is not None:
        tools.append("Write")
        rules.append(f"Edit(/{allow.write_file})")  # //abs: an absolute path; Edit covers Write
    return [
        "--tools",
        ",".join(tools),
        "--permission-mode",
        "dontAsk",
        "--allowedTools",
        *rules,
    ]


def _assistant(obj: _Line) -> list[AnyEvent]:
    msg = obj.message
    if msg is None:
        return []
    events: list[AnyEvent] = [StepStarted(message_id=msg.id)]
    u = msg.usage
    if u is not None and msg.id:
        # A live figure for token budgets; ``result``'s totals replace it at the end.
        events.append(
            Usage(
                input_tokens=u.input_tokens,
                output_tokens=u.output_tokens,
                cache_read_tokens=u.cache_read_input_tokens,
                cache_write_tokens=u.cache_creation_input_tokens,
                message_id=msg.id,
            )
        )
    if isinstance(msg.content, list):
        for block in msg.content:
            if block.type == "tool_use" and block.id:
                name = block.name or ""
                call = ToolCallStarted(
                    call_id=block.id, name=name, input=block.input, message_id=msg.id
                )
                events.append(call)
                if name == "TodoWrite":
                    plan = _todos(block.input)
                    if plan is not None:
                        events.append(plan)
            elif block.type == "text" and block.text:
                events.append(AssistantText(text=block.text, message_id=msg.id))
    return events


def _todos(data: Any) -> PlanUpdated | None:
    todos = data.get("todos") if isinstance(data, dict) else None
    if not isinstance(todos, list):
        return None
    items = tuple(
        TodoItem(text=str(t.get("content", "")), done=t.get("status") == "completed")
        for t in todos
        if isinstance(t, dict)
    )
    return PlanUpdated(items=items)


def _user(obj: _Line) -> list[AnyEvent]:
    msg = obj.message
    if msg is None or not isinstance(msg.content, list):
        return []
    return [
        ToolResult(
            call_id=block.tool_use_id,
            is_error=bool(block.is_error),
            output_size=len(block.content),
        )
        for block in msg.content
        if block.type == "tool_result" and block.tool_use_id
    ]


def _system(obj: _Line, line: bytes) -> list[AnyEvent]:
    if obj.subtype == "init" and obj.session_id:
        return [SessionStarted(session_id=obj.session_id)]
    if obj.subtype == "permission_denied":
        return [PermissionDenied(tool_name=obj.tool_name, call_id=obj.tool_use_id)]
    return []


def _result(obj: _Line) -> list[AnyEvent]:
    events: list[AnyEvent] = []
    if obj.session_id:
        events.append(SessionStarted(session_id=obj.session_id))
    u = obj.usage
    if u is not None or obj.total_cost_usd is not None:
        u = u or _Usage()
        events.append(
            Usage(
                input_tokens=u.input_tokens,
                output_tokens=u.output_tokens,
                cache_read_tokens=u.cache_read_input_tokens,
                cache_write_tokens=u.cache_creation_input_tokens,
                cost_usd=obj.total_cost_usd,
                cumulative=True,
            )
        )
    ok = obj.subtype == "success" and not obj.is_error
    events.append(
        RunEnded(
            status="success" if ok else "failure",
            stop_reason=obj.terminal_reason or obj.stop_reason or obj.subtype,
            message=obj.result or _errors_text(obj.errors),
        )
    )
    return events


def _errors_text(errors: Any) -> str | None:
    """An error result's ``errors`` list as one line (None when there is none)."""
    if not isinstance(errors, list) or not errors:
        return None
    return "; ".join(e if isinstance(e, str) else json.dumps(e) for e in errors)
