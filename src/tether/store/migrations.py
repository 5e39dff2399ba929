"""The store's numbered schema migrations (run by ``tether.core.migrations``).

Migration N brings the schema from version N-1 to N. Never edit a released
migration; add the next one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from tether.core.errors import StoreError
from tether.core.migrations import run_migrations

Migration = Callable[[sqlite3.Connection], None]


def m001_initial(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            unit TEXT,
            profile TEXT NOT NULL,
            harness TEXT NOT NULL,
            model TEXT,
            argv TEXT NOT NULL,
            cwd TEXT,
            session_id TEXT,
            harness_session_id TEXT,
            status TEXT NOT NULL,
            stop_reason TEXT,
            exit_code INTEGER,
            agent_exit_status INTEGER,
            iteration_limit INTEGER,
            tool_call_limit INTEGER,
            timeout_seconds REAL,
            iterations INTEGER DEFAULT 0,
            tool_calls INTEGER DEFAULT 0,
            tool_results INTEGER DEFAULT 0,
            open_tool_calls INTEGER DEFAULT 0,
            usage TEXT,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            supervisor_pid INTEGER,
            supervisor_start_time REAL,
            agent_pgid INTEGER,
            follow_up_of TEXT REFERENCES runs(id),
            budget_request INTEGER,
            justification TEXT,
            run_dir TEXT NOT NULL,
            host TEXT,
            depth INTEGER DEFAULT 0
        )
        """
    )
    conn.execute("CREATE INDEX runs_started_at ON runs (started_at)")
    conn.execute("CREATE INDEX runs_status ON runs (status)")


def m002_watch(conn: sqlite3.Connection) -> None:
    """The watchdog: registered orchestrators, their bound sessions, the wake log."""
    conn.execute(
        """
        CREATE TABLE watch_orchestrators (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            tmux_pane TEXT,
            tmux_socket TEXT,
            pid INTEGER,
            pid_start_time REAL,
            log_path TEXT,
            run_id TEXT,
            harness TEXT,
            added_at TEXT NOT NULL,
            removed_at TEXT,
            last_activity REAL,
            last_activity_source TEXT
        )
        """
    )
    conn.execute(
        """
        CREATE TABLE watch_sessions (
            session_id TEXT PRIMARY KEY,
            orchestrator_id INTEGER NOT NULL REFERENCES watch_orchestrators(id),
            harness TEXT,
            source TEXT NOT NULL,
            bound_at TEXT NOT NULL
        )
        """
    )
    conn.execute(
        """
        CREATE TABLE watch_wakes (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            orchestrator_id INTEGER REFERENCES watch_orchestrators(id),
            reason TEXT NOT NULL,
            subagent TEXT,
            pending_tool TEXT,
            pending_call_id TEXT,
            idle_seconds REAL,
            message TEXT NOT NULL,
            channels TEXT NOT NULL,
            delivered INTEGER NOT NULL DEFAULT 0
        )
        """
    )
    conn.execute("CREATE INDEX watch_wakes_by_orchestrator ON watch_wakes (orchestrator_id, at)")


def m003_loop_guard(conn: sqlite3.Connection) -> None:
    """The loop's memory: the guard, items already seen, routine and check times, stop-hook blocks.

    ``scope`` is the absolute path of the board folder, so one home can serve
    several boards without their guards mixing.
    """
    conn.execute(
        """
        CREATE TABLE loop_guard (
            scope TEXT PRIMARY KEY,
            result TEXT NOT NULL CHECK (result IN ('exhausted', 'blind', 'found')),
            at TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            situation TEXT NOT NULL,
            unavailable TEXT NOT NULL
        )
        """
    )
    conn.execute(
        """
        CREATE TABLE loop_seen (
            scope TEXT NOT NULL,
            role TEXT NOT NULL,
            item TEXT NOT NULL,
            first_seen TEXT NOT NULL,
            PRIMARY KEY (scope, role, item)
        ) WITHOUT ROWID
        """
    )
    conn.execute(
        """
        CREATE TABLE loop_routines (
            scope TEXT NOT NULL,
            name TEXT NOT NULL,
            last_run TEXT NOT NULL,
            exit_code INTEGER,
            tail TEXT,
            PRIMARY KEY (scope, name)
        )
        """
    )
    conn.execute(
        """
        CREATE TABLE loop_checks (
            scope TEXT NOT NULL,
            ticket TEXT NOT NULL,
            at TEXT NOT NULL,
            passed INTEGER NOT NULL,
            exit_code INTEGER,
            PRIMARY KEY (scope, ticket)
        )
        """
    )
    conn.execute(
        """
        CREATE TABLE loop_stop_hook (
            session_id TEXT PRIMARY KEY,
            blocks INTEGER NOT NULL,
            updated_at TEXT NOT NULL
        )
        """
    )


def m004_run_stages(conn: sqlite3.Connection) -> None:
    """What the post-run stages of a completed run did (JSON list), so a failed check shows."""
    conn.execute("ALTER TABLE runs ADD COLUMN stages TEXT")


def m005_loop_ticks(conn: sqlite3.Connection) -> None:
    """Every tick's signal line, its time and its evidence (JSON), per board (``scope``)."""
    conn.execute(
        """
        CREATE TABLE loop_ticks (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            at TEXT NOT NULL,
            signal TEXT NOT NULL,
            line TEXT NOT NULL,
            exit_code INTEGER NOT NULL,
            dry_run INTEGER NOT NULL,
            evidence TEXT NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX loop_ticks_by_scope ON loop_ticks (scope, id)")


def m006_watch_subagents(conn: sqlite3.Connection) -> None:
    """Subagents registered by hand (``tether watch add-subagent``): a tmux pane or a process."""
    conn.execute(
        """
        CREATE TABLE watch_subagents (
            id INTEGER PRIMARY KEY,
            tmux_pane TEXT,
            tmux_socket TEXT,
            pid INTEGER,
            pid_start_time REAL,
            added_at TEXT NOT NULL,
            removed_at TEXT
        )
        """
    )


def m007_outbox(conn: sqlite3.Connection) -> None:
    """Proposed external steps (``tether outbox``): what a run proposed, what a person decided.

    ``argv`` and ``pinned`` are JSON written by tether outside the sandbox at
    collection (never taken from the agent's file); ``state`` moves
    proposed → approved → done | failed, or proposed → rejected.
    """
    conn.execute(
        """
        CREATE TABLE outbox (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            state TEXT NOT NULL
                CHECK (state IN ('proposed', 'approved', 'rejected', 'done', 'failed')),
            run_id TEXT REFERENCES runs(id),
            unit TEXT,
            ticket TEXT,
            project TEXT NOT NULL,
            cwd TEXT NOT NULL,
            headline TEXT NOT NULL,
            params TEXT NOT NULL,
            argv TEXT NOT NULL,
            pinned TEXT,
            summary TEXT,
            report TEXT,
            message TEXT,
            proposed_at TEXT NOT NULL,
            collected_at TEXT NOT NULL,
            decided_by TEXT,
            decided_at TEXT,
            note TEXT,
            exit_code INTEGER,
            output TEXT,
            finished_at TEXT
        )
        """
    )
    conn.execute("CREATE INDEX outbox_by_state ON outbox (state, proposed_at)")
    conn.execute("CREATE INDEX outbox_by_ticket ON outbox (ticket)")
    conn.execute("CREATE INDEX outbox_by_run ON outbox (run_id)")


def m008_run_sandbox(conn: sqlite3.Connection) -> None:
    """Whether a run was sandboxed: ``bubblewrap``, or ``off: <why>``."""
    conn.execute("ALTER TABLE runs ADD COLUMN sandbox TEXT")


# In order; position + 1 is the schema version a migration produces.
MIGRATIONS: tuple[Migration, ...] = (
    m001_initial,
    m002_watch,
    m003_loop_guard,
    m004_run_stages,
    m005_loop_ticks,
    m006_watch_subagents,
    m007_outbox,
    m008_run_sandbox,
)


def migrate(conn: sqlite3.Connection, path: Path | None = None) -> int:
    """Apply the migrations the database lacks; returns the resulting version."""
    return run_migrations(conn, MIGRATIONS, lambda version, latest: _too_new(version, latest, path))


def _too_new(version: int, latest: int, path: Path | None) -> StoreError:
    where = f" {path}" if path is not None else ""
    return StoreError(
        f"the tether database{where} has schema version {version}, newer than this "
        f"tether knows ({latest}); upgrade tether, or point TETHER_HOME elsewhere."
    )
