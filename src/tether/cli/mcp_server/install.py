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
- Pi has no MCP client: it reaches the same operations through tether's skills
  and CLI.

The entry is named ``tether``; other servers and every other key stay as they
are (TOML files keep their comments and layout). A file that does not parse is
refused and left untouched. A plan is computed first, so ``--dry-run`` shows
the diff.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.errors import ConfigError, UsageError
from tether.fs import atomic_write_text
from tether.harness_registry import BUILTIN

# the agent CLIs tether knows; Pi's has no MCP client
HARNESSES = tuple(name for name in BUILTIN if name != "scripted")
NO_MCP_CLIENT = ("pi",)
MCP_HARNESSES = tuple(name for name in HARNESSES if name not in NO_MCP_CLIENT)
SCOPES = ("project", "user")
NAME = "tether"
# Codex gives a server 10 s to start and a call 60 s by default: too short for a
# busy machine's first import of the SDK, and for a tick that runs a unit or a
# subagents_wait with a long timeout.
CODEX_STARTUP_TIMEOUT = 30
CODEX_TOOL_TIMEOUT = 3600
# Codex starts a turn without a server still starting once a grace period passes;
# the SDK's first import on a busy machine takes longer than its default.
CODEX_GRACE_KEY = "mcp_optional_startup_grace_ms"
CODEX_GRACE_MS = 30000
CODEX_GRACE_NOTE = "written by tether mcp install"
PI_ADVICE = (
    "Pi has no MCP client; it reaches the same operations through tether's skills "
    "(`tether skills install --harness pi`), which call the tether CLI."
)


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
    if harness in NO_MCP_CLIENT:
        raise UsageError(f"refused: {PI_ADVICE}")
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


def _refuse(path: Path, why: str) -> ConfigError:
    return ConfigError(
        f"refused: {path} {why}; it is left untouched. Fix it by hand, then run again.",
        path=str(path),
    )


# --- JSON: Claude Code, Copilot --------------------------------------------------------


def _json_entry(harness: str, argv: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "stdio", "command": argv[0], "args": argv[1:]}
    if harness == "copilot":
        entry["tools"] = ["*"]
    return entry


def _json_change(harness: str, path: Path, text: str | None, argv: list[str] | None) -> str | None:
    if text is None or not text.strip():
        data: dict[str, Any] = {}
    else:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise _refuse(path, f"is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise _refuse(path, "does not hold a JSON object")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise _refuse(path, "has an mcpServers that is not an object")
    if argv is None:
        if NAME not in servers:
            return text
        servers = {k: v for k, v in servers.items() if k != NAME}
    else:
        entry = _json_entry(harness, argv)
        if harness == "copilot" and isinstance(servers.get(NAME), dict):
            # .mcp.json is shared with Claude Code: keep its entry, add what Copilot needs
            entry = {**servers[NAME], **entry}
        elif isinstance(servers.get(NAME), dict) and "tools" in servers[NAME]:
            entry["tools"] = servers[NAME]["tools"]
        servers = {**servers, NAME: entry}
    data = {**data, "mcpServers": servers}
    if argv is None and not servers and set(data) == {"mcpServers"}:
        return None
    return json.dumps(data, indent=2) + "\n"


# --- TOML: Codex, Vibe ----------------------------------------------------------------


def _toml_change(harness: str, path: Path, text: str | None, argv: list[str] | None) -> str | None:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise _refuse(path, f"is not valid TOML ({exc})") from None
    if harness == "codex":
        servers = doc.get("mcp_servers")
        if servers is not None and not isinstance(servers, dict):
            raise _refuse(path, "has an mcp_servers that is not a table")
        grace = doc.get(CODEX_GRACE_KEY)
        ours = grace is not None and CODEX_GRACE_NOTE in (grace.trivia.comment or "")
        if argv is None:
            if servers is None or NAME not in servers:
                return text
            del servers[NAME]
            if not servers:
                del doc["mcp_servers"]
            if ours:
                del doc[CODEX_GRACE_KEY]
        else:
            if grace is None:
                value = tomlkit.item(CODEX_GRACE_MS)
                value.comment(CODEX_GRACE_NOTE)
                doc.add(CODEX_GRACE_KEY, value)  # tomlkit puts it before the tables
            if servers is None:
                servers = tomlkit.table(is_super_table=True)
                doc["mcp_servers"] = servers
            table = tomlkit.table()
            table["command"] = argv[0]
            table["args"] = argv[1:]
            table["startup_timeout_sec"] = CODEX_STARTUP_TIMEOUT
            table["tool_timeout_sec"] = CODEX_TOOL_TIMEOUT
            if NAME in servers and servers[NAME].unwrap() == table.unwrap() and grace is not None:
                return text
            servers[NAME] = table
    else:
        listed = doc.get("mcp_servers")
        if listed is not None and not isinstance(listed, list):
            raise _refuse(path, "has an mcp_servers that is not an array of tables")
        raw: list[Any] = [] if listed is None else doc.unwrap()["mcp_servers"]
        if not all(isinstance(i, dict) for i in raw):
            raise _refuse(path, "has an mcp_servers entry that is not a table")
        others: list[dict[str, Any]] = [i for i in raw if i.get("name") != NAME]
        if argv is None:
            if len(others) == len(raw):
                return text
            kept = others
        else:
            entry: dict[str, Any] = {
                "name": NAME,
                "transport": "stdio",
                "command": argv[0],
                "args": argv[1:],
            }
            if [i for i in raw if i.get("name") == NAME] == [entry]:
                return text
            kept = [*others, entry]
        if "mcp_servers" in doc:
            del doc["mcp_servers"]
        if kept:
            array = tomlkit.aot()
            for item in kept:
                table = tomlkit.table()
                for key, value in item.items():
                    table[key] = value
                array.append(table)
            doc["mcp_servers"] = array
    after = tomlkit.dumps(doc)
    if argv is None and not after.strip() and text is not None:
        return None
    return after


def plan(
    harness: str,
    scope: str,
    project_dir: Path,
    *,
    install: bool,
    env: Mapping[str, str] | None = None,
    argv: list[str] | None = None,
    pending: Mapping[Path, str | None] | None = None,
) -> Change:
    """The change that registers (or, ``install=False``, removes) tether in ``harness``.

    ``pending``: files as earlier changes of the same command left them (a dry run
    of ``--all`` writes nothing, yet two harnesses may share a file).
    """
    path = config_path(harness, scope, project_dir, env)
    before = pending[path] if pending is not None and path in pending else _read(path)
    command = (argv or server_argv()) if install else None
    if harness in ("codex", "vibe"):
        after = _toml_change(harness, path, before, command)
    else:
        after = _json_change(harness, path, before, command)
    return Change(path, before, after)


def apply(change: Change) -> None:
    if not change.changed:
        return
    if change.after is None:
        change.path.unlink(missing_ok=True)
        return
    atomic_write_text(change.path, change.after)


def notes(harness: str, scope: str) -> list[str]:
    """What a person should know after the install."""
    if harness == "claude-code" and scope == "project":
        return [
            "Claude Code asks once to approve a project's .mcp.json servers "
            "(or run it with --mcp-config .mcp.json)."
        ]
    if harness == "copilot" and scope == "project":
        return [
            "Copilot reads a workspace's .mcp.json only in a trusted folder (trusted_folders "
            "in ~/.copilot/config.json, or trust it at its next start)."
        ]
    if harness == "codex" and scope == "project":
        return ["Codex reads .codex/config.toml only in a trusted project."]
    if harness == "vibe" and scope == "project":
        return ["Vibe reads .vibe/config.toml only in a trusted folder."]
    return []
