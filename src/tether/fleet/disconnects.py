"""Lost connections to the fleet's database, as SQLAlchemy and DBOS should see them.

DBOS retries what SQLAlchemy marks as a disconnect until the database is
back; psycopg's "connection is bad: ... No such file or directory" (the
server's socket gone during a restart) is not recognised as one by the
dialect, and DBOS would give the workflow up instead.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa


def _connection_lost(context: Any) -> None:
    """A failure to reach the server at all (psycopg, no SQLSTATE) is a lost connection."""
    import psycopg

    orig = context.original_exception
    if isinstance(orig, psycopg.OperationalError) and getattr(orig, "sqlstate", None) is None:
        context.is_disconnect = True


def mark_lost_connections() -> None:
    """Every engine of this process treats such failures as disconnects (once per process)."""
    if not sa.event.contains(sa.Engine, "handle_error", _connection_lost):
        sa.event.listen(sa.Engine, "handle_error", _connection_lost)
