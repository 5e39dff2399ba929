"""The gate's entries in the JSON hook files: Claude Code, Codex and Copilot CLI.

Merging keeps what is there (other hooks stay untouched, in order) and is
idempotent: tether's own entries are taken out and written again, never
duplicated. An entry the merge would have to unpack or replace is refused.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import Any

from tether.gate.hook_command import HOOK_TIMEOUT_S, hook_argv, is_ours
from tether.gate.hook_file import Change, InstallError, dump_json, load_json_object, read_text

# Claude Code: PreToolUse decides, PostToolBatch counts iterations, the rest
# are recorded for the watchdog (activity, permission prompts, idle).
# Turns, subagents and sessions: the same names in Claude Code and Codex.
_TURN_EVENTS = (
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
)
CLAUDE_TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest")
CLAUDE_EVENTS = (*CLAUDE_TOOL_EVENTS, "PostToolBatch", "Notification", *_TURN_EVENTS)
CODEX_TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PermissionRequest")
CODEX_EVENTS = (*CODEX_TOOL_EVENTS, *_TURN_EVENTS)
COPILOT_EVENTS = (
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "permissionRequest",
    "notification",
    "userPromptSubmitted",
    "agentStop",
    "subagentStart",
    "subagentStop",
    "sessionStart",
    "sessionEnd",
    "errorOccurred",
)


def claude_like_hooks(
    gate: list[str], harness: str, events: tuple[str, ...], tool_events: tuple[str, ...]
) -> dict[str, Any]:
    """The ``hooks`` table (Claude Code's shape, Codex's too) that routes ``events`` to the gate."""
    command = shlex.join(hook_argv(gate, harness))
    hooks: dict[str, Any] = {}
    for event in events:
        group: dict[str, Any] = {}
        if event in tool_events:
            group["matcher"] = "*"
        group["hooks"] = [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]
        hooks[event] = [group]
    return hooks


def _without_ours(handlers: list[Any], key: str) -> list[Any]:
    return [h for h in handlers if not (isinstance(h, dict) and is_ours(h.get(key)))]


def strip_ours(hooks: dict[str, Any], *, grouped: bool) -> dict[str, Any]:
    """The hooks table without tether's entries (empty groups and events dropped).

    ``grouped``: Claude Code's and Codex's shape, handlers (``command``) inside
    matcher groups; else Copilot's, handlers (``bash``) right under the event.
    """
    kept: dict[str, Any] = {}
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            kept[event] = entries
            continue
        if not grouped:
            rest = _without_ours(entries, "bash")
        else:
            rest = []
            for group in entries:
                if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                    rest.append(group)
                elif handlers := _without_ours(group["hooks"], "command"):
                    rest.append({**group, "hooks": handlers})
        if rest:
            kept[event] = rest
    return kept


_JSON_KINDS = {dict: "an object", str: "a string", bool: "a boolean", int: "a number"}


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    return _JSON_KINDS.get(type(value), "a number" if isinstance(value, float) else "a value")


def _require_lists(path: str, hooks: dict[str, Any], events: Iterable[str]) -> None:
    """Refuse to merge into an event whose entry is not a list.

    Merging appends to the list; anything else (an object where a list belongs,
    a string, null) would be unpacked or replaced and the user's entry lost.
    """
    for event in events:
        if event in hooks and not isinstance(hooks[event], list):
            raise InstallError(
                f'{path}: "hooks.{event}" is {_json_kind(hooks[event])}, not a list of hook '
                f"entries; fix it by hand (an entry goes inside [ ]), then install again. "
                f"Nothing was written."
            )


def _read_hooks(path: str) -> tuple[str | None, dict[str, Any], dict[str, Any]]:
    """The file's text, its JSON object and that object's ``hooks`` table."""
    before = read_text(path)
    data = load_json_object(path, before)
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f'{path}: "hooks" is not an object')
    return before, data, hooks


def merge_claude_like(path: str, new_hooks: dict[str, Any] | None) -> Change:
    """Claude Code's or Codex's file with tether's hooks replaced (``None``: removed)."""
    before, data, hooks = _read_hooks(path)
    merged = strip_ours(hooks, grouped=True)
    _require_lists(path, merged, new_hooks or {})
    for event, groups in (new_hooks or {}).items():
        merged[event] = [*merged.get(event, []), *groups]
    out = dict(data)
    if merged:
        out["hooks"] = merged
    else:
        out.pop("hooks", None)
    if not out:
        # Nothing but tether's hooks was there: the file goes.
        return Change(path, before, None)
    return Change(path, before, dump_json(out))


def merge_copilot(path: str, gate: list[str] | None) -> Change:
    """Copilot CLI's hook file with tether's hooks replaced (``None`` gate: removed)."""
    before, data, hooks = _read_hooks(path)
    merged = strip_ours(hooks, grouped=False)
    if gate is not None:
        _require_lists(path, merged, COPILOT_EVENTS)
        for event in COPILOT_EVENTS:
            command = shlex.join(hook_argv(gate, "copilot", event))
            handler = {"type": "command", "bash": command, "timeoutSec": HOOK_TIMEOUT_S}
            merged[event] = [*merged.get(event, []), handler]
    if not merged:
        # Nothing but tether was in the file: remove it.
        rest = {k: v for k, v in data.items() if k not in ("hooks", "version")}
        return Change(path, before, None if not rest else dump_json({**rest, "version": 1}))
    return Change(
        path, before, dump_json({**data, "version": data.get("version", 1), "hooks": merged})
    )
