"""Registering ``tether mcp`` in each harness's MCP configuration, and taking it out.

Where each harness reads its MCP servers (from the installed CLIs):

- Claude Code: ``.mcp.json`` in the project (``mcpServers``), ``~/.claude.json``
  for the user;
- Codex: ``[mcp_servers.<name>]`` in ``.codex/config.toml`` (trusted projects)
  or ``$CODEX_HOME/config.toml``;
- Copilot CLI: ``.mcp.json`` or ``.github/mcp.json`` in the workspace,
  ``$COPILOT_HOME/mcp-config.json`` for the user (``mcpServers``);
- Mistral Vibe: ``[[mcp_servers]]`` entries in ``.vibe/config.toml`` (trusted
  folders) or ``$VIBE_HOME/config.toml``;
- Pi 1.x (``@earendil-works/pi-coding-agent``): ``.pi/mcp.json`` (trusted
  projects) or ``$PI_CODING_AGENT_DIR/mcp.json`` (``~/.pi/agent/mcp.json``),
  ``mcpServers``. Pi 0.73 (``@mariozechner/pi-coding-agent``) has no MCP client
  and ignores the file: it reaches the same operations through the skills.

The entry is named ``tether`` and carries tether's mark
(:mod:`tether.cli.mcp_server.install_entry`); an entry of that name without the
mark is refused (``--force`` replaces or removes it). Other servers and every
other key stay as they are (TOML files keep their comments and layout); a file
is never deleted. A file that does not parse is refused and left untouched. A
plan is computed first, so ``--dry-run`` shows the diff.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.cli.mcp_server.install_entry import NAME, RefusedFileError, is_ours, marked_env
from tether.cli.mcp_server.install_toml import codex_change, vibe_change
from tether.core.errors import ConfigError, UsageError
from tether.fs import atomic_write_text
from tether.harness_registry import BUILTIN

# the agent CLIs tether knows; each has an MCP client (Pi from 1.x on)
HARNESSES = tuple(name for name in BUILTIN if name != "scripted")
MCP_HARNESSES = HARNESSES
SCOPES = ("project", "user")
PI_DESCRIPTION = "tether: the work loop, the board, the wiki and its room, ingest, subagents"


def server_argv() -> list[str]:
    """The absolute command that starts the server: the installed ``tether``, then ``mcp``."""
    beside = Path(sys.executable).parent / "tether"
    if os.access(beside, os.X_OK):
        return [str(beside), "mcp"]
    found = shutil.which("tether")
    if found:
        return [str(Path(found).resolve()), "mcp"]
    return [sys.executable, "-m", "tether.cli.main", "mcp"]


@dataclass(frozen=True)
class Change:
    path: Path
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                (self.after or "").splitlines(keepends=True),
                fromfile=str(self.path),
                tofile=str(self.path),
            )
        )


def _home(env: Mapping[str, str]) -> Path:
    home = env.get("HOME")
    return Path(home) if home else Path.home()


def _base(env: Mapping[str, str], variable: str, default: str) -> Path:
    value = env.get(variable)
    return Path(value) if value else _home(env) / default


def config_path(
    harness: str, scope: str, project_dir: Path, env: Mapping[str, str] | None = None
) -> Path:
    env = os.environ if env is None else env
    if harness not in MCP_HARNESSES:
        raise UsageError(f"unknown harness {harness!r}; known: {', '.join(HARNESSES)}")
    if scope not in SCOPES:
        raise UsageError(f"unknown scope {scope!r}; use project or user")
    project = scope == "project"
    if harness == "claude-code":
        return project_dir / ".mcp.json" if project else _home(env) / ".claude.json"
    if harness == "codex":
        base = project_dir / ".codex" if project else _base(env, "CODEX_HOME", ".codex")
        return base / "config.toml"
    if harness == "copilot":
        if project:
            return project_dir / ".mcp.json"
        return _base(env, "COPILOT_HOME", ".copilot") / "mcp-config.json"
    if harness == "pi":
        if project:
            return project_dir / ".pi" / "mcp.json"
        return _base(env, "PI_CODING_AGENT_DIR", ".pi/agent") / "mcp.json"
    base = project_dir / ".vibe" if project else _base(env, "VIBE_HOME", ".vibe")
    return base / "config.toml"


def _read(path: Path) -> str | None:
    try:
        return path.read_text("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read {path}: {exc}; it is left untouched", path=str(path)
        ) from None


# --- JSON: Claude Code, Copilot, Pi 1.x ---------------------------------------------


def _json_entry(harness: str, argv: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "stdio", "command": argv[0], "args": argv[1:]}
    entry["env"] = marked_env()
    if harness == "copilot":
        entry["tools"] = ["*"]
    if harness == "pi":
        # direct: the model sees the tools from its first request (Pi waits for such a
        # server before the first prompt); codemode, Pi's default, would hide them
        entry = {**entry, "exposure": "direct", "description": PI_DESCRIPTION}
    return entry


def _json_change(
    harness: str, path: Path, text: str | None, argv: list[str] | None, force: bool
) -> str | None:
    if text is None or not text.strip():
        data: dict[str, Any] = {}
    else:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise RefusedFileError(path, f"is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise RefusedFileError(path, "does not hold a JSON object")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise RefusedFileError(path, "has an mcpServers that is not an object")
    current = servers.get(NAME)
    if current is not None and not force and not is_ours(current):
        raise RefusedFileError.not_ours(path, uninstall=argv is None)
    if argv is None:
        if NAME not in servers:
            return text
        servers = {k: v for k, v in servers.items() if k != NAME}
    else:
        entry = _json_entry(harness, argv)
        if isinstance(current, dict) and is_ours(current):
            # .mcp.json is shared by Claude Code and Copilot: keep what the other added
            entry = {**current, **entry} if harness == "copilot" else entry
            if "tools" in current:
                entry["tools"] = current["tools"]
        if current == entry:
            return text
        servers = {**servers, NAME: entry}
    return json.dumps({**data, "mcpServers": servers}, indent=2) + "\n"


@dataclass
class Planner:
    """The changes of one command, harness by harness, computed before any is written.

    A file two harnesses share is planned from what the earlier change left in
    it (``pending``): a dry run of ``--all`` writes nothing in between.
    """

    scope: str
    project_dir: Path
    install: bool  # False: take tether's entry out
    # replace or remove an entry named ``tether`` that tether did not write
    force: bool = False
    env: Mapping[str, str] | None = None
    argv: list[str] | None = None  # the server's command line; None: this tether's
    pending: dict[Path, str | None] = field(default_factory=dict)

    def plan(self, harness: str) -> Change:
        """The change that registers (or removes) tether in ``harness``."""
        path = config_path(harness, self.scope, self.project_dir, self.env)
        before = self.pending[path] if path in self.pending else _read(path)
        command = (self.argv or server_argv()) if self.install else None
        if harness == "codex":
            after = codex_change(path, before, command, force=self.force)
        elif harness == "vibe":
            after = vibe_change(path, before, command, force=self.force)
        else:
            after = _json_change(harness, path, before, command, self.force)
        self.pending[path] = after
        return Change(path, before, after)


def apply(change: Change) -> None:
    if not change.changed:
        return
    if change.after is None:
        return  # nothing was there, nothing is written
    atomic_write_text(change.path, change.after)


def notes(harness: str, scope: str) -> list[str]:
    """What a person should know after the install."""
    if harness == "claude-code":
        found = [
            "claude -p sends its first request before the server is up unless "
            "CLAUDE_CODE_MCP_STARTUP_WAIT_MS=30000 is in its environment (tether run sets it)."
        ]
        if scope == "project":
            found.insert(
                0,
                "Claude Code asks once to approve a project's .mcp.json servers "
                "(or run it with --mcp-config .mcp.json).",
            )
        return found
    if harness == "copilot" and scope == "project":
        return [
            "Copilot reads a workspace's .mcp.json only in a trusted folder (trusted_folders "
            "in ~/.copilot/config.json, or trust it at its next start)."
        ]
    if harness == "codex" and scope == "project":
        return ["Codex reads .codex/config.toml only in a trusted project."]
    if harness == "vibe" and scope == "project":
        return ["Vibe reads .vibe/config.toml only in a trusted folder."]
    if harness == "pi":
        found = [
            "Pi 1.x reads this file; Pi 0.73 has no MCP client and uses the skills "
            "(`tether skills install --harness pi`). `pi mcp list` shows the server."
        ]
        if scope == "project":
            found.append("Pi reads .pi/mcp.json only in a trusted project (/trust, or --approve).")
        return found
    return []
