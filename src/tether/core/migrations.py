"""Versioned SQLite schemas: numbered migrations tracked with ``PRAGMA user_version``.

The one migration runner, for the gate's ``gate.db`` and the store's ``tether.db``
(standard library only, so the gate can use it). Migration N brings the schema
from version N-1 to N. Each runs in its own ``BEGIN IMMEDIATE`` transaction
together with the version bump, and re-reads the version inside it, so several
processes opening a fresh database at once apply each migration exactly once.
Never edit a released migration; add the next one.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Sequence

    Migration = Callable[[sqlite3.Connection], None]


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def run_migrations(
    conn: sqlite3.Connection,
    migrations: Sequence[Migration],
    too_new: Callable[[int, int], Exception],
) -> int:
    """Apply the migrations the database lacks; returns the resulting version.

    ``conn`` is in autocommit mode (``isolation_level=None``). A database newer
    than ``migrations`` raises ``too_new(version, latest)``.
    """
    latest = len(migrations)
    version = schema_version(conn)
    if version > latest:
        raise too_new(version, latest)
    while version < latest:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = schema_version(conn)  # another process may have moved it on
            if version > latest:
                raise too_new(version, latest)
            if version < latest:
                migrations[version](conn)
                version += 1
                conn.execute(f"PRAGMA user_version = {version}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return version
