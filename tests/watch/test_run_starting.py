"""A run whose supervisor lives but whose agent has not started yet is ``starting``:
never ``ended``, which would read as news and end a ``subagents wait`` at once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil

from tether.store.runs import RunRow, insert_run
from tether.store.state_db import connect
from tether.watch.proctree import ProcessInspector
from tether.watch.subagents import run_subagents
from tether.watch.wake import SubagentView


def _run(run_id: str, supervisor: psutil.Process, tmp_path: Path) -> RunRow:
    return RunRow(
        id=run_id,
        profile="scripted",
        harness="scripted",
        argv=["tether-scripted-agent"],
        started_at="2026-01-01T00:00:00.000000Z",
        run_dir=str(tmp_path / run_id),
        supervisor_pid=supervisor.pid,
        supervisor_start_time=supervisor.create_time(),
    )


def test_a_run_without_its_agent_yet_is_starting_while_its_supervisor_lives(
    tmp_path: Path,
) -> None:
    conn = connect(tmp_path / "home")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone_proc = psutil.Process(gone.pid)
    dead_row = _run("r-dead", gone_proc, tmp_path)
    gone.wait(30)
    try:
        insert_run(conn, _run("r-coming", psutil.Process(os.getpid()), tmp_path))
        insert_run(conn, dead_row)
        states = {
            sub.run_id: SubagentView(sub, None).state
            for sub in run_subagents(conn, ProcessInspector().snapshot())
        }
    finally:
        conn.close()
    assert states == {"r-coming": "starting", "r-dead": "ended"}
