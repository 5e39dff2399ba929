"""Reading a run back: its record and its progress report.

``tether runs show`` / ``tether report`` and the ``run_status`` /
``report_show`` MCP tools call these. Runs whose supervisor died are marked
abandoned first, so a record never claims a dead run is running.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from tether.config import load_config
from tether.core.errors import UsageError
from tether.runs.record import RunPaths, row_to_record
from tether.runs.recovery import recover_abandoned
from tether.store import state_db
from tether.store.runs import follow_ups_of, get_run


def open_runs() -> tuple[sqlite3.Connection, Path]:
    """The store of this project (abandoned runs recovered) and tether's home."""
    config = load_config()
    conn = state_db.connect_existing(config.home)
    recover_abandoned(conn, config.home)
    return conn, config.home


def run_status(run_id: str) -> dict[str, Any]:
    """One run's record, with the runs that followed it up (``followed_up_by``)."""
    conn, _ = open_runs()
    record = row_to_record(get_run(conn, run_id))
    record["followed_up_by"] = follow_ups_of(conn, record["id"])
    return record


def report_text(run_id: str, *, as_json: bool = False) -> str:
    """The progress report of a limit-stopped run (report.md, or report.json)."""
    conn, _ = open_runs()
    row = get_run(conn, run_id)
    paths = RunPaths(Path(row.run_dir))
    target = paths.report_json if as_json else paths.report_md
    if not target.exists():
        raise UsageError(
            f"run {row.id} has no progress report (status {row.status}); reports are written "
            f"when a limit stops a run."
        )
    return target.read_text("utf-8")
