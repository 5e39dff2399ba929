"""Mistral Vibe: ``vibe -p … --output streaming``.

Built from Vibe's published source (mistralai/mistral-vibe 2.18,
``vibe/core/output_formatters.py``), not from a recording: Vibe needs Python
3.12 or newer. In streaming mode Vibe prints every message added to the
conversation as one JSON object, ``LLMMessage.model_dump(mode="json")``:

- ``role: "assistant"``: one model response (Vibe appends exactly one per model
  call, streamed or not), with ``message_id`` and ``tool_calls[]``
  (``id``, ``function.name``, ``function.arguments`` as a JSON string);
- ``role: "tool"``: one tool result, ``tool_call_id``, text ``content``;
  failures are wrapped in ``<tool_error>…</tool_error>`` and skipped or
  interrupted calls in ``<user_cancellation>…</user_cancellation>``;
- ``role: "system"`` / ``"user"``: the prompt side, not counted.

The lines have no ``type`` field, no session id and no closing line: the run's
outcome is Vibe's exit code (0 done, 1 for a limit, an error or a refusal).
"""

from __future__ import annotations

import glob
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from tether.errors import ConfigError
from tether.events.model import (
    AnyEvent,
    AssistantText,
    StepEnded,
    StepStarted,
    ToolCallStarted,
    ToolResult,
    unknown,
)
from tether.harnesses.base import IterationSource, RunSpec, decode_line, home_dir


class _Function(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _ToolCall(msgspec.Struct):
    id: str | None = None
    function: _Function | None = None


class _Line(msgspec.Struct):
    role: str | None = None
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    message_id: str | None = None


_decoder = msgspec.json.Decoder(_Line)
_ERROR_PREFIXES = ("<tool_error>", "<user_cancellation>")
MODEL_ENV = "VIBE_ACTIVE_MODEL"


class VibeHarness:
    name: ClassVar[str] = "vibe"
    executable: ClassVar[str] = "vibe"
    iteration_source: ClassVar[IterationSource] = "stream"
    # Vibe makes its own session id and prints it nowhere in streaming mode.
    accepts_session_id: ClassVar[bool] = False
    has_turn_cap: ClassVar[bool] = True

    def build_command(self, spec: RunSpec) -> list[str]:
        argv: list[str] = []
        if spec.model:
            # Vibe has no model flag; any config field can be set as VIBE_<FIELD>.
            # ``env`` sets it for the one process and then execs vibe in place.
            argv += ["env", f"{MODEL_ENV}={spec.model}"]
        if spec.settings_path is not None:
            raise ConfigError(
                "vibe takes no per-run settings file; it reads hooks from "
                ".vibe/hooks.toml in the project or $VIBE_HOME/hooks.toml: set "
                "VIBE_HOME in the run's env instead.",
                path=str(spec.settings_path),
            )
        prompt = " " + spec.prompt if spec.prompt.startswith("-") else spec.prompt
        argv += [self.executable, "-p", prompt, "--output", "streaming"]
        if spec.max_turns is not None:
            argv += ["--max-turns", str(spec.max_turns)]
        argv += list(spec.extra_args)
        return argv

    def parse_line(self, line: bytes) -> list[AnyEvent]:
        obj = decode_line(_decoder, line)
        if isinstance(obj, list):
            return obj
        role = obj.role
        if role == "assistant":
            return _assistant(obj)
        if role == "tool":
            if not obj.tool_call_id:
                return [unknown(line, "tool message without tool_call_id")]
            content = obj.content or ""
            return [
                ToolResult(
                    call_id=obj.tool_call_id,
                    is_error=content.startswith(_ERROR_PREFIXES),
                    output_size=len(content.encode("utf-8", "replace")),
                )
            ]
        if role == "system" or role == "user":
            return []
        return [unknown(line, f"role {role}" if role is not None else None)]

    def parse_session_line(self, line: bytes) -> list[AnyEvent]:
        return []

    def session_file(self, session_id: str, env: Mapping[str, str]) -> Path | None:
        """``$VIBE_HOME/logs/session/session_<time>_<id[:8]>/messages.jsonl``."""
        if len(session_id) < 8 or "/" in session_id:
            return None
        vibe_home = env.get("VIBE_HOME")
        root = Path(vibe_home) if vibe_home else home_dir(env) / ".vibe"
        pattern = f"session_*_{glob.escape(session_id[:8])}"
        for folder in sorted((root / "logs" / "session").glob(pattern), reverse=True):
            if _meta_session_id(folder / "meta.json") == session_id:
                return folder / "messages.jsonl"
        return None


def _meta_session_id(path: Path) -> str | None:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    sid = meta.get("session_id") if isinstance(meta, dict) else None
    return sid if isinstance(sid, str) else None


def _assistant(obj: _Line) -> list[AnyEvent]:
    step_id = obj.message_id
    events: list[AnyEvent] = [StepStarted(message_id=step_id)]
    for call in obj.tool_calls or ():
        if not call.id:
            continue
        fn = call.function or _Function()
        events.append(
            ToolCallStarted(
                call_id=call.id,
                name=fn.name or "",
                input=_arguments(fn.arguments),
                message_id=step_id,
            )
        )
    if obj.content:
        events.append(AssistantText(text=obj.content, message_id=step_id))
    events.append(StepEnded(message_id=step_id))
    return events


def _arguments(raw: str | None) -> Any:
    if not raw:
        return None
    try:
        return msgspec.json.decode(raw)
    except (ValueError, RecursionError):
        return raw  # kept as the model wrote it
