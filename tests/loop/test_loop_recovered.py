"""A loop whose supervisor was killed mid-run: the next tick follows the run up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.support.fleet_projects import make_project

from tether.board import Board, State

TETHER = str(Path(sys.executable).parent / "tether")


@pytest.mark.slow
def test_tick_after_a_killed_loop_follows_the_abandoned_run_up(tmp_path: Path) -> None:
    make_project(tmp_path, "crash", units=1, steps=8, step_delay=0.5)
    root = tmp_path / "crash-src"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env.update(TETHER_HOME=str(tmp_path / "home"), TETHER_USER_CONFIG=str(tmp_path / "none"))
    loop = subprocess.Popen(
        [TETHER, "loop", "run"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    runs = tmp_path / "home" / "runs"
    deadline = time.monotonic() + 30
    while not any(p.stat().st_size > 0 for p in runs.glob("*/events.jsonl")):
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.1)
    os.kill(loop.pid, signal.SIGKILL)  # the supervisor only; its agent is left running
    loop.wait()
    (interrupted,) = [p.name for p in runs.iterdir()]

    tick = subprocess.run(
        [TETHER, "loop", "tick", "--json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert tick.returncode == 0, tick.stderr
    result = json.loads(tick.stdout)
    assert result["recovered"] == [interrupted]
    assert result["dispatched"]["follow_up_of"] == interrupted
    (ticket,) = Board(root / "tickets", root).load().tickets
    assert ticket.state is State.DONE
    assert ticket.runs == (interrupted, result["dispatched"]["run_id"])
    assert f"run {interrupted} was abandoned" in ticket.path.read_text(encoding="utf-8")
