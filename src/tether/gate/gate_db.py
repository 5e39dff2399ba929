"""The gate's own SQLite file: ``$TETHER_HOME/gate.db``.

WAL, ``synchronous=NORMAL``, ``busy_timeout`` 10 s, autocommit connections whose
writers each open one ``BEGIN IMMEDIATE`` transaction. The schema is versioned
with ``PRAGMA user_version`` and built by numbered migration functions, applied
under the write lock so concurrent first calls cannot race.

A file that stays busy past the timeout is not a broken gate: some process
holds the write lock. ``GateBusyError`` (and ``is_busy``) tell that case apart,
because the hook refuses a call it cannot count for that reason.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

Error = sqlite3.Error

DB_NAME = "gate.db"
BUSY_TIMEOUT_MS = 10_000
# A shorter busy timeout (tests; impatient setups). It can only shorten the
# wait: a shorter wait makes a refusal come sooner, never lets a call through.
BUSY_TIMEOUT_ENV = "TETHER_GATE_BUSY_TIMEOUT_MS"
# How long a read of a session's lock state may wait once counting found the
# file busy (in WAL, readers wait only on a writer that shuts readers out too).
READ_TIMEOUT_MS = 1_000
# SQLITE_BUSY and SQLITE_LOCKED (primary codes; extended codes keep them in the low byte).
_BUSY_CODES = (5, 6)


class GateDatabaseError(Exception):
    """The gate database cannot be opened, migrated or written."""


class GateBusyError(GateDatabaseError):
    """The gate database stayed locked by another process past the busy timeout."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path} stayed busy: {reason}")
        self.path = path


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` says another connection holds the database (not that it is broken)."""
    if isinstance(exc, GateBusyError):
        return True
    if not isinstance(exc, sqlite3.Error):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in _BUSY_CODES
    text = str(exc)
    return "database is locked" in text or "database table is locked" in text


def busy_timeout_ms(environ: Mapping[str, str] | None = None) -> int:
    """10 s, or less when ``TETHER_GATE_BUSY_TIMEOUT_MS`` asks for less (never more)."""
    raw = (os.environ if environ is None else environ).get(BUSY_TIMEOUT_ENV)
    if not raw:
        return BUSY_TIMEOUT_MS
    try:
        value = int(raw.strip())
    except ValueError:
        value = -1
    if value < 0 or value > BUSY_TIMEOUT_MS:
        sys.stderr.write(
            f"tether-gate: warning: {BUSY_TIMEOUT_ENV} must be a whole number of "
            f"milliseconds from 0 to {BUSY_TIMEOUT_MS}, not {raw!r}; using {BUSY_TIMEOUT_MS}\n"
        )
        return BUSY_TIMEOUT_MS
    return value


def unusable_message(path: str, exc: BaseException) -> str:
    """One line on a gate database a command cannot use: which file, what to do.

    For ``tether`` commands (a human reads it); the hook has its own answers.
    """
    cause = exc.__cause__
    reason = str(cause or exc)
    if is_busy(exc) or (cause is not None and is_busy(cause)):
        return (
            f"the gate database {path} is held by another process ({reason}); try again "
            f"once it is released, or find the process that holds it."
        )
    if "not a database" in reason or "malformed" in reason or "corrupt" in reason:
        return (
            f"{path} is not a readable gate database ({reason}). Restore it from a backup, "
            f"or move it aside: the gate then starts a new, empty one (every session's "
            f"count starts again)."
        )
    if cause is None and isinstance(exc, GateDatabaseError):
        return f"{path}: {reason}"  # says what to do itself (a newer schema: upgrade tether)
    return (
        f"cannot use the gate database {path} ({reason}); check that the file and its "
        f"folder are readable and writable."
    )


def db_file(home: str) -> str:
    return os.path.join(home, DB_NAME)


def m001_initial(conn: sqlite3.Connection) -> None:
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


def m002_event_details(conn: sqlite3.Connection) -> None:
    """What the watchdog reads beyond the event name: the notification's type and
    text, the tool's input (clipped JSON), the working folder and transcript path.

    ``ADD COLUMN`` with no default rewrites nothing: older rows read NULL.
    """
    for column in ("notification_type", "message", "tool_input", "cwd", "transcript_path"):
        conn.execute(f"ALTER TABLE events ADD COLUMN {column} TEXT")


def m003_fallback_processes(conn: sqlite3.Connection) -> None:
    """What the session-id fallback remembers between calls (``gate/anchor.py``):
    processes seen at a first call (``first``: how the walk found it, the
    long-lived candidates above it, one key a line, the gate's start time in
    clock ticks) and processes proved to outlive the calls below them (``anchor``)."""
    conn.execute(
        """
        CREATE TABLE fallback_processes (
            process_key TEXT PRIMARY KEY,
            state       TEXT NOT NULL,
            why         TEXT NOT NULL,
            above       TEXT NOT NULL,
            at_ticks    INTEGER NOT NULL,
            at          REAL NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX fallback_processes_by_state ON fallback_processes (state, at)")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    m001_initial,
    m002_event_details,
    m003_fallback_processes,
)
SCHEMA_VERSION = len(MIGRATIONS)


class Immediate:
    """``with Immediate(conn):`` is one write transaction: ``BEGIN IMMEDIATE`` takes the
    write lock up front; the block's end commits, an exception rolls back."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is None:
            try:
                self.conn.execute("COMMIT")
                return
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


def _too_new(version: int, latest: int) -> GateDatabaseError:
    return GateDatabaseError(
        f"gate.db has schema version {version}, newer than this tether-gate "
        f"understands ({latest}); upgrade tether"
    )


def _enable_wal(conn: sqlite3.Connection, timeout_ms: int) -> None:
    """Switch a new file to WAL.

    The switch needs the file to itself, and SQLite answers "locked" at once,
    without its busy handler, when another first call holds it: wait here
    instead, or that call would go uncounted.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.002)


def connect(home: str) -> sqlite3.Connection:
    """Open (creating and migrating when needed) the gate database under ``home``.

    Raises ``GateBusyError`` when another process holds the file past the busy
    timeout, ``GateDatabaseError`` when it cannot be opened, created or migrated.
    """
    path = db_file(home)
    timeout_ms = busy_timeout_ms()
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        conn = _open(home, path, timeout_ms)
        try:
            _prepare(conn, timeout_ms)
            return conn
        except sqlite3.Error as exc:
            conn.close()
            if _new_file_race(exc, path) and time.monotonic() < deadline:
                time.sleep(0.005)
                continue
            if is_busy(exc):
                raise GateBusyError(path, str(exc)) from exc
            raise GateDatabaseError(f"cannot prepare {path}: {exc}") from exc
        except GateDatabaseError:
            conn.close()
            raise


def _open(home: str, path: str, timeout_ms: int) -> sqlite3.Connection:
    try:
        return sqlite3.connect(path, timeout=timeout_ms / 1000, isolation_level=None)
    except sqlite3.OperationalError:
        try:
            os.makedirs(home, exist_ok=True)
            from tether.core.project import keep_home_out_of_git

            keep_home_out_of_git(home, created=True)
            return sqlite3.connect(path, timeout=timeout_ms / 1000, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise GateDatabaseError(f"cannot open {path}: {exc}") from exc


def _prepare(conn: sqlite3.Connection, timeout_ms: int) -> None:
    conn.execute(f"PRAGMA busy_timeout = {timeout_ms}")
    conn.execute("PRAGMA synchronous = NORMAL")
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version != SCHEMA_VERSION:
        from tether.core.migrations import run_migrations  # only when the schema is behind

        _enable_wal(conn, timeout_ms)
        run_migrations(conn, MIGRATIONS, _too_new)


def _new_file_race(exc: sqlite3.Error, path: str) -> bool:
    """A first call that meets others on a new file can be told "readonly" by SQLite
    (3 of 5,600 first opens, eight at once) while the file is writable: it tries again
    on a fresh connection instead of failing open and going uncounted. A file that
    really is read-only is not tried again."""
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_READONLY and os.access(
        path, os.W_OK
    )


def connect_reader(home: str) -> sqlite3.Connection:
    """A connection to an existing gate database for reading only: no creation, no migration.

    For the lock state of a session while another process holds the write lock
    (WAL lets readers in). Waits at most ``READ_TIMEOUT_MS`` for a lock.
    """
    path = db_file(home)
    if not os.path.isfile(path):
        raise GateDatabaseError(f"{path} does not exist")
    timeout_ms = min(READ_TIMEOUT_MS, busy_timeout_ms())
    try:
        return sqlite3.connect(path, timeout=timeout_ms / 1000, isolation_level=None)
    except sqlite3.Error as exc:
        raise GateDatabaseError(f"cannot open {path}: {exc}") from exc
