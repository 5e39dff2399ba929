from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tether.core.errors import StoreError
from tether.core.migrations import schema_version
from tether.store import connect, db_path, transaction
from tether.store.migrations import MIGRATIONS, migrate

RUNS_COLUMNS = [
    # (name, type, notnull, default, pk)
    ("id", "TEXT", 0, None, 1),
    ("unit", "TEXT", 0, None, 0),
    ("profile", "TEXT", 1, None, 0),
    ("harness", "TEXT", 1, None, 0),
    ("model", "TEXT", 0, None, 0),
    ("argv", "TEXT", 1, None, 0),
    ("cwd", "TEXT", 0, None, 0),
    ("session_id", "TEXT", 0, None, 0),
    ("harness_session_id", "TEXT", 0, None, 0),
    ("status", "TEXT", 1, None, 0),
    ("stop_reason", "TEXT", 0, None, 0),
    ("exit_code", "INTEGER", 0, None, 0),
    ("agent_exit_status", "INTEGER", 0, None, 0),
    ("iteration_limit", "INTEGER", 0, None, 0),
    ("tool_call_limit", "INTEGER", 0, None, 0),
    ("timeout_seconds", "REAL", 0, None, 0),
    ("iterations", "INTEGER", 0, "0", 0),
    ("tool_calls", "INTEGER", 0, "0", 0),
    ("tool_results", "INTEGER", 0, "0", 0),
    ("open_tool_calls", "INTEGER", 0, "0", 0),
    ("usage", "TEXT", 0, None, 0),
    ("started_at", "TEXT", 1, None, 0),
    ("ended_at", "TEXT", 0, None, 0),
    ("supervisor_pid", "INTEGER", 0, None, 0),
    ("supervisor_start_time", "REAL", 0, None, 0),
    ("agent_pgid", "INTEGER", 0, None, 0),
    ("follow_up_of", "TEXT", 0, None, 0),
    ("budget_request", "INTEGER", 0, None, 0),
    ("justification", "TEXT", 0, None, 0),
    ("run_dir", "TEXT", 1, None, 0),
    ("host", "TEXT", 0, None, 0),
    ("depth", "INTEGER", 0, "0", 0),
    ("stages", "TEXT", 0, None, 0),  # m004
    ("sandbox", "TEXT", 0, None, 0),  # m007
]


def test_schema_after_all_migrations(tether_home: Path, conn: sqlite3.Connection) -> None:
    assert db_path(tether_home) == tether_home / "tether.db"
    assert schema_version(conn) == len(MIGRATIONS)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert tables[0] == "runs"  # later migrations add their own tables after it
    columns = [tuple(r[1:]) for r in conn.execute("PRAGMA table_info(runs)")]
    assert columns == RUNS_COLUMNS
    indexes = {
        r[0]: r[1]
        for r in conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            "AND tbl_name = 'runs'"
        )
    }
    assert indexes == {"runs_started_at": "runs", "runs_status": "runs"}
    assert [r[2] for r in conn.execute("PRAGMA index_info(runs_started_at)")] == ["started_at"]
    assert [r[2] for r in conn.execute("PRAGMA index_info(runs_status)")] == ["status"]
    fks = [(r[2], r[3], r[4]) for r in conn.execute("PRAGMA foreign_key_list(runs)")]
    assert fks == [("runs", "follow_up_of", "id")]


def test_connection_settings(conn: sqlite3.Connection) -> None:
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.isolation_level is None
    assert not conn.in_transaction


def test_connect_creates_the_home(tmp_path: Path) -> None:
    home = tmp_path / "a" / "b"
    connect(home).close()
    assert (home / "tether.db").is_file()


def test_migrations_are_idempotent(tether_home: Path, conn: sqlite3.Connection) -> None:
    conn.execute(
        "INSERT INTO runs (id, profile, harness, argv, status, started_at, run_dir) "
        "VALUES ('r1', 'p', 'h', '[]', 'running', 't', 'd')"
    )
    assert migrate(conn) == len(MIGRATIONS)
    for _ in range(3):
        again = connect(tether_home)
        assert schema_version(again) == len(MIGRATIONS)
        assert again.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
        again.close()


def test_each_migration_is_applied_in_order_in_its_own_transaction(
    tether_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tether.store.migrations as migrations

    seen: list[tuple[str, bool]] = []

    def m002_add(conn: sqlite3.Connection) -> None:
        seen.append(("m002", conn.in_transaction))
        conn.execute("CREATE TABLE extra (x INTEGER)")

    def m003_broken(conn: sqlite3.Connection) -> None:
        seen.append(("m003", conn.in_transaction))
        conn.execute("CREATE TABLE half (x INTEGER)")
        raise RuntimeError("boom")

    connect(tether_home).close()
    monkeypatch.setattr(migrations, "MIGRATIONS", (*MIGRATIONS, m002_add, m003_broken))
    with pytest.raises(RuntimeError, match="boom"):
        connect(tether_home)
    assert seen == [("m002", True), ("m003", True)]
    raw = sqlite3.connect(db_path(tether_home))
    # the added one kept, the broken one rolled back
    assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) + 1
    names = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"runs", "extra"} <= names and "half" not in names
    raw.close()


def test_database_newer_than_the_code_is_refused(tether_home: Path) -> None:
    connect(tether_home).close()
    raw = sqlite3.connect(db_path(tether_home))
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    known = rf"newer than this tether knows \({len(MIGRATIONS)}\)"
    with pytest.raises(StoreError, match=rf"schema version 99, {known}"):
        connect(tether_home)


def test_corrupt_file_is_a_clear_store_error(tether_home: Path) -> None:
    tether_home.mkdir(parents=True)
    garbage = b"this is not sqlite at all " * 200
    (tether_home / "tether.db").write_bytes(garbage)
    with pytest.raises(StoreError) as info:
        connect(tether_home)
    message = str(info.value)
    assert "is not a readable tether database" in message
    assert "Move it aside" in message
    assert (tether_home / "tether.db").read_bytes() == garbage  # nothing overwritten
    # and a command says it in one line, exit 3 (a bad file), without a traceback
    import subprocess
    import sys

    tether = str(Path(sys.executable).parent / "tether")
    done = subprocess.run(
        [tether, "runs", "list"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 3
    assert done.stderr.startswith("tether: error: ") and "Traceback" not in done.stderr
    assert "is not a readable tether database" in done.stderr
    assert (tether_home / "tether.db").read_bytes() == garbage


def test_unwritable_home_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot create the tether home"):
        connect(blocker / "home")


def test_transaction_commits_and_rolls_back(conn: sqlite3.Connection) -> None:
    insert = (
        "INSERT INTO runs (id, profile, harness, argv, status, started_at, run_dir) "
        "VALUES (?, 'p', 'h', '[]', 'running', 't', 'd')"
    )
    with transaction(conn):
        conn.execute(insert, ("a",))
    with pytest.raises(ValueError, match="no"), transaction(conn):
        conn.execute(insert, ("b",))
        raise ValueError("no")
    with transaction(conn):
        conn.execute(insert, ("c",))
        with pytest.raises(ValueError, match="inner"), transaction(conn):
            conn.execute(insert, ("d",))
            raise ValueError("inner")
    assert not conn.in_transaction
    ids = [r[0] for r in conn.execute("SELECT id FROM runs ORDER BY id")]
    assert ids == ["a", "c"]


def test_foreign_key_on_follow_up_is_enforced(conn: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO runs (id, profile, harness, argv, status, started_at, run_dir, "
            "follow_up_of) VALUES ('x', 'p', 'h', '[]', 'running', 't', 'd', 'nope')"
        )
