"""The small commands: orchestrators, once, log, remove-orchestrator, printing the endpoints."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from watch_support import TETHER, TmuxLab, wait_until, write_project


def _tether(project: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [TETHER, *args], cwd=project, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == code, done.stderr
    return done


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
    assert text.endswith(" #1 idle: a (pane %1) via tmux, log, tmux-status\n")
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
