"""Reading the gate's hook-event log (``$TETHER_HOME/gate.db``), read-only.

The gate records every hook event it sees: time (epoch seconds), session,
harness, the hook event's own name, tool name and tool-use id, and (schema
version 2 on) a notification's type and text, the tool's input as JSON cut to
2048 characters, the working folder and the transcript path. The watchdog
reads it for two things: when an orchestrator last did something, and whether
a subagent's harness said it waits for a permission answer.

A gate.db the gate has not migrated yet (no hook ran since tether was
upgraded) has no detail columns; they read as None until it is, and the
reader looks again each time until they appear.

Queries go by ``session_id`` (indexed together with the time); the gate
stores the session a context was re-pointed to there, and a process-derived
context key is its own session id. One more finds the sessions that worked in a
folder lately (by the time index): a subagent whose log names no session (a
Codex or Copilot CLI in a pane) is linked to its hook events that way. The file
may not exist yet (no hook has run): then there are simply no events.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

GATE_DB = "gate.db"
_MAX_SESSIONS_PER_QUERY = 400
_BASE_COLUMNS = ("at", "session_id", "harness", "event", "tool_name", "tool_use_id")
DETAIL_COLUMNS = ("notification_type", "message", "tool_input", "cwd", "transcript_path")


@dataclass(frozen=True)
class GateEvent:
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


class GateReader:
    """A read-only view of gate.db that reconnects when the file appears."""

    def __init__(self, home: Path) -> None:
        self.path = Path(home) / GATE_DB
        self._conn: sqlite3.Connection | None = None
        self._select: str | None = None  # the column list, once every column exists

    def _connection(self) -> sqlite3.Connection | None:
        if self._conn is not None:
            return self._conn
        if not self.path.exists():
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
        select = ", ".join((*_BASE_COLUMNS, *details))
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
            found.extend(
                GateEvent(float(r[0]), str(r[1]), str(r[2]), str(r[3]), *r[4:]) for r in rows
            )
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
