"""The state database: one SQLite file in TETHER_HOME, WAL, immediate-mode writers.

Every writer opens its transaction with ``BEGIN IMMEDIATE`` (``transaction``):
it takes the write lock up front and waits up to ``busy_timeout`` for it, where a
deferred ``BEGIN`` that reads then writes fails at once with "database is
locked" under contention.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path

from tether.core.errors import StoreError
from tether.core.project import keep_home_out_of_git

DB_NAME = "tether.db"
BUSY_TIMEOUT_MS = 10_000

_savepoints = count()


def db_path(home: Path) -> Path:
    return Path(home) / DB_NAME


def connect(home: Path) -> sqlite3.Connection:
    """Open (creating if needed) ``home/tether.db`` and bring its schema up to date.

    The connection is in autocommit mode; group writes with ``transaction``.
    Raises ``StoreError`` when the file is not a readable tether database.
    """
    from tether.store.migrations import migrate

    path = db_path(home)
    try:
        created = not path.parent.is_dir()
        path.parent.mkdir(parents=True, exist_ok=True)
        keep_home_out_of_git(str(path.parent), created=created)
    except OSError as exc:
        raise StoreError(
            f"cannot create the tether home {path.parent}: {exc.strerror}; "
            f"set TETHER_HOME to a writable folder."
        ) from exc
    try:
        conn = sqlite3.connect(
            path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=True,
        )
    except sqlite3.Error as exc:
        raise _store_error(path, exc) from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _enable_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(conn, path)
    except sqlite3.Error as exc:
        conn.close()
        raise _store_error(path, exc) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def connect_existing(home: Path) -> sqlite3.Connection:
    """``connect`` when ``home/tether.db`` exists, else an empty database in memory.

    For a look that must not create a tether home where there is none (an MCP
    server started outside a project, a run id asked of an empty home): what it
    finds in the empty database is nothing, and nothing is written to disk.
    """
    if db_path(home).exists():
        return connect(home)
    from tether.store.migrations import migrate

    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=True)
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn)
    return conn


def connect_reader(home: Path) -> sqlite3.Connection | None:
    """Open ``home/tether.db`` for reading only: no creation, no migration, no write.

    None when there is no database yet. Raises ``StoreError`` when the file
    cannot be read as a tether database. Tables a newer migration adds may be
    missing from an older file: readers treat a missing table as empty.
    """
    path = db_path(home)
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro",
            uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
        )
    except sqlite3.Error as exc:
        raise _store_error(path, exc) from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        conn.close()
        raise _store_error(path, exc) from exc
    return conn


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL; the switch itself can meet a busy db that the handler won't wait on."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)
            continue
        if str(mode).lower() != "wal":
            raise sqlite3.OperationalError(f"journal_mode is {mode!r}, WAL could not be enabled")
        return


def _store_error(path: Path, exc: sqlite3.Error) -> StoreError:
    text = str(exc)
    if isinstance(exc, sqlite3.DatabaseError) and (
        "not a database" in text or "malformed" in text or "corrupt" in text
    ):
        return StoreError(
            f"{path} is not a readable tether database ({text}). Move it aside "
            f"(tether then starts a new one) or restore it from a backup."
        )
    return StoreError(
        f"cannot use the tether database {path}: {text}. Check that the folder is "
        f"writable and the file is not held by a stuck process."
    )


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction: ``BEGIN IMMEDIATE`` … ``COMMIT``, ``ROLLBACK`` on error.

    Nested use inside an open transaction becomes a savepoint, so helpers that
    write can be composed into one larger atomic change.
    """
    if conn.in_transaction:
        name = f"tether_sp_{next(_savepoints)}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
            conn.execute(f"RELEASE SAVEPOINT {name}")
            raise
        conn.execute(f"RELEASE SAVEPOINT {name}")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if _in_transaction(conn):  # COMMIT may itself have failed and ended it
            conn.execute("ROLLBACK")
        raise


def _in_transaction(conn: sqlite3.Connection) -> bool:
    return conn.in_transaction
