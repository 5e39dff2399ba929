"""Writing the gate into each harness's hook configuration, and taking it out.

Installs merge with what is there (other hooks stay untouched, in order),
are idempotent (tether's own entries are replaced, never duplicated), use the
absolute path of the installed ``tether-gate`` console script, and write
atomically. A plan is computed first, so ``--dry-run`` can show the diff.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any

from tether.gate import pi_gate_extension

HARNESSES = ("claude-code", "codex", "copilot", "pi", "vibe")
SCOPES = ("project", "user")
HOOK_TIMEOUT_S = 30

# Claude Code: PreToolUse decides, PostToolBatch counts iterations, the rest
# are recorded for the watchdog (activity, permission prompts, idle).
CLAUDE_TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest")
CLAUDE_EVENTS = (
    *CLAUDE_TOOL_EVENTS,
    "PostToolBatch",
    "Notification",
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
)
CODEX_TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PermissionRequest")
CODEX_EVENTS = (
    *CODEX_TOOL_EVENTS,
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
)
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
COPILOT_FILE = "tether-gate.json"
PI_FILE = "tether-gate.ts"
VIBE_FILE = "hooks.toml"
# Vibe: pre_tool decides; post_tool and post_agent are recorded for the watchdog.
VIBE_EVENTS = ("pre_tool", "post_tool", "post_agent")
VIBE_BEGIN = (
    "# >>> tether-gate: written by `tether hooks install`; `tether hooks uninstall` removes it"
)
VIBE_END = "# <<< tether-gate"


class InstallError(Exception):
    """A hook configuration cannot be read or written as asked."""


class Change:
    """One file before and after (``None``: the file does not exist)."""

    __slots__ = ("after", "before", "path")

    def __init__(self, path: str, before: str | None, after: str | None) -> None:
        self.path = path
        self.before = before
        self.after = after

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        before = [] if self.before is None else self.before.splitlines(keepends=True)
        after = [] if self.after is None else self.after.splitlines(keepends=True)
        return "".join(
            difflib.unified_diff(
                before,
                after,
                fromfile=self.path if self.before is not None else "/dev/null",
                tofile=self.path if self.after is not None else "/dev/null",
            )
        )


# --- the gate command ----------------------------------------------------------


def gate_argv() -> list[str]:
    """The absolute argv that runs the installed gate (never a bare ``python3``)."""
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "tether-gate")
    if os.access(beside, os.X_OK):
        return [beside]
    found = shutil.which("tether-gate")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "tether.gate.hook"]


def _hook_argv(gate: list[str], harness: str, event: str | None = None) -> list[str]:
    argv = list(gate)
    if "hook" not in argv:
        argv += ["hook", "--harness", harness]
    if event is not None:
        argv += ["--event", event]
    return argv


def _is_ours(command: object) -> bool:
    return (
        isinstance(command, str)
        and ("tether-gate" in command or "tether.gate.hook" in command)
        and " hook " in f" {command} "
    )


def _claude_like(
    gate: list[str], harness: str, events: tuple[str, ...], tool_events: tuple[str, ...]
) -> dict[str, Any]:
    command = shlex.join(_hook_argv(gate, harness))
    hooks: dict[str, Any] = {}
    for event in events:
        group: dict[str, Any] = {}
        if event in tool_events:
            group["matcher"] = "*"
        group["hooks"] = [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]
        hooks[event] = [group]
    return hooks


def claude_settings_for_run(gate_argv: list[str]) -> dict[str, Any]:
    """Claude Code settings (for ``--settings``) that route every hook event to the gate.

    ``gate_argv`` is the argv prefix that runs the gate, e.g. the absolute
    path of the ``tether-gate`` console script.
    """
    return {"hooks": _claude_like(gate_argv, "claude-code", CLAUDE_EVENTS, CLAUDE_TOOL_EVENTS)}


# --- merging -------------------------------------------------------------------


def _strip_ours_claude_like(hooks: dict[str, Any]) -> dict[str, Any]:
    """The hooks table without tether's entries (empty groups and events dropped)."""
    kept: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            kept[event] = groups
            continue
        new_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                new_groups.append(group)
                continue
            handlers = [
                h
                for h in group["hooks"]
                if not (isinstance(h, dict) and _is_ours(h.get("command")))
            ]
            if handlers:
                new_groups.append({**group, "hooks": handlers})
        if new_groups:
            kept[event] = new_groups
    return kept


def _strip_ours_copilot(hooks: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for event, handlers in hooks.items():
        if not isinstance(handlers, list):
            kept[event] = handlers
            continue
        rest = [h for h in handlers if not (isinstance(h, dict) and _is_ours(h.get("bash")))]
        if rest:
            kept[event] = rest
    return kept


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc}") from exc


def _load_json(path: str, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(
            f"{path} is not valid JSON ({exc}); fix or move it, then install again"
        ) from exc
    if not isinstance(data, dict):
        raise InstallError(f"{path} holds a JSON {type(data).__name__}, not an object")
    return data


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


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _merge_claude_like(path: str, new_hooks: dict[str, Any] | None) -> Change:
    before = _read(path)
    data = _load_json(path, before)
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f'{path}: "hooks" is not an object')
    merged = _strip_ours_claude_like(hooks)
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
    return Change(path, before, _dump(out))


def _merge_copilot(path: str, gate: list[str] | None) -> Change:
    before = _read(path)
    data = _load_json(path, before)
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f'{path}: "hooks" is not an object')
    merged = _strip_ours_copilot(hooks)
    if gate is not None:
        _require_lists(path, merged, COPILOT_EVENTS)
        for event in COPILOT_EVENTS:
            command = shlex.join(_hook_argv(gate, "copilot", event))
            handler = {"type": "command", "bash": command, "timeoutSec": HOOK_TIMEOUT_S}
            merged[event] = [*merged.get(event, []), handler]
    if not merged:
        # Nothing but tether was in the file: remove it.
        rest = {k: v for k, v in data.items() if k not in ("hooks", "version")}
        return Change(path, before, None if not rest else _dump({**rest, "version": 1}))
    return Change(path, before, _dump({**data, "version": data.get("version", 1), "hooks": merged}))


def _pi_change(path: str, gate: list[str] | None) -> Change:
    before = _read(path)
    if before is not None and pi_gate_extension.MARKER not in before:
        raise InstallError(
            f"{path} exists and was not written by tether; move it away, then install again"
        )
    return Change(path, before, None if gate is None else pi_gate_extension.render(gate))


def vibe_block(gate: list[str], events: Iterable[str] = VIBE_EVENTS) -> str:
    """tether's ``[[hooks]]`` entries for Vibe's hooks.toml, between marker comments."""
    lines = [VIBE_BEGIN]
    for event in events:
        command = shlex.join(_hook_argv(gate, "vibe"))
        lines += [
            "[[hooks]]",
            f"name = {json.dumps('tether-gate-' + event.replace('_', '-'))}",
            f'type = "{event}"',
            f"command = {json.dumps(command)}",
            f"timeout = {float(HOOK_TIMEOUT_S)}",
        ]
    lines.append(VIBE_END)
    return "\n".join(lines) + "\n"


def _strip_ours_vibe(text: str) -> str:
    """The file without tether's marked block(s)."""
    kept: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped == VIBE_BEGIN:
            inside = True
        elif inside and stripped == VIBE_END:
            inside = False
        elif not inside:
            kept.append(line)
    return "".join(kept)


def _check_vibe_toml(path: str, text: str, what: str) -> None:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(
            f"{path}: {what} is not valid TOML ({exc}); fix or move it, then install again. "
            f"Nothing was written."
        ) from None
    hooks = data.get("hooks", [])
    if not isinstance(hooks, list) or not all(isinstance(h, dict) for h in hooks):
        raise InstallError(
            f'{path}: "hooks" is not a list of [[hooks]] tables; fix it by hand, then install '
            f"again. Nothing was written."
        )


def merge_vibe_hooks(path: str, before: str | None, block: str | None) -> str | None:
    """Vibe's hooks.toml with tether's block replaced (``None`` block: removed).

    The user's text is kept byte for byte (comments included). A file that is
    not valid TOML, or whose ``hooks`` is not an array of tables (an inline
    ``hooks = [...]`` cannot be appended to), is refused untouched.
    """
    if before is not None:
        _check_vibe_toml(path, before, "the file")
    # The blank line tether puts before its block goes with it.
    rest = _strip_ours_vibe(before or "").rstrip("\n")
    if not rest.strip():
        rest = ""
    if block is None:
        return rest + "\n" if rest else None
    after = (rest + "\n\n" if rest else "") + block
    _check_vibe_toml(path, after, "the file with the gate added")
    return after


def _vibe_change(path: str, gate: list[str] | None) -> Change:
    before = _read(path)
    block = vibe_block(gate) if gate is not None else None
    return Change(path, before, merge_vibe_hooks(path, before, block))


# --- where each harness keeps its configuration -------------------------------


def config_path(
    harness: str, scope: str, project_dir: str, environ: Mapping[str, str] | None = None
) -> str:
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    if harness not in HARNESSES:
        raise InstallError(f"unknown harness {harness!r}; known: {', '.join(HARNESSES)}")
    if scope not in SCOPES:
        raise InstallError(f"unknown scope {scope!r}; use project or user")
    if harness == "claude-code":
        if scope == "project":
            return os.path.join(project_dir, ".claude", "settings.json")
        base = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
        return os.path.join(base, "settings.json")
    if harness == "codex":
        if scope == "project":
            return os.path.join(project_dir, ".codex", "hooks.json")
        base = env.get("CODEX_HOME") or os.path.join(home, ".codex")
        return os.path.join(base, "hooks.json")
    if harness == "copilot":
        if scope == "project":
            return os.path.join(project_dir, ".github", "hooks", COPILOT_FILE)
        base = env.get("COPILOT_HOME") or os.path.join(home, ".copilot")
        return os.path.join(base, "hooks", COPILOT_FILE)
    if harness == "vibe":
        if scope == "project":
            return os.path.join(project_dir, ".vibe", VIBE_FILE)
        base = env.get("VIBE_HOME") or os.path.join(home, ".vibe")
        return os.path.join(base, VIBE_FILE)
    if scope == "project":
        return os.path.join(project_dir, ".pi", "extensions", PI_FILE)
    base = env.get("PI_CODING_AGENT_DIR") or os.path.join(home, ".pi", "agent")
    return os.path.join(base, "extensions", PI_FILE)


def plan(
    harness: str,
    scope: str,
    *,
    install: bool,
    project_dir: str,
    gate: list[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Change:
    """What installing (or uninstalling) the gate would do to one file."""
    path = config_path(harness, scope, project_dir, environ)
    argv = (gate or gate_argv()) if install else None
    if harness == "claude-code":
        hooks = _claude_like(argv, harness, CLAUDE_EVENTS, CLAUDE_TOOL_EVENTS) if argv else None
        return _merge_claude_like(path, hooks)
    if harness == "codex":
        hooks = _claude_like(argv, harness, CODEX_EVENTS, CODEX_TOOL_EVENTS) if argv else None
        return _merge_claude_like(path, hooks)
    if harness == "copilot":
        return _merge_copilot(path, argv)
    if harness == "vibe":
        return _vibe_change(path, argv)
    return _pi_change(path, argv)


def apply(change: Change) -> None:
    """Write (atomically: temp file, fsync, rename) or remove the file."""
    if not change.changed:
        return
    if change.after is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(change.path)
        return
    directory = os.path.dirname(change.path)
    os.makedirs(directory, exist_ok=True)
    mode = 0o644
    with contextlib.suppress(FileNotFoundError):
        mode = os.stat(change.path).st_mode & 0o777
    fd, tmp = tempfile.mkstemp(prefix=".tether-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(change.after)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, change.path)
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def notes(harness: str, scope: str, path: str) -> list[str]:
    """What the user still has to do for the hooks to run."""
    if harness == "codex":
        return [
            "Codex runs new or changed hooks only after you trust them: run `tether hooks "
            "trust --harness codex`, or start `codex` in this project and answer the 'Hooks "
            "need review' prompt with 'Trust all and continue' (or review them with /hooks). "
            "Until then Codex skips the gate; `tether doctor --harness codex` checks it.",
            "Project hooks (.codex/hooks.json) load only in a trusted project folder.",
            "Re-trust after every `tether hooks install` that changed the file (for example "
            "after the tether-gate path moved).",
        ]
    if harness == "copilot" and scope == "project":
        return ["Copilot CLI loads .github/hooks/*.json from the directory it starts in."]
    if harness == "pi":
        return ["Pi loads the extension at its next start (or run /reload in a running Pi)."]
    if harness == "claude-code":
        return ["Claude Code reads the hooks at session start; running sessions keep the old ones."]
    if harness == "vibe":
        return [
            "Vibe reads hooks.toml at session start; running sessions keep the old hooks.",
            *(
                ["Project hooks (.vibe/hooks.toml) load only in a trusted folder (or --trust)."]
                if scope == "project"
                else []
            ),
        ]
    return []


def byte_compile() -> None:
    """Compile the gate's modules now: the hook runs on every tool call.

    An editable install (or PYTHONDONTWRITEBYTECODE=1) leaves no .pyc behind, and
    then every hook call compiles the gate anew (measured: about 1.5x slower).
    """
    import compileall
    import contextlib

    # a read-only install: the hook still works, only slower
    with contextlib.suppress(OSError):
        compileall.compile_dir(os.path.dirname(os.path.abspath(__file__)), quiet=1)
