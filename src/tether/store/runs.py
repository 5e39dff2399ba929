"""The ``runs`` table: one row per supervised run (files in the run folder hold the rest)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from typing import Any, Final

from tether.core.errors import RunNotFoundError, StoreError, UsageError
from tether.run_status import RunStatus
from tether.store.state_db import transaction

RUN_STATUSES: Final[tuple[str, ...]] = tuple(RunStatus)
_JSON_COLUMNS = frozenset({"argv", "usage", "stages"})


@dataclass(kw_only=True)
class RunRow:
    """One row of ``runs``; ``argv`` and ``usage`` decoded from their JSON text."""

    id: str
    unit: str | None = None
    profile: str
    harness: str
    model: str | None = None
    argv: list[str]
    cwd: str | None = None
    session_id: str | None = None  # the id tether chose and passed on
    harness_session_id: str | None = None  # the id the harness reported
    status: str = RunStatus.RUNNING
    stop_reason: str | None = None
    exit_code: int | None = None
    agent_exit_status: int | None = None
    iteration_limit: int | None = None
    tool_call_limit: int | None = None
    timeout_seconds: float | None = None
    iterations: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    open_tool_calls: int = 0
    usage: dict[str, Any] | None = None
    started_at: str  # ISO 8601 UTC, see tether.clock.to_iso
    ended_at: str | None = None
    supervisor_pid: int | None = None
    supervisor_start_time: float | None = None
    agent_pgid: int | None = None
    follow_up_of: str | None = None
    budget_request: int | None = None
    justification: str | None = None
    run_dir: str
    host: str | None = None
    depth: int = 0
    # post-run stages of a completed run: [{command, status, exit_code}], None if none ran
    stages: list[dict[str, Any]] | None = None
    # "bubblewrap", or "off: <why>" for a run without a sandbox (None: before sandboxes)
    sandbox: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


COLUMNS: Final[tuple[str, ...]] = tuple(f.name for f in fields(RunRow))
# Column names in SQL text come only from RunRow's fields; values are always bound.
_SELECT = f"SELECT {', '.join(COLUMNS)} FROM runs"  # noqa: S608
_PLACEHOLDERS = ", ".join("?" for _ in COLUMNS)
_INSERT = f"INSERT INTO runs ({', '.join(COLUMNS)}) VALUES ({_PLACEHOLDERS})"  # noqa: S608


def _encode(column: str, value: Any) -> Any:
    if column == "status" and value not in RUN_STATUSES:
        raise StoreError(f"run status {value!r} is not one of {', '.join(RUN_STATUSES)}")
    if column in _JSON_COLUMNS:
        return None if value is None else json.dumps(value, ensure_ascii=False)
    return value


def _decode(row: sqlite3.Row | tuple[Any, ...]) -> RunRow:
    values = dict(zip(COLUMNS, row, strict=True))
    values["argv"] = json.loads(values["argv"])
    for column in ("usage", "stages"):
        if values[column] is not None:
            values[column] = json.loads(values[column])
    return RunRow(**values)


def insert_run(conn: sqlite3.Connection, row: RunRow) -> None:
    values = [_encode(column, getattr(row, column)) for column in COLUMNS]
    with transaction(conn):
        conn.execute(_INSERT, values)


def update_run(conn: sqlite3.Connection, run_id: str, **fields_: Any) -> None:
    """Set the given columns of one run (exact id); ``RunNotFoundError`` if absent."""
    unknown = sorted(set(fields_) - set(COLUMNS) | ({"id"} & set(fields_)))
    if unknown:
        raise StoreError(f"cannot update run column(s) {', '.join(unknown)}")
    if not fields_:
        return
    assignments = ", ".join(f"{column} = ?" for column in fields_)
    values = [_encode(column, value) for column, value in fields_.items()]
    with transaction(conn):
        sql = f"UPDATE runs SET {assignments} WHERE id = ?"  # noqa: S608 - names checked above
        cursor = conn.execute(sql, [*values, run_id])
        if cursor.rowcount == 0:
            raise RunNotFoundError(run_id)


def get_run(conn: sqlite3.Connection, run_id: str) -> RunRow:
    """A run by its id or by a prefix that only one run id starts with."""
    row = conn.execute(f"{_SELECT} WHERE id = ?", (run_id,)).fetchone()
    if row is not None:
        return _decode(row)
    if not run_id:
        raise RunNotFoundError(run_id)
    matches = conn.execute(
        f"{_SELECT} WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 6", (len(run_id), run_id)
    ).fetchall()
    if not matches:
        raise RunNotFoundError(run_id)
    if len(matches) > 1:
        shown = ", ".join(str(m[0]) for m in matches[:5])
        more = ", ..." if len(matches) > 5 else ""
        raise UsageError(
            f"run id prefix {run_id!r} is ambiguous: it matches {shown}{more}; "
            f"give more characters."
        )
    return _decode(matches[0])


def list_runs(
    conn: sqlite3.Connection,
    limit: int | None = 50,
    status: str | Iterable[str] | None = None,
) -> list[RunRow]:
    """Runs newest first, optionally only those with the given status(es)."""
    query = _SELECT
    params: list[Any] = []
    if status is not None:
        wanted = [status] if isinstance(status, str) else list(status)
        query += f" WHERE status IN ({', '.join('?' for _ in wanted)})"
        params.extend(wanted)
    query += " ORDER BY started_at DESC, rowid DESC"
    if limit is not None:
        query += " LIMIT ?"
        params.append(limit)
    return [_decode(row) for row in conn.execute(query, params)]


@dataclass(frozen=True)
class RunFilter:
    """Which runs a search finds; a field left ``None`` (or empty) matches every run.

    ``stop_reason`` matches from the start (``iteration_limit`` finds
    ``iteration_limit (sigterm)``); ``since``/``until`` bound ``started_at`` (ISO
    text, ``until`` exclusive); the others match exactly.
    """

    status: str | None = None
    stop_reason: str | None = None
    harness: str | None = None
    unit: str | None = None
    since: str | None = None
    until: str | None = None

    def sql(self) -> tuple[str, list[Any]]:
        """The ``WHERE`` clause (empty when nothing is filtered) and its parameters."""
        where: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("status", self.status),
            ("harness", self.harness),
            ("unit", self.unit),
        ):
            if value:
                where.append(f"{column} = ?")
                params.append(value)
        if self.stop_reason:
            where.append("substr(stop_reason, 1, ?) = ?")
            params += [len(self.stop_reason), self.stop_reason]
        if self.since:
            where.append("started_at >= ?")
            params.append(self.since)
        if self.until:
            where.append("started_at < ?")
            params.append(self.until)
        return (f" WHERE {' AND '.join(where)}" if where else ""), params


def search_runs(
    conn: sqlite3.Connection, found: RunFilter, *, limit: int = 50, offset: int = 0
) -> tuple[list[RunRow], int]:
    """One page of the runs ``found`` matches, newest first, and how many match in all."""
    clause, params = found.sql()
    (total,) = conn.execute(f"SELECT count(*) FROM runs{clause}", params).fetchone()  # noqa: S608
    rows = conn.execute(
        f"{_SELECT}{clause} ORDER BY started_at DESC, rowid DESC LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return [_decode(row) for row in rows], int(total)


def ended_runs(conn: sqlite3.Connection, limit: int) -> list[RunRow]:
    """The newest ``limit`` runs that are no longer running (walks the start-time index)."""
    rows = conn.execute(
        f"{_SELECT} WHERE status != 'running' ORDER BY started_at DESC, rowid DESC LIMIT ?",
        (limit,),
    )
    return [_decode(row) for row in rows]


def ended_among(conn: sqlite3.Connection, run_ids: Iterable[str]) -> set[str]:
    """Which of ``run_ids`` the store knows as no longer running."""
    wanted = list(dict.fromkeys(run_ids))
    if not wanted:
        return set()
    marks = ",".join("?" * len(wanted))
    rows = conn.execute(
        f"SELECT id FROM runs WHERE status != 'running' AND id IN ({marks})",  # noqa: S608 - only placeholders
        wanted,
    )
    return {str(row[0]) for row in rows}


def follow_ups_of(conn: sqlite3.Connection, run_id: str) -> list[str]:
    """Ids of the runs that follow up ``run_id``, oldest first."""
    rows = conn.execute(
        "SELECT id FROM runs WHERE follow_up_of = ? ORDER BY started_at, rowid", (run_id,)
    )
    return [str(row[0]) for row in rows]


def running_runs(conn: sqlite3.Connection) -> list[RunRow]:
    """Every run still marked ``running`` (live, or abandoned and not yet noticed)."""
    return list_runs(conn, limit=None, status="running")
