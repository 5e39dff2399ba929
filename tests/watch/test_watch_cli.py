"""The small commands: orchestrators, once, log, remove-orchestrator, printing the endpoints."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import psutil
import pytest
from tests.watch.watch_support import TETHER, TmuxLab, wait_until, write_project


def _tether(project: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [TETHER, *args], cwd=project, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == code, done.stderr
    return done


@pytest.mark.slow
def test_register_look_once_log_and_remove(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path
) -> None:
    pane, recording = lab.orchestrator()
    lab.subagent(subagents_dir / "a", ["--format", "codex", "--silent"])
    project = write_project(tmp_path / "project", lab, subagents_dir, idle_threshold=0.01)
    log = tmp_path / "orchestrator.log"
    log.write_text("")
    added = _tether(
        project,
        "watch",
        "add-orchestrator",
        "--tmux-pane",
        pane,
        "--session",
        "s1",
        "--name",
        "boss",
        "--harness",
        "codex",
    ).stdout
    assert added == "orchestrator 1 (boss) registered\n"
    listed = _tether(project, "watch", "orchestrators").stdout
    assert listed == f"1: boss ({pane}) sessions: s1\n"
    (entry,) = json.loads(_tether(project, "watch", "orchestrators", "--json").stdout)
    assert (entry["tmux_socket"], entry["harness"]) == (lab.socket, "codex")

    def once() -> str | None:
        out = _tether(project, "watch", "once").stdout
        return out if out.startswith("1 subagent(s) running") else None

    out = wait_until(once, what="a cycle that sees the subagent")
    assert "  working                  a (pane %1)" in out
    assert "orchestrator boss: woken, idle" in out
    assert "wake #1: [tether watch] You have been idle" in out
    assert wait_until(recording.lines)
    # within wake_min_interval (60 s) the next cycle only reports
    assert "orchestrator boss: rate-limited" in _tether(project, "watch", "once").stdout
    text = _tether(project, "watch", "log").stdout
    assert text.endswith(" #1 idle: a (pane %1) via tmux, log, tmux-status (woken)\n")
    assert _tether(project, "watch", "remove-orchestrator", "1").stdout == (
        "orchestrator 1 removed\n"
    )
    gone = _tether(project, "watch", "remove-orchestrator", "1", code=2)
    assert "no active orchestrator 1" in gone.stderr
    assert _tether(project, "watch", "orchestrators").stdout == ""


def test_endpoints_print_without_installing(tmp_path: Path) -> None:
    hook = json.loads(_tether(tmp_path, "watch", "claude-hook").stdout)
    (group,) = hook["hooks"]["Stop"]
    (entry,) = group["hooks"]
    assert entry["asyncRewake"] is True and entry["command"].endswith(" watch rewake")
    assert "pi.sendUserMessage" in _tether(tmp_path, "watch", "pi-extension").stdout
    assert not (tmp_path / ".claude").exists() and not (tmp_path / ".pi").exists()


def test_subagents_wait_refuses_a_negative_timeout(tmp_path: Path) -> None:
    done = _tether(tmp_path, "subagents", "wait", "--timeout", "-1", code=2)
    assert "--timeout must be 0 or more seconds" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["watch", "--interval", "0"],
        ["watch", "once", "--idle-threshold", "0"],
        ["watch", "once", "--wake-min-interval", "-1"],
        ["watch", "log", "--limit", "-1"],
    ],
    ids=["interval-0", "idle-0", "min-interval-negative", "limit-negative"],
)
def test_out_of_range_numbers_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    done = _tether(tmp_path, *args, code=2)
    assert "is not in the range" in done.stderr


@pytest.mark.slow  # two detached daemons
def test_a_second_detached_daemon_on_the_same_pid_file_is_refused(tmp_path: Path) -> None:
    pid_file = tmp_path / "watch.pid"
    _tether(tmp_path, "watch", "--detach", "--pid-file", str(pid_file), "--forever")
    first = int(pid_file.read_text())
    daemon = psutil.Process(first)
    try:
        again = _tether(
            tmp_path, "watch", "--detach", "--pid-file", str(pid_file), "--forever", code=2
        )
        assert f"a watch daemon already runs as pid {first}" in again.stderr
        assert int(pid_file.read_text()) == first
        # the same for a daemon in the foreground
        fg = _tether(tmp_path, "watch", "--pid-file", str(pid_file), code=2)
        assert f"already runs as pid {first}" in fg.stderr
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)
    assert not pid_file.exists()


def test_a_stale_pid_file_does_not_block_a_new_daemon(tmp_path: Path) -> None:
    pid_file = tmp_path / "watch.pid"
    gone = subprocess.Popen(["true"])
    gone.wait()
    pid_file.write_text(f"{gone.pid}\n")
    _tether(tmp_path, "watch", "--detach", "--pid-file", str(pid_file), "--forever")
    pid = int(pid_file.read_text())
    assert pid != gone.pid
    daemon = psutil.Process(pid)
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(timeout=20)


def test_settings_that_look_wrong_are_warned_about_but_run(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    (tmp_path / "tether.toml").write_text(
        f"[watch]\nsubagents_folders = [{json.dumps(str(missing))}]\n"
        "interval = 30\nidle_threshold = 10\n"
    )
    done = _tether(tmp_path, "watch", "once")
    assert done.stdout.startswith("0 subagent(s) running")
    assert done.stderr.splitlines() == [
        f"tether watch: warning: subagents folder {missing} does not exist; "
        "no pane is found there until it does.",
        "tether watch: warning: idle_threshold (10 s) is below interval (30 s): an "
        "orchestrator that checks on its subagents once per interval can be woken between two "
        "checks; keep the threshold above it.",
    ]


def test_a_log_file_that_is_not_there_is_warned_about(tmp_path: Path) -> None:
    log = tmp_path / "later.jsonl"
    done = _tether(
        tmp_path, "watch", "add-orchestrator", "--pid", str(os.getpid()), "--log", str(log)
    )
    assert done.stdout == f"orchestrator 1 (pid {os.getpid()}) registered\n"
    assert done.stderr == (
        f"tether watch: warning: --log {log} does not exist (yet); until it does, its growth "
        "cannot count as the orchestrator's activity.\n"
    )
    # and again each time the watchdog starts, while it is missing
    once = _tether(tmp_path, "watch", "once")
    assert f"tether watch: warning: orchestrator pid {os.getpid()}: --log {log} does not" in (
        once.stderr
    )
    log.write_text("")
    quiet = _tether(
        tmp_path, "watch", "add-orchestrator", "--pid", str(os.getpid()), "--log", str(log)
    )
    assert quiet.stderr == ""
    assert _tether(tmp_path, "watch", "once").stderr == ""
