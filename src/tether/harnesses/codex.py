"""Codex: ``codex exec --json``.

The stream names the thread (``thread.started``), tool items
(``item.started``/``item.completed`` sharing ``item.id``), the agent's messages
and the end of the turn, but it has **no event per model call**: a response
that only asks for tools shows up as its tool items, and one response may ask
for several. The exact number of model steps is in Codex's own rollout file
(``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-<thread_id>.jsonl``): one
``token_usage_record`` line per completed model response (the rule's home, which
the gate reads too: gate/codex_rollout.py). So this adapter never emits
:class:`StepStarted` from the stream; :meth:`CodexHarness.parse_session_line`
does, from the rollout. See docs/reference/events.md for the rule and evidence.

Failure: ``turn.failed`` and a fatal top-level ``error`` end the run as a
failure even when the exit code is 0. A top-level ``error`` whose message starts
with ``Reconnecting...`` is Codex announcing a retry (it keeps running), and an
``error`` *item* is a notice; both become :class:`HarnessWarning`.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from tether.core.errors import ConfigError
from tether.events.model import (
    AnyEvent,
    AssistantText,
    HarnessWarning,
    PermissionDenied,
    PermissionRequested,
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
from tether.gate.codex_rollout import RECORD_TYPE
from tether.harnesses.base import IterationSource, RunSpec, decode_line, home_dir


class _Todo(msgspec.Struct):
    text: str = ""
    completed: bool = False


class _Item(msgspec.Struct):
    id: str | None = None
    type: str | None = None
    # command_execution
    command: str | None = None
    aggregated_output: msgspec.Raw = msgspec.Raw(b"")
    exit_code: int | None = None
    status: str | None = None
    # agent_message, reasoning, plan / error
    text: str | None = None
    message: str | None = None
    # mcp_tool_call / collab_tool_call
    server: str | None = None
    tool: str | None = None
    arguments: Any = None
    result: msgspec.Raw = msgspec.Raw(b"")
    error: msgspec.Raw = msgspec.Raw(b"")
    prompt: str | None = None
    # file_change
    changes: Any = None
    # web_search
    query: str | None = None
    # todo_list
    items: list[_Todo] | None = None


class _Usage(msgspec.Struct):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    output_tokens: int = 0


class _Error(msgspec.Struct):
    message: str = ""


class _Line(msgspec.Struct):
    type: str | None = None
    thread_id: str | None = None
    item: _Item | None = None
    usage: _Usage | None = None
    error: _Error | None = None
    message: str | None = None
    call_id: str | None = None


class _SessionLine(msgspec.Struct):
    type: str | None = None
    ordinal: int | None = None
    timestamp: str | None = None
    payload: msgspec.Raw = msgspec.Raw(b"")


class _SessionPayload(msgspec.Struct):
    id: str | None = None
    session_id: str | None = None
    thread_id: str | None = None
    response_id: str | None = None
    turn_id: str | None = None
    # this response's own tokens (``turn_token_usage`` is the running sum)
    usage: _Usage | None = None


_decoder = msgspec.json.Decoder(_Line)
_session_decoder = msgspec.json.Decoder(_SessionLine)
_payload_decoder = msgspec.json.Decoder(_SessionPayload)

# Item types that are tool calls, and those that are known but are not.
TOOL_ITEMS = frozenset(
    {"command_execution", "file_change", "mcp_tool_call", "collab_tool_call", "web_search"}
)
_OTHER_ITEMS = frozenset({"agent_message", "reasoning", "plan", "todo_list", "error"})
_QUIET_TYPES = frozenset({"turn.started", "item.plan.delta"})
RETRY_PREFIX = "Reconnecting..."


class CodexHarness:
    name: ClassVar[str] = "codex"
    executable: ClassVar[str] = "codex"
    iteration_source: ClassVar[IterationSource] = "session_file"
    accepts_session_id: ClassVar[bool] = False
    # ``codex exec`` has no cap on model calls per turn.
    has_turn_cap: ClassVar[bool] = False

    def build_command(self, spec: RunSpec) -> list[str]:
        argv = [self.executable, "exec", "--json"]
        if spec.model:
            argv += ["--model", spec.model]
        if spec.settings_path is not None:
            argv += ["--profile", _profile_name(spec.settings_path)]
        argv += list(spec.extra_args)
        # ``spec.allow`` adds nothing: ``codex exec`` has no allow-list of tools or
        # commands (its exec-policy rules forbid only the prefixes they name), so a
        # room's agent on Codex has the gate alone (docs/how-to/room.md).
        # "--" keeps a prompt such as "resume" or "-x" from being read as a
        # subcommand or a flag (checked against codex-cli 0.171.0).
        argv += ["--", spec.prompt]
        return argv

    def parse_line(self, line: bytes) -> list[AnyEvent]:
        obj = decode_line(_decoder, line)
        if isinstance(obj, list):
            return obj
        kind = obj.type
        if kind == "item.started" or kind == "item.updated" or kind == "item.completed":
            return _item_event(kind, obj.item, line)
        if kind == "thread.started":
            return [SessionStarted(session_id=obj.thread_id)] if obj.thread_id else []
        if kind == "turn.completed":
            return _turn_completed(obj)
        if kind == "turn.failed":
            message = obj.error.message if obj.error else None
            return [RunEnded(status="failure", stop_reason="turn.failed", message=message)]
        if kind == "error":
            message = obj.message or ""
            if message.startswith(RETRY_PREFIX):
                return [HarnessWarning(message=message)]
            return [RunEnded(status="failure", stop_reason="error", message=message)]
        if kind == "request_user_input":
            return [PermissionRequested(tool_name="request_user_input", call_id=obj.call_id)]
        if kind in _QUIET_TYPES:
            return []
        return [unknown(line, kind)]

    def parse_session_line(self, line: bytes) -> list[AnyEvent]:
        """Rollout lines: one ``token_usage_record`` per completed model response."""
        obj = decode_line(_session_decoder, line)
        if isinstance(obj, list):
            return obj
        if obj.type != RECORD_TYPE and obj.type != "session_meta":
            # The rollout holds many record types; only these two are counted.
            return []
        try:
            payload = _payload_decoder.decode(obj.payload) if obj.payload else _SessionPayload()
        except (ValueError, RecursionError) as exc:
            return [unknown(line, f"{obj.type}: unexpected payload: {exc}")]
        if obj.type == "session_meta":
            sid = payload.id or payload.session_id
            return [SessionStarted(session_id=sid)] if sid else []
        step: list[AnyEvent] = [StepStarted(message_id=_step_key(obj, payload))]
        if payload.usage is not None:
            # Per response; the ledger lets turn.completed's total replace these.
            step.append(_usage(payload.usage, cumulative=False))
        return step

    def session_file(self, session_id: str, env: Mapping[str, str]) -> Path | None:
        """The rollout of thread ``session_id``, searched in every date folder."""
        if not session_id or "/" in session_id or os.sep in session_id:
            return None
        codex_home = env.get("CODEX_HOME")
        root = Path(codex_home) if codex_home else home_dir(env) / ".codex"
        pattern = f"*/*/*/rollout-*-{glob.escape(session_id)}.jsonl"
        matches = sorted((root / "sessions").glob(pattern))
        return matches[-1] if matches else None


def _profile_name(path: Path) -> str:
    suffix = ".config.toml"
    if not path.name.endswith(suffix) or len(path.name) == len(suffix):
        raise ConfigError(
            f"codex reads per-run settings only as a profile layer "
            f"$CODEX_HOME/<name>{suffix}; {path} is not named that way. "
            f"Write the settings (hooks included) to $CODEX_HOME/tether{suffix}.",
            path=str(path),
        )
    return path.name[: -len(suffix)]


def _step_key(obj: _SessionLine, payload: _SessionPayload) -> str | None:
    if payload.response_id:
        return payload.response_id
    if obj.ordinal is not None:
        return f"ordinal:{obj.ordinal}"
    return None  # counted as a step of its own by the ledger


def _item_event(kind: str, item: _Item | None, line: bytes) -> list[AnyEvent]:
    if item is None:
        return [unknown(line, f"{kind} without item")]
    itype = item.type or ""
    if itype in TOOL_ITEMS:
        if not item.id:
            return [unknown(line, f"{kind}/{itype} without id")]
        if kind == "item.started":
            return [_call(item, itype)]
        if kind == "item.completed":
            # Started again first: the ledger ignores a start for a call still
            # open, and counts calls that were only ever reported completed
            # (Codex emits some file_change items that way).
            return [_call(item, itype), *_result(item, itype)]
        return []
    if itype == "agent_message" or itype == "plan":
        if kind == "item.completed" and item.text:
            return [AssistantText(text=item.text)]
        return []
    if itype == "todo_list":
        todos = tuple(TodoItem(text=t.text, done=t.completed) for t in item.items or ())
        return [PlanUpdated(items=todos)]
    if itype == "error":
        return [HarnessWarning(message=item.message or "")] if kind == "item.completed" else []
    if itype in _OTHER_ITEMS:
        return []
    return [unknown(line, f"{kind}/{itype}")]


def _call(item: _Item, itype: str) -> ToolCallStarted:
    call_id = item.id or ""
    if itype == "command_execution":
        return ToolCallStarted(call_id=call_id, name=itype, input={"command": item.command})
    if itype == "mcp_tool_call":
        name = f"mcp__{item.server or ''}__{item.tool or ''}"
        return ToolCallStarted(call_id=call_id, name=name, input=item.arguments)
    if itype == "web_search":
        return ToolCallStarted(call_id=call_id, name=itype, input={"query": item.query})
    if itype == "collab_tool_call":
        return ToolCallStarted(
            call_id=call_id, name=f"collab__{item.tool or ''}", input={"prompt": item.prompt}
        )
    return ToolCallStarted(call_id=call_id, name=itype, input={"changes": item.changes})


def _result(item: _Item, itype: str) -> list[AnyEvent]:
    status = item.status or ""
    if itype == "command_execution":
        failed = status in ("failed", "declined") or (item.exit_code not in (None, 0))
        size = len(item.aggregated_output)
    elif itype == "mcp_tool_call":
        failed = status == "failed" or _present(item.error)
        size = len(item.result)
    else:
        failed = status == "failed"
        size = 0
    events: list[AnyEvent] = [ToolResult(call_id=item.id or "", is_error=failed, output_size=size)]
    if status == "declined":
        events.append(PermissionDenied(tool_name=itype, call_id=item.id, reason="declined"))
    return events


def _present(raw: msgspec.Raw) -> bool:
    return len(raw) > 0 and bytes(raw) != b"null"


def _turn_completed(obj: _Line) -> list[AnyEvent]:
    events: list[AnyEvent] = []
    if obj.usage is not None:
        # The sum over all model calls of the turn (one turn per ``codex exec``).
        events.append(_usage(obj.usage, cumulative=True))
    events.append(RunEnded(status="success", stop_reason="turn.completed"))
    return events


def _usage(u: _Usage, *, cumulative: bool) -> Usage:
    return Usage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_tokens=u.cached_input_tokens,
        cache_write_tokens=u.cache_write_input_tokens,
        cumulative=cumulative,
    )
