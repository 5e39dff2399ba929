"""The ``outbox`` table of ``tether.db``: insert, look up, and the guarded state changes.

A state change is one ``UPDATE … WHERE state = ?``: two people approving the same
proposal at once both try, exactly one changes it, and only that one carries it out.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from tether.outbox.errors import ProposalNotFoundError
from tether.outbox.model import COLUMNS, PROPOSED, Proposal, decode, encode
from tether.store import state_db

_SELECT = f"SELECT {', '.join(COLUMNS)} FROM outbox"  # noqa: S608
_INSERT = (
    f"INSERT INTO outbox ({', '.join(COLUMNS)}) "  # noqa: S608
    f"VALUES ({', '.join('?' for _ in COLUMNS)})"
)


def insert(conn: sqlite3.Connection, proposal: Proposal) -> None:
    with state_db.transaction(conn):
        conn.execute(_INSERT, encode(proposal))


def exists(conn: sqlite3.Connection, proposal_id: str) -> bool:
    return conn.execute("SELECT 1 FROM outbox WHERE id = ?", (proposal_id,)).fetchone() is not None


def get(conn: sqlite3.Connection, proposal_id: str) -> Proposal:
    row = conn.execute(f"{_SELECT} WHERE id = ?", (proposal_id,)).fetchone()
    if row is None:
        raise ProposalNotFoundError(proposal_id)
    return decode(row)


def listing(
    conn: sqlite3.Connection, states: Sequence[str] = (), limit: int | None = None
) -> list[Proposal]:
    """Proposals, newest first; only those in ``states`` when given."""
    sql, args = _SELECT, []
    if states:
        sql += f" WHERE state IN ({', '.join('?' for _ in states)})"
        args += list(states)
    sql += " ORDER BY proposed_at DESC, id"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    try:
        return [decode(row) for row in conn.execute(sql, args)]
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # a reader of a file from before the outbox
            return []
        raise


def of_run(conn: sqlite3.Connection, run_id: str) -> list[Proposal]:
    rows = conn.execute(f"{_SELECT} WHERE run_id = ? ORDER BY proposed_at, id", (run_id,))
    return [decode(row) for row in rows]


def of_ticket(conn: sqlite3.Connection, ticket_id: str) -> list[Proposal]:
    rows = conn.execute(f"{_SELECT} WHERE ticket = ? ORDER BY proposed_at, id", (ticket_id,))
    return [decode(row) for row in rows]


def pending_of_ticket(conn: sqlite3.Connection, ticket_id: str) -> list[Proposal]:
    return [p for p in of_ticket(conn, ticket_id) if p.state == PROPOSED]


def change_state(
    conn: sqlite3.Connection, proposal_id: str, *, was: str, to: str, **fields: Any
) -> bool:
    """Move the proposal from ``was`` to ``to`` (with ``fields``); False if it was elsewhere."""
    unknown = set(fields) - set(COLUMNS)
    if unknown:
        raise ValueError(f"not outbox columns: {sorted(unknown)}")
    sets = ", ".join(["state = ?", *(f"{name} = ?" for name in fields)])
    with state_db.transaction(conn):
        changed = conn.execute(
            f"UPDATE outbox SET {sets} WHERE id = ? AND state = ?",  # noqa: S608 - names checked
            (to, *fields.values(), proposal_id, was),
        ).rowcount
    return changed == 1
