from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.store import connect


@pytest.fixture
def conn(tether_home: Path) -> Iterator[sqlite3.Connection]:
    """A migrated connection to the test's own state database, closed afterwards."""
    connection = connect(tether_home)
    try:
        yield connection
    finally:
        connection.close()
