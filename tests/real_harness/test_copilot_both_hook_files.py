"""Copilot CLI with the gate installed for Copilot and for Claude Code in one project.

Copilot 1.0.102 runs the ``PreToolUse`` hooks of ``.claude/settings.json`` next
to its own ``.github/hooks``: every call reaches the gate twice. With a budget
of 10, exactly 10 calls must run (each leaves ``tick-K.done``), not 5.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tether.harnesses.base import Harness
from tether.testing.model_server import ModelServer, client_setup

pytestmark = pytest.mark.real_harness

TETHER = str(Path(sys.executable).parent / "tether")


def test_budget_10_runs_exactly_10_calls_with_both_hook_files(
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
    tether_home: Path,
) -> None:
    _adapter, exe = agent_cli("copilot")
    server = model_server("touch-forever")
    setup = client_setup("copilot", tmp_path / "home", server.port)
    work = tmp_path / "work"
    work.mkdir()
    (work / "tether.toml").write_text("gate_budget = 10\n")
    env = {"PATH": os.environ["PATH"], **setup.env, "TETHER_HOME": str(tether_home)}
    for harness in ("copilot", "claude-code"):
        done = subprocess.run(
            [TETHER, "hooks", "install", "--harness", harness, "--project-dir", str(work)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    argv = [str(exe), "-p", "Run the scripted steps.", "--output-format", "json"]
    argv += [*setup.extra_args, "--trust-folder"]
    proc = subprocess.Popen(
        argv, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    # Without tether run nothing ends the agent: it keeps asking, every call refused.
    assert server.wait_until(lambda log: len(log) >= 25, timeout=90)
    proc.kill()
    proc.wait(timeout=30)
    files = sorted(work.glob("tick-*.done"))
    assert len(files) == 10, [f.name for f in files]
    status = subprocess.run(
        [TETHER, "session", "status", "--json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # every attempt counted once: about one per model call, not two
    used = json.loads(status.stdout)["calls_used"]
    assert used <= server.model_calls, (used, server.model_calls)
