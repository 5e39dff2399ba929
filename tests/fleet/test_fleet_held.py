"""A worker holds its projects' SQLite files open, so a connection's close is no checkpoint."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tether.fleet.held import HeldFiles


def _wal_database(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.close()


def _write_and_close(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("INSERT INTO t VALUES (1)")
    conn.close()


def test_a_held_file_is_not_checkpointed_when_another_connection_closes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _wal_database(home / "tether.db")
    wal = home / "tether.db-wal"
    _write_and_close(home / "tether.db")
    assert not wal.exists()  # the last connection's close: checkpoint, WAL removed

    held = HeldFiles()
    held.hold(home)
    assert held.held() == [home / "tether.db"]  # gate.db does not exist: not made here
    assert not (home / "gate.db").exists()
    _write_and_close(home / "tether.db")
    assert wal.stat().st_size > 0  # not the last connection: no checkpoint on close
    reader = sqlite3.connect(home / "tether.db")
    assert reader.execute("SELECT count(*) FROM t").fetchone() == (2,)  # nothing lost
    reader.close()
    held.close()
    assert held.held() == []
