"""Pi's ``pi --mode json`` stream.

Templates follow tests/transcripts/pi/five-steps.jsonl (pi 0.73.1): the
``session`` header, ``agent_start``, then per model call ``turn_start`` (printed
before the request goes out), ``message_start``/``message_update``*/
``message_end`` of the assistant message, per tool ``tool_execution_start``,
two ``tool_execution_update``, ``tool_execution_end``, a ``toolResult``
message pair, ``turn_end``; at the end ``agent_end`` with every message.

A failed model call is what pi prints for one: an assistant message with
``stopReason: "error"`` and ``errorMessage``; pi's json mode still exits 0.
Pi has no turn cap of its own, so ``--max-turns`` just ends the run there
(``agent_end``) without another model call.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

from tether.testing.scripted_agent.emit import LineWriter, hex_id, iso_now, ms_now
from tether.testing.scripted_agent.plan import Call, Step
from tether.testing.scripted_agent.render import Context, Ending, Outcome

ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def _usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "input": input_tokens,
        "output": output_tokens,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": input_tokens + output_tokens,
        "cost": dict(ZERO_COST),
    }


def _text(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


class Renderer:
    id_prefix = "call"
    todo_output = ""

    def __init__(self, ctx: Context, out: LineWriter) -> None:
        self.ctx = ctx
        self.out = out
        self.messages: list[dict[str, Any]] = []
        self.assistant: dict[str, Any] = {}
        self.results: list[dict[str, Any]] = []

    def _message(self, message: dict[str, Any]) -> None:
        self.out.line({"type": "message_start", "message": message})
        self.out.line({"type": "message_end", "message": message})
        self.messages.append(message)

    def begin(self) -> None:
        self.out.line(
            {
                "type": "session",
                "version": 3,
                "id": self.ctx.session_id,
                "timestamp": iso_now(),
                "cwd": self.ctx.cwd,
            }
        )
        self.out.line({"type": "agent_start"})

    def step_requested(self, number: int) -> None:
        self.out.line({"type": "turn_start"})
        if number == 1:
            prompt = {"role": "user", "content": _text(self.ctx.prompt), "timestamp": ms_now()}
            self._message(prompt)

    def _new_assistant(self) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": [],
            "api": "openai-completions",
            "provider": "scripted",
            "model": self.ctx.model,
            "usage": _usage(0, 0),
            "stopReason": "stop",
            "timestamp": ms_now(),
        }

    def _update(self, event: dict[str, Any], message: dict[str, Any]) -> None:
        event["partial"] = copy.deepcopy(message)
        self.out.line(
            {"type": "message_update", "assistantMessageEvent": event, "message": message}
        )

    def model_step(self, step: Step) -> None:
        msg = self._new_assistant()
        self.out.line({"type": "message_start", "message": copy.deepcopy(msg)})
        msg["responseId"] = f"chatcmpl-scripted{hex_id(12)}"
        usage = _usage(1400 + 70 * step.number, 12)
        if step.kind == "final":
            msg["content"] = _text(step.text)
            self._update({"type": "text_start", "contentIndex": 0}, msg)
            self._update({"type": "text_delta", "contentIndex": 0, "delta": step.text}, msg)
            msg["usage"] = usage
            self._update({"type": "text_end", "contentIndex": 0, "content": step.text}, msg)
        else:
            # While streaming, each tool call block also carries its raw argument
            # text and stream index; both are gone once the call is complete.
            for i, call in enumerate(step.calls):
                args = {"command": call.command}
                delta = json.dumps(args)
                block = {
                    "type": "toolCall",
                    "id": call.call_id,
                    "name": "bash",
                    "arguments": args,
                    "partialArgs": delta,
                    "streamIndex": i,
                }
                msg["content"].append(block)
                self._update({"type": "toolcall_start", "contentIndex": i}, msg)
                msg["stopReason"] = "toolUse"
                self._update({"type": "toolcall_delta", "contentIndex": i, "delta": ""}, msg)
                self._update({"type": "toolcall_delta", "contentIndex": i, "delta": delta}, msg)
            for block in msg["content"]:
                del block["partialArgs"], block["streamIndex"]
            msg["usage"] = usage
            for i, block in enumerate(msg["content"]):
                self._update({"type": "toolcall_end", "contentIndex": i, "toolCall": block}, msg)
        self.out.line({"type": "message_end", "message": msg})
        self.messages.append(msg)
        self.assistant = msg
        self.results = []

    def call_started(self, call: Call) -> None:
        self.out.line(
            {
                "type": "tool_execution_start",
                "toolCallId": call.call_id,
                "toolName": "bash",
                "args": {"command": call.command},
            }
        )

    def call_finished(self, outcome: Outcome) -> None:
        call = outcome.call
        base = {"toolCallId": call.call_id, "toolName": "bash", "args": {"command": call.command}}
        content = _text(outcome.output)
        if outcome.status == "completed":
            update = {"type": "tool_execution_update", **base}
            self.out.line({**update, "partialResult": {"content": []}})
            self.out.line({**update, "partialResult": {"content": content, "details": {}}})
        end = {
            "type": "tool_execution_end",
            "toolCallId": call.call_id,
            "toolName": "bash",
            "result": {"content": content},
            "isError": outcome.is_error,
        }
        self.out.line(end)
        self.results.append(
            {
                "role": "toolResult",
                "toolCallId": call.call_id,
                "toolName": "bash",
                "content": content,
                "isError": outcome.is_error,
                "timestamp": ms_now(),
            }
        )

    def step_done(self, step: Step, outcomes: Sequence[Outcome]) -> None:
        for result in self.results:
            self._message(result)
        self._turn_end()

    def _turn_end(self) -> None:
        self.out.line({"type": "turn_end", "message": self.assistant, "toolResults": self.results})
        self.results = []

    def finish(self, ending: Ending) -> int:
        if ending.kind == "failed":
            msg = self._new_assistant()
            self.out.line({"type": "message_start", "message": copy.deepcopy(msg)})
            msg["stopReason"] = "error"
            msg["errorMessage"] = ending.message
            self.out.line({"type": "message_end", "message": msg})
            self.messages.append(msg)
            self.assistant = msg
            self._turn_end()
        elif ending.kind == "completed":
            self._turn_end()
        self.out.line({"type": "agent_end", "messages": self.messages})
        return 0


def step_detector() -> Callable[[bytes], bool]:
    def starts_step(line: bytes) -> bool:
        return line.startswith(b'{"type":"turn_start"')

    return starts_step
