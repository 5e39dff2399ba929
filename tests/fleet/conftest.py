from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from tests.support.postgres import Postgres, missing_binaries, start_postgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    missing = missing_binaries()
    if missing:
        pytest.fail(f"PostgreSQL binaries not on PATH: {', '.join(missing)}")
    server = start_postgres(random.randint(20000, 40000))
    try:
        yield server
    finally:
        server.stop()
