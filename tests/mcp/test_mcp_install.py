"""`tether mcp install|uninstall`: each harness's file, idempotent, other servers kept,
malformed files refused untouched."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest
from tests.install_support import TETHER, tether_in

MARK = {"TETHER_MCP_ENTRY": "written by tether mcp install"}


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
    assert data["mcpServers"]["tether"] == {
        "type": "stdio",
        "command": TETHER,
        "args": ["mcp"],
        "env": MARK,
    }
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
        "env": MARK,
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
    assert entry == {
        "type": "stdio",
        "command": TETHER,
        "args": ["mcp"],
        "env": MARK,
        "tools": ["*"],
    }
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
        # a list: Vibe splits a string command like a shell would
        {"name": "tether", "transport": "stdio", "command": [TETHER, "mcp"], "env": MARK},
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


def test_pi_1x_gets_its_mcp_json_in_the_project_and_for_the_user(project: Path, home: Path) -> None:
    done = mcp(project, home, "install", "--harness", "pi")
    assert done.returncode == 0, done.stderr
    entry = json.loads((project / ".pi" / "mcp.json").read_text())["mcpServers"]["tether"]
    assert entry["command"] == TETHER and entry["args"] == ["mcp"] and entry["env"] == MARK
    assert entry["exposure"] == "direct"
    assert "Pi 0.73 has no MCP client" in done.stdout
    assert "trusted project" in done.stdout
    user = mcp(project, home, "install", "--harness", "pi", "--scope", "user")
    assert user.returncode == 0, user.stderr
    config = json.loads((home / ".pi" / "agent" / "mcp.json").read_text())
    assert config["mcpServers"]["tether"] == entry
    assert mcp(project, home, "uninstall", "--harness", "pi", "--scope", "user").returncode == 0
    assert json.loads((home / ".pi" / "agent" / "mcp.json").read_text()) == {"mcpServers": {}}


USERS_OWN = {"command": "/opt/my-tether-wrapper", "args": ["--profile", "x"]}


@pytest.mark.parametrize(
    ("harness", "relative", "text"),
    [
        ("claude-code", ".mcp.json", json.dumps({"mcpServers": {"tether": USERS_OWN}})),
        ("copilot", ".mcp.json", json.dumps({"mcpServers": {"tether": USERS_OWN}})),
        ("pi", ".pi/mcp.json", json.dumps({"mcpServers": {"tether": USERS_OWN}})),
        ("codex", ".codex/config.toml", '[mcp_servers.tether]\ncommand = "/opt/mine"\n'),
        (
            "vibe",
            ".vibe/config.toml",
            '[[mcp_servers]]\nname = "tether"\ntransport = "stdio"\ncommand = "/opt/mine"\n',
        ),
    ],
)
def test_an_entry_tether_did_not_write_is_neither_replaced_nor_removed(
    project: Path, home: Path, harness: str, relative: str, text: str
) -> None:
    path = project / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    for verb in ("install", "uninstall"):
        done = mcp(project, home, verb, "--harness", harness)
        assert done.returncode == 41, (verb, done.stderr)
        assert "tether mcp install did not write" in done.stderr
        assert "--force" in done.stderr
        assert path.read_text() == text
    forced = mcp(project, home, "install", "--harness", harness, "--force")
    assert forced.returncode == 0, forced.stderr
    assert "TETHER_MCP_ENTRY" in path.read_text()
    assert mcp(project, home, "install", "--harness", harness).returncode == 0


def test_an_entry_an_older_tether_wrote_is_still_its_own(project: Path, home: Path) -> None:
    older = {"type": "stdio", "command": TETHER, "args": ["mcp"]}
    other = {"command": "other"}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"tether": older, "o": other}}))
    done = mcp(project, home, "install", "--harness", "claude-code")
    assert done.returncode == 0, done.stderr
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["tether"]["env"] == MARK


def test_uninstall_keeps_the_file_and_everything_else_in_it(project: Path, home: Path) -> None:
    assert mcp(project, home, "install", "--harness", "claude-code").returncode == 0
    assert mcp(project, home, "uninstall", "--harness", "claude-code").returncode == 0
    # the file stays: a person may have made it, and it may be under version control
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {}}


def test_vibe_keeps_the_comments_of_the_other_entries(project: Path, home: Path) -> None:
    config = project / ".vibe" / "config.toml"
    config.parent.mkdir()
    original = (
        "# my servers\n"
        "[[mcp_servers]]\n"
        "# the first one\n"
        'name = "a"  # inline\n'
        'transport = "stdio"\n'
        'command = "a"\n'
        "\n"
        "# about the last one\n"
        "[[mcp_servers]]\n"
        'name = "b"\n'
        'transport = "stdio"\n'
        'command = "b"\n'
    )
    config.write_text(original)
    assert mcp(project, home, "install", "--harness", "vibe").returncode == 0
    text = config.read_text()
    for comment in ("# my servers", "# the first one", "# inline", "# about the last one"):
        assert comment in text
    assert [s["name"] for s in tomllib.loads(text)["mcp_servers"]] == ["a", "b", "tether"]
    # tether's entry in the middle, with a comment after it: kept on a reinstall and an uninstall
    middle = original.replace(
        "# about the last one\n",
        '[[mcp_servers]]\nname = "tether"\ntransport = "stdio"\ncommand = "old"\n'
        'env = { TETHER_MCP_ENTRY = "written by tether mcp install" }\n\n'
        "# about the last one\n",
    )
    config.write_text(middle)
    assert mcp(project, home, "install", "--harness", "vibe").returncode == 0
    text = config.read_text()
    assert "# about the last one" in text and '"old"' not in text
    assert [s["name"] for s in tomllib.loads(text)["mcp_servers"]] == ["a", "tether", "b"]
    assert mcp(project, home, "uninstall", "--harness", "vibe").returncode == 0
    text = config.read_text()
    for comment in ("# my servers", "# the first one", "# inline", "# about the last one"):
        assert comment in text
    assert [s["name"] for s in tomllib.loads(text)["mcp_servers"]] == ["a", "b"]


def test_vibe_runs_a_command_whose_path_has_a_space(tmp_path: Path) -> None:
    from tether.cli.mcp_server import install as mcp_install

    project = tmp_path / "p"
    project.mkdir()
    argv = ["/opt/my tools/tether", "mcp"]
    planner = mcp_install.Planner("project", project, install=True, env={}, argv=argv)
    change = planner.plan("vibe")
    assert change.after is not None
    (entry,) = tomllib.loads(change.after)["mcp_servers"]
    assert entry["command"] == argv and "args" not in entry


def test_codex_keeps_the_comment_written_after_tethers_table(project: Path, home: Path) -> None:
    config = project / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        "[mcp_servers.first]\n"
        'command = "f"\n\n'
        "[mcp_servers.tether]\n"
        'command = "old"\n'
        'env = { TETHER_MCP_ENTRY = "written by tether mcp install" }\n\n'
        "# about the other one\n"
        "[mcp_servers.other]\n"
        'command = "o"\n'
    )
    assert mcp(project, home, "install", "--harness", "codex").returncode == 0
    text = config.read_text()
    assert "# about the other one" in text and '"old"' not in text
    assert mcp(project, home, "uninstall", "--harness", "codex").returncode == 0
    text = config.read_text()
    assert "# about the other one" in text
    assert sorted(tomllib.loads(text)["mcp_servers"]) == ["first", "other"]
