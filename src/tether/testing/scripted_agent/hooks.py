"""Claude Code style command hooks: ``PreToolUse`` and ``PostToolBatch``.

The settings file has Claude Code's shape::

    {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command",
                                                          "command": "..."}]}],
               "PostToolBatch": [{"hooks": [...]}]}}

Each command is split with :func:`shlex.split` and run without a shell, with
the event's JSON payload on stdin, the agent's environment (``TETHER_*``
untouched) plus ``CLAUDE_PROJECT_DIR``, and the hook's ``timeout`` (seconds,
default 600). The answer is read as Claude Code reads it; see
docs/reference/scripted-harness.md for the rules and their sources.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_TIMEOUT = 600.0
_PLAIN_MATCHER = re.compile(r"[A-Za-z0-9_|]+")


class SettingsError(Exception):
    """The settings file cannot be used; the message says why."""


@dataclass(frozen=True)
class HookCommand:
    argv: tuple[str, ...]
    timeout: float


@dataclass(frozen=True)
class HookGroup:
    matcher: str
    commands: tuple[HookCommand, ...]

    def matches(self, tool_name: str) -> bool:
        m = self.matcher
        if m in ("", "*"):
            return True
        if _PLAIN_MATCHER.fullmatch(m):
            return tool_name in m.split("|")
        try:
            return re.search(m, tool_name) is not None
        except re.error:
            return False


@dataclass(frozen=True)
class Verdict:
    """What the hooks of one event decided, merged over all matching commands."""

    deny: bool = False
    reason: str | None = None
    stop: bool = False
    stop_reason: str | None = None


@dataclass(frozen=True)
class HookConfig:
    pre_tool_use: tuple[HookGroup, ...] = ()
    post_tool_batch: tuple[HookGroup, ...] = ()

    @classmethod
    def load(cls, path: Path | None) -> HookConfig:
        if path is None:
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise SettingsError(f"cannot read settings file {path}: {exc.strerror}") from exc
        except json.JSONDecodeError as exc:
            raise SettingsError(f"settings file {path} is not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise SettingsError(f"settings file {path}: expected a JSON object")
        hooks = data.get("hooks", {})
        if not isinstance(hooks, dict):
            raise SettingsError(f"settings file {path}: 'hooks' must be an object")
        return cls(
            pre_tool_use=_groups(hooks.get("PreToolUse"), "PreToolUse", path),
            post_tool_batch=_groups(hooks.get("PostToolBatch"), "PostToolBatch", path),
        )


def _groups(raw: Any, event: str, path: Path) -> tuple[HookGroup, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SettingsError(f"settings file {path}: hooks.{event} must be a list")
    groups = []
    for i, entry in enumerate(raw):
        where = f"hooks.{event}[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("hooks"), list):
            raise SettingsError(f"settings file {path}: {where} needs a 'hooks' list")
        commands = []
        for j, hook in enumerate(entry["hooks"]):
            if not isinstance(hook, dict) or hook.get("type") != "command":
                continue  # prompt/http/agent hooks are not modelled
            command = hook.get("command")
            if not isinstance(command, str) or not command.strip():
                raise SettingsError(f"settings file {path}: {where}.hooks[{j}] has no command")
            timeout = hook.get("timeout", DEFAULT_TIMEOUT)
            if not isinstance(timeout, int | float) or timeout <= 0:
                raise SettingsError(f"settings file {path}: {where}.hooks[{j}].timeout must be > 0")
            commands.append(HookCommand(tuple(shlex.split(command)), float(timeout)))
        matcher = entry.get("matcher") or ""
        groups.append(HookGroup(str(matcher), tuple(commands)))
    return tuple(groups)


@dataclass(frozen=True)
class _Answer:
    code: int
    stdout: str
    stderr: str


def _run(
    command: HookCommand, payload: Mapping[str, Any], env: Mapping[str, str], cwd: str
) -> _Answer:
    try:
        done = subprocess.run(
            command.argv,
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=dict(env),
            cwd=cwd,
            timeout=command.timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        # A hook that cannot start or runs too long is a non-blocking error.
        sys.stderr.write(f"hook {command.argv[0]!r} failed: {exc}\n")
        return _Answer(1, "", str(exc))
    return _Answer(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def _json_answer(stdout: str) -> dict[str, Any]:
    text = stdout.strip()
    if not text.startswith("{"):
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _stop(data: Mapping[str, Any]) -> str | None:
    """The stop reason when the answer says ``"continue": false``, else None."""
    if data.get("continue") is False:
        return str(data.get("stopReason") or "")
    return None


class HookRunner:
    def __init__(self, config: HookConfig, *, cwd: str, env: Mapping[str, str]) -> None:
        self.config = config
        self.cwd = cwd
        self.env = {**env, "CLAUDE_PROJECT_DIR": cwd}

    def _answers(
        self, groups: tuple[HookGroup, ...], payload: Mapping[str, Any], tool_name: str | None
    ) -> Iterator[tuple[str | None, dict[str, Any]]]:
        """Each hook command's answer, in order: ``(blocked, data)``.

        Exit 2 blocks (``blocked`` is its stderr, ``data`` empty); exit 0 answers
        with JSON (``blocked`` is None); any other exit is reported on stderr and
        passed over. ``tool_name``: only the groups whose matcher takes it.
        """
        for group in groups:
            if tool_name is not None and not group.matches(tool_name):
                continue
            for command in group.commands:
                answer = _run(command, payload, self.env, self.cwd)
                if answer.code == 2:
                    yield answer.stderr.strip(), {}
                elif answer.code != 0:
                    sys.stderr.write(answer.stderr)
                else:
                    yield None, _json_answer(answer.stdout)

    def pre_tool_use(self, tool_name: str, payload: Mapping[str, Any]) -> Verdict:
        deny_reason: str | None = None
        stop_reason: str | None = None
        for blocked, data in self._answers(self.config.pre_tool_use, payload, tool_name):
            if blocked is not None:
                deny_reason = deny_reason or blocked or "blocked by PreToolUse hook"
                continue
            stopped = _stop(data)
            if stopped is not None and stop_reason is None:
                stop_reason = stopped
            reason = _pre_tool_denial(data)
            if reason is not None and deny_reason is None:
                deny_reason = reason
        return Verdict(
            deny=deny_reason is not None,
            reason=deny_reason,
            stop=stop_reason is not None,
            stop_reason=stop_reason,
        )

    def post_tool_batch(self, payload: Mapping[str, Any]) -> Verdict:
        stop_reason: str | None = None
        for blocked, data in self._answers(self.config.post_tool_batch, payload, None):
            if blocked is not None:
                stop_reason = stop_reason or blocked or "stopped by PostToolBatch hook"
                continue
            stopped = _stop(data)
            if stopped is None and data.get("decision") == "block":
                stopped = str(data.get("reason") or "")
            if stopped is not None and stop_reason is None:
                stop_reason = stopped
        return Verdict(stop=stop_reason is not None, stop_reason=stop_reason)


def _pre_tool_denial(data: Mapping[str, Any]) -> str | None:
    """The denial reason of a PreToolUse JSON answer, or None if it allows the call."""
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
        return str(specific.get("permissionDecisionReason") or "denied by PreToolUse hook")
    # The older top-level form: {"decision": "block", "reason": ...}.
    if data.get("decision") == "block":
        return str(data.get("reason") or "blocked by PreToolUse hook")
    return None


def transcript_path(session_id: str, cwd: str, env: Mapping[str, str]) -> str:
    """Where Claude Code keeps the session transcript (what hook payloads name)."""
    config = env.get("CLAUDE_CONFIG_DIR")
    root = Path(config) if config else Path(env.get("HOME") or Path.home()) / ".claude"
    return str(root / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd) / f"{session_id}.jsonl")
