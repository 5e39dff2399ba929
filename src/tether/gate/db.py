"""The gate's own SQLite file: ``$TETHER_HOME/gate.db``.

WAL, ``synchronous=NORMAL``, ``busy_timeout`` 10 s, autocommit connections whose
writers each open one ``BEGIN IMMEDIATE`` transaction. The schema is versioned
with ``PRAGMA user_version`` and built by numbered migration functions, applied
under the write lock so concurrent first calls cannot race.
"""

from __future__ import annotations

import os
import time

try:
    # ``import sqlite3`` runs sqlite3.dbapi2, which imports datetime and registers
    # adapters: ~3 ms on every tool call. The C module has the same connect()
    # and the very same classes (sqlite3.Error is _sqlite3.Error).
    import _sqlite3 as sqlite
except ImportError:  # pragma: no cover - CPython builds with sqlite3 have it
    import sqlite3 as sqlite  # type: ignore[no-redef]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from sqlite3 import Connection

Error = sqlite.Error

DB_NAME = "gate.db"
BUSY_TIMEOUT_MS = 10_000


class GateDatabaseError(Exception):
    """The gate database cannot be opened, migrated or written."""


def db_file(home: str) -> str:
    return os.path.join(home, DB_NAME)


def m001_initial(conn: Connection) -> None:
    conn.execute(
        """
        CREATE TABLE sessions (
            session_id       TEXT PRIMARY KEY,
            calls_used       INTEGER NOT NULL DEFAULT 0,
            call_budget      INTEGER NOT NULL,
            budget_source    TEXT NOT NULL,
            batches          INTEGER NOT NULL DEFAULT 0,
            iteration_budget INTEGER,
            locked           INTEGER NOT NULL DEFAULT 0,
            run_id           TEXT,
            harness          TEXT,
            created_at       REAL NOT NULL,
            updated_at       REAL NOT NULL
        )
        """
    )
    # A context is what the gate can observe (the harness's session id, the
    # variable, or the long-lived agent process). A legitimate new session
    # re-points the context at a fresh session id; without a row the context
    # key is the session id.
    conn.execute(
        """
        CREATE TABLE contexts (
            context_key TEXT PRIMARY KEY,
            session_id  TEXT NOT NULL,
            since       REAL NOT NULL
        )
        """
    )
    conn.execute(
        """
        CREATE TABLE events (
            id          INTEGER PRIMARY KEY,
            at          REAL NOT NULL,
            session_id  TEXT NOT NULL,
            context_key TEXT NOT NULL,
            id_source   TEXT NOT NULL,
            harness     TEXT NOT NULL,
            event       TEXT NOT NULL,
            tool_name   TEXT,
            tool_use_id TEXT,
            decision    TEXT NOT NULL,
            calls_used  INTEGER
        )
        """
    )
    conn.execute("CREATE INDEX events_by_session ON events (session_id, at)")
    conn.execute("CREATE INDEX events_by_time ON events (at)")
    conn.execute(
        "CREATE INDEX events_by_tool_use ON events (tool_use_id, event) "
        "WHERE tool_use_id IS NOT NULL"
    )
    conn.execute(
        """
        CREATE TABLE session_ids (
            id                  INTEGER PRIMARY KEY,
            at                  REAL NOT NULL,
            session_id          TEXT NOT NULL UNIQUE,
            context_key         TEXT,
            previous_session_id TEXT,
            reason              TEXT NOT NULL,
            plan                TEXT,
            unit                TEXT,
            who                 TEXT NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX session_ids_by_unit ON session_ids (plan, unit)")


def m002_event_details(conn: Connection) -> None:
    """What the watchdog reads beyond the event name: the notification's type and
    text, the tool's input (clipped JSON), the working folder and transcript path.

    ``ADD COLUMN`` with no default rewrites nothing: older rows read NULL.
    """
    for column in ("notification_type", "message", "tool_input", "cwd", "transcript_path"):
        conn.execute(f"ALTER TABLE events ADD COLUMN {column} TEXT")


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (m001_initial, m002_event_details)
SCHEMA_VERSION = len(MIGRATIONS)


def _migrate(conn: Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise GateDatabaseError(
                f"gate.db has schema version {version}, newer than this tether-gate "
                f"understands ({SCHEMA_VERSION}); upgrade tether"
            )
        for number in range(version, SCHEMA_VERSION):
            MIGRATIONS[number](conn)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _enable_wal(conn: Connection) -> None:
    """Switch a new file to WAL.

    The switch needs the file to itself, and SQLite answers "locked" at once,
    without its busy handler, when another first call holds it: wait here
    instead, or that call would fail open and go uncounted.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.002)


def connect(home: str) -> Connection:
    """Open (creating and migrating when needed) the gate database under ``home``."""
    path = db_file(home)
    try:
        conn = sqlite.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite.OperationalError:
        try:
            os.makedirs(home, exist_ok=True)
            conn = sqlite.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except (OSError, sqlite.Error) as exc:
            raise GateDatabaseError(f"cannot open {path}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous = NORMAL")
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version != SCHEMA_VERSION:
            _enable_wal(conn)
            _migrate(conn)
    except sqlite.Error as exc:
        conn.close()
        raise GateDatabaseError(f"cannot prepare {path}: {exc}") from exc
    except GateDatabaseError:
        conn.close()
        raise
    return conn
