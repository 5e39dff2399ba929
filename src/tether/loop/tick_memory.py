"""What the loop remembers between ticks, besides the guard (see ``guard``).

Items a source already reported, when each routine check and each BLOCKED
check last ran, how many times in a row the stop hook blocked a session, and
every tick's signal line with its evidence (the loop's history).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tether.clock import from_iso, to_iso
from tether.store.state_db import transaction


def seen_items(conn: sqlite3.Connection, scope: str, role: str) -> set[str]:
    rows = conn.execute(
        "SELECT item FROM loop_seen WHERE scope = ? AND role = ?", (scope, role)
    ).fetchall()
    return {row[0] for row in rows}


def mark_seen(
    conn: sqlite3.Connection, scope: str, role: str, items: Iterable[str], at: datetime
) -> None:
    stamp = to_iso(at)
    with transaction(conn):
        conn.executemany(
            "INSERT OR IGNORE INTO loop_seen (scope, role, item, first_seen) VALUES (?, ?, ?, ?)",
            [(scope, role, item, stamp) for item in items],
        )


@dataclass(frozen=True)
class RoutineRecord:
    name: str
    last_run: datetime
    exit_code: int | None
    tail: str | None


def routine_record(conn: sqlite3.Connection, scope: str, name: str) -> RoutineRecord | None:
    row = conn.execute(
        "SELECT last_run, exit_code, tail FROM loop_routines WHERE scope = ? AND name = ?",
        (scope, name),
    ).fetchone()
    if row is None:
        return None
    return RoutineRecord(name, from_iso(row[0]), row[1], row[2])


def record_routine(
    conn: sqlite3.Connection,
    scope: str,
    name: str,
    at: datetime,
    exit_code: int | None,
    tail: str | None,
) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO loop_routines (scope, name, last_run, exit_code, tail) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, name) DO UPDATE SET "
            "last_run = excluded.last_run, exit_code = excluded.exit_code, tail = excluded.tail",
            (scope, name, to_iso(at), exit_code, tail),
        )


def last_checks(conn: sqlite3.Connection, scope: str) -> dict[str, datetime]:
    """When each ticket's check last ran (one query for the whole board)."""
    rows = conn.execute("SELECT ticket, at FROM loop_checks WHERE scope = ?", (scope,))
    return {ticket: from_iso(at) for ticket, at in rows}


def record_check(
    conn: sqlite3.Connection,
    scope: str,
    ticket: str,
    at: datetime,
    passed: bool,
    exit_code: int | None,
) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO loop_checks (scope, ticket, at, passed, exit_code) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (scope, ticket) DO UPDATE SET at = excluded.at,"
            " passed = excluded.passed, exit_code = excluded.exit_code",
            (scope, ticket, to_iso(at), int(passed), exit_code),
        )


def stop_hook_blocks(conn: sqlite3.Connection, session_id: str) -> int:
    row = conn.execute(
        "SELECT blocks FROM loop_stop_hook WHERE session_id = ?", (session_id,)
    ).fetchone()
    return 0 if row is None else int(row[0])


def set_stop_hook_blocks(
    conn: sqlite3.Connection, session_id: str, blocks: int, at: datetime
) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO loop_stop_hook (session_id, blocks, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET blocks = excluded.blocks, "
            "updated_at = excluded.updated_at",
            (session_id, blocks, to_iso(at)),
        )


# The newest ticks kept per board; older ones are dropped as new ones are recorded.
TICKS_KEPT = 5000


@dataclass(frozen=True)
class TickRecord:
    id: int
    scope: str
    at: datetime
    signal: str
    line: str
    exit_code: int
    dry_run: bool
    evidence: dict[str, Any]  # TickResult.as_dict() without the fields above

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope": self.scope,
            "at": to_iso(self.at),
            "signal": self.signal,
            "line": self.line,
            "exit_code": self.exit_code,
            "dry_run": self.dry_run,
            "evidence": self.evidence,
        }


_TICK_FIELDS = ("signal", "line", "exit_code", "at", "dry_run")


def record_tick(conn: sqlite3.Connection, scope: str, result: dict[str, Any]) -> None:
    """Keep one tick (``TickResult.as_dict()``) in the board's history."""
    evidence = {k: v for k, v in result.items() if k not in _TICK_FIELDS}
    with transaction(conn):
        conn.execute(
            "INSERT INTO loop_ticks (scope, at, signal, line, exit_code, dry_run, evidence) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                scope,
                result["at"],
                result["signal"],
                result["line"],
                int(result["exit_code"]),
                int(bool(result["dry_run"])),
                json.dumps(evidence, ensure_ascii=False, default=str),
            ),
        )
        conn.execute(
            "DELETE FROM loop_ticks WHERE scope = ? AND id <= "
            "(SELECT id FROM loop_ticks WHERE scope = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
            (scope, scope, TICKS_KEPT),
        )


def recent_ticks(
    conn: sqlite3.Connection, scope: str | None = None, limit: int = 200
) -> list[TickRecord]:
    """The newest ``limit`` ticks (of one board, or of all), oldest first."""
    query = "SELECT id, scope, at, signal, line, exit_code, dry_run, evidence FROM loop_ticks"
    params: list[Any] = []
    if scope is not None:
        query += " WHERE scope = ?"
        params.append(scope)
    query += " ORDER BY id DESC LIMIT ?"
    params.append(limit)
    rows = conn.execute(query, params).fetchall()
    return [
        TickRecord(
            id=int(r[0]),
            scope=str(r[1]),
            at=from_iso(str(r[2])),
            signal=str(r[3]),
            line=str(r[4]),
            exit_code=int(r[5]),
            dry_run=bool(r[6]),
            evidence=json.loads(r[7]),
        )
        for r in reversed(rows)
    ]


def ticked_boards(conn: sqlite3.Connection) -> list[str]:
    """Every board (scope) with a recorded tick or a guard, in name order."""
    rows = conn.execute("SELECT scope FROM loop_ticks UNION SELECT scope FROM loop_guard")
    return sorted(str(r[0]) for r in rows)


# The loop's memory of one board, all of it keyed by the board's scope.
MEMORY_TABLES = ("loop_guard", "loop_seen", "loop_routines", "loop_checks")


def export_memory(conn: sqlite3.Connection, scope: str) -> str:
    """The loop's memory of the board ``scope`` as JSON text, scope left out.

    For a board whose loop moves between homes (a fleet's workers): what one
    home remembers, another takes up with ``import_memory`` under its own scope.
    """
    memory: dict[str, list[dict[str, Any]]] = {}
    for table in MEMORY_TABLES:
        cursor = conn.execute(f"SELECT * FROM {table} WHERE scope = ?", (scope,))  # noqa: S608
        names = [d[0] for d in cursor.description]
        memory[table] = [
            {k: v for k, v in zip(names, row, strict=True) if k != "scope"} for row in cursor
        ]
    return json.dumps(memory, ensure_ascii=False, sort_keys=True)


def import_memory(conn: sqlite3.Connection, scope: str, text: str) -> None:
    """Make ``export_memory``'s JSON the memory of the board ``scope`` here (replacing it)."""
    memory = json.loads(text)
    with transaction(conn):
        for table in MEMORY_TABLES:
            known = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")} - {"scope"}
            conn.execute(f"DELETE FROM {table} WHERE scope = ?", (scope,))  # noqa: S608
            for row in memory.get(table, []):
                kept = {k: v for k, v in row.items() if k in known}  # names from this schema only
                columns = ["scope", *kept]
                marks = ", ".join("?" for _ in columns)
                conn.execute(
                    f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",  # noqa: S608
                    [scope, *kept.values()],
                )
