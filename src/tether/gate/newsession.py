"""New session ids, only at legitimate boundaries (docs/reference/session.md).

A new id re-points a context (what the gate observes: the harness's session
id, the variable, or the agent process) at a fresh session with a fresh
budget. That is legitimate at a unit boundary recorded in a plan file, or when
a human asks to go on in the same context. It is refused from inside an agent's
process tree, and a locked session is only reset by a human at a terminal.
Every new id is recorded with its reason, plan, unit and who asked.
"""

from __future__ import annotations

import getpass
import os
import sqlite3
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from tether.core.agent_tree import inside_agent
from tether.core.project import default_call_budget
from tether.gate import gate_db, plan
from tether.gate.counter import status_row

REASON_UNIT = "unit-boundary"
REASON_USER = "user-request"
REASONS = (REASON_UNIT, REASON_USER)
HUMAN_REASONS = frozenset({REASON_USER})


class NewSessionRefusedError(Exception):
    """A new session id is not legitimate here; the message says why and what to do."""


def latest_context(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT context_key FROM events ORDER BY id DESC LIMIT 1").fetchone()
    return None if row is None else str(row[0])


def _context_of(conn: sqlite3.Connection, given: str) -> str:
    """A context key for ``given`` (a context key or a session id it points at)."""
    row = conn.execute(
        "SELECT context_key FROM contexts WHERE session_id = ? ORDER BY since DESC LIMIT 1",
        (given,),
    ).fetchone()
    return given if row is None else str(row[0])


def _who(is_tty: bool) -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid {os.getuid()}"
    if not is_tty:
        return f"{user} (no terminal)"
    try:
        terminal = os.ttyname(sys.stdin.fileno())
    except OSError:
        terminal = "a terminal"
    return f"{user} at {terminal}"


@dataclass(frozen=True)
class NewSession:
    """A new session id, as ``new_session`` started it."""

    session_id: str
    context_key: str  # the context that now counts under it
    previous_session_id: str
    reason: str  # REASON_UNIT or REASON_USER
    plan: str | None  # the plan file of a unit boundary (absolute)
    unit: str | None
    who: str
    at: float  # epoch seconds
    call_budget: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Asker:
    """Who asks for a new id, as the checks see them; each None reads this process."""

    is_tty: bool | None = None  # None: whether stdin is a terminal
    start_pid: int | None = None  # where the ancestry walk starts (None: the parent)
    environ: Mapping[str, str] | None = None  # None: os.environ


def new_session(
    home: str,
    *,
    reason: str,
    plan_path: str | None = None,
    unit: str | None = None,
    session: str | None = None,
    asker: Asker | None = None,
) -> NewSession:
    """Start a new session id for a context; raises NewSessionRefusedError when not legitimate."""
    if reason not in REASONS:
        raise ValueError(f"reason must be one of {', '.join(REASONS)}, not {reason!r}")
    asker = Asker() if asker is None else asker
    tty = sys.stdin.isatty() if asker.is_tty is None else asker.is_tty
    _refuse_from_agent_or_without_human(reason, tty, asker.start_pid, asker.environ)
    abs_plan = _checked_plan(reason, plan_path, unit)

    conn = gate_db.connect(home)
    try:
        # One immediate transaction: the checks and the new id cannot race another caller.
        with gate_db.Immediate(conn):
            context = _target_context(conn, session)
            current = status_row(conn, context, follow_context=True)
            previous = str(current.session_id)
            if abs_plan is not None:
                _refuse_used_boundary(conn, abs_plan, unit)
            if current.locked and reason not in HUMAN_REASONS:
                raise NewSessionRefusedError(
                    f"refused: session {previous} is locked ({current.calls_used} of "
                    f"{current.call_budget} calls used). A unit boundary does not reset a "
                    f"spent budget; a human can start a new session with "
                    f"`tether session new --reason user-request` in a terminal."
                )
            new_id, now, budget = _point_context_at_new_session(conn, context)
            who = _who(tty)
            conn.execute(
                "INSERT INTO session_ids (at, session_id, context_key, previous_session_id, "
                "reason, plan, unit, who) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (now, new_id, context, previous, reason, abs_plan, unit, who),
            )
    finally:
        conn.close()
    return NewSession(new_id, context, previous, reason, abs_plan, unit, who, now, budget)


def _refuse_from_agent_or_without_human(
    reason: str, tty: bool, start_pid: int | None, environ: Mapping[str, str] | None
) -> None:
    """An agent never takes a new id itself, and a user request needs a human at a terminal."""
    inside = inside_agent(start_pid, environ)
    if inside is not None:
        raise NewSessionRefusedError(
            f"refused: `tether session new` runs inside an agent's process tree ({inside}). "
            f"A new session id is never taken from inside the agent. Finish the unit with a "
            f"progress report; the human or the orchestrator starts the next session."
        )
    if reason == REASON_USER and not tty:
        raise NewSessionRefusedError(
            "refused: --reason user-request needs a human at a terminal (stdin is not a "
            "terminal). Run it yourself in a terminal, outside the agent."
        )


def _checked_plan(reason: str, plan_path: str | None, unit: str | None) -> str | None:
    """The absolute plan file of a unit boundary (None for a user request).

    A unit boundary is legitimate only for a unit the plan records and has not marked done.
    """
    if reason != REASON_UNIT:
        if plan_path or unit:
            raise ValueError("--plan and --unit belong to --reason unit-boundary")
        return None
    if not plan_path or not unit:
        raise ValueError("--reason unit-boundary needs --plan and --unit")
    abs_plan = os.path.abspath(plan_path)
    found = plan.find_unit(abs_plan, unit)
    if found.done:
        raise NewSessionRefusedError(
            f"refused: unit {unit!r} is marked done in {abs_plan} (line {found.line}); "
            f"a done unit gets no new session"
        )
    return abs_plan


def _target_context(conn: sqlite3.Connection, session: str | None) -> str:
    """The context the new id is for: the one named, else the last one the gate saw."""
    if session:
        return _context_of(conn, session)
    latest = latest_context(conn)
    if latest is None:
        raise NewSessionRefusedError(
            "no session has passed the gate yet, so there is none to follow; "
            "name it with --session ID (see `tether session status`)"
        )
    return latest


def _refuse_used_boundary(conn: sqlite3.Connection, abs_plan: str, unit: str | None) -> None:
    """Each recorded boundary starts one session, so a second start of it is refused."""
    used = conn.execute(
        "SELECT session_id, at FROM session_ids WHERE plan = ? AND unit = ?",
        (abs_plan, unit),
    ).fetchone()
    if used is not None:
        raise NewSessionRefusedError(
            f"refused: unit {unit!r} of {abs_plan} already started session "
            f"{used[0]}; each recorded boundary starts one session"
        )


def _point_context_at_new_session(conn: sqlite3.Connection, context: str) -> tuple[str, float, int]:
    """Create a session with a fresh budget and re-point ``context`` at it: (id, at, budget)."""
    now = time.time()
    new_id = str(uuid.uuid4())
    budget, source = default_call_budget()
    conn.execute(
        "INSERT INTO sessions (session_id, call_budget, budget_source, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?)",
        (new_id, budget, source, now, now),
    )
    conn.execute(
        "INSERT INTO contexts (context_key, session_id, since) VALUES (?, ?, ?) "
        "ON CONFLICT (context_key) DO UPDATE SET session_id = excluded.session_id, "
        "since = excluded.since",
        (context, new_id, now),
    )
    return new_id, now, budget


@dataclass(frozen=True)
class SessionIdEntry:
    """One new session id as ``session_ids`` records it."""

    at: float  # epoch seconds
    session_id: str
    context_key: str | None
    previous_session_id: str | None
    reason: str  # REASON_UNIT or REASON_USER
    plan: str | None  # the plan file of a unit boundary (absolute)
    unit: str | None
    who: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def session_log(home: str, limit: int | None = None) -> list[SessionIdEntry]:
    """Every new session id, newest first."""
    conn = gate_db.connect(home)
    try:
        sql = (
            "SELECT at, session_id, context_key, previous_session_id, reason, plan, unit, who "
            "FROM session_ids ORDER BY id DESC"
        )
        rows = conn.execute(
            sql + (" LIMIT ?" if limit else ""), (limit,) if limit else ()
        ).fetchall()
    finally:
        conn.close()
    return [SessionIdEntry(*row) for row in rows]
