"""The SQLite files of the projects' homes on this worker, each held open between units.

SQLite checkpoints a WAL database, with its fsyncs, whenever the last
connection to it closes; a unit opens and closes the project's ``tether.db``
and ``gate.db`` many times (the loop, the run's supervisor, every gate call
it serves), so each close was such a checkpoint. One connection held here
(idle: no transaction stays open) keeps every other close from being the
last one; WAL's own automatic checkpoint still runs once the log has grown.
Nothing about atomicity or crash safety changes: every write is still a
transaction in a WAL file (``synchronous=NORMAL``, as before), and the fleet's
database, not this home, is what another worker recovers from.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path

FILES = ("tether.db", "gate.db")


class HeldFiles:
    """Connections held to the homes' databases, one per file, for this process's life."""

    def __init__(self) -> None:
        self._held: dict[Path, sqlite3.Connection] = {}
        self._lock = threading.Lock()

    def hold(self, home: Path) -> None:
        """Hold the home's database files that exist (those made later: at the next call)."""
        for name in FILES:
            path = home / name
            with self._lock:
                if path in self._held or not path.is_file():
                    continue
                try:
                    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
                    # a first read opens the WAL's index: from then on this connection counts
                    conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
                except sqlite3.Error:
                    continue  # not a database (yet): the tick's own code says why, if it matters
                self._held[path] = conn

    def held(self) -> list[Path]:
        with self._lock:
            return sorted(self._held)

    def close(self) -> None:
        with self._lock:
            for conn in self._held.values():
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._held.clear()
