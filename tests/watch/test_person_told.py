"""The person is told for real, detached: desktop notifier, notify_command, status and list."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.watch.watch_support import TETHER, TmuxLab, agent_argv, wait_until, write_project

NOTIFIER = """#!/bin/sh
printf '%s\\n' "$*" >> {out}
"""


def _fake(folder: Path, name: str, out: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(NOTIFIER.format(out=out))
    script.chmod(0o755)
    return script


def _tether(project: Path, env: dict[str, str], *args: str) -> Any:
    done = subprocess.run(
        [TETHER, *args], cwd=project, capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.slow
def test_a_detached_daemon_reaches_the_person_without_any_log_being_read(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path, tether_home: Path
) -> None:
    desktop = tmp_path / "desktop.txt"
    chat = tmp_path / "chat.txt"
    bin_dir = tmp_path / "bin"
    _fake(bin_dir, "notify-send", desktop)
    webhook = _fake(tmp_path / "hooks", "post-to-chat", chat)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "DISPLAY": ":99"}
    pane, recording = lab.orchestrator()
    lab.subagent(subagents_dir / "writer", ["--format", "claude-code", "--silent"])
    project = write_project(
        tmp_path / "project",
        lab,
        subagents_dir,
        interval=0.5,
        idle_threshold=0.75,
        wake_min_interval=1.0,
        notify_command=[str(webhook), "{reason}", "{subagent}", "{message}"],
    )
    _tether(project, env, "watch", "add-orchestrator", "--tmux-pane", pane, "--name", "main")
    pid_file = tmp_path / "watch.pid"
    out = _tether(project, env, "watch", "--detach", "--pid-file", str(pid_file), "--forever")
    assert out.startswith("tether watch: running as pid ")
    daemon = psutil.Process(int(pid_file.read_text()))
    try:
        wait_until(lambda: _lines(desktop), timeout=20, what="the desktop notification")
        wait_until(lambda: _lines(chat), timeout=20, what="the notify_command")
        first = _lines(desktop)[0]
        assert first.startswith("--app-name=tether tether watch [tether watch] You have been idle")
        assert _lines(chat)[0].startswith("idle writer (pane %1) [tether watch] You have been")
        assert recording.lines()  # and the orchestrator itself was woken
        # the orchestrator goes away: the person is told that too
        lab.run("kill-pane", "-t", pane)

        def gone() -> list[str]:
            return [line for line in _lines(chat) if line.startswith("orchestrator-gone ")]

        (told,) = wait_until(gone, timeout=20, what="orchestrator gone, told to the person")
        assert "The registered orchestrator main is gone (pane %0 is gone)" in told
        assert any("is gone (pane %0 is gone)" in line for line in _lines(desktop))
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)
    status = _tether(project, env, "watch", "status")
    assert "orchestrator 1 (main): GONE (pane %0 is gone)" in status
    assert " idle: writer (pane %1) via " in status and "desktop" in status and "notify" in status
    assert " orchestrator-gone: writer (pane %1) via " in status
    listed = _tether(project, env, "subagents", "list")
    assert "orchestrator main is GONE (pane %0 is gone)" in listed
    assert "recent wakes (newest last):" in listed and " orchestrator-gone: " in listed
    wakes = _tether(project, env, "watch", "log", "--json")
    channels = {c["channel"] for c in wakes[0]["channels"] if c["ok"]}
    assert {"tmux", "desktop", "notify", "tmux-status"} <= channels


def test_the_orchestrator_pane_closed_while_a_subagent_runs_is_told_in_the_default_scope(
    lab: TmuxLab, tmp_path: Path, tether_home: Path
) -> None:
    # No subagents_folders, subagents_scope left at its default ("session"): the
    # subagent counts because it runs in the orchestrator's tmux session. When the
    # orchestrator's pane closes, that session still holds the subagent.
    desktop = tmp_path / "desktop.txt"
    bin_dir = tmp_path / "bin"
    _fake(bin_dir, "notify-send", desktop)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "DISPLAY": ":99"}
    pane, _recording = lab.orchestrator()
    work = tmp_path / "work"
    work.mkdir()
    sub = lab.subagent(work, ["--format", "claude-code", "--silent"])
    project = tmp_path / "project"
    project.mkdir()
    (project / "tether.toml").write_text(
        f"[watch]\ntmux_socket = {json.dumps(lab.socket)}\ninterval = 0.5\n", encoding="utf-8"
    )
    _tether(project, env, "watch", "add-orchestrator", "--tmux-pane", pane, "--name", "main")

    def counted() -> bool:
        listed = _tether(project, env, "subagents", "list", "--json")
        return any(s.get("pane") == sub and s["state"] == "working" for s in listed["subagents"])

    # each look starts a `tether` process (~0.25 s of CPU): twice a second is enough
    wait_until(
        counted, timeout=30, every=0.5, what="the subagent counted in the orchestrator's session"
    )
    pid_file = tmp_path / "watch.pid"
    out = _tether(project, env, "watch", "--detach", "--pid-file", str(pid_file))
    assert out.startswith("tether watch: running as pid ")
    daemon = psutil.Process(int(pid_file.read_text()))
    log = tether_home / "watch" / "watch.log"
    try:
        # the daemon has seen the subagent running before the orchestrator goes
        wait_until(
            lambda: f"(pane {sub}): working" in "".join(_lines(log)),
            timeout=30,
            what="the daemon to see the subagent",
        )
        lab.run("kill-pane", "-t", pane)

        def told() -> list[str]:
            return [line for line in _lines(desktop) if "is gone" in line]

        (line,) = wait_until(told, timeout=30, what="the person told the orchestrator is gone")[:1]
        assert f"The registered orchestrator main is gone (pane {pane} is gone)" in line
        assert "while 1 subagent runs" in line, line
        assert daemon.is_running()  # the subagent still runs: the watch goes on
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)


def _watch_forever(lab: TmuxLab, orchestrator_pane: str, tmp_path: Path) -> psutil.Process:
    """The watch daemon, detached, for the lab's orchestrator (the default scope)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "tether.toml").write_text(
        f"[watch]\ntmux_socket = {json.dumps(lab.socket)}\ninterval = 0.5\n", encoding="utf-8"
    )
    env = dict(os.environ)
    pane = orchestrator_pane
    _tether(project, env, "watch", "add-orchestrator", "--tmux-pane", pane, "--name", "main")
    pid_file = tmp_path / "watch.pid"
    _tether(project, env, "watch", "--detach", "--pid-file", str(pid_file), "--forever")
    return psutil.Process(int(pid_file.read_text()))


def _waiting_agent(tmp_path: Path) -> tuple[Path, list[str]]:
    """Scripted-agent options for an agent that works until the returned file exists."""
    go = tmp_path / "go"
    commands = tmp_path / "commands.txt"
    commands.write_text(
        f'bash -c "while [ ! -e {go} ]; do sleep 0.1; done"\n', encoding="utf-8"
    )  # the steps' commands run without a shell: the loop needs its own
    return go, ["--format", "claude-code", "--commands-file", str(commands)]


def _said(log: Path, pane_id: str, words: str) -> bool:
    return any(f"(pane {pane_id}): {words}" in line for line in _lines(log))


def _end_both(lab: TmuxLab, log: Path, go: Path, done_pane: str, killed_pane: str) -> None:
    """Seen working, the two agents end at once: one by itself, one killed with SIGKILL."""
    for sub in (done_pane, killed_pane):
        wait_until(partial(_said, log, sub, "working"), timeout=30, what=f"{sub} seen working")
    victim = int(lab.run("display-message", "-p", "-t", killed_pane, "#{pane_pid}"))
    os.kill(victim, signal.SIGKILL)
    go.touch()
    wait_until(partial(_said, log, done_pane, "ended (exit 3)"), timeout=30, what="exit 3")
    wait_until(partial(_said, log, killed_pane, "killed (SIGKILL)"), timeout=30, what="SIGKILL")


@pytest.mark.slow  # a daemon and three agents in tmux
def test_how_a_subagent_ended_is_said_as_far_as_it_can_be_known(
    lab: TmuxLab, tmp_path: Path, tether_home: Path
) -> None:
    # Three subagents in the orchestrator's session (the default scope): one ends by
    # itself with exit 3, one is killed with SIGKILL (tmux keeps both dead panes,
    # remain-on-exit, and knows how each ended), one ends under its pane's shell,
    # which alone knows its status. None of them is "gone".
    go, waiting = _waiting_agent(tmp_path)
    orchestrator, _recording = lab.orchestrator()
    lab.run("set-option", "-g", "remain-on-exit", "on")
    done_pane = lab.window(tmp_path / "done", agent_argv(*waiting, "--exit-code", "3"))
    killed_pane = lab.window(tmp_path / "killed", agent_argv("--format", "claude-code", "--silent"))
    shell_pane = lab.subagent(tmp_path / "shell", waiting, then="read -r done")
    daemon = _watch_forever(lab, orchestrator, tmp_path)
    log = tether_home / "watch" / "watch.log"
    try:
        wait_until(partial(_said, log, shell_pane, "working"), timeout=30, what="shell pane")
        _end_both(lab, log, go, done_pane, killed_pane)
        wait_until(
            partial(_said, log, shell_pane, "ended (its exit status is not known)"),
            timeout=30,
            what="an end only its shell knows",
        )
        assert not any(": gone" in line for line in _lines(log))
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)


def test_an_end_the_tmux_server_missed_is_said_with_its_status(
    deaf_lab: TmuxLab, tmp_path: Path, tether_home: Path
) -> None:
    # A tmux before 3.6 built with libutempter can miss the SIGCHLD of a pane's process
    # (one that ends while another pane closes): it lists the pane dead without its
    # status and leaves the process unreaped, for as long as no other child of it ends.
    # The deaf server misses every one; the person is still told how each ended.
    lab = deaf_lab
    go, waiting = _waiting_agent(tmp_path)
    orchestrator, _recording = lab.orchestrator()
    lab.run("set-option", "-g", "remain-on-exit", "on")
    done_pane = lab.window(tmp_path / "done", agent_argv(*waiting, "--exit-code", "3"))
    killed_pane = lab.window(tmp_path / "killed", agent_argv("--format", "claude-code", "--silent"))
    daemon = _watch_forever(lab, orchestrator, tmp_path)
    log = tether_home / "watch" / "watch.log"
    try:
        _end_both(lab, log, go, done_pane, killed_pane)
        listed = lab.run("list-panes", "-a", "-F", "#{pane_id} #{pane_dead}|#{pane_dead_status}")
        assert f"{done_pane} 1|" in listed.splitlines()  # tmux itself does not know how
        assert not any("not known" in line or ": gone" in line for line in _lines(log))
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)
