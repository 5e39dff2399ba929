"""The run's own tool-call limit, decided from the agent's stream alone.

The gate's refusal usually ends a run at its limit first, so these runs give the
gate nothing to refuse: the scripted agent replays a recorded Claude Code
stream (five tool calls) and runs no hooks. What stops the run is the check of
each event against the budget (``LimitCheck.after``), at the first call beyond
the limit, not one later.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.runs.conftest import Project

from tether.events.accounting import Ledger, apply
from tether.events.model import ToolCallStarted
from tether.run_status import RunStatus
from tether.runs.budget import Budget, LimitCheck

RECORDED = Path(__file__).parents[1] / "transcripts" / "claude-code" / "five-steps.jsonl"
CALLS = 5  # tool calls in the recording


@pytest.mark.parametrize("limit", [1, 4])
def test_the_check_stops_at_the_first_call_beyond_the_limit(limit: int) -> None:
    check = LimitCheck(Budget(iterations=100, tool_calls=limit, timeout_seconds=60), "pi")
    ledger = Ledger()
    verdicts = []
    for n in range(1, limit + 2):
        call = ToolCallStarted(call_id=f"c{n}", name="Bash")
        verdicts.append(check.after(call, apply(ledger, call)))
    assert verdicts == [None] * limit + [RunStatus.TOOL_CALL_LIMIT]


@pytest.mark.parametrize(
    ("limit", "code", "status"),
    [(CALLS - 1, 21, "tool_call_limit"), (CALLS, 0, "completed")],
    ids=["one-below", "exactly"],
)
def test_a_stream_beyond_the_limit_ends_the_run_without_the_gate(
    project: Project, limit: int, code: int, status: str
) -> None:
    project.write_config(["--replay", str(RECORDED)])
    done, record = project.run_json("--prompt", "go", "--tool-calls", str(limit))
    assert (done, record["status"]) == (code, status)
    if status == "tool_call_limit":
        assert record["report"]["tool_calls"]["limit"] == limit
    else:
        assert record["tool_calls"] == CALLS
    # the gate never saw a call: the stream alone decided
    assert _gate_counted(project.home) == 0


def _gate_counted(home: Path) -> int:
    conn = sqlite3.connect(home / "gate.db")
    try:
        (count,) = conn.execute("SELECT COUNT(*) FROM events WHERE decision != 'record'").fetchone()
    finally:
        conn.close()
    return int(count)
