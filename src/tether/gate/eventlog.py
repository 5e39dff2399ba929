"""Reading the gate's event log (for the watchdog and reports): the one reader of its schema.

Every hook event and tick the gate sees is one row of ``events`` in
``gate.db``, with its time. The watchdog reads activity (tool calls, batches),
permission prompts (``PermissionRequest``, ``Notification`` with its
``notification_type``) and ends (``Stop``, ``SessionEnd``) from here. Tool calls
and permission requests keep the tool's input as JSON cut to 2048 characters
(``tool_input``); events keep the payload's ``cwd`` and ``transcript_path``.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass

from tether.gate import gate_db

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Sequence
    from pathlib import Path
    from typing import Any

_BASE_COLUMNS = ("at", "session_id", "harness", "event", "tool_name", "tool_use_id")
DETAIL_COLUMNS = ("notification_type", "message", "tool_input", "cwd", "transcript_path")
_COUNT_COLUMNS = ("id", "context_key", "id_source", "decision", "calls_used")
# Every column of ``events``, in the order of GateEvent's fields.
COLUMNS = (*_BASE_COLUMNS, *DETAIL_COLUMNS, *_COUNT_COLUMNS)


@dataclass(frozen=True)
class GateEvent:
    """One row of ``events`` (the defaults only serve events made by hand)."""

    at: float  # epoch seconds
    session_id: str
    harness: str
    event: str
    tool_name: str | None
    tool_use_id: str | None
    notification_type: str | None = None  # e.g. permission_prompt, idle_prompt
    message: str | None = None  # a notification's text
    tool_input: str | None = None  # JSON, cut to 2048 characters (then ending in …)
    cwd: str | None = None
    transcript_path: str | None = None
    id: int = 0  # the row id: read_events(after_id=...) reads what came after it
    context_key: str = ""  # what the gate observed before mapping it to the session
    id_source: str = ""  # where the context key came from (payload, env, flag, ...)
    decision: str = ""  # allow, deny, continue, stop or record
    calls_used: int | None = None  # after a counted tool call

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> GateEvent:
        """An event from a row selected with the columns of ``COLUMNS``."""
        return cls(float(row[0]), str(row[1]), str(row[2]), str(row[3]), *row[4:])


def read_events(
    home: Path | str,
    *,
    session_id: str | None = None,
    since: float | None = None,
    after_id: int | None = None,
    limit: int | None = None,
) -> list[GateEvent]:
    """Events in the order they were recorded, optionally of one session.

    ``since`` (Unix time) and ``after_id`` (the last ``id`` already read) both
    narrow the result, so a poller can read only what is new.
    """
    where: list[str] = []
    params: list[str | float | int] = []
    if session_id is not None:
        where.append("session_id = ?")
        params.append(session_id)
    if since is not None:
        where.append("at >= ?")
        params.append(since)
    if after_id is not None:
        where.append("id > ?")
        params.append(after_id)
    sql = f"SELECT {', '.join(COLUMNS)} FROM events"  # noqa: S608 - constant columns
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY id"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    conn = gate_db.connect(os.fspath(home))
    try:
        rows = conn.execute(sql, params).fetchall()
    finally:
        conn.close()
    return [GateEvent.from_row(row) for row in rows]


# --- the watchdog's read-only view ------------------------------------------

_MAX_SESSIONS_PER_QUERY = 400


class GateReader:
    """A read-only view of gate.db that reconnects when the file appears.

    The watchdog reads it for when an orchestrator last did something and
    whether a subagent's harness said it waits for a permission answer. A
    gate.db not migrated yet (no hook ran since tether was upgraded) has no
    detail columns: they read as None, and the reader looks again each time.
    Queries go by ``session_id`` (indexed with the time); one more finds the
    sessions that worked in a folder lately (by the time index). A file that
    does not exist yet (no hook has run) simply has no events.
    """

    def __init__(self, home: Path | str) -> None:
        self.path = gate_db.db_file(os.fspath(home))
        self._conn: sqlite3.Connection | None = None
        self._select: str | None = None  # the column list, once every column exists

    def _connection(self) -> sqlite3.Connection | None:
        if self._conn is not None:
            return self._conn
        if not os.path.exists(self.path):
            return None
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=2.0)
            conn.execute("PRAGMA busy_timeout = 2000")
            conn.execute("SELECT 1 FROM events LIMIT 1")
        except sqlite3.Error:
            return None  # not migrated yet, or being created: try again next cycle
        self._conn = conn
        return conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._select = None

    def _columns(self, conn: sqlite3.Connection) -> str:
        """The select list: missing detail columns (an older gate.db) read as NULL."""
        if self._select is not None:
            return self._select
        present = {str(row[1]) for row in conn.execute("PRAGMA table_info(events)")}
        details = [c if c in present else f"NULL AS {c}" for c in DETAIL_COLUMNS]
        select = ", ".join((*_BASE_COLUMNS, *details, *_COUNT_COLUMNS))
        if present.issuperset(DETAIL_COLUMNS):
            self._select = select
        return select

    def recent(self, sessions: Collection[str], limit: int = 50) -> list[GateEvent]:
        """The latest events of these sessions, newest first."""
        wanted = [s for s in dict.fromkeys(sessions) if s]
        if not wanted:
            return []
        conn = self._connection()
        if conn is None:
            return []
        found: list[GateEvent] = []
        for start in range(0, len(wanted), _MAX_SESSIONS_PER_QUERY):
            chunk = wanted[start : start + _MAX_SESSIONS_PER_QUERY]
            marks = ", ".join("?" for _ in chunk)
            try:
                sql = (
                    f"SELECT {self._columns(conn)} FROM events "  # noqa: S608 - constant columns
                    f"WHERE session_id IN ({marks}) ORDER BY at DESC, id DESC LIMIT ?"
                )
                rows = conn.execute(sql, [*chunk, limit]).fetchall()
            except sqlite3.Error:
                self.close()
                return []
            found.extend(GateEvent.from_row(r) for r in rows)
        found.sort(key=lambda e: e.at, reverse=True)
        return found[:limit]

    def sessions_by_cwd(self, cwds: Collection[str], since: float) -> dict[str, dict[str, float]]:
        """Sessions with events from these working folders since ``since``: cwd -> {session: last}.

        Empty for a gate.db without the ``cwd`` column (not migrated yet).
        """
        wanted = sorted({c for c in cwds if c})
        conn = self._connection()
        if not wanted or conn is None:
            return {}
        marks = ", ".join("?" for _ in wanted)
        try:
            rows = conn.execute(
                "SELECT cwd, session_id, MAX(at) FROM events "  # noqa: S608 - placeholders only
                f"WHERE at >= ? AND cwd IN ({marks}) GROUP BY cwd, session_id",
                [since, *wanted],
            ).fetchall()
        except sqlite3.OperationalError:
            return {}  # no cwd column yet
        except sqlite3.Error:
            self.close()
            return {}
        found: dict[str, dict[str, float]] = {}
        for cwd, session, last in rows:
            found.setdefault(str(cwd), {})[str(session)] = float(last)
        return found

    def sessions_since(self, since: float) -> dict[str, float]:
        """Every session with an event after ``since`` and its latest event time."""
        conn = self._connection()
        if conn is None:
            return {}
        try:
            rows = conn.execute(
                "SELECT session_id, MAX(at) FROM events WHERE at > ? GROUP BY session_id",
                (since,),
            ).fetchall()
        except sqlite3.Error:
            self.close()
            return {}
        return {str(r[0]): float(r[1]) for r in rows}
