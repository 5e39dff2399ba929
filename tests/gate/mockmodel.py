"""A scripted model server on 127.0.0.1 for driving the real agent CLIs.

It speaks just enough of three wire protocols (Anthropic Messages, OpenAI
Responses, OpenAI Chat Completions; all streaming) to make an agent run shell
commands: every step answers with shell tool calls until ``steps`` are done,
then with a final text. Step 2 asks for two calls in one response. The step is
derived from the tool-call ids echoed back in the request, so the server keeps
no per-session state. Every request is logged (for the tests to inspect).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_STEP_RE = re.compile(r"call_s(\d+)_(\d+)")


class Script:
    def __init__(self, steps: int = 4, double_step: int = 2, final_text: str = "All done.") -> None:
        self.steps = steps
        self.double_step = double_step
        self.final_text = final_text

    def calls_for(self, step: int) -> list[str]:
        if step > self.steps:
            return []
        if step == self.double_step:
            return [f"echo step {step}a", f"echo step {step}b"]
        return [f"echo step {step}"]


def _sse(event: str | None, data: dict[str, Any] | str) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def _pick_tool(names: list[str], preferred: tuple[str, ...]) -> str:
    for name in preferred:
        if name in names:
            return name
    return names[0] if names else preferred[0]


def _tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        name = tool.get("name") or (tool.get("function") or {}).get("name")
        if isinstance(name, str):
            names.append(name)
    return names


def _anthropic(step: int, commands: list[str], tool: str, text: str) -> Iterator[bytes]:
    mid = f"msg_mock_{step}_{time.monotonic_ns()}"
    yield _sse(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": "mock-model",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 50, "output_tokens": 1},
            },
        },
    )
    if commands:
        for index, command in enumerate(commands):
            yield _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": f"call_s{step}_{index}",
                        "name": tool,
                        "input": {},
                    },
                },
            )
            args = json.dumps({"command": command, "description": f"mock step {step}"})
            yield _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": args},
                },
            )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        stop_reason = "tool_use"
    else:
        yield _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        yield _sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
        )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        stop_reason = "end_turn"
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def _responses(step: int, commands: list[str], tool: str, text: str) -> Iterator[bytes]:
    rid = f"resp_mock_{step}_{time.monotonic_ns()}"
    yield _sse("response.created", {"type": "response.created", "response": {"id": rid}})
    if commands:
        for index, command in enumerate(commands):
            key = "cmd" if tool == "exec_command" else "command"
            value: Any = command if key == "cmd" else ["bash", "-lc", command]
            item = {
                "type": "function_call",
                "id": f"fc_s{step}_{index}",
                "call_id": f"call_s{step}_{index}",
                "name": tool,
                "arguments": json.dumps({key: value}),
            }
            yield _sse(
                "response.output_item.done", {"type": "response.output_item.done", "item": item}
            )
    else:
        item = {
            "type": "message",
            "role": "assistant",
            "id": f"msg_s{step}",
            "content": [{"type": "output_text", "text": text}],
        }
        yield _sse("response.output_item.done", {"type": "response.output_item.done", "item": item})
    yield _sse(
        "response.completed",
        {
            "type": "response.completed",
            "response": {
                "id": rid,
                "usage": {
                    "input_tokens": 50,
                    "input_tokens_details": None,
                    "output_tokens": 10,
                    "output_tokens_details": None,
                    "total_tokens": 60,
                },
            },
        },
    )


def _chat(step: int, commands: list[str], tool: str, text: str) -> Iterator[bytes]:
    cid = f"chatcmpl-mock-{step}-{time.monotonic_ns()}"
    base = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "mock-model",
    }
    if commands:
        calls = [
            {
                "index": index,
                "id": f"call_s{step}_{index}",
                "type": "function",
                "function": {
                    "name": tool,
                    "arguments": json.dumps(
                        {"command": command, "description": f"mock step {step}"}
                    ),
                },
            }
            for index, command in enumerate(commands)
        ]
        delta: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": calls}
        finish = "tool_calls"
    else:
        delta = {"role": "assistant", "content": text}
        finish = "stop"
    yield _sse(None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    yield _sse(
        None,
        {
            **base,
            "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
        },
    )
    yield _sse(None, "[DONE]")


class MockModel:
    """Run with ``with MockModel(Script()) as mock: mock.url``."""

    def __init__(self, script: Script | None = None) -> None:
        self.script = script or Script()
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                body = json.dumps(
                    {"object": "list", "data": [{"id": "mock-model", "object": "model"}]}
                )
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                owner.handle(self, body, raw.decode("utf-8", "replace"))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> MockModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], text: str) -> None:
        path = handler.path
        seen = [int(m.group(1)) for m in _STEP_RE.finditer(text)]
        step = (max(seen) + 1) if seen else 1
        names = _tool_names(body)
        if "/messages" in path:
            protocol, tool = "anthropic", _pick_tool(names, ("Bash",))
        elif "/responses" in path:
            protocol, tool = "responses", _pick_tool(names, ("exec_command", "shell"))
        else:
            protocol, tool = "chat", _pick_tool(names, ("bash",))
        commands = self.script.calls_for(step) if names else []
        with self._lock:
            self.requests.append(
                {
                    "path": path,
                    "protocol": protocol,
                    "step": step,
                    "tools": len(names),
                    "calls": commands,
                }
            )
        if protocol == "anthropic":
            chunks = _anthropic(step, commands, tool, self.script.final_text)
        elif protocol == "responses":
            chunks = _responses(step, commands, tool, self.script.final_text)
        else:
            chunks = _chat(step, commands, tool, self.script.final_text)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        try:
            for chunk in chunks:
                handler.wfile.write(chunk)
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        handler.close_connection = True


if __name__ == "__main__":
    import sys

    with MockModel(Script(steps=int(sys.argv[1]) if len(sys.argv) > 1 else 4)) as mock:
        print(mock.url, flush=True)
        threading.Event().wait()
