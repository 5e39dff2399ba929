"""Exact per-session counting: every increment-and-check is one ``BEGIN IMMEDIATE``.

A call is allowed while ``calls_used`` (after counting it) is within the
session's budget. Refused calls are counted too, so ``calls_used`` is the number
of calls the agent attempted; a session whose budget is spent is ``locked``.
Hook deliveries that repeat a ``tool_use_id`` already counted get the first
answer again and are not counted twice, whichever hook file delivered them
(``preToolUse`` and ``PreToolUse`` are the same event; a payload without an id
gets one from :func:`contracts.call_fingerprint`).
"""

from __future__ import annotations

import os
import time

from tether.core.project import default_call_budget
from tether.gate import gate_db

# typing and pathlib cost milliseconds of imports on every tool call; the
# annotations need them only for mypy.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any, TypeVar

    from tether.gate.codex_rollout import CallStep

    _Outcome = TypeVar("_Outcome")

# What an event row keeps besides its name, for the watchdog: notification_type,
# message, tool_input, cwd, transcript_path (see contracts.HookCall.detail).
NO_DETAIL: tuple[str | None, ...] = (None, None, None, None, None)


class CallOutcome:
    __slots__ = (
        "allowed",
        "call_budget",
        "calls_used",
        "duplicate",
        "iteration_budget",
        "past_iterations",
        "session_id",
    )

    def __init__(
        self, allowed: bool, session_id: str, calls_used: int, call_budget: int, duplicate: bool
    ) -> None:
        self.allowed = allowed
        self.session_id = session_id
        self.calls_used = calls_used
        self.call_budget = call_budget
        self.duplicate = duplicate
        # refused because the call belongs to a model step past the iteration budget
        self.past_iterations = False
        self.iteration_budget: int | None = None


class BatchOutcome:
    __slots__ = ("batches", "iteration_budget", "session_id", "stop")

    def __init__(
        self, stop: bool, session_id: str, batches: int, iteration_budget: int | None
    ) -> None:
        self.stop = stop
        self.session_id = session_id
        self.batches = batches
        self.iteration_budget = iteration_budget


def _session_for(conn: sqlite3.Connection, context_key: str) -> str:
    row = conn.execute(
        "SELECT session_id FROM contexts WHERE context_key = ?", (context_key,)
    ).fetchone()
    return context_key if row is None else str(row[0])


def _ensure_session(
    conn: sqlite3.Connection, session_id: str, harness: str | None, now: float
) -> tuple[int, int, int | None]:
    """(calls_used, call_budget, iteration_budget) of the session, creating it."""
    row = conn.execute(
        "SELECT calls_used, call_budget, iteration_budget FROM sessions WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    if row is not None:
        return int(row[0]), int(row[1]), row[2]
    budget, source = default_call_budget()
    conn.execute(
        "INSERT INTO sessions (session_id, call_budget, budget_source, harness, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        (session_id, budget, source, harness, now, now),
    )
    return 0, budget, None


class Seen:
    """One hook event as the gate records it (for a batch, ``tool_use_id`` is its key)."""

    __slots__ = (
        "context_key",
        "detail",
        "event",
        "harness",
        "id_source",
        "tool_name",
        "tool_use_id",
    )

    def __init__(
        self,
        context_key: str,
        id_source: str,
        harness: str,
        event: str,
        tool_name: str | None = None,
        tool_use_id: str | None = None,
        detail: tuple[str | None, ...] = NO_DETAIL,
    ) -> None:
        self.context_key = context_key
        self.id_source = id_source
        self.harness = harness
        self.event = event
        self.tool_name = tool_name
        self.tool_use_id = tool_use_id
        self.detail = detail


def _insert_event(
    conn: sqlite3.Connection,
    now: float,
    session_id: str,
    seen: Seen,
    decision: str,
    calls_used: int | None,
) -> None:
    conn.execute(
        "INSERT INTO events (at, session_id, context_key, id_source, harness, event, "
        "tool_name, tool_use_id, decision, calls_used, notification_type, message, "
        "tool_input, cwd, transcript_path) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            now,
            session_id,
            seen.context_key,
            seen.id_source,
            seen.harness,
            seen.event,
            seen.tool_name,
            seen.tool_use_id,
            decision,
            calls_used,
            *seen.detail,
        ),
    )


def _earlier(conn: sqlite3.Connection, seen: Seen) -> tuple[str, str, int | None] | None:
    """The first answer to this hook delivery, when its tool-use id was seen before."""
    if not seen.tool_use_id:
        return None
    row = conn.execute(
        "SELECT decision, session_id, calls_used FROM events "
        "WHERE tool_use_id = ? AND lower(event) = lower(?) AND context_key = ? "
        "ORDER BY id LIMIT 1",
        (seen.tool_use_id, seen.event, seen.context_key),
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]), row[2])


def _counted(
    conn: sqlite3.Connection, seen: Seen, step: Callable[[str, float], _Outcome]
) -> _Outcome:
    """``step(session_id, now)`` for the session ``seen`` counts under, inside one
    ``BEGIN IMMEDIATE``: the one transaction every count below runs in."""
    now = time.time()
    with gate_db.Immediate(conn):
        return step(_session_for(conn, seen.context_key), now)


# Calls made but answered uncounted: refused as unread in time, or by a room's rule.
UNREAD, ROOM_RULE = "unread", "room rule"
_CALLS_BEFORE = (
    "SELECT (SELECT calls_used FROM sessions WHERE session_id = ?), (SELECT COUNT(*) FROM events "
    "WHERE session_id = ? AND decision IN (?, ?)), (SELECT decision FROM events WHERE "
    "tool_use_id = ? AND lower(event) = lower(?) AND context_key = ? ORDER BY id LIMIT 1)"
)


def calls_before(conn: sqlite3.Connection, seen: Seen) -> tuple[int, str | None]:
    """The calls made in ``seen``'s session before this one (counted or not), and the first
    answer to this call if another hook file delivered it already (one snapshot)."""
    sid = _session_for(conn, seen.context_key)
    args = (sid, sid, UNREAD, ROOM_RULE, seen.tool_use_id, seen.event, seen.context_key)
    row = conn.execute(_CALLS_BEFORE, args).fetchone()
    return int(row[0] or 0) + int(row[1]), row[2]


def record_uncounted(conn: sqlite3.Connection, seen: Seen, decision: str) -> None:
    """Record a call answered uncounted, once per call id whichever hook files deliver it."""

    def step(session_id: str, now: float) -> None:
        if _earlier(conn, seen) is None:
            _insert_event(conn, now, session_id, seen, decision, None)

    _counted(conn, seen, step)


def count_call(
    conn: sqlite3.Connection, seen: Seen, model_step: CallStep | None = None
) -> CallOutcome:
    """Count one tool call and decide it, in one write transaction.

    ``model_step`` says which model step the call belongs to, where the harness's
    own record tells (Codex's rollout: ``gate/codex_rollout.py``); a call of a
    step past the session's iteration budget is refused, its session locked and
    the steps before it counted as done.
    """

    def step(session_id: str, now: float) -> CallOutcome:
        earlier = _earlier(conn, seen)
        if earlier is not None:
            decision, earlier_session, earlier_used = earlier
            row = conn.execute(
                "SELECT call_budget FROM sessions WHERE session_id = ?", (earlier_session,)
            ).fetchone()
            budget = int(row[0]) if row is not None else 0
            used = int(earlier_used) if earlier_used is not None else budget
            return CallOutcome(decision == "allow", earlier_session, used, budget, True)
        used, budget, iterations = _ensure_session(conn, session_id, seen.harness, now)
        used += 1
        past = iterations is not None and model_step is not None and model_step.past(iterations)
        allowed = used <= budget and not past
        conn.execute(
            "UPDATE sessions SET calls_used = ?, locked = ?, updated_at = ? WHERE session_id = ?",
            (used, 1 if used >= budget or past else 0, now, session_id),
        )
        if past:
            assert model_step is not None
            conn.execute(
                "UPDATE sessions SET batches = MAX(batches, ?) WHERE session_id = ?",
                (model_step.earliest - 1, session_id),
            )
        _insert_event(conn, now, session_id, seen, "allow" if allowed else "deny", used)
        outcome = CallOutcome(allowed, session_id, used, budget, False)
        outcome.past_iterations = past and used <= budget
        outcome.iteration_budget = iterations
        return outcome

    return _counted(conn, seen, step)


def _count_iteration(
    conn: sqlite3.Connection, seen: Seen, advance: Callable[[str, float], bool]
) -> BatchOutcome:
    """Advance a session's iteration count (``advance`` says whether the event is new),
    decide against its iteration budget and record the event, in one transaction."""

    def step(session_id: str, now: float) -> BatchOutcome:
        new = advance(session_id, now)
        row = conn.execute(
            "SELECT batches, iteration_budget FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        batches = int(row[0]) if row is not None else 0
        limit = None if row is None or row[1] is None else int(row[1])
        stop = limit is not None and batches >= limit
        if new:
            _insert_event(conn, now, session_id, seen, "stop" if stop else "continue", None)
        return BatchOutcome(stop, session_id, batches, limit)

    return _counted(conn, seen, step)


def count_batch(conn: sqlite3.Connection, seen: Seen) -> BatchOutcome:
    """Count one completed iteration with tools (``seen.tool_use_id`` is the batch key);
    stop when the iteration budget is used.

    A batch key seen before (a repeated delivery) is not counted again.
    """

    def advance(session_id: str, now: float) -> bool:
        if _earlier(conn, seen) is not None:
            return False
        _ensure_session(conn, session_id, seen.harness, now)
        conn.execute(
            "UPDATE sessions SET batches = batches + 1, updated_at = ? WHERE session_id = ?",
            (now, session_id),
        )
        return True

    return _count_iteration(conn, seen, advance)


def count_model_call(conn: sqlite3.Connection, seen: Seen) -> BatchOutcome:
    """A model request is about to start: every earlier request was an iteration with tools.

    For harnesses that report the start of each model request (Pi) rather than
    the end of each tool batch. Stops when the completed iterations reach the
    iteration budget, i.e. before iteration budget+1 begins.
    """

    def advance(session_id: str, now: float) -> bool:
        _ensure_session(conn, session_id, seen.harness, now)
        (earlier,) = conn.execute(
            "SELECT COUNT(*) FROM events WHERE session_id = ? AND event = ?",
            (session_id, seen.event),
        ).fetchone()
        conn.execute(
            "UPDATE sessions SET batches = MAX(batches, ?), updated_at = ? WHERE session_id = ?",
            (int(earlier), now, session_id),
        )
        return True

    return _count_iteration(conn, seen, advance)


def record_event(conn: sqlite3.Connection, seen: Seen) -> str:
    """Record an event that is not counted (the watchdog reads these). One statement."""
    session_id = _session_for(conn, seen.context_key)
    _insert_event(conn, time.time(), session_id, seen, "record", None)
    return session_id


def lock_state(conn: sqlite3.Connection, context_key: str) -> tuple[str, bool, int, int] | None:
    """(session_id, locked, calls_used, call_budget) of the context's session, if known."""
    session_id = _session_for(conn, context_key)
    row = conn.execute(
        "SELECT locked, calls_used, call_budget FROM sessions WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    if row is None:
        return None
    return session_id, bool(row[0]), int(row[1]), int(row[2])


# --- the Python API the run supervisor uses ---------------------------------


def gate_db_path(home: Path) -> Path:
    """Where the gate database of ``home`` lives."""
    from pathlib import Path

    return Path(gate_db.db_file(os.fspath(home)))


def set_session_budget(
    home: Path,
    session_id: str,
    *,
    calls: int | None = None,
    iterations: int | None = None,
    run_id: str | None = None,
) -> None:
    """Create or update a session's budgets before its agent starts.

    ``None`` keeps what the session has (a new session gets the default call
    budget and no iteration budget).
    """
    for name, value in (("calls", calls), ("iterations", iterations)):
        if value is not None and (isinstance(value, bool) or value < 0):
            raise ValueError(f"{name} budget must be a whole number >= 0, not {value!r}")
    conn = gate_db.connect(os.fspath(home))
    try:
        now = time.time()
        with gate_db.Immediate(conn):
            _ensure_session(conn, session_id, None, now)
            if calls is not None:
                conn.execute(
                    "UPDATE sessions SET call_budget = ?, budget_source = 'run', "
                    "locked = (calls_used >= ?) WHERE session_id = ?",
                    (calls, calls, session_id),
                )
            if iterations is not None:
                conn.execute(
                    "UPDATE sessions SET iteration_budget = ? WHERE session_id = ?",
                    (iterations, session_id),
                )
            if run_id is not None:
                conn.execute(
                    "UPDATE sessions SET run_id = ? WHERE session_id = ?", (run_id, session_id)
                )
            conn.execute(
                "UPDATE sessions SET updated_at = ? WHERE session_id = ?", (now, session_id)
            )
    finally:
        conn.close()


_STATUS_COLUMNS = (
    "SELECT session_id, calls_used, call_budget, budget_source, batches, iteration_budget, "
    "locked, run_id, harness, created_at, updated_at FROM sessions"
)
_STATUS_SQL = _STATUS_COLUMNS + " WHERE session_id = ?"


class SessionStatus:
    """What the gate knows of one session (``known`` is False for a session never counted)."""

    __slots__ = FIELDS = (
        "session_id",
        "known",
        "calls_used",
        "call_budget",
        "budget_source",
        "batches",
        "iteration_budget",
        "locked",
        "run_id",
        "harness",
        "created_at",
        "updated_at",
    )

    def __init__(
        self,
        session_id: str,
        known: bool,
        calls_used: int,
        call_budget: int,
        budget_source: str,
        batches: int,
        iteration_budget: int | None,
        locked: bool,
        run_id: str | None,
        harness: str | None,
        created_at: float | None,
        updated_at: float | None,
    ) -> None:
        self.session_id = session_id
        self.known = known
        self.calls_used = calls_used
        self.call_budget = call_budget
        self.budget_source = budget_source
        self.batches = batches
        self.iteration_budget = iteration_budget
        self.locked = locked
        self.run_id = run_id
        self.harness = harness
        self.created_at = created_at
        self.updated_at = updated_at

    @property
    def over(self) -> bool:
        """Every call of the budget is used."""
        return self.calls_used >= self.call_budget

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.FIELDS}


def status_row(
    conn: sqlite3.Connection, session_id: str, *, follow_context: bool = False
) -> SessionStatus:
    """The status of a session id, or (``follow_context``) of the session a context counts under.

    Without ``follow_context`` a context key that has no session row of its own
    is still followed, so a harness's id bound to a run's session reports it.
    """
    mapped = _session_for(conn, session_id)
    first, second = (mapped, session_id) if follow_context else (session_id, mapped)
    row = conn.execute(_STATUS_SQL, (first,)).fetchone()
    if row is None and second != first:
        row = conn.execute(_STATUS_SQL, (second,)).fetchone()
    if row is None:
        budget, source = default_call_budget()
        return SessionStatus(
            session_id, False, 0, budget, source, 0, None, False, None, None, None, None
        )
    return _known(row)


def _known(row: tuple[Any, ...]) -> SessionStatus:
    """The status of a session from its row (``_STATUS_COLUMNS``)."""
    return SessionStatus(
        row[0], True, row[1], row[2], row[3], row[4], row[5], bool(row[6]), *row[7:11]
    )


def session_status(home: Path, session_id: str) -> SessionStatus:
    """The gate's view of one session (see :func:`status_row`)."""
    conn = gate_db.connect(os.fspath(home))
    try:
        return status_row(conn, session_id)
    finally:
        conn.close()


def sessions_near_budget(
    conn: sqlite3.Connection, *, ratio: float = 0.8, limit: int = 20
) -> list[SessionStatus]:
    """Sessions that used at least ``ratio`` of their call budget (or are locked), newest first."""
    rows = conn.execute(
        f"{_STATUS_COLUMNS} WHERE locked != 0 OR calls_used >= call_budget * ? "
        "ORDER BY updated_at DESC LIMIT ?",
        (ratio, limit),
    ).fetchall()
    return [_known(row) for row in rows]
