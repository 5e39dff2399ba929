"""``tether hooks install --loop``: the Stop hook beside the gate, merged, idempotent, removable."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from tests.loop.conftest import Project

from tether.loop.stophook_install import plan

TETHER = str(Path(sys.executable).parent / "tether")


def _hooks(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return project.tether("hooks", *args, "--project-dir", str(project.root), timeout=60)


def test_install_merges_beside_the_gate_and_the_users_own_stop_hook(project: Project) -> None:
    settings = project.root / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"hooks": [{"type": "command", "command": "notify-send done"}]}
    settings.write_text(json.dumps({"model": "x", "hooks": {"Stop": [mine]}}))
    first = _hooks(project, "install", "--harness", "claude-code", "--loop")
    assert first.returncode == 0, first.stderr
    assert f"loop stop hook added to {settings}" in first.stdout
    stop = json.loads(settings.read_text())["hooks"]["Stop"]
    commands = [h["command"] for group in stop for h in group["hooks"]]
    assert commands[0] == f"{TETHER} loop stop-hook --harness claude-code"
    assert "notify-send done" in commands
    assert any("tether-gate" in c for c in commands)
    _hooks(project, "install", "--harness", "claude-code", "--loop")
    again = _hooks(project, "install", "--harness", "claude-code", "--loop")
    assert "loop stop hook already present" in again.stdout
    assert "already installed, nothing to change" in again.stdout
    # the installed command really answers the Stop hook
    project.add("Fix the typo")
    argv = shlex.split(commands[0])
    payload = json.dumps({"session_id": "s", "cwd": str(project.root), "stop_hook_active": False})
    answer = subprocess.run(
        argv,
        input=payload,
        capture_output=True,
        text=True,
        timeout=60,
        env=project.env(),
        check=True,
    )
    assert json.loads(answer.stdout)["decision"] == "block"
    removed = _hooks(project, "uninstall", "--harness", "claude-code", "--loop")
    assert removed.returncode == 0
    left = json.loads(settings.read_text())
    assert left == {"model": "x", "hooks": {"Stop": [mine]}}


def test_copilot_and_codex_files(project: Project) -> None:
    root = str(project.root)
    copilot = plan(
        "copilot",
        "project",
        install=True,
        project_dir=root,
        argv=["t", "loop", "stop-hook", "--harness", "copilot"],
    )
    data = json.loads(copilot.after or "")
    assert data == {
        "hooks": {
            "agentStop": [
                {"type": "command", "bash": "t loop stop-hook --harness copilot", "timeoutSec": 30}
            ]
        },
        "version": 1,
    }
    codex = plan("codex", "project", install=True, project_dir=root, argv=["t"])
    assert codex.path == str(project.root / ".codex" / "hooks.json")
    assert json.loads(codex.after or "")["hooks"]["Stop"][0]["hooks"][0]["command"] == "t"
    gone = plan("codex", "project", install=False, project_dir=root)
    assert gone.after is None and not gone.changed


def test_pi_is_refused_before_anything_is_written(project: Project) -> None:
    done = _hooks(project, "install", "--harness", "pi", "--loop")
    assert done.returncode == 3
    assert "claude-code, codex and copilot" in done.stderr
    assert not (project.root / ".pi").exists()
