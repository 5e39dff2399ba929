"""State: the SQLite database in TETHER_HOME (stdlib ``sqlite3``, WAL).

``db`` opens it and runs writers in ``BEGIN IMMEDIATE`` transactions,
``migrations`` holds the numbered schema steps, and one small module per
aggregate (``runs``, ...) reads and writes its table.
"""

from __future__ import annotations

from tether.store.state_db import DB_NAME, connect, db_path, transaction

__all__ = ["DB_NAME", "connect", "db_path", "transaction"]
