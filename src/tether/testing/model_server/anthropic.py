"""Anthropic Messages API (``POST /v1/messages``), as Claude Code speaks it.

Earlier tool calls come back as ``tool_use`` blocks in ``assistant`` messages,
their results as ``tool_result`` blocks in ``user`` messages. Streaming replies
are named server-sent events: ``message_start``, per content block
``content_block_start`` / ``content_block_delta`` / ``content_block_stop``, then
``message_delta`` (stop reason, output tokens) and ``message_stop``.
"""

from __future__ import annotations

import json
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
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            tools.append(ToolSpec(tool["name"], schema_properties(tool.get("input_schema"))))
    echoed: list[str] = []
    results = 0
    turns = 0
    for msg in as_list(data.get("messages")):
        if not isinstance(msg, dict):
            continue
        turns += msg.get("role") == "assistant"
        for block in as_list(msg.get("content")):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                echoed.append(block["id"])
            elif block.get("type") == "tool_result":
                results += 1
    return ParsedRequest(
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        stream=data.get("stream") is True,
        tools=tuple(tools),
        echoed_call_ids=tuple(echoed),
        tool_results=results,
        assistant_turns=turns,
    )


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.calls else "end_turn"


def _blocks(reply: Reply) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    blocks += [
        {"type": "tool_use", "id": c.call_id, "name": c.name, "input": dict(c.arguments)}
        for c in reply.calls
    ]
    return blocks


def _message(reply: Reply, content: list[JsonObject], output_tokens: int) -> JsonObject:
    return {
        "id": reply.response_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": content,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": reply.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        },
    }


def render_json(reply: Reply) -> JsonObject:
    message = _message(reply, _blocks(reply), reply.output_tokens)
    message["stop_reason"] = _stop_reason(reply)
    return message


def render_stream(reply: Reply) -> bytes:
    out = bytearray()

    def emit(kind: str, **fields: Any) -> None:
        out.extend(sse(kind, {"type": kind, **fields}))

    emit("message_start", message=_message(reply, [], 1))
    for index, block in enumerate(_blocks(reply)):
        if block["type"] == "text":
            emit("content_block_start", index=index, content_block={"type": "text", "text": ""})
            delta: JsonObject = {"type": "text_delta", "text": block["text"]}
        else:
            emit("content_block_start", index=index, content_block={**block, "input": {}})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        emit("content_block_delta", index=index, delta=delta)
        emit("content_block_stop", index=index)
    emit(
        "message_delta",
        delta={"stop_reason": _stop_reason(reply), "stop_sequence": None},
        usage={"output_tokens": reply.output_tokens},
    )
    emit("message_stop")
    return bytes(out)


ANTHROPIC = WireApi(
    name="anthropic",
    call_prefix="toolu",
    response_prefix="msg",
    parse=parse,
    render_stream=render_stream,
    render_json=render_json,
)
