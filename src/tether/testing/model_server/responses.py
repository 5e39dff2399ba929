"""OpenAI Responses API (``POST /v1/responses``), as Codex speaks it.

Requests carry the conversation as ``input`` items: earlier tool calls come back
as ``function_call`` items (with our ``call_id``), their results as
``function_call_output`` items. Streaming replies are server-sent events:
``response.created``, per output item ``response.output_item.added`` …
``response.output_item.done``, and ``response.completed`` with the usage, which
Codex needs to close the model call.
"""

from __future__ import annotations

import secrets
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

_CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_RESULT_ITEMS = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
)


def parse(body: bytes) -> ParsedRequest:
    data = load_object(body)
    tools: list[ToolSpec] = []
    for tool in as_list(data.get("tools")):
        if isinstance(tool, dict) and tool.get("type") == "namespace":
            space = tool.get("name")
            for inner in as_list(tool.get("tools")):
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    props = schema_properties(inner.get("parameters"))
                    tools.append(ToolSpec(inner["name"], props, namespace=str(space)))
        elif isinstance(tool, dict):
            name = tool.get("name") or tool.get("type")
            if isinstance(name, str):
                tools.append(ToolSpec(name, schema_properties(tool.get("parameters"))))
    echoed: list[str] = []
    results = 0
    for item in as_list(data.get("input")):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in _CALL_ITEMS and isinstance(item.get("call_id"), str):
            echoed.append(item["call_id"])
        elif kind in _RESULT_ITEMS:
            results += 1
    parallel = data.get("parallel_tool_calls")
    return ParsedRequest(
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        stream=data.get("stream") is True,
        tools=tuple(tools),
        echoed_call_ids=tuple(echoed),
        tool_results=results,
        parallel_tool_calls=parallel if isinstance(parallel, bool) else None,
    )


def _items(reply: Reply) -> list[JsonObject]:
    items: list[JsonObject] = [
        {
            "type": "function_call",
            "id": f"fc_{secrets.token_hex(6)}",
            "status": "completed",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": call.arguments_json,
            **({"namespace": call.namespace} if call.namespace else {}),
        }
        for call in reply.calls
    ]
    if reply.text is not None:
        items.append(
            {
                "type": "message",
                "id": f"msg_{secrets.token_hex(6)}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    return items


def _response(reply: Reply, status: str, output: list[JsonObject]) -> JsonObject:
    body: JsonObject = {
        "id": reply.response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": reply.model,
        "output": output,
    }
    if status == "completed":
        body["usage"] = {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }
    return body


def render_json(reply: Reply) -> JsonObject:
    return _response(reply, "completed", _items(reply))


def render_stream(reply: Reply) -> bytes:
    seq = iter(range(1_000_000))
    out = bytearray()

    def emit(kind: str, **fields: Any) -> None:
        out.extend(sse(kind, {"type": kind, "sequence_number": next(seq), **fields}))

    emit("response.created", response=_response(reply, "in_progress", []))
    items = _items(reply)
    for index, item in enumerate(items):
        if item["type"] == "function_call":
            emit("response.output_item.added", output_index=index, item={**item, "arguments": ""})
            emit(
                "response.function_call_arguments.done",
                output_index=index,
                item_id=item["id"],
                arguments=item["arguments"],
            )
        else:
            text = item["content"][0]["text"]
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            emit(
                "response.output_text.delta",
                output_index=index,
                item_id=item["id"],
                content_index=0,
                delta=text,
            )
            emit(
                "response.output_text.done",
                output_index=index,
                item_id=item["id"],
                content_index=0,
                text=text,
            )
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=_response(reply, "completed", items))
    return bytes(out)


RESPONSES = WireApi(
    name="responses",
    call_prefix="call",
    response_prefix="resp",
    parse=parse,
    render_stream=render_stream,
    render_json=render_json,
)
