"""`tether mcp install|uninstall`: each harness's file, idempotent, other servers kept,
malformed files refused untouched."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest
from tests.install_support import TETHER, tether_in


def mcp(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return tether_in(project, home, "mcp", *args)


def test_claude_code_gets_a_project_mcp_json_beside_the_users_servers(
    project: Path, home: Path
) -> None:
    other = {"type": "stdio", "command": "other-server", "args": ["--x"]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": other}, "k": 1}))
    done = mcp(project, home, "install", "--harness", "claude-code")
    assert done.returncode == 0, done.stderr
    data = json.loads((project / ".mcp.json").read_text())
    assert data["mcpServers"]["other"] == other and data["k"] == 1
    assert data["mcpServers"]["tether"] == {"type": "stdio", "command": TETHER, "args": ["mcp"]}
    again = mcp(project, home, "install", "--harness", "claude-code")
    assert again.stdout == f"claude-code: {project / '.mcp.json'}: nothing to change\n"
    removed = mcp(project, home, "uninstall", "--harness", "claude-code")
    assert removed.returncode == 0, removed.stderr
    assert json.loads((project / ".mcp.json").read_text()) == {
        "mcpServers": {"other": other},
        "k": 1,
    }


def test_codex_config_toml_keeps_its_comments_and_other_servers(project: Path, home: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = '# my settings\nmodel = "m"\n\n[mcp_servers.other]\ncommand = "other"\n'
    config.write_text(original)
    done = mcp(project, home, "install", "--harness", "codex", "--scope", "user")
    assert done.returncode == 0, done.stderr
    text = config.read_text()
    assert text.startswith('# my settings\nmodel = "m"\n')
    assert "mcp_optional_startup_grace_ms = 30000 # written by tether mcp install\n" in text
    data = tomllib.loads(text)
    assert data["mcp_servers"]["tether"] == {
        "command": TETHER,
        "args": ["mcp"],
        "startup_timeout_sec": 30,
        "tool_timeout_sec": 3600,
    }
    assert data["mcp_servers"]["other"] == {"command": "other"}
    assert (
        "nothing to change"
        in mcp(project, home, "install", "--harness", "codex", "--scope", "user").stdout
    )
    assert mcp(project, home, "uninstall", "--harness", "codex", "--scope", "user").returncode == 0
    assert config.read_text().rstrip("\n") == original.rstrip("\n")


def test_copilot_shares_the_workspace_mcp_json_and_adds_its_tools_key(
    project: Path, home: Path
) -> None:
    done = mcp(project, home, "install", "--all")
    assert done.returncode == 0, done.stderr
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["tether"]
    assert entry == {"type": "stdio", "command": TETHER, "args": ["mcp"], "tools": ["*"]}
    user = mcp(project, home, "install", "--harness", "copilot", "--scope", "user")
    assert user.returncode == 0, user.stderr
    config = json.loads((home / ".copilot" / "mcp-config.json").read_text())
    assert config["mcpServers"]["tether"]["tools"] == ["*"]


def test_vibe_gets_an_mcp_servers_entry_beside_the_others(project: Path, home: Path) -> None:
    config = project / ".vibe" / "config.toml"
    config.parent.mkdir()
    config.write_text('[[mcp_servers]]\nname = "other"\ntransport = "stdio"\ncommand = "o"\n')
    assert mcp(project, home, "install", "--harness", "vibe").returncode == 0
    servers = tomllib.loads(config.read_text())["mcp_servers"]
    assert servers == [
        {"name": "other", "transport": "stdio", "command": "o"},
        {"name": "tether", "transport": "stdio", "command": TETHER, "args": ["mcp"]},
    ]
    again = mcp(project, home, "install", "--harness", "vibe")
    assert "nothing to change" in again.stdout
    assert mcp(project, home, "uninstall", "--harness", "vibe").returncode == 0
    assert tomllib.loads(config.read_text())["mcp_servers"] == [servers[0]]


@pytest.mark.parametrize(
    ("harness", "relative", "text"),
    [
        ("claude-code", ".mcp.json", '{"mcpServers": {"other": '),
        ("claude-code", ".mcp.json", '{"mcpServers": []}'),
        ("codex", ".codex/config.toml", "[mcp_servers.other\ncommand = 1\n"),
        ("vibe", ".vibe/config.toml", 'mcp_servers = "no"\n'),
    ],
)
def test_a_malformed_file_is_refused_and_left_untouched(
    project: Path, home: Path, harness: str, relative: str, text: str
) -> None:
    path = project / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    done = mcp(project, home, "install", "--harness", harness)
    assert done.returncode == 3
    assert done.stderr.startswith(f"tether: error: refused: {path} ")
    assert done.stderr.count("\n") == 1
    assert path.read_text() == text


def test_dry_run_shows_the_diff_and_writes_nothing(project: Path, home: Path) -> None:
    done = mcp(project, home, "install", "--all", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert f"+++ {project / '.mcp.json'}" in done.stdout
    assert '+    "tether": {' in done.stdout
    assert f"+++ {project / '.codex' / 'config.toml'}" in done.stdout
    assert list(project.iterdir()) == []


def test_pi_is_refused_with_what_it_uses_instead(project: Path, home: Path) -> None:
    done = mcp(project, home, "install", "--harness", "pi")
    assert done.returncode == 2
    assert "Pi has no MCP client" in done.stderr
    assert "tether skills install --harness pi" in done.stderr
