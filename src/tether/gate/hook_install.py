"""Writing the gate into each harness's hook configuration, and taking it out.

Which file each harness reads (``config_path``), what installing or
uninstalling does to it (``plan``, a :class:`~tether.gate.hook_file.Change`
that ``--dry-run`` can show as a diff), and what the user still has to do.
Installs merge with what is there, are idempotent and use the absolute path of
the installed ``tether-gate`` console script: the JSON files in
:mod:`tether.gate.hook_json`, Vibe's TOML in :mod:`tether.gate.hook_vibe`,
Pi's extension in :mod:`tether.gate.pi_gate_extension`; writing in
:mod:`tether.gate.hook_file`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, NamedTuple

from tether.gate import pi_gate_extension
from tether.gate.hook_command import gate_argv
from tether.gate.hook_file import Change, InstallError, read_text
from tether.gate.hook_json import (
    CLAUDE_EVENTS,
    CLAUDE_TOOL_EVENTS,
    CODEX_EVENTS,
    CODEX_TOOL_EVENTS,
    claude_like_hooks,
    merge_claude_like,
    merge_copilot,
)
from tether.gate.hook_vibe import vibe_change

SCOPES = ("project", "user")
COPILOT_FILE = "tether-gate.json"
PI_FILE = "tether-gate.ts"
VIBE_FILE = "hooks.toml"


class _Where(NamedTuple):
    """Where a harness reads its hooks: in the project, and in its home folder."""

    project: tuple[str, ...]
    home_variable: str
    home_default: tuple[str, ...]  # below $HOME when the variable is unset
    in_home: tuple[str, ...]


_WHERE = {
    "claude-code": _Where(
        (".claude", "settings.json"), "CLAUDE_CONFIG_DIR", (".claude",), ("settings.json",)
    ),
    "codex": _Where((".codex", "hooks.json"), "CODEX_HOME", (".codex",), ("hooks.json",)),
    "copilot": _Where(
        (".github", "hooks", COPILOT_FILE), "COPILOT_HOME", (".copilot",), ("hooks", COPILOT_FILE)
    ),
    "pi": _Where(
        (".pi", "extensions", PI_FILE),
        "PI_CODING_AGENT_DIR",
        (".pi", "agent"),
        ("extensions", PI_FILE),
    ),
    "vibe": _Where((".vibe", VIBE_FILE), "VIBE_HOME", (".vibe",), (VIBE_FILE,)),
}
HARNESSES = tuple(_WHERE)


def claude_settings_for_run(gate_argv: list[str]) -> dict[str, Any]:
    """Claude Code settings (for ``--settings``) that route every hook event to the gate.

    ``gate_argv`` is the argv prefix that runs the gate, e.g. the absolute
    path of the ``tether-gate`` console script.
    """
    return {"hooks": claude_like_hooks(gate_argv, "claude-code", CLAUDE_EVENTS, CLAUDE_TOOL_EVENTS)}


def _pi_change(path: str, gate: list[str] | None) -> Change:
    before = read_text(path)
    if before is not None and pi_gate_extension.MARKER not in before:
        raise InstallError(
            f"{path} exists and was not written by tether; move it away, then install again"
        )
    return Change(path, before, None if gate is None else pi_gate_extension.render(gate))


def config_path(
    harness: str, scope: str, project_dir: str, environ: Mapping[str, str] | None = None
) -> str:
    """The hook file ``harness`` reads in ``scope`` (the user's: under its home variable)."""
    env = os.environ if environ is None else environ
    if harness not in HARNESSES:
        raise InstallError(f"unknown harness {harness!r}; known: {', '.join(HARNESSES)}")
    if scope not in SCOPES:
        raise InstallError(f"unknown scope {scope!r}; use project or user")
    where = _WHERE[harness]
    if scope == "project":
        return os.path.join(project_dir, *where.project)
    home = env.get("HOME") or os.path.expanduser("~")
    base = env.get(where.home_variable) or os.path.join(home, *where.home_default)
    return os.path.join(base, *where.in_home)


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
        hooks = (
            claude_like_hooks(argv, harness, CLAUDE_EVENTS, CLAUDE_TOOL_EVENTS) if argv else None
        )
        return merge_claude_like(path, hooks)
    if harness == "codex":
        hooks = claude_like_hooks(argv, harness, CODEX_EVENTS, CODEX_TOOL_EVENTS) if argv else None
        return merge_claude_like(path, hooks)
    if harness == "copilot":
        return merge_copilot(path, argv)
    if harness == "vibe":
        return vibe_change(path, argv)
    return _pi_change(path, argv)


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
        found = ["Pi loads the extension at its next start (or run /reload in a running Pi)."]
        if scope == "project":
            found.append(
                "Pi 1.x loads a project's extensions only in a trusted project: trust it when "
                "Pi asks (or /trust; --approve for one headless run), or install with --scope "
                "user. `tether doctor --harness pi` checks it."
            )
        return found
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
