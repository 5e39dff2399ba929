"""The person is told for real, detached: desktop notifier, notify_command, status and list."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import psutil
from tests.watch.watch_support import TETHER, TmuxLab, wait_until, write_project

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
