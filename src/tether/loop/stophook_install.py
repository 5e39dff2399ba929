"""Writing ``tether loop stop-hook`` into a harness's hook configuration, and taking it out.

It sits next to the gate's entries in the same files (``tether hooks install
--loop``), found by ``tether.gate.hook_install.config_path``, and follows the same
rules: merged with what is there, idempotent (our entry is replaced, never
duplicated), an absolute command path, atomic writes. Our entry is the one
whose command contains ``loop stop-hook``; the gate's entries are never touched.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tether.gate.hook_file import (
    Change,
    InstallError,
    apply,
    dump_json,
    load_json_object,
    read_text,
)
from tether.gate.hook_install import config_path

HARNESSES = ("claude-code", "codex", "copilot")
STOP_EVENT = {"claude-code": "Stop", "codex": "Stop", "copilot": "agentStop"}
TIMEOUT_S = 30
MARK = "loop stop-hook"


def stop_hook_argv(harness: str) -> list[str]:
    """The absolute command that runs the stop hook (never a bare interpreter name)."""
    beside = Path(sys.executable).parent / "tether"
    prefix = [str(beside)] if beside.exists() else [sys.executable, "-m", "tether.cli.main"]
    return [*prefix, "loop", "stop-hook", "--harness", harness]


def _ours(command: object) -> bool:
    return isinstance(command, str) and MARK in command


def _position(entries: list[Any], key: str, nested: bool) -> int | None:
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        handlers = entry.get("hooks") if nested else [entry]
        if isinstance(handlers, list) and any(
            isinstance(h, dict) and _ours(h.get(key)) for h in handlers
        ):
            return index
    return None


def _without_ours(entries: list[Any], key: str, nested: bool) -> list[Any]:
    kept: list[Any] = []
    for entry in entries:
        if nested and isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
            handlers = [
                h for h in entry["hooks"] if not (isinstance(h, dict) and _ours(h.get(key)))
            ]
            if handlers:
                kept.append({**entry, "hooks": handlers})
        elif not (isinstance(entry, dict) and _ours(entry.get(key))):
            kept.append(entry)
    return kept


def plan(
    harness: str,
    scope: str,
    *,
    install: bool,
    project_dir: str,
    argv: list[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Change:
    """What adding (or removing) the stop hook would do to the harness's hook file."""
    if harness not in HARNESSES:
        raise InstallError(f"the loop's stop hook is for {', '.join(HARNESSES)}, not {harness!r}")
    path = config_path(harness, scope, project_dir, environ)
    before = read_text(path)
    data = load_json_object(path, before)
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f'{path}: "hooks" is not an object')
    event = STOP_EVENT[harness]
    copilot = harness == "copilot"
    key = "bash" if copilot else "command"
    entries = hooks.get(event, [])
    if not isinstance(entries, list):
        raise InstallError(f'{path}: "hooks.{event}" is not a list')
    at = _position(entries, key, nested=not copilot)
    entries = _without_ours(entries, key, nested=not copilot)
    if install:
        command = shlex.join(argv or stop_hook_argv(harness))
        if copilot:
            ours: dict[str, Any] = {"type": "command", "bash": command, "timeoutSec": TIMEOUT_S}
        else:
            ours = {"hooks": [{"type": "command", "command": command, "timeout": TIMEOUT_S}]}
        # Where it was, else first: the gate appends its own entries last, so both stay put.
        entries.insert(min(at, len(entries)) if at is not None else 0, ours)
    merged = {k: (entries if k == event else v) for k, v in hooks.items()}
    merged.setdefault(event, entries)
    if not entries:
        del merged[event]
    out = {k: v for k, v in data.items() if k != "hooks"}
    if merged:
        out["hooks"] = merged
    if copilot and merged:
        out.setdefault("version", 1)
    if not out or (copilot and set(out) <= {"version"}):
        return Change(path, before, None)
    return Change(path, before, dump_json(out))


def install_stop_hook(
    harness: str, scope: str, *, project_dir: str, remove: bool = False, dry_run: bool = False
) -> list[str]:
    """Add (or remove) the stop hook and say what happened, one line per fact."""
    change = plan(harness, scope, install=not remove, project_dir=project_dir)
    verb = "removed from" if remove else "added to"
    if not change.changed:
        return [f"{change.path}: loop stop hook already {'absent' if remove else 'present'}"]
    if dry_run:
        return [change.diff().rstrip("\n"), f"(dry run: {change.path} not written)"]
    apply(change)
    lines = [f"loop stop hook {verb} {change.path}"]
    if not remove:
        lines.append(f"the stop hook runs as: {shlex.join(stop_hook_argv(harness))}")
    return lines
