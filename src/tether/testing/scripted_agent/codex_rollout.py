"""Codex's rollout file, as codex-cli 0.171.0 writes it.

Records follow tests/transcripts/codex/five-steps.session.jsonl: every line is
``{"timestamp", "ordinal", "type", "payload"[, "metadata"]}``. Per completed
model response: its ``response_item`` lines (``function_call`` or the
assistant ``message``) and then one ``token_usage_record`` carrying the
``response_id``; per executed call an ``event_msg``/``item_completed`` and the
``function_call_output``; after a step's outputs an ``event_msg``/``token_count``.
Long static parts of the real records (base instructions, world state) are left
out; the fields tether reads are all there.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from tether.testing.scripted_agent.emit import (
    JsonlFile,
    hex_id,
    iso_now,
    ms_now,
    new_uuid,
    user_home,
)
from tether.testing.scripted_agent.plan import TODOS, Step
from tether.testing.scripted_agent.render import Context, Outcome

CLI_VERSION = "0.171.0"


def rollout_path(session_id: str, env: Mapping[str, str], now: datetime | None = None) -> Path:
    """``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<id>.jsonl`` (local time)."""
    home = env.get("CODEX_HOME") or user_home(env) / ".codex"
    now = now or datetime.now().astimezone()
    stamp = now.strftime("%Y-%m-%dT%H-%M-%S")
    day = Path(home) / "sessions" / now.strftime("%Y") / now.strftime("%m") / now.strftime("%d")
    return day / f"rollout-{stamp}-{session_id}.jsonl"


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cached_input_tokens": 0,
        "cache_write_input_tokens": 0,
        "output_tokens": output_tokens,
        "reasoning_output_tokens": 0,
        "total_tokens": input_tokens + output_tokens,
    }


class Rollout:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.file = JsonlFile(rollout_path(ctx.session_id, ctx.env))
        self.ordinal = 0
        self.history = 0
        self.turn_id = new_uuid()
        self.started = ms_now()
        self.last = (0, 0)
        self.total = (0, 0)

    def _record(
        self, kind: str, payload: dict[str, Any], metadata: dict[str, Any] | None = None
    ) -> None:
        line: dict[str, Any] = {
            "timestamp": iso_now(),
            "ordinal": self.ordinal,
            "type": kind,
            "payload": payload,
        }
        if metadata is not None:
            line["metadata"] = metadata
        self.ordinal += 1
        self.file.line(line)

    def _item(self, payload: dict[str, Any]) -> None:
        self.history += 1
        meta = {
            "history_sequence": self.history,
            "sampled_through_sequence": self.history - 1,
            "client_authored": False,
            "model_search_state": "unused",
        }
        self._record("response_item", payload, meta)

    def _event(self, payload: dict[str, Any]) -> None:
        self._record("event_msg", payload)

    def begin(self) -> None:
        ctx = self.ctx
        self._record(
            "session_meta",
            {
                "account_scoped": True,
                "session_id": ctx.session_id,
                "id": ctx.session_id,
                "timestamp": iso_now(),
                "cwd": ctx.cwd,
                "runtime_workspace_roots": [ctx.cwd],
                "originator": "codex_exec",
                "cli_version": CLI_VERSION,
                "source": "exec",
                "thread_source": "user",
                "model_provider": "scripted",
                "base_instructions": {"text": "(scripted agent: base instructions left out)"},
                "history_mode": "paginated",
                "context_window": {"window_id": new_uuid()},
            },
        )
        self._event(
            {
                "type": "task_started",
                "turn_id": self.turn_id,
                "root_turn_id": self.turn_id,
                "started_at": self.started // 1000,
                "model_context_window": 258400,
                "collaboration_mode_kind": "default",
            }
        )
        self._item(
            {
                "type": "message",
                "id": f"msg_{new_uuid()}",
                "role": "user",
                "content": [{"type": "input_text", "text": ctx.prompt}],
            }
        )

    def response(self, step: Step, input_tokens: int, output_tokens: int) -> None:
        """One completed model response: its items, then its ``token_usage_record``."""
        turn = {"turn_id": self.turn_id}
        if step.kind == "final":
            self._item(
                {
                    "type": "message",
                    "status": "completed",
                    "id": f"msg_{hex_id(12)}",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": step.text, "annotations": []}],
                    "internal_chat_message_metadata_passthrough": turn,
                }
            )
        for call in step.calls:
            if call.kind == "todo":
                plan = [{"step": text, "status": status} for text, status in TODOS]
                name, arguments = "update_plan", json.dumps({"plan": plan})
            else:
                name, arguments = "exec_command", json.dumps({"cmd": call.command})
            self._item(
                {
                    "type": "function_call",
                    "status": "completed",
                    "id": f"fc_{hex_id(12)}",
                    "name": name,
                    "arguments": arguments,
                    "call_id": call.call_id,
                    "internal_chat_message_metadata_passthrough": turn,
                }
            )
        self.last = (input_tokens, output_tokens)
        self.total = (self.total[0] + input_tokens, self.total[1] + output_tokens)
        total = _usage(*self.total)
        self._record(
            "token_usage_record",
            {
                "thread_id": self.ctx.session_id,
                "turn_id": self.turn_id,
                "session_id": self.ctx.session_id,
                "root_turn_id": self.turn_id,
                "response_id": f"resp_scripted_{hex_id(12)}",
                "usage": _usage(input_tokens, output_tokens),
                "turn_token_usage": total,
                "thread_token_usage": total,
            },
        )

    def call_output(self, outcome: Outcome) -> None:
        call = outcome.call
        if call.kind == "shell" and outcome.status == "completed":
            now = ms_now()
            self._event(
                {
                    "type": "item_completed",
                    "thread_id": self.ctx.session_id,
                    "turn_id": self.turn_id,
                    "item": {
                        "type": "CommandExecution",
                        "id": call.call_id,
                        "process_id": str(os.getpid()),
                        "command": ["/bin/bash", "-lc", call.command],
                        "cwd": f"file://{self.ctx.cwd}",
                        "parsed_cmd": [{"type": "unknown", "cmd": call.command}],
                        "source": "unified_exec_startup",
                        "status": "failed" if outcome.is_error else "completed",
                        "aggregated_output": outcome.output,
                        "exit_code": outcome.exit_code,
                        "duration": {"secs": 0, "nanos": 0},
                    },
                    "started_at_ms": now,
                    "completed_at_ms": now,
                }
            )
        if call.kind == "todo":
            output = outcome.output
        else:
            output = (
                f"Chunk ID: {hex_id(6)}\nWall time: 0.0000 seconds\n"
                f"Process exited with code {outcome.exit_code}\nOutput:\n{outcome.output}"
            )
        self._item(
            {
                "type": "function_call_output",
                "id": f"fco_{new_uuid()}",
                "call_id": call.call_id,
                "output": output,
                "internal_chat_message_metadata_passthrough": {"turn_id": self.turn_id},
            }
        )

    def token_count(self) -> None:
        self._event(
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": _usage(*self.total),
                    "last_token_usage": _usage(*self.last),
                    "last_usage_includes_reasoning": False,
                    "model_context_window": 258400,
                },
                "rate_limits": None,
            }
        )

    def error(self, message: str) -> None:
        self._event({"type": "error", "message": message})

    def complete(self, last_message: str) -> None:
        self.token_count()
        now = ms_now()
        self._event(
            {
                "type": "task_complete",
                "root_turn_id": self.turn_id,
                "turn_id": self.turn_id,
                "last_agent_message": last_message,
                "started_at": self.started // 1000,
                "completed_at": now // 1000,
                "duration_ms": now - self.started,
                "time_to_first_token_ms": 1,
            }
        )
