"""What every wire-protocol module parses a request into and renders a reply from.

A protocol module (``responses``, ``chat``, ``anthropic``) knows one API's JSON
shapes; the server and the scenario only see these neutral types.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]


class BadRequestError(ValueError):
    """The request body is not what the protocol expects; answered with HTTP 400."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool the client offered: its name and the JSON-schema ``properties``."""

    name: str
    properties: Mapping[str, Any] = field(default_factory=dict)
    # a group the client put the tool in (Codex: one namespace per MCP server)
    namespace: str | None = None

    @property
    def qualified(self) -> str:
        """``namespace__name`` (``mcp__tether__loop_tick``), or the bare name."""
        return f"{self.namespace}__{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class ParsedRequest:
    """The parts of a model request the scripted server acts on."""

    model: str | None
    stream: bool
    tools: tuple[ToolSpec, ...]
    # tool-call ids the client echoed back from earlier responses, in history order
    echoed_call_ids: tuple[str, ...]
    # tool results the client sent back to the model (all of them, in the history)
    tool_results: int
    parallel_tool_calls: bool | None = None
    # answers of the model already in the history (Anthropic protocol: assistant messages)
    assistant_turns: int = 0

    @property
    def tool_names(self) -> list[str]:
        return sorted(t.qualified for t in self.tools)


@dataclass(frozen=True)
class ServedCall:
    """A tool call the server puts into its reply."""

    call_id: str
    name: str
    arguments: Mapping[str, Any]
    namespace: str | None = None

    @property
    def qualified(self) -> str:
        return f"{self.namespace}__{self.name}" if self.namespace else self.name

    @property
    def arguments_json(self) -> str:
        return json.dumps(dict(self.arguments))


@dataclass(frozen=True)
class Reply:
    """One model response: tool calls, or a final text (or, rarely, both empty)."""

    response_id: str
    model: str
    calls: tuple[ServedCall, ...] = ()
    text: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0


def load_object(body: bytes) -> JsonObject:
    """The request body as a JSON object, or :class:`BadRequestError`."""
    try:
        data = json.loads(body or b"null")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequestError(f"request body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise BadRequestError("request body must be a JSON object")
    return data


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def schema_properties(schema: Any) -> Mapping[str, Any]:
    if isinstance(schema, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            return props
    return {}


def sse(event: str | None, data: Any) -> bytes:
    """One server-sent event; ``data`` is JSON-encoded unless it is already a string."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def estimate_tokens(body: bytes) -> int:
    """A stand-in input token count (about four bytes a token), never zero."""
    return max(1, len(body) // 4)


@dataclass(frozen=True)
class WireApi:
    """One wire protocol: how to read its requests and write its replies."""

    name: str
    # prefixes of the ids the server makes: tool calls, responses
    call_prefix: str
    response_prefix: str
    parse: Callable[[bytes], ParsedRequest]
    render_stream: Callable[[Reply], bytes]
    render_json: Callable[[Reply], JsonObject]
