"""What the loop remembers between ticks, besides the guard (see ``guard``).

Items a source already reported, when each routine check and each BLOCKED
check last ran, and how many times in a row the stop hook blocked a session.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from tether.clock import from_iso, to_iso
from tether.store.db import transaction


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
