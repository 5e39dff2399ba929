"""The wake paths end to end against the real Pi and Claude Code CLIs (tier ``real_harness``).

Each orchestrator is the real interactive CLI in a tmux pane, talking to the
scripted model server; a scripted subagent hangs on a tool call under the
subagents folder. A wake counts as delivered only when the CLI started a turn
with it: the model server got a new request and the CLI's own session file
holds the wake text.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests import agent_clis
from tests.watch.watch_support import TETHER, TmuxLab, wait_until

from tether.config.schema import WatchSettings
from tether.testing.model_server import ModelServer, client_setup
from tether.watch.daemon import Watchdog
from tether.watch.endpoints import live_endpoints, read_ack
from tether.watch.pi_wake_extension import render
from tether.watch.registry import Registration, add_orchestrator
from tether.watch.rewake import merge_settings
from tether.watch.transcript import TranscriptReader

pytestmark = pytest.mark.real_harness


def _cli(harness: str) -> str:
    return str(agent_clis.require(harness))


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer("steps:2") as running:
        yield running


@dataclass
class Orchestrator:
    pane: str
    project: Path
    home: Path  # the CLI's HOME


def _start(
    lab: TmuxLab,
    cli: str,
    harness: str,
    server: ModelServer,
    tmp_path: Path,
    tether_home: Path,
    *,
    installed: bool = False,
) -> Orchestrator:
    """The CLI in a pane of ``lab``, with tether's wake endpoint.

    ``installed``: the Pi extension is written by ``tether watch pi-extension
    --install`` and Pi runs without TETHER_HOME (it finds the home in the file).
    """
    project = tmp_path / "orchestrator"
    project.mkdir()
    home = tmp_path / "cli-home"
    setup = client_setup(harness, home, server.port)
    if harness == "claude-code":
        config = Path(setup.env["CLAUDE_CONFIG_DIR"])
        config.mkdir(parents=True, exist_ok=True)
        (config / ".claude.json").write_text(
            json.dumps(
                {
                    "hasCompletedOnboarding": True,
                    "projects": {
                        str(project): {
                            "hasTrustDialogAccepted": True,
                            "hasCompletedProjectOnboarding": True,
                        }
                    },
                    "customApiKeyResponses": {"approved": ["sk-test"], "rejected": []},
                }
            )
        )
        (project / ".claude").mkdir()
        settings = merge_settings({}, [TETHER])
        (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    elif installed:
        subprocess.run(
            [TETHER, "watch", "pi-extension", "--install", "--project-dir", str(project)],
            capture_output=True,
            timeout=30,
            check=True,
        )
    else:
        (project / ".pi" / "extensions").mkdir(parents=True)
        (project / ".pi" / "extensions" / "tether-watch.ts").write_text(render())
    env = {"PATH": os.environ["PATH"], "TERM": "xterm-256color", **setup.env}
    if not installed:
        env["TETHER_HOME"] = str(tether_home)
    # Pi 1.x loads a project's extensions in a trusted project only: the person trusts it
    trusted = ["--approve"] if cli == _cli("pi-1") and harness == "pi" else []
    argv = [
        "env",
        *(["-u", "TETHER_HOME"] if installed else []),  # the tmux server's environment has it
        *[f"{k}={v}" for k, v in env.items()],
        cli,
        *setup.extra_args,
        *trusted,
        "--model",
        "mock-model",
    ]
    return Orchestrator(lab.window(project, argv), project, home)


def _session_texts(root: Path) -> str:
    return "\n".join(p.read_text("utf-8") for p in root.rglob("*.jsonl"))


def _watchdog(
    lab: TmuxLab, subagents: Path, home: Path, conn: sqlite3.Connection, prefer: str
) -> Watchdog:
    settings = WatchSettings(
        subagents_folders=[str(subagents)],
        tmux_socket=lab.socket,
        idle_threshold=1.0,
        confirm_after=0.5,
        wake_prefer=prefer,
    )
    return Watchdog(settings, home, conn)


def _hanging_subagent(lab: TmuxLab, subagents: Path) -> None:
    """A subagent that hangs on a tool call, already long enough to count as a confirmation wait.

    (Waited for before the orchestrator is registered, so the first wake names it.)
    """
    folder = subagents / "mailer"
    lab.subagent(folder, ["--format", "claude-code", "--steps", "5", "--hang-before-result", "1"])
    reader = TranscriptReader()
    call = wait_until(
        lambda: s.open_call if (s := reader.read(folder / "agent.jsonl")) else None,
        timeout=30,
        what="the subagent to hang",
    )
    wait_until(lambda: time.time() - call.since >= 0.6, what="confirm_after to pass")


def _wake(dog: Watchdog) -> None:
    wait_until(lambda: dog.check().wakes, timeout=30, every=0.2, what="a wake")


@pytest.mark.parametrize("pi", ["pi", "pi-1"])
@pytest.mark.parametrize("prefer", ["harness", "tmux"])
def test_pi_is_woken(
    prefer: str,
    pi: str,
    lab: TmuxLab,
    subagents_dir: Path,
    tmp_path: Path,
    tether_home: Path,
    conn: sqlite3.Connection,
    server: ModelServer,
) -> None:
    orch = _start(lab, _cli(pi), "pi", server, tmp_path, tether_home)
    wait_until(lambda: live_endpoints(tether_home), timeout=60, what="the Pi extension")
    _hanging_subagent(lab, subagents_dir)
    add_orchestrator(conn, Registration(tmux_pane=orch.pane, tmux_socket=lab.socket, harness="pi"))
    dog = _watchdog(lab, subagents_dir, tether_home, conn, prefer)
    _wake(dog)
    dog.close()
    wait_until(lambda: server.model_calls >= 2, timeout=60, what="Pi's turn")
    texts = wait_until(
        lambda: (t := _session_texts(orch.home / ".pi")) and "[tether watch]" in t and t,
        what="the wake in Pi's session",
    )
    assert "waits for confirmation: Bash" in texts
    acks = list((tether_home / "watch" / "acks").glob("*.json"))
    assert len(acks) == (1 if prefer == "harness" else 0)


def test_claude_code_is_woken_by_the_rewake_hook(
    lab: TmuxLab,
    subagents_dir: Path,
    tmp_path: Path,
    tether_home: Path,
    conn: sqlite3.Connection,
    server: ModelServer,
) -> None:
    orch = _start(lab, _cli("claude-code"), "claude-code", server, tmp_path, tether_home)
    wait_until(
        lambda: "❯" in lab.run("capture-pane", "-p", "-t", orch.pane),
        timeout=60,
        what="Claude Code's prompt",
    )
    lab.tmux.send_text(orch.pane, "Run the scripted steps.")
    # the turn ends; the Stop hook starts waiting as a wake endpoint
    (endpoint,) = wait_until(
        lambda: live_endpoints(tether_home), timeout=60, what="the rewake hook"
    )
    assert endpoint.kind == "claude-code"
    calls = server.model_calls
    _hanging_subagent(lab, subagents_dir)
    add_orchestrator(
        conn, Registration(tmux_pane=orch.pane, tmux_socket=lab.socket, harness="claude-code")
    )
    dog = _watchdog(lab, subagents_dir, tether_home, conn, "harness")
    _wake(dog)
    dog.close()
    wait_until(lambda: server.model_calls > calls, timeout=60, what="Claude Code's new turn")
    texts = wait_until(
        lambda: (
            (t := _session_texts(orch.home / ".claude" / "projects"))
            and "[tether watch]" in t
            and t
        ),
        what="the wake in Claude Code's transcript",
    )
    assert "Stop hook blocking error" in texts and "waits for confirmation: Bash" in texts
    (ack,) = (tether_home / "watch" / "acks").glob("*.json")
    assert read_ack(tether_home, ack.stem) is not None


def test_claude_code_is_woken_by_typing_into_its_pane(
    lab: TmuxLab,
    subagents_dir: Path,
    tmp_path: Path,
    tether_home: Path,
    conn: sqlite3.Connection,
    server: ModelServer,
) -> None:
    orch = _start(lab, _cli("claude-code"), "claude-code", server, tmp_path, tether_home)
    wait_until(
        lambda: "❯" in lab.run("capture-pane", "-p", "-t", orch.pane),
        timeout=60,
        what="Claude Code's prompt",
    )
    _hanging_subagent(lab, subagents_dir)
    add_orchestrator(
        conn, Registration(tmux_pane=orch.pane, tmux_socket=lab.socket, harness="claude-code")
    )
    dog = _watchdog(lab, subagents_dir, tether_home, conn, "tmux")
    _wake(dog)
    dog.close()
    wait_until(lambda: server.model_calls >= 1, timeout=60, what="Claude Code's turn")
    texts = wait_until(
        lambda: (
            (t := _session_texts(orch.home / ".claude" / "projects"))
            and "[tether watch]" in t
            and t
        ),
        what="the typed wake in Claude Code's transcript",
    )
    assert "waits for confirmation: Bash" in texts


def test_pi_finds_tether_s_home_through_the_installed_extension(
    lab: TmuxLab, tmp_path: Path, tether_home: Path, server: ModelServer
) -> None:
    """Pi runs without TETHER_HOME: the installed extension has the home written into it."""
    orch = _start(lab, _cli("pi"), "pi", server, tmp_path, tether_home, installed=True)
    (endpoint,) = wait_until(
        lambda: live_endpoints(tether_home), timeout=60, what="the Pi extension in tether's home"
    )
    assert endpoint.kind == "pi" and endpoint.tmux_pane == orch.pane
    assert not (orch.project / ".tether").exists()
