"""Copilot's ``copilot -p … --output-format json`` stream.

Templates follow tests/transcripts/copilot/five-steps.jsonl (Copilot CLI
1.0.102): every event is ``{"type", "data", ["ephemeral"], "id", "timestamp",
"parentId"}``. Per model call: ``assistant.turn_start`` and ``model.call_start``
(before the request), deltas, ``model.call_finished``, exactly one
``assistant.message`` (with ``toolRequests``), then per tool
``tool.execution_start`` … ``tool.execution_complete``, ``assistant.turn_end``.
Ephemeral ``session.background_tasks_changed`` noise comes with every tool, as
in the recording. The session id appears only in the final ``result`` line.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from tether.testing.scripted_agent.emit import LineWriter, hex_id, iso_now, new_uuid, user_home
from tether.testing.scripted_agent.plan import Call, Step
from tether.testing.scripted_agent.render import Context, Ending, Outcome

VERSION = "1.0.102"
SKILLS = (
    (
        "customize-cloud-agent",
        "Skill for customizing the Copilot cloud agent (formerly known as Copilot coding agent) "
        "environment, including copilot-setup-steps.yml configuration, preinstalling tools and "
        "dependencies, runners, and settings. Use when the user mentions copilot-setup-steps, "
        "copilot setup steps, or wants to configure the cloud agent environment.",
    ),
    (
        "github-pr-media",
        "Upload an image or video to GitHub's user attachments API and embed it in a pull "
        "request description or comment. Use when asked to add screenshots, diagrams, "
        "recordings, or other media to a PR or GitHub comment.",
    ),
)


TELEMETRY = {
    "properties": {
        "customTimeout": "false",
        "executionMode": "sync",
        "detached": "false",
        "sandboxApplied": "false",
        "sandboxOptOutRequested": "false",
    },
    "metrics": {
        "commandTimeout": 30000,
        "context_token_limit": 128000,
        "context_current_tokens": 10400,
        "large_output_threshold_bytes": 20480,
        "result_token_count": 17,
    },
}


class Renderer:
    id_prefix = "call"
    todo_output = ""

    def __init__(self, ctx: Context, out: LineWriter) -> None:
        self.ctx = ctx
        self.out = out
        self.started = time.monotonic()
        self.parent: str | None = new_uuid()
        self.interaction = new_uuid()
        self.user_message = new_uuid()
        self.turn = "0"
        self.shells = 0
        self.first_call = True

    def _event(
        self, kind: str, data: dict[str, Any], *, ephemeral: bool = False, flag_first: bool = False
    ) -> None:
        event: dict[str, Any] = {"type": kind}
        if ephemeral and flag_first:  # some events carry the flag before their data
            event["ephemeral"] = True
        event["data"] = data
        if ephemeral:
            event["ephemeral"] = True
        event_id = new_uuid()
        event.update({"id": event_id, "timestamp": iso_now(), "parentId": self.parent})
        self.parent = event_id
        self.out.line(event)

    def begin(self) -> None:
        home = user_home(self.ctx.env)
        builtin = f"{home}/.cache/copilot/pkg/linux-x64/{VERSION}/builtin"
        skills = [
            {
                "name": name,
                "commandName": name,
                "description": text,
                "source": "builtin",
                "userInvocable": False,
                "enabled": True,
                "path": f"{builtin}/{name}/SKILL.md",
            }
            for name, text in SKILLS
        ]
        self._event("session.skills_loaded", {"skills": skills}, ephemeral=True)
        self._event("session.mcp_servers_loaded", {"servers": []}, ephemeral=True, flag_first=True)
        self._event("session.tools_updated", {"model": self.ctx.model}, ephemeral=True)
        now = iso_now().replace("Z", "+00:00")
        self._event(
            "user.message",
            {
                "content": self.ctx.prompt,
                "transformedContent": (
                    f"<current_datetime>{now}</current_datetime>\n\n{self.ctx.prompt}"
                ),
                "messageId": self.user_message,
                "supportedNativeDocumentMimeTypes": [],
                "delivery": "idle",
                "interactionId": self.interaction,
                "turnId": "0",
                "parentAgentTaskId": new_uuid(),
            },
        )

    def step_requested(self, number: int) -> None:
        self.turn = str(number - 1)
        self._event(
            "assistant.turn_start", {"turnId": self.turn, "interactionId": self.interaction}
        )
        self._event(
            "model.call_start", {"turnId": self.turn, "model": self.ctx.model}, ephemeral=True
        )

    def model_step(self, step: Step) -> None:
        message_id = new_uuid()
        if step.kind == "final":
            self._event("assistant.message_start", {"messageId": message_id}, ephemeral=True)
            delta = {"messageId": message_id, "deltaContent": step.text}
            self._event("assistant.message_delta", delta, ephemeral=True)
        for call in step.calls:
            delta = {
                "toolCallId": call.call_id,
                "toolName": "bash",
                "toolType": "function",
                "inputDelta": _json_args(call),
            }
            self._event("assistant.tool_call_delta", delta, ephemeral=True)
        self._event(
            "model.call_finished",
            {
                "turnId": self.turn,
                "dispatchDurationMs": 1,
                "outcome": "success",
                "editClassifierVersion": 1,
                "interactionId": self.interaction,
                "containsBuiltInFileEditRequest": False,
            },
            ephemeral=True,
        )
        requests = [
            {
                "toolCallId": call.call_id,
                "name": "bash",
                "arguments": _args(call),
                "type": "function",
                "intentionSummary": f"scripted step {call.step}",
                "toolTitle": "Running command",
            }
            for call in step.calls
        ]
        self._event(
            "assistant.message",
            {
                "messageId": message_id,
                "originatingMessageId": self.user_message,
                "model": self.ctx.model,
                "content": step.text,
                "toolRequests": requests,
                "interactionId": self.interaction,
                "turnId": self.turn,
                "rte": False,
                "apiCallId": f"chatcmpl-scripted{hex_id(12)}",
            },
        )
        self.first_call = True
        if step.kind == "final":
            self._final_result()

    def _final_result(self) -> None:
        data = {"model": self.ctx.model, "isByok": True, "result": "success"}
        self._event("model.call_final_result", data, ephemeral=True)

    def call_started(self, call: Call) -> None:
        self._event(
            "tool.execution_start",
            {
                "toolCallId": call.call_id,
                "toolName": "bash",
                "arguments": _args(call),
                "turnId": self.turn,
                "model": self.ctx.model,
                "toolTitle": "Running command",
                "shellToolInfo": {"possiblePaths": [], "hasWriteFileRedirection": False},
            },
        )
        if self.first_call:
            self.first_call = False
            self._final_result()

    def call_finished(self, outcome: Outcome) -> None:
        call = outcome.call
        data: dict[str, Any] = {
            "toolCallId": call.call_id,
            "model": self.ctx.model,
            "interactionId": self.interaction,
            "turnId": self.turn,
            "rte": False,
        }
        if outcome.status == "completed":
            for _ in range(2):
                self._event("session.background_tasks_changed", {}, ephemeral=True)
            shell = {"toolCallId": call.call_id, "stream": "stdout", "text": outcome.output}
            self._event("tool.shell_output", {**shell, "sequence": 0}, ephemeral=True)
            partial = {"toolCallId": call.call_id, "partialOutput": outcome.output}
            for _ in range(2):
                self._event("tool.execution_partial_result", partial, ephemeral=True)
            text = (
                f"{outcome.output}<shellId: {self.shells} completed with exit code "
                f"{outcome.exit_code}>"
            )
            self.shells += 1
            data["shellExecution"] = {"exitCode": outcome.exit_code}
            data["success"] = not outcome.is_error
            data["result"] = {"content": text, "detailedContent": text}
            data["toolTelemetry"] = TELEMETRY
        else:
            data["success"] = False
            data["error"] = {"message": outcome.output, "code": "denied"}
        self._event("tool.execution_complete", data)

    def step_done(self, step: Step, outcomes: Sequence[Outcome]) -> None:
        self._event("assistant.turn_end", {"turnId": self.turn})

    def finish(self, ending: Ending) -> int:
        code = 0
        if ending.kind in ("failed", "max_turns"):
            code = 1
            data = {
                "errorType": "query",
                "message": ending.message,
                "originatingMessageId": self.user_message,
            }
            self._event("session.error", data)
        elif ending.kind == "completed":
            self._event("assistant.turn_end", {"turnId": self.turn})
        self._event("assistant.idle", {}, ephemeral=True)
        self._event("session.background_tasks_changed", {}, ephemeral=True)
        elapsed = int((time.monotonic() - self.started) * 1000)
        self.out.line(
            {
                "type": "result",
                "timestamp": iso_now(),
                "sessionId": self.ctx.session_id,
                "exitCode": code,
                "usage": {
                    "premiumRequests": 0,
                    "totalApiDurationMs": elapsed,
                    "sessionDurationMs": elapsed,
                    "codeChanges": {"linesAdded": 0, "linesRemoved": 0, "filesModified": []},
                },
            }
        )
        return code


def _args(call: Call) -> dict[str, str]:
    return {"command": call.command, "description": f"scripted step {call.step}"}


def _json_args(call: Call) -> str:
    return json.dumps(_args(call))


def step_detector() -> Callable[[bytes], bool]:
    def starts_step(line: bytes) -> bool:
        return line.startswith(b'{"type":"assistant.turn_start"')

    return starts_step
