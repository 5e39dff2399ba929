from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from tether.clock import FakeClock, to_iso
from tether.core.errors import RunNotFoundError, StoreError, UsageError
from tether.store.runs import (
    COLUMNS,
    RUN_STATUSES,
    RunRow,
    get_run,
    insert_run,
    list_runs,
    running_runs,
    update_run,
)


def _row(run_id: str, started: str = "2025-01-01T00:00:00.000000Z", **fields: object) -> RunRow:
    row = RunRow(
        id=run_id,
        profile="cheap",
        harness="scripted",
        argv=["python", "-m", "tether.harnesses.scripted", "--steps", "5"],
        started_at=started,
        run_dir=f"/tmp/runs/{run_id}",
    )
    return replace(row, **fields)  # type: ignore[arg-type]


def test_columns_mirror_the_table(conn: sqlite3.Connection) -> None:
    assert tuple(r[1] for r in conn.execute("PRAGMA table_info(runs)")) == COLUMNS
    assert RUN_STATUSES == (
        "running",
        "completed",
        "iteration_limit",
        "tool_call_limit",
        "timeout",
        "failed",
        "cancelled",
        "token_limit",
        "cost_limit",
        "output_limit",
        "abandoned",
    )


def test_insert_and_get_round_trip(conn: sqlite3.Connection) -> None:
    row = _row(
        "r-1",
        unit="T-7",
        model="gpt-5-mini",
        argv=["codex", "exec", "--json", "ünïcode arg"],
        usage={"input_tokens": 10, "output_tokens": 3, "cost_usd": 0.01},
        timeout_seconds=12.5,
        supervisor_start_time=1234.5,
        depth=1,
    )
    insert_run(conn, row)
    got = get_run(conn, "r-1")
    assert got == row
    assert got.argv == ["codex", "exec", "--json", "ünïcode arg"]
    assert got.usage == {"input_tokens": 10, "output_tokens": 3, "cost_usd": 0.01}
    assert got.status == "running" and got.iterations == 0
    stored = conn.execute("SELECT argv, usage FROM runs WHERE id = 'r-1'").fetchone()
    assert stored[0] == '["codex", "exec", "--json", "ünïcode arg"]'


def test_defaults_written_by_insert_match_the_schema(conn: sqlite3.Connection) -> None:
    insert_run(conn, _row("r-1"))
    assert conn.execute(
        "SELECT iterations, tool_calls, tool_results, open_tool_calls, depth, usage FROM runs"
    ).fetchone() == (0, 0, 0, 0, 0, None)


def test_update_run(conn: sqlite3.Connection) -> None:
    insert_run(conn, _row("r-1"))
    update_run(
        conn,
        "r-1",
        status="iteration_limit",
        iterations=20,
        usage={"input_tokens": 5},
        argv=["x"],
        ended_at="2025-01-01T00:01:00.000000Z",
    )
    got = get_run(conn, "r-1")
    assert (got.status, got.iterations, got.usage, got.argv) == (
        "iteration_limit",
        20,
        {"input_tokens": 5},
        ["x"],
    )
    update_run(conn, "r-1")  # nothing to change is fine
    with pytest.raises(RunNotFoundError):
        update_run(conn, "nope", iterations=1)
    with pytest.raises(StoreError, match="cannot update run column"):
        update_run(conn, "r-1", iteratons=1)
    with pytest.raises(StoreError, match="cannot update run column"):
        update_run(conn, "r-1", id="other")
    with pytest.raises(StoreError, match="run status 'done' is not one of"):
        update_run(conn, "r-1", status="done")
    with pytest.raises(StoreError, match="run status"):
        insert_run(conn, _row("r-2", status="weird"))


def test_get_run_by_unique_prefix(conn: sqlite3.Connection) -> None:
    insert_run(conn, _row("20250101-abcd"))
    insert_run(conn, _row("20250101-abef"))
    insert_run(conn, _row("20250102-0000"))
    assert get_run(conn, "20250102").id == "20250102-0000"
    assert get_run(conn, "20250101-abc").id == "20250101-abcd"
    with pytest.raises(UsageError, match=r"prefix '20250101-ab' is ambiguous: it matches "):
        get_run(conn, "20250101-ab")
    with pytest.raises(RunNotFoundError, match="no run 'zzz'; `tether runs list`"):
        get_run(conn, "zzz")
    with pytest.raises(RunNotFoundError):
        get_run(conn, "")
    with pytest.raises(RunNotFoundError):
        get_run(conn, "%")  # no LIKE wildcards


def test_list_runs_newest_first_with_filters(conn: sqlite3.Connection) -> None:
    clock = FakeClock(datetime(2025, 3, 1, tzinfo=UTC))
    for index in range(5):
        status = "completed" if index % 2 else "running"
        insert_run(conn, _row(f"r-{index}", started=to_iso(clock.now()), status=status))
        clock.advance(60)
    assert [r.id for r in list_runs(conn)] == ["r-4", "r-3", "r-2", "r-1", "r-0"]
    assert [r.id for r in list_runs(conn, limit=2)] == ["r-4", "r-3"]
    assert [r.id for r in list_runs(conn, status="completed")] == ["r-3", "r-1"]
    assert [r.id for r in list_runs(conn, status=["completed", "running"], limit=None)] == [
        "r-4",
        "r-3",
        "r-2",
        "r-1",
        "r-0",
    ]
    assert [r.id for r in running_runs(conn)] == ["r-4", "r-2", "r-0"]


def test_insert_duplicate_id_fails_and_keeps_the_first(conn: sqlite3.Connection) -> None:
    insert_run(conn, _row("r-1", unit="first"))
    with pytest.raises(sqlite3.IntegrityError):
        insert_run(conn, _row("r-1", unit="second"))
    assert get_run(conn, "r-1").unit == "first"
    assert not conn.in_transaction


def test_follow_up_link(conn: sqlite3.Connection) -> None:
    insert_run(conn, _row("r-1"))
    insert_run(conn, _row("r-2", follow_up_of="r-1", justification="needs the strong model"))
    assert get_run(conn, "r-2").follow_up_of == "r-1"
    with pytest.raises(sqlite3.IntegrityError):
        insert_run(conn, _row("r-3", follow_up_of="missing"))
