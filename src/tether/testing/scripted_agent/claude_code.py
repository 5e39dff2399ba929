"""Claude Code's ``-p --output-format stream-json --verbose`` stream.

Templates follow tests/transcripts/claude-code/five-steps.jsonl (Claude Code
2.1.332): a ``system``/``init`` line, one ``assistant`` line per content block
(all blocks of a response share ``message.id``), one ``user`` line per tool
result, and a final ``result`` line whose keys keep the CLI's own odd order.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from tether.testing.scripted_agent.emit import LineWriter, iso_now, new_uuid, user_home
from tether.testing.scripted_agent.plan import Call, Step, todo_input
from tether.testing.scripted_agent.render import Context, Ending, Outcome

VERSION = "2.1.332"
TODO_RESULT = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list "
    "to track your progress. Please proceed with the current tasks if applicable"
)
TOOLS = [
    "Task", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree",
    "ExitWorktree", "ListAgents", "Monitor", "NotebookEdit", "Read", "ReportFindings",
    "ScheduleWakeup", "SendMessage", "Skill", "TaskStop", "ToolSearch", "WebFetch",
    "WebSearch", "Workflow", "Write",
]  # fmt: skip
SKILLS = [
    "deep-research", "dataviz", "update-config", "verify", "debug", "code-review", "simplify",
    "batch", "fewer-permission-prompts", "doctor", "loop", "claude-api", "workflow-authoring",
    "run", "run-skill-generator", "plugin-authoring",
]  # fmt: skip
SLASH_COMMANDS = [
    *SKILLS, "agents", "auto-mode-setup", "autocompact", "clear", "color", "compact", "config",
    "output-style", "context", "effort", "fast", "focus", "heapdump", "init", "mcp", "model",
    "__remote-workflow", "workflow-launch-exec", "reload-plugins", "reload-skills", "rename",
    "security-review", "usage", "insights", "recap", "goal", "list-agents", "team-onboarding",
]  # fmt: skip
PLUGINS = [
    {"name": n, "path": "builtin", "source": f"{n}@builtin"}
    for n in ("cc-plugin-agents-md", "cc-plugin-privacy", "cc-plugin-plugin-authoring")
]
CAPABILITIES = [
    "interrupt_receipt_v1", "interrupt_cancel_queued_v1", "interrupt_send_now_v1",
    "interrupt_requeue_taken_v1", "msg_lifecycle_v1", "request_marker_lists_v1",
    "ask_user_question_unanswered_v1", "lifecycle_wakeup_source_v1",
    "sdk_mcp_tools_list_changed", "sdk_mcp_manifests", "mcp_read_resource_v1",
    "mcp_tool_ui_meta_v1", "ui_surface_v1", "mcp_call_result_not_for_model_v1",
    "mcp_call_soft_error_result_v1", "mcp_call_check_permissions_v1", "voice_call_talk_line_v1",
    "withdrawn_files_note_v2", "withdrawn_tools_v1", "ui_pane_widget_v1",
    "reload_plugins_refuse_if_busy_v1", "get_usage_detached_v1", "silent_resend_files_v1",
]  # fmt: skip
SUBAGENT_STATS = {
    "spawned": 0,
    "requested": {"background": 0, "foreground": 0, "unset": 0},
    "started_in_background": 0,
    "max_depth": 0,
    "spawned_by_subagents": 0,
    "completed": 0,
    "failed": 0,
    "killed": {"parent": 0, "user": 0, "system": 0},
    "refused": {"depth_limit": 0, "concurrency_limit": 0, "budget": 0},
    "by_type": {},
}
# (subtype, is_error, terminal_reason, stop_reason, api_error_status) per ending
_ENDINGS: dict[str, tuple[str, bool, str, str | None, int | None]] = {
    "completed": ("success", False, "completed", "end_turn", None),
    "hook_stopped": ("success", False, "hook_stopped", "tool_use", None),
    "max_turns": ("error_max_turns", True, "max_turns", "tool_use", None),
    "failed": ("error_during_execution", True, "model_error", None, 500),
}
COST_PER_INPUT_TOKEN = 4e-6


class Renderer:
    id_prefix = "toolu"
    todo_output = TODO_RESULT

    def __init__(self, ctx: Context, out: LineWriter) -> None:
        self.ctx = ctx
        self.out = out
        self.started = time.monotonic()
        self.assistant_lines = 0
        self.input_tokens = 0
        self.output_tokens = 0

    def _envelope(self, kind: str, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": kind,
            "message": message,
            "parent_tool_use_id": None,
            "session_id": self.ctx.session_id,
            "uuid": new_uuid(),
            "timestamp": iso_now(),
        }

    def begin(self) -> None:
        cwd = self.ctx.cwd
        dashed = re.sub(r"[^A-Za-z0-9]", "-", cwd)
        home = self.ctx.env.get("CLAUDE_CONFIG_DIR") or str(user_home(self.ctx.env) / ".claude")
        self.out.line(
            {
                "type": "system",
                "subtype": "init",
                "cwd": cwd,
                "session_id": self.ctx.session_id,
                "tools": TOOLS,
                "mcp_servers": [],
                "model": self.ctx.model,
                "permissionMode": "default",
                "slash_commands": SLASH_COMMANDS,
                "terminal_slash_commands": ["doctor", "color", "focus", "reload-plugins"],
                "apiKeySource": "ANTHROPIC_API_KEY",
                "claude_code_version": VERSION,
                "output_style": "default",
                "agents": ["claude", "Explore", "general-purpose", "Plan", "statusline-setup"],
                "skills": SKILLS,
                "plugins": PLUGINS,
                "capabilities": CAPABILITIES,
                "analytics_disabled": True,
                "product_feedback_disabled": True,
                "served_by_anthropic": False,
                "uuid": new_uuid(),
                "sandbox_enabled": False,
                "memory_paths": {"auto": f"{home}/projects/{dashed}/memory/"},
                "original_cwd": cwd,
                "additional_directories": [],
                "messaging_socket_path": f"{tempfile.gettempdir()}/cc-socks/{os.getpid()}.sock",
                "fast_mode_state": "off",
                "fast_mode_disabled_reason": "sdk_opt_in_required",
                "per_turn_effort_active": False,
                "ultrathink_available": False,
                "ultrathink_typed_raises": False,
                "view_mode": "default",
            }
        )

    def step_requested(self, number: int) -> None:
        pass

    def model_step(self, step: Step) -> None:
        tokens = 12400 + 80 * step.number
        self.input_tokens += tokens
        self.output_tokens += 12
        blocks: list[dict[str, Any]]
        if step.kind == "final":
            blocks = [{"type": "text", "text": step.text}]
        else:
            blocks = [_tool_use(call) for call in step.calls]
        for block in blocks:
            self.assistant_lines += 1
            message = {
                "id": f"msg_scripted_{step.message_id}",
                "type": "message",
                "role": "assistant",
                "model": self.ctx.model,
                "content": [block],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": tokens,
                    "output_tokens": 1,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                },
                "context_management": None,
            }
            self.out.line(self._envelope("assistant", message))

    def call_started(self, call: Call) -> None:
        pass

    def call_finished(self, outcome: Outcome) -> None:
        call = outcome.call
        content = outcome.output.rstrip("\n")
        line = self._envelope(
            "user",
            {
                "role": "user",
                "content": [
                    {
                        "tool_use_id": call.call_id,
                        "type": "tool_result",
                        "content": content,
                        "is_error": outcome.is_error,
                    }
                ],
            },
        )
        if outcome.is_error:
            line["tool_use_result"] = f"Error: {content}"
            decision = {"decision": "deny", "source": "hook", "reason_type": "hook"}
        else:
            line["tool_use_result"] = _tool_use_result(call, content)
            decision = {"decision": "accept", "source": "config", "reason_type": "rule"}
        line["tool_result_meta"] = [{"id": call.call_id, "permission_decision": decision}]
        self.out.line(line)

    def step_done(self, step: Step, outcomes: Sequence[Outcome]) -> None:
        pass

    def finish(self, ending: Ending) -> int:
        subtype, is_error, terminal, stop_reason, api_status = _ENDINGS[ending.kind]
        cost = round(self.input_tokens * COST_PER_INPUT_TOKEN, 6)
        elapsed = int((time.monotonic() - self.started) * 1000)
        model_usage = {
            self.ctx.model: {
                "inputTokens": self.input_tokens,
                "outputTokens": self.output_tokens,
                "cacheReadInputTokens": 0,
                "cacheCreationInputTokens": 0,
                "webSearchRequests": 0,
                "costUSD": cost,
                "contextWindow": 1000000,
                "maxOutputTokens": 32000,
                "thinkingTokens": 0,
                "cacheCreationEphemeral5mInputTokens": 0,
                "cacheCreationEphemeral1hInputTokens": 0,
                "canonicalModel": self.ctx.model,
                "provider": "firstParty",
                "costBasis": "unknown",
            }
        }
        line: dict[str, Any] = {
            "duration_api_ms": elapsed,
            "stop_reason": stop_reason,
            "session_id": self.ctx.session_id,
            "total_cost_usd": cost,
            "usage": {
                "input_tokens": self.input_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": self.output_tokens,
                "output_tokens_details": {"thinking_tokens": 0},
                "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                "service_tier": "standard",
                "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
                "inference_geo": "",
                "iterations": [],
                "speed": "standard",
                "fallback_credit": None,
            },
            "modelUsage": model_usage,
            "permission_denials": [
                {"tool_name": c.hook_tool_name, "tool_use_id": c.call_id, "tool_input": _input(c)}
                for c in ending.denials
            ],
            "terminal_reason": terminal,
            "fast_mode_state": "off",
            "fast_mode_disabled_reason": "sdk_opt_in_required",
            "subagent_stats": SUBAGENT_STATS,
            "safety_stops": 0,
            "is_error": is_error,
            "num_turns": self.assistant_lines,
            "subtype": subtype,
            "api_error_status": api_status,
        }
        if is_error:
            line["errors"] = [ending.message]
        else:
            line["result"] = ending.final_text if ending.kind == "completed" else ending.message
        line.update(
            {
                "ttft_ms": 1,
                "type": "result",
                "duration_ms": elapsed,
                "uuid": new_uuid(),
                "ttft_stream_ms": 1,
                "time_to_request_ms": 1,
                "first_content_frame_ms": 1,
                "queued_turn_count": 0,
                "result_index": 0,
                "model_usage_since_last_result": model_usage,
            }
        )
        self.out.line(line)
        return 1 if is_error else 0


def _input(call: Call) -> dict[str, Any]:
    return todo_input() if call.kind == "todo" else call.hook_tool_input()


def _tool_use(call: Call) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": call.call_id,
        "name": call.hook_tool_name,
        "input": _input(call),
    }


def _tool_use_result(call: Call, content: str) -> dict[str, Any]:
    if call.kind == "todo":
        return {"oldTodos": [], "newTodos": todo_input()["todos"]}
    return {
        "stdout": content,
        "stderr": "",
        "interrupted": False,
        "isImage": False,
        "noOutputExpected": False,
    }


def step_detector() -> Callable[[bytes], bool]:
    last: list[str | None] = [None]

    def starts_step(line: bytes) -> bool:
        if b'"assistant"' not in line:
            return False
        try:
            obj = json.loads(line)
        except ValueError:
            return False
        if not isinstance(obj, dict) or obj.get("type") != "assistant":
            return False
        message = obj.get("message")
        msg_id = message.get("id") if isinstance(message, dict) else None
        new = msg_id is None or msg_id != last[0]
        last[0] = msg_id
        return new

    return starts_step
