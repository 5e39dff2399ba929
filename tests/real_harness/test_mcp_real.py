"""Real agent CLIs call tether's MCP tools: registered by `tether mcp install`, served by a
live `tether mcp`, counted by the gate, and answered with the documented result.

The scripted model calls the tool by name (scenario ``call:NAME``); the CLI
offers it under its own prefix (``mcp__tether__loop_tick``).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests import agent_clis

from tether.gate import hook_file
from tether.gate import hook_install as gate_install
from tether.testing.model_server import ModelServer, client_setup

pytestmark = pytest.mark.real_harness

TETHER = str(Path(sys.executable).parent / "tether")
PROMPT = "Run one tick of the loop."
CONTINUE = "TETHER-LOOP: CONTINUE — level 1 did work, the loop goes on."
CONFIG = """\
[loop]
board = "tickets"

[profiles.scripted]
harness = "scripted"
args = ["--format", "claude-code", "--steps", "2"]
default = true
"""


def _cli(harness: str) -> Path:
    return agent_clis.require(harness)


def _events(home: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(home / "gate.db")
    try:
        return conn.execute(
            "SELECT event, tool_name, decision FROM events WHERE tool_name LIKE '%tether%' "
            "ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def _tether(project: Path, env: dict[str, str], *args: str) -> None:
    done = subprocess.run(
        [TETHER, *args], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def _run(
    harness: str, tmp_path: Path, scenario: str
) -> tuple[subprocess.CompletedProcess[str], ModelServer, Path, dict[str, str]]:
    exe = _cli(harness)
    project = tmp_path / "project"
    project.mkdir()
    (project / "tether.toml").write_text(CONFIG, encoding="utf-8")
    home = project / ".tether"
    with ModelServer(scenario) as server:
        setup = client_setup(harness, tmp_path / "agent-home", server.port)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **setup.env}
        env["TETHER_HOME"] = str(home)
        _tether(project, env, "board", "add", "Triage me")
        _tether(project, env, "mcp", "install", "--harness", harness, "--project-dir", str(project))
        hook_file.apply(
            gate_install.plan(
                harness, "project", install=True, project_dir=str(project), environ=env
            )
        )
        if harness == "claude-code":
            argv = [str(exe), "-p", PROMPT, "--output-format", "stream-json", "--verbose"]
            argv += ["--model", "mock-model", "--mcp-config", str(project / ".mcp.json")]
            argv += ["--allowedTools", "Bash", "mcp__tether"]
            # offer MCP tools directly: the scripted model does not search deferred tools
            env["ENABLE_TOOL_SEARCH"] = "false"
        else:
            with (Path(setup.env["CODEX_HOME"]) / "config.toml").open("a") as config:
                config.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
            argv = [str(exe), "exec", "--json", *setup.extra_args]
            argv += ["--dangerously-bypass-hook-trust", PROMPT]
        done = subprocess.run(
            argv,
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        return done, server, home, setup.env


def _transcripts(agent_env: dict[str, str], harness: str) -> str:
    if harness == "claude-code":
        root = Path(agent_env["CLAUDE_CONFIG_DIR"]) / "projects"
    else:
        root = Path(agent_env["CODEX_HOME"]) / "sessions"
    files = sorted(root.rglob("*.jsonl"))
    assert files, f"no session transcript under {root}"
    return "".join(f.read_text("utf-8") for f in files)


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_the_agent_calls_loop_tick_and_gets_the_signal_line(harness: str, tmp_path: Path) -> None:
    done, server, home, agent_env = _run(harness, tmp_path, "call:loop_tick")
    assert done.returncode == 0, done.stderr[-3000:]
    first = next(r for r in server.requests if r.step == 1)
    assert first.action == "tool_calls", (first.action, first.tool_names)
    (call,) = first.tool_calls
    assert call.name.endswith("loop_tick") and "tether" in call.name
    # the tool's answer, verbatim, in the CLI's own transcript of the session
    assert CONTINUE in _transcripts(agent_env, harness)
    assert CONTINUE in done.stdout
    # the tick really happened: the ticket left INBOX
    board = json.loads(
        subprocess.run(
            [TETHER, "board", "list", "--json"],
            cwd=tmp_path / "project",
            env={**os.environ, "TETHER_HOME": str(home)},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    )
    assert [t["state"] for t in board["tickets"]] == ["ACTIONABLE"]
    # the gate counted the MCP call like any other tool call
    pre = [e for e in _events(home) if e[0] == "PreToolUse"]
    assert pre == [("PreToolUse", call.name, "allow")]


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_the_agent_calls_subagents_wait_and_gets_the_states(harness: str, tmp_path: Path) -> None:
    done, server, home, agent_env = _run(harness, tmp_path, 'call:subagents_wait:{"timeout": 1}')
    assert done.returncode == 0, done.stderr[-3000:]
    (call,) = next(r for r in server.requests if r.step == 1).tool_calls
    assert call.name.endswith("subagents_wait")
    text = _transcripts(agent_env, harness)
    assert re.search(r'timed_out\\*"\s*:\s*true', text), "no subagents_wait answer"
    assert [e[1] for e in _events(home) if e[0] == "PreToolUse"] == [call.name]


def test_claude_code_headless_offers_tethers_tools_in_its_first_request(
    tmp_path: Path, tether_home: Path
) -> None:
    """`tether run` of `claude -p` in a project whose approved .mcp.json holds tether: the
    first model request already offers the tools (the run sets the variable that makes
    Claude Code wait for its MCP servers, which `-p` otherwise does not)."""
    from tests.support.limited_run import limited_run

    from tether.harnesses.claude_code import MCP_STARTUP_WAIT, ClaudeCodeHarness

    assert ClaudeCodeHarness.agent_env == {MCP_STARTUP_WAIT: "30000"}
    exe = _cli("claude-code")
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home")}
    _tether(work, env, "mcp", "install", "--harness", "claude-code", "--project-dir", str(work))
    # the person approved the project's servers once (Claude Code asks at its first start)
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text('{"enableAllProjectMcpServers": true}\n')
    with ModelServer("call:board_list") as server:
        done, _ = limited_run(
            "claude-code",
            exe,
            server.port,
            tmp_path,
            tether_home,
            ["--iterations", "5"],
            config='[loop]\nboard = "tickets"\n',
            extra_args=["--allowedTools", "mcp__tether"],
            # offer MCP tools up front: the scripted model does not search deferred tools
            extra_env={"ENABLE_TOOL_SEARCH": "false"},
        )
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads(done.stdout)
    events = Path(record["run_dir"], "events.jsonl").read_text("utf-8")
    init = next(json.loads(line) for line in events.splitlines() if '"subtype":"init"' in line)
    assert {"name": "tether", "status": "connected"}.items() <= init["mcp_servers"][0].items()
    first = next(r for r in requests if r.step == 1)
    assert "mcp__tether__board_list" in first.tool_names, first.tool_names
    assert [c.name for c in first.tool_calls] == ["mcp__tether__board_list"]
    # the tool's answer came back into the session (Claude Code shows the structured content)
    assert '\\"tickets\\":[]' in events, events[-3000:]


def _pi1_env(tmp_path: Path, port: int) -> dict[str, str]:
    setup = client_setup("pi", tmp_path / "home", port)
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **setup.env}


@pytest.mark.parametrize("scope", ["project", "user"])
def test_pi_1x_lists_tether_connected_with_its_tools(scope: str, tmp_path: Path) -> None:
    """`tether mcp install --harness pi` writes the mcp.json Pi 1.x reads: `pi mcp list --json`
    connects to the server and lists every tool."""
    from tether.cli.mcp_server.tools import TOOLS

    exe = _cli("pi-1")
    project = tmp_path / "project"
    project.mkdir()
    (project / "tether.toml").write_text(CONFIG, encoding="utf-8")
    env = {**_pi1_env(tmp_path, 9), "TETHER_HOME": str(project / ".tether")}
    args = ["--harness", "pi", "--scope", scope, "--project-dir", str(project)]
    _tether(project, env, "mcp", "install", *args)
    if scope == "project":
        # Pi 1.x reads .pi/mcp.json only in a trusted project: what `/trust` saves
        trust = Path(env["PI_CODING_AGENT_DIR"]) / "trust.json"
        trust.write_text(json.dumps({str(project.resolve()): True}), encoding="utf-8")
    done = subprocess.run(
        [str(exe), "mcp", "list", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    listed = json.loads(done.stdout)
    (server,) = [s for s in listed["servers"] if s["name"] == "tether"]
    assert server["state"] == "connected", server
    assert server["scope"] == {"project": "project", "user": "global"}[scope]
    assert server["exposure"] == "direct"
    assert server["tools"] == [t.name for t in TOOLS]
    assert listed["errors"] == []
    # uninstall takes it out again; the file stays
    _tether(project, env, "mcp", "uninstall", *args)
    again = subprocess.run(
        [str(exe), "mcp", "list", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert [s["name"] for s in json.loads(again.stdout)["servers"]] == []


def test_a_pi_1x_session_calls_a_tether_tool_in_its_first_request(tmp_path: Path) -> None:
    exe = _cli("pi-1")
    project = tmp_path / "project"
    project.mkdir()
    (project / "tether.toml").write_text(CONFIG, encoding="utf-8")
    with ModelServer("call:board_list") as server:
        env = {**_pi1_env(tmp_path, server.port), "TETHER_HOME": str(project / ".tether")}
        _tether(project, env, "mcp", "install", "--harness", "pi", "--project-dir", str(project))
        from tether.harnesses import get_harness
        from tether.harnesses.base import RunSpec

        setup = client_setup("pi", tmp_path / "home", server.port)
        # the person trusts the project (Pi 1.x reads .pi/mcp.json only then): --approve
        args = (*setup.extra_args, "--approve")
        spec = RunSpec(prompt="List the board.", model=setup.model, extra_args=args)
        argv = get_harness("pi").build_command(spec)
        argv[0] = str(exe)
        done = subprocess.run(
            argv,
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr[-3000:]
    first = next(r for r in requests if r.step == 1)
    assert "mcp__tether__board_list" in first.tool_names, first.tool_names
    (call,) = first.tool_calls
    assert call.name == "mcp__tether__board_list"
    assert '\\"tickets\\"' in done.stdout or '"tickets"' in done.stdout
