"""A tool call left without a result at the end of an agent's log.

Reads the tail of a JSONL log — an agent's stream (``events.jsonl`` of a run,
or a stdout redirected to a file) or the harness's own session file — and
returns the last tool call that has no tool result after it. Every format
tether knows is read by its shape, not by which file it came from:

============  ==============================================  =====================================
harness       a tool call opens                               and is closed by
============  ==============================================  =====================================
Claude Code   ``assistant`` message ``tool_use`` block        ``user`` message ``tool_result``
Pi (stream)   ``tool_execution_start``, assistant toolCall    ``tool_execution_end``, toolResult
Pi (session)  ``message`` role assistant, ``toolCall`` block  ``message`` role ``toolResult``
Codex         ``item.started`` / rollout ``function_call``    ``item.completed`` / ``…_output``
Copilot       ``tool.execution_start``                        ``tool.execution_complete``
Vibe (stream) ``effect`` without a settled ``state.status``   ``effect`` ``completed``/``failed``/…
Vibe journal  ``action_intent`` of kind ``tool``              its ``action_result``
============  ==============================================  =====================================

A line that ends the agent's run (Claude Code ``result``, Pi ``agent_end``,
Codex ``turn.completed``/``task_complete``, Copilot ``result``, Vibe's
``receipt_succeeded``/``receipt_failed``) closes whatever was open. Unknown
lines are skipped. The result is cached by the file's size and modification
time, so an unchanged log costs one ``stat`` per cycle.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TAIL_BYTES = 256 * 1024
HEAD_LINES = 6
HEAD_LINE_BYTES = 1024 * 1024
_RUN_END_TYPES = frozenset(
    {
        "result",
        "agent_end",
        "turn.completed",
        "turn.failed",
        "task_complete",
        "session.shutdown",
        "receipt_succeeded",
        "receipt_failed",
    }
)
# Vibe effect states that mean the tool call is over.
_VIBE_SETTLED = frozenset({"completed", "failed", "skipped", "cancelled", "error"})
# Codex items that are not tool calls (a todo list stays "started" for a whole turn).
_CODEX_NOT_TOOLS = frozenset({"agent_message", "reasoning", "todo_list", "error"})
_UUIDISH = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True)
class OpenCall:
    """A tool call without a result: its id, the tool, a short view of its input."""

    call_id: str
    tool: str
    input: str
    since: float  # epoch seconds: when the log last grew (nothing came after the call)


def clip(value: Any, limit: int = 160) -> str:
    """A one-line view of a tool input: JSON (keys sorted), whitespace folded, cut."""
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError):
            text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _content(message: Any) -> list[Any]:
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, list):
            return content
    return []


class _Fold:
    """Open calls in order; results close them; a run end closes all."""

    def __init__(self) -> None:
        self.open: dict[str, tuple[str, str]] = {}

    def opened(self, call_id: Any, tool: Any, args: Any) -> None:
        if isinstance(call_id, str) and call_id:
            self.open.pop(call_id, None)  # re-announced: move to the end
            self.open[call_id] = (str(tool or "tool"), clip(args))

    def closed(self, call_id: Any) -> None:
        if isinstance(call_id, str):
            self.open.pop(call_id, None)

    def line(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        payload = obj.get("payload")
        data = obj.get("data")
        if kind in _RUN_END_TYPES:
            self.open.clear()
        elif kind == "assistant":  # Claude Code stream and transcript
            for block in _content(obj.get("message")):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    self.opened(block.get("id"), block.get("name"), block.get("input"))
        elif kind == "user":
            for block in _content(obj.get("message")):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self.closed(block.get("tool_use_id"))
        elif kind in ("message", "message_end"):  # Pi session file / Pi stream
            self._pi_message(obj.get("message"))
        elif kind == "tool_execution_start":
            self.opened(obj.get("toolCallId"), obj.get("toolName"), obj.get("args"))
        elif kind == "tool_execution_end":
            self.closed(obj.get("toolCallId"))
        elif kind in ("item.started", "item.completed"):  # Codex exec --json
            item = obj.get("item")
            if isinstance(item, dict) and item.get("type") not in _CODEX_NOT_TOOLS:
                if kind == "item.started":
                    args = item.get("command") or item.get("arguments") or item.get("query")
                    self.opened(item.get("id"), item.get("tool") or item.get("type"), args)
                else:
                    self.closed(item.get("id"))
        elif kind == "response_item" and isinstance(payload, dict):  # Codex rollout
            if payload.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
                args = payload.get("arguments") or payload.get("input") or payload.get("action")
                self.opened(payload.get("call_id"), payload.get("name") or "shell", args)
            elif str(payload.get("type", "")).endswith("_output"):
                self.closed(payload.get("call_id"))
        elif kind == "tool.execution_start" and isinstance(data, dict):  # Copilot
            self.opened(data.get("toolCallId"), data.get("toolName"), data.get("arguments"))
        elif kind == "tool.execution_complete" and isinstance(data, dict):
            self.closed(data.get("toolCallId"))
        elif kind == "effect":  # Vibe stream: one line per tool call, settled or not
            self._vibe_effect(obj)
        elif kind in ("action_intent", "action_result") and isinstance(payload, dict):
            self._vibe_action(kind, payload)  # Vibe session journal

    def _vibe_effect(self, obj: dict[str, Any]) -> None:
        call_id = str(obj.get("id") or "").removeprefix("effect-")
        state = obj.get("state")
        status = state.get("status") if isinstance(state, dict) else None
        if status in _VIBE_SETTLED:
            self.closed(call_id)
            return
        detail = obj.get("detail")
        detail = detail if isinstance(detail, dict) else {}
        self.opened(call_id, detail.get("toolName"), detail.get("input"))

    def _vibe_action(self, kind: str, payload: dict[str, Any]) -> None:
        action_id = payload.get("action_id")
        if kind == "action_result":
            self.closed(action_id)
            return
        request = payload.get("request")
        call = request.get("call") if isinstance(request, dict) else None
        if payload.get("kind") == "tool" and isinstance(call, dict):
            self.opened(action_id, call.get("name"), call.get("arguments"))

    def _pi_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        role = message.get("role")
        if role == "assistant":
            for block in _content(message):
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    self.opened(block.get("id"), block.get("name"), block.get("arguments"))
        elif role == "toolResult":
            self.closed(message.get("toolCallId"))


def _lines(raw: bytes, from_start: bool) -> list[dict[str, Any]]:
    chunks = raw.split(b"\n")
    if not from_start and chunks:
        chunks = chunks[1:]  # the first piece may be the middle of a line
    out: list[dict[str, Any]] = []
    for chunk in chunks:
        if not chunk.strip():
            continue
        try:
            obj = json.loads(chunk)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _session_ids(head: list[dict[str, Any]]) -> tuple[str, ...]:
    found: list[str] = []
    for obj in head:
        for key in ("session_id", "sessionId", "thread_id"):
            value = obj.get(key)
            if isinstance(value, str) and value:
                found.append(value)
        if obj.get("type") == "session" and isinstance(obj.get("id"), str):
            found.append(obj["id"])  # Pi's session header
        payload = obj.get("payload")
        if obj.get("type") == "session_meta" and isinstance(payload, dict):
            value = payload.get("id") or payload.get("session_id")
            if isinstance(value, str):
                found.append(value)
        params = payload.get("params") if isinstance(payload, dict) else None
        if obj.get("type") == "command_reserved" and isinstance(params, dict):
            value = params.get("sessionId")  # Vibe's session journal
            if isinstance(value, str):
                found.append(value)
        data = obj.get("data")
        if obj.get("type") == "session.start" and isinstance(data, dict):
            value = data.get("sessionId")
            if isinstance(value, str):
                found.append(value)
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class LogState:
    open_call: OpenCall | None
    session_ids: tuple[str, ...]
    mtime: float
    size: int


class TranscriptReader:
    """Reads logs' tails, cached by (size, mtime) per path."""

    def __init__(self, tail_bytes: int = TAIL_BYTES) -> None:
        self.tail_bytes = tail_bytes
        self._cache: dict[Path, tuple[tuple[int, int], LogState]] = {}

    def read(self, path: Path) -> LogState | None:
        try:
            st = path.stat()
        except OSError:
            self._cache.pop(path, None)
            return None
        key = (st.st_size, st.st_mtime_ns)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        state = self._parse(path, st)
        self._cache[path] = (key, state)
        return state

    def _parse(self, path: Path, st: os.stat_result) -> LogState:
        fold = _Fold()
        head: list[dict[str, Any]] = []
        try:
            with path.open("rb") as handle:
                head = _lines(
                    b"\n".join(handle.readline(HEAD_LINE_BYTES) for _ in range(HEAD_LINES)),
                    from_start=True,
                )
                start = max(0, st.st_size - self.tail_bytes)
                handle.seek(start)
                tail = _lines(handle.read(self.tail_bytes), from_start=start == 0)
        except OSError:
            tail = []
        for obj in tail:
            fold.line(obj)
        ids = _session_ids(head)
        name_ids = tuple(_UUIDISH.findall(path.name))
        open_call = None
        if fold.open:
            call_id, (tool, args) = next(reversed(fold.open.items()))
            open_call = OpenCall(call_id, tool, args, st.st_mtime)
        return LogState(open_call, tuple(dict.fromkeys((*ids, *name_ids))), st.st_mtime, st.st_size)

    def forget(self, keep: set[Path]) -> None:
        for path in list(self._cache):
            if path not in keep:
                del self._cache[path]
