"""``tether demo``: the README's first command shows the whole loop, offline, on a fresh machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.outside_agents import detached, without_agent_vars

from tether.board import Board, State

TETHER = str(Path(sys.executable).parent / "tether")


@pytest.mark.slow
@pytest.mark.parametrize("bubblewrap", ["installed", "missing"])
def test_demo_shows_the_loop_from_triage_to_exhausted(
    tmp_path: Path, tether_home: Path, bubblewrap: str
) -> None:
    folder = tmp_path / "demo"
    # a fresh machine: no agent CLI, no usmc or gardener, no network needed
    # run as a person runs it: the demo approves a proposal, which no agent may do
    env = without_agent_vars({**os.environ, "PATH": os.defpath, "HOME": str(tmp_path / "home")})
    if bubblewrap == "missing":
        env["TETHER_BWRAP"] = str(tmp_path / "no-bwrap")
    done = subprocess.run(
        detached([TETHER, "demo", "--dir", str(folder)]),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    steps = [
        "$ tether loop run",
        "tick 1: triaged 1 INBOX entry: call-notes.txt",
        "stopped: iteration limit reached (3 iterations",
        "report: ",
        "completed (5 iterations, 4 tool calls) → DONE",
        "check `test -f build/ready.txt` exited 0 → ACTIONABLE",
        "proposed p-",
        "→ USER/approval",
        "TETHER-LOOP: STOP (blind, 1/4 sources unavailable: memory.curated)",
        "# Progress report: run ",
        f"$ export PATH={folder / 'later'}:$PATH",
        "level 2: guard does not hold (availability changed",
        "TETHER-LOOP: STOP (user-only)",
        "$ tether outbox show p-",
        "runs:      ",
        "$ tether outbox approve p-",
        "published tool-0.1.0-py3-none-any.whl to registry/",
        " done: publish version=v0.1.0",
        " → DONE",
        "$ tether board move ",
        "TETHER-LOOP: STOP (exhausted)",
        "TETHER-LOOP: STOP (guard, exhausted unchanged since ",
    ]
    at = 0
    for step in steps:
        found = out.find(step, at)
        assert found >= 0, f"missing (in order): {step!r}\n{out}"
        at = found
    follow = [line for line in out.splitlines() if line.startswith("tick 3:")]
    assert follow and "follow-up r-" in follow[0] and "completed" in follow[0]
    blind_block = out[: out.index("STOP (blind")]
    assert "USER/decision" in blind_block and '"Pick the licence"' in blind_block
    board = Board(folder / "tickets", folder).load()
    assert [t.title for t in board.in_state(State.WAITING)] == ["Review the draft with the team"]
    assert len(board.in_state(State.DONE)) == 5 and board.untriaged() == []
    assert (folder / "registry" / "tool-0.1.0-py3-none-any.whl").is_file()  # approved: published
    assert not tether_home.exists()  # the demo keeps to its own folder
    unsandboxed = [line for line in out.splitlines() if "runs are unsandboxed" in line]
    if bubblewrap == "missing":
        assert len(unsandboxed) == 1 and "apt install bubblewrap" in unsandboxed[0]
        assert "The sandbox:" not in out
    else:
        assert unsandboxed == []
        assert "tool result: sh: 1: cannot create tether.toml: Read-only file system" in out
        assert "tool_call_limit" not in (folder / "tether.toml").read_text()
