"""Under ``tether run`` the run's tool-call budget is the gate's, whatever the harness.

The supervisor hands the agent ``TETHER_SESSION_ID`` and ``TETHER_RUN_ID``; gate
hooks the user installed (``tether hooks install``) count under the run's
session (a harness's own id is bound to it on the first call). So the gate must
hold the run's budget for every harness, not only for the ones tether writes
per-run hooks for. Each test runs the real ``tether run`` with the scripted
harness, in the format of a harness tether writes no per-run hooks for, and
with gate hooks in the agent's settings as an installed configuration would
have them.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.gate.gate_support import query

from tether.gate.counter import session_status

TETHER = str(Path(sys.executable).parent / "tether")


def _project(tmp_path: Path, fmt: str, gate_exe: str, steps: int) -> Path:
    """A project whose default profile is the scripted agent in ``fmt``, with gate hooks."""
    root = tmp_path / "work"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    settings = _gate_hooks(fmt, root, gate_exe)
    args = ["--format", fmt, "--steps", str(steps), "--settings", str(settings)]
    args += ["--exec-log", str(root / "exec.log")]
    (root / "tether.toml").write_text(
        "kill_grace_seconds = 0.5\n\n"
        f'[profiles.cheap]\nharness = "scripted"\nargs = {json.dumps(args)}\ndefault = true\n',
        encoding="utf-8",
    )
    return root


def _gate_hooks(fmt: str, root: Path, gate_exe: str) -> Path:
    """Gate hooks the scripted agent runs (it reads Claude Code-style settings)."""
    if fmt == "codex":
        # Codex's hooks.json has that shape: use what `tether hooks install` writes.
        done = subprocess.run(
            [TETHER, "hooks", "install", "--harness", "codex", "--project-dir", str(root)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return root / ".codex" / "hooks.json"
    event = {"copilot": "preToolUse", "pi": "tool_call"}[fmt]
    command = shlex.join([gate_exe, "hook", "--harness", fmt, "--event", event])
    hook = {"type": "command", "command": command, "timeout": 30}
    settings = root.parent / f"{fmt}-hooks.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [hook]}]}}))
    return settings


def _run(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [TETHER, "run", "--json", "--prompt", "go", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["codex", "copilot", "pi"])
def test_the_run_tool_call_budget_is_the_gate_budget(
    tmp_path: Path, tether_home: Path, gate_exe: str, fmt: str
) -> None:
    root = _project(tmp_path, fmt, gate_exe, steps=4)  # three tool calls, then the answer
    code, record = _run(root, "--tool-calls", "5")
    assert code == 0, record
    status = session_status(tether_home, record["session_id"])
    assert (status.call_budget, status.budget_source) == (5, "run")
    assert status.run_id == record["id"]
    assert status.calls_used == 3  # every gate call counted under the run's session
    assert query(tether_home, "SELECT DISTINCT session_id FROM events") == [(record["session_id"],)]


def test_the_gate_refuses_the_call_past_the_run_budget_in_codex_format(
    tmp_path: Path, tether_home: Path, gate_exe: str
) -> None:
    root = _project(tmp_path, "codex", gate_exe, steps=6)
    code, record = _run(root, "--tool-calls", "2")
    assert code == 21, record  # the supervisor's own limit stops the run too
    decisions = query(
        tether_home,
        "SELECT calls_used, decision FROM events WHERE event = 'PreToolUse' ORDER BY id",
    )
    # The agent asks its hooks before it announces a call, so the gate decides
    # call 3 before the supervisor sees it; any later call is refused too.
    assert decisions[:3] == [(1, "allow"), (2, "allow"), (3, "deny")]
    assert all(decision == "deny" for _, decision in decisions[3:]), decisions
    assert len((root / "exec.log").read_text().splitlines()) == 2  # only allowed calls ran
    assert session_status(tether_home, record["session_id"]).call_budget == 2


def test_a_run_whose_budget_the_gate_cannot_hold_stops_with_one_clear_line(
    tmp_path: Path, tether_home: Path, gate_exe: str
) -> None:
    root = _project(tmp_path, "codex", gate_exe, steps=2)
    tether_home.mkdir()
    (tether_home / "gate.db").write_bytes(b"no database here " * 512)
    done = subprocess.run(
        [TETHER, "run", "--prompt", "go", "--tool-calls", "5"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 3
    assert "Traceback" not in done.stderr
    assert f"{tether_home / 'gate.db'} is not a readable gate database" in done.stderr
    assert not (root / "exec.log").exists()  # the agent never started
