"""The watch tables: registered orchestrators, the sessions bound to them, the wake log.

Orchestrators are registered explicitly (``tether watch add-orchestrator``) by a
tmux pane, a process (with an optional log file), or a ``tether run``. Their
sessions — the ids under which the gate records their hook events — are bound
explicitly (``--session``) or learned: from the harness's session variable when
the orchestrator calls ``tether subagents wait``, and from the wake endpoints
(the Pi extension, the Claude Code rewake hook) that run inside it.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Literal

from tether.clock import Clock, SystemClock, from_iso, to_iso
from tether.core.errors import UsageError
from tether.store.state_db import transaction


@dataclass(frozen=True)
class Orchestrator:
    id: int
    name: str
    tmux_pane: str | None
    tmux_socket: str | None
    # the orchestrator's process; for a pane registration the pane's first process
    # (with its start time: the pane's identity, as a restarted tmux server reuses pane ids)
    pid: int | None
    pid_start_time: float | None
    log_path: str | None
    run_id: str | None
    harness: str | None
    added_at: str
    removed_at: str | None
    last_activity: float | None  # epoch seconds of an explicit activity (subagents wait)
    last_activity_source: str | None
    sessions: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "tmux_pane": self.tmux_pane,
            "tmux_socket": self.tmux_socket,
            "pid": self.pid,
            "log_path": self.log_path,
            "run_id": self.run_id,
            "harness": self.harness,
            "added_at": self.added_at,
            "removed_at": self.removed_at,
            "last_activity": self.last_activity,
            "last_activity_source": self.last_activity_source,
            "sessions": list(self.sessions),
        }


_ORCH_COLUMNS = (
    "id, name, tmux_pane, tmux_socket, pid, pid_start_time, log_path, run_id, harness, "
    "added_at, removed_at, last_activity, last_activity_source"
)


def _orchestrator(row: tuple[Any, ...], sessions: tuple[str, ...]) -> Orchestrator:
    names = [c.strip() for c in _ORCH_COLUMNS.split(",")]
    return Orchestrator(**dict(zip(names, row, strict=True)), sessions=sessions)


# The two tables of registrations by hand; a row is retired (``removed_at``), never deleted.
_Registrations = Literal["watch_orchestrators", "watch_subagents"]


def _retire_same(
    conn: sqlite3.Connection,
    table: _Registrations,
    now: str,
    tmux_pane: str | None,
    tmux_socket: str | None,
    pid: int | None,
) -> None:
    """Retire the active registration of the same pane (on the same server) or pid."""
    conn.execute(
        f"UPDATE {table} SET removed_at = ? WHERE removed_at IS NULL AND "  # noqa: S608
        "((tmux_pane IS NOT NULL AND tmux_pane = ? AND COALESCE(tmux_socket, '') = ?) "
        "OR (pid IS NOT NULL AND pid = ?))",
        (now, tmux_pane, tmux_socket or "", pid),
    )


def _retire(
    conn: sqlite3.Connection, table: _Registrations, row_id: int, clock: Clock | None
) -> bool:
    """Retire one active registration; False when there is none by that id."""
    now = to_iso((clock or SystemClock()).now())
    with transaction(conn):
        cursor = conn.execute(
            f"UPDATE {table} SET removed_at = ? WHERE id = ? AND removed_at IS NULL",  # noqa: S608
            (now, row_id),
        )
    return bool(cursor.rowcount)


def _channels_json(channels: tuple[dict[str, Any], ...]) -> str:
    return json.dumps(list(channels), ensure_ascii=False)


@dataclass(frozen=True)
class Registration:
    """An orchestrator to register: its tmux pane or its process id, and what else is known."""

    name: str | None = None
    tmux_pane: str | None = None
    tmux_socket: str | None = None
    pid: int | None = None
    pid_start_time: float | None = None
    log_path: str | None = None
    run_id: str | None = None
    harness: str | None = None
    sessions: tuple[str, ...] = ()


def add_orchestrator(
    conn: sqlite3.Connection, new: Registration, clock: Clock | None = None
) -> Orchestrator:
    """Register an orchestrator (an active one with the same pane or pid is replaced)."""
    if new.tmux_pane is None and new.pid is None:
        raise UsageError("an orchestrator needs a tmux pane or a process id.")
    now = to_iso((clock or SystemClock()).now())
    label = new.name or (new.tmux_pane and f"pane {new.tmux_pane}") or f"pid {new.pid}"
    with transaction(conn):
        _retire_same(conn, "watch_orchestrators", now, new.tmux_pane, new.tmux_socket, new.pid)
        cursor = conn.execute(
            "INSERT INTO watch_orchestrators (name, tmux_pane, tmux_socket, pid, pid_start_time, "
            "log_path, run_id, harness, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                label,
                new.tmux_pane,
                new.tmux_socket,
                new.pid,
                new.pid_start_time,
                new.log_path,
                new.run_id,
                new.harness,
                now,
            ),
        )
        new_id = int(cursor.lastrowid or 0)
        for session in new.sessions:
            bind_session(conn, session, new_id, harness=new.harness, source="flag", clock=clock)
    return get_orchestrator(conn, new_id)


def get_orchestrator(conn: sqlite3.Connection, orchestrator_id: int) -> Orchestrator:
    row = conn.execute(
        f"SELECT {_ORCH_COLUMNS} FROM watch_orchestrators WHERE id = ?",  # noqa: S608
        (orchestrator_id,),
    ).fetchone()
    if row is None:
        raise UsageError(
            f"no orchestrator {orchestrator_id}; `tether watch orchestrators` lists them."
        )
    return _orchestrator(row, sessions_of(conn, orchestrator_id))


def list_orchestrators(conn: sqlite3.Connection, active_only: bool = True) -> list[Orchestrator]:
    where = " WHERE removed_at IS NULL" if active_only else ""
    rows = conn.execute(
        f"SELECT {_ORCH_COLUMNS} FROM watch_orchestrators{where} ORDER BY id"  # noqa: S608
    ).fetchall()
    bound: dict[int, list[str]] = {}
    for session, orchestrator_id in conn.execute(
        "SELECT session_id, orchestrator_id FROM watch_sessions ORDER BY bound_at"
    ):
        bound.setdefault(int(orchestrator_id), []).append(str(session))
    return [_orchestrator(row, tuple(bound.get(int(row[0]), ()))) for row in rows]


def remove_orchestrator(
    conn: sqlite3.Connection, orchestrator_id: int, clock: Clock | None = None
) -> bool:
    return _retire(conn, "watch_orchestrators", orchestrator_id, clock)


def touch(conn: sqlite3.Connection, orchestrator_id: int, at: float, source: str) -> None:
    """Record an explicit activity of the orchestrator (never moves time backwards)."""
    with transaction(conn):
        conn.execute(
            "UPDATE watch_orchestrators SET last_activity = ?, last_activity_source = ? "
            "WHERE id = ? AND (last_activity IS NULL OR last_activity <= ?)",
            (at, source, orchestrator_id, at),
        )


def bind_session(
    conn: sqlite3.Connection,
    session_id: str,
    orchestrator_id: int,
    *,
    harness: str | None = None,
    source: str,
    clock: Clock | None = None,
) -> bool:
    """Count ``session_id``'s hook events as this orchestrator's; True when new."""
    if not session_id:
        return False
    now = to_iso((clock or SystemClock()).now())
    with transaction(conn):
        row = conn.execute(
            "SELECT orchestrator_id FROM watch_sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is not None and int(row[0]) == orchestrator_id:
            return False
        conn.execute(
            "INSERT OR REPLACE INTO watch_sessions (session_id, orchestrator_id, harness, source, "
            "bound_at) VALUES (?, ?, ?, ?, ?)",
            (session_id, orchestrator_id, harness, source, now),
        )
    return True


def sessions_of(conn: sqlite3.Connection, orchestrator_id: int) -> tuple[str, ...]:
    return tuple(
        str(r[0])
        for r in conn.execute(
            "SELECT session_id FROM watch_sessions WHERE orchestrator_id = ? ORDER BY bound_at",
            (orchestrator_id,),
        )
    )


# --- subagents registered by hand -----------------------------------------------


@dataclass(frozen=True)
class ExtraSubagent:
    """A subagent registered with ``tether watch add-subagent``: a pane or a process."""

    id: int
    tmux_pane: str | None
    tmux_socket: str | None
    pid: int | None
    pid_start_time: float | None
    added_at: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tmux_pane": self.tmux_pane,
            "tmux_socket": self.tmux_socket,
            "pid": self.pid,
            "added_at": self.added_at,
        }


def add_subagent(
    conn: sqlite3.Connection,
    *,
    tmux_pane: str | None = None,
    tmux_socket: str | None = None,
    pid: int | None = None,
    pid_start_time: float | None = None,
    clock: Clock | None = None,
) -> ExtraSubagent:
    """Register a subagent by hand (the same pane or pid again replaces the old entry)."""
    if (tmux_pane is None) == (pid is None):
        raise UsageError("a subagent is a tmux pane or a process id, exactly one of them.")
    now = to_iso((clock or SystemClock()).now())
    with transaction(conn):
        _retire_same(conn, "watch_subagents", now, tmux_pane, tmux_socket, pid)
        cursor = conn.execute(
            "INSERT INTO watch_subagents (tmux_pane, tmux_socket, pid, pid_start_time, added_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (tmux_pane, tmux_socket, pid, pid_start_time, now),
        )
    new_id = int(cursor.lastrowid or 0)
    return ExtraSubagent(new_id, tmux_pane, tmux_socket, pid, pid_start_time, now)


def list_extra_subagents(conn: sqlite3.Connection) -> list[ExtraSubagent]:
    rows = conn.execute(
        "SELECT id, tmux_pane, tmux_socket, pid, pid_start_time, added_at FROM watch_subagents "
        "WHERE removed_at IS NULL ORDER BY id"
    ).fetchall()
    return [ExtraSubagent(*row) for row in rows]


def remove_subagent(conn: sqlite3.Connection, subagent_id: int, clock: Clock | None = None) -> bool:
    return _retire(conn, "watch_subagents", subagent_id, clock)


# --- the wake log -------------------------------------------------------------


@dataclass(frozen=True)
class WakeRecord:
    at: str  # ISO 8601 UTC
    orchestrator_id: int | None
    reason: str  # "idle" | "confirmation" | "input" | "no-orchestrator" | "own-permission"
    subagent: str | None
    pending_tool: str | None
    pending_call_id: str | None
    idle_seconds: float | None
    message: str
    # {"channel", "ok", "detail"}; a harness request adds "request_id", "endpoint",
    # "acknowledged_at" and, once given up on, "withdrawn"; a fallback "fallback": true
    channels: tuple[dict[str, Any], ...]
    delivered: bool  # a turn-starting channel took it: typed into the pane, or acknowledged
    id: int | None = None

    @property
    def outcome(self) -> str:
        """``woken``, ``written, not acknowledged`` (a harness request nobody took) or
        ``human-only``."""
        if self.delivered:
            return "woken"
        if any(c.get("channel") == "harness" and c.get("ok") for c in self.channels):
            return "written, not acknowledged"
        return "human-only"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at,
            "orchestrator_id": self.orchestrator_id,
            "reason": self.reason,
            "subagent": self.subagent,
            "pending_tool": self.pending_tool,
            "pending_call_id": self.pending_call_id,
            "idle_seconds": self.idle_seconds,
            "message": self.message,
            "channels": list(self.channels),
            "delivered": self.delivered,
            "outcome": self.outcome,
        }


def record_wake(conn: sqlite3.Connection, wake: WakeRecord) -> int:
    with transaction(conn):
        cursor = conn.execute(
            "INSERT INTO watch_wakes (at, orchestrator_id, reason, subagent, pending_tool, "
            "pending_call_id, idle_seconds, message, channels, delivered) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                wake.at,
                wake.orchestrator_id,
                wake.reason,
                wake.subagent,
                wake.pending_tool,
                wake.pending_call_id,
                wake.idle_seconds,
                wake.message,
                _channels_json(wake.channels),
                int(wake.delivered),
            ),
        )
    return int(cursor.lastrowid or 0)


def update_wake(
    conn: sqlite3.Connection, wake_id: int, channels: tuple[dict[str, Any], ...], delivered: bool
) -> None:
    """Record how a logged wake went (it is logged first, delivered after)."""
    with transaction(conn):
        conn.execute(
            "UPDATE watch_wakes SET channels = ?, delivered = ? WHERE id = ?",
            (_channels_json(channels), int(delivered), wake_id),
        )


def swap_channels(
    conn: sqlite3.Connection,
    wake: WakeRecord,
    channels: tuple[dict[str, Any], ...],
    delivered: bool,
) -> bool:
    """Replace a logged wake's channels if nobody changed them since ``wake`` was read.

    Two daemons settling the same wake: only one of them wins (and falls back).
    """
    assert wake.id is not None
    with transaction(conn):
        cursor = conn.execute(
            "UPDATE watch_wakes SET channels = ?, delivered = ? WHERE id = ? AND channels = ?",
            (
                _channels_json(channels),
                int(delivered),
                wake.id,
                _channels_json(wake.channels),
            ),
        )
    return bool(cursor.rowcount)


def last_wake_at(conn: sqlite3.Connection, orchestrator_id: int | None) -> float | None:
    """Epoch seconds of the latest wake of this orchestrator (None: the human-only log)."""
    if orchestrator_id is None:
        row = conn.execute(
            "SELECT MAX(at) FROM watch_wakes WHERE orchestrator_id IS NULL"
        ).fetchone()
    else:
        row = conn.execute(
            "SELECT MAX(at) FROM watch_wakes WHERE orchestrator_id = ?", (orchestrator_id,)
        ).fetchone()
    if row is None or row[0] is None:
        return None
    return from_iso(str(row[0])).timestamp()


def list_wakes(
    conn: sqlite3.Connection, limit: int | None = 50, orchestrator_id: int | None = None
) -> list[WakeRecord]:
    """Wakes, oldest first (the newest ``limit`` of them; of one orchestrator when given)."""
    query = (
        "SELECT id, at, orchestrator_id, reason, subagent, pending_tool, pending_call_id, "
        "idle_seconds, message, channels, delivered FROM watch_wakes"
    )
    params: list[Any] = []
    if orchestrator_id is not None:
        query += " WHERE orchestrator_id = ?"
        params.append(orchestrator_id)
    query += " ORDER BY id DESC"
    if limit is not None:
        query += " LIMIT ?"
        params.append(limit)
    rows = conn.execute(query, params).fetchall()
    wakes = [
        WakeRecord(
            at=str(r[1]),
            orchestrator_id=r[2],
            reason=str(r[3]),
            subagent=r[4],
            pending_tool=r[5],
            pending_call_id=r[6],
            idle_seconds=r[7],
            message=str(r[8]),
            channels=tuple(json.loads(r[9])),
            delivered=bool(r[10]),
            id=int(r[0]),
        )
        for r in rows
    ]
    wakes.reverse()
    return wakes
