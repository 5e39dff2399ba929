"""Helpers shared by the gate tests (imported as ``tests.gate.gate_support``)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.outside_agents import without_agent_vars

GOLDEN = Path(__file__).parent / "golden"
HOLDING_GATE = Path(__file__).parent / "holding_gate.py"


def holding_gate(marker: Path) -> list[str]:
    """The argv before the gate's arguments of a gate whose counting call writes
    ``marker`` and then holds its open transaction until killed (``holding_gate.py``)."""
    return [sys.executable, str(HOLDING_GATE), str(marker)]


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """Without the variables that would let the gate (or `session new`) find a session
    or an agent without the process tree: a test sees only what it sets up."""
    env = without_agent_vars(os.environ)
    env["TETHER_HOME"] = str(home)
    env.update(extra)
    return env


def run_gate(
    gate: str,
    args: list[str],
    env: Mapping[str, str],
    payload: bytes | str | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    data = payload.encode() if isinstance(payload, str) else payload
    return subprocess.run(
        [gate, *args],
        input=data if data is not None else b"",
        capture_output=True,
        env=dict(env),
        cwd=cwd,
        timeout=60,
        check=False,
    )


def query(home: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(home / "gate.db")
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def load_payload(harness: str, event: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / harness / f"{event}.payload.json").read_text())
    return data


def refused_line(run_dir: Path, stop: str, iterations: int = 3) -> str:
    """The report's refused-call line of a run that ended as ``stop`` with the refusal
    its gate recorded in ``run_dir`` (the report reads ``refused.json`` as this does)."""
    from datetime import UTC, datetime

    from tether.events.accounting import Ledger
    from tether.gate.runstop import read_refusal
    from tether.run_status import RunStatus
    from tether.runs.budget import Budget
    from tether.runs.run_report import ReportInput, build, render_markdown

    report = build(
        ReportInput(
            run_id=run_dir.name,
            unit=None,
            profile="cheap",
            harness="copilot",
            stop=RunStatus(stop),
            budget=Budget(iterations=iterations, tool_calls=None, timeout_seconds=60.0),
            ledger=Ledger(iterations=iterations),
            seconds=1.0,
            files_changed=[],
            worktree_kind="git",
            diff_stat=None,
            skipped_stages=[],
            session_id=None,
            ended_at=datetime(2026, 12, 2, tzinfo=UTC),
            refused_call=read_refusal(str(run_dir)),
            gated=True,
        )
    )
    lines = [line for line in render_markdown(report).splitlines() if "refused call:" in line]
    assert len(lines) == 1, render_markdown(report)
    return lines[0]
