"""OpenAI Chat Completions (``POST /v1/chat/completions``), as Pi and Copilot speak it.

Earlier tool calls come back in ``assistant`` messages (``tool_calls[].id``),
their results as ``role: "tool"`` messages. Streaming replies are
``chat.completion.chunk`` objects as ``data:`` lines, closed by ``data: [DONE]``;
each tool call is opened with its id and name, then its arguments follow.
"""

from __future__ import annotations

import time
from typing import Any

from tether.testing.model_server.wire import (
    JsonObject,
    ParsedRequest,
    Reply,
    ToolSpec,
    WireApi,
    as_list,
    load_object,
    schema_properties,
    sse,
)


def parse(body: bytes) -> ParsedRequest:
    data = load_object(body)
    tools: list[ToolSpec] = []
    for tool in as_list(data.get("tools")):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            tools.append(ToolSpec(fn["name"], schema_properties(fn.get("parameters"))))
    echoed: list[str] = []
    results = 0
    for msg in as_list(data.get("messages")):
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "tool":
            results += 1
        for call in as_list(msg.get("tool_calls")):
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                echoed.append(call["id"])
    parallel = data.get("parallel_tool_calls")
    return ParsedRequest(
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        stream=data.get("stream") is True,
        tools=tuple(tools),
        echoed_call_ids=tuple(echoed),
        tool_results=results,
        parallel_tool_calls=parallel if isinstance(parallel, bool) else None,
    )


def _usage(reply: Reply) -> JsonObject:
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }


def _finish_reason(reply: Reply) -> str:
    return "tool_calls" if reply.calls else "stop"


def render_json(reply: Reply) -> JsonObject:
    message: JsonObject = {"role": "assistant", "content": reply.text}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": c.call_id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json},
            }
            for c in reply.calls
        ]
    return {
        "id": reply.response_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
        "usage": _usage(reply),
    }


def render_stream(reply: Reply) -> bytes:
    created = int(time.time())
    out = bytearray()

    def chunk(delta: JsonObject, finish: str | None = None, **extra: Any) -> None:
        out.extend(
            sse(
                None,
                {
                    "id": reply.response_id,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": reply.model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                    **extra,
                },
            )
        )

    chunk({"role": "assistant", "content": ""})
    if reply.text:
        chunk({"content": reply.text})
    for index, call in enumerate(reply.calls):
        opened = {"name": call.name, "arguments": ""}
        head = {"index": index, "id": call.call_id, "type": "function", "function": opened}
        chunk({"tool_calls": [head]})
        args = {"arguments": call.arguments_json}
        chunk({"tool_calls": [{"index": index, "function": args}]})
    # The last chunk carries the finish reason and the usage (Pi and Copilot
    # read usage from whichever chunk has it).
    chunk({}, _finish_reason(reply), usage=_usage(reply))
    out.extend(sse(None, "[DONE]"))
    return bytes(out)


CHAT = WireApi(
    name="chat",
    call_prefix="call",
    response_prefix="chatcmpl",
    parse=parse,
    render_stream=render_stream,
    render_json=render_json,
)
