from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests import agent_clis  # noqa: F401  (reads $TETHER_AGENT_BIN_DIR before any test clears it)
from tests.skip_guard import SkipGuard

TRANSCRIPTS = Path(__file__).parent / "transcripts"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="rewrite the golden answers the tests compare with (never under CI=true)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # Under CI=true a skip outside tests/skip_allowlist.py fails the session.
    config.pluginmanager.register(SkipGuard(), "tether-skip-guard")


@pytest.fixture(autouse=True)
def tether_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own TETHER_HOME and no user/project config leaks in."""
    home = tmp_path / "tether-home"
    monkeypatch.setenv("TETHER_HOME", str(home))
    monkeypatch.setenv("TETHER_USER_CONFIG", str(tmp_path / "no-user-config.toml"))
    for name in list(os.environ):
        if name.startswith("TETHER_") and name not in {"TETHER_HOME", "TETHER_USER_CONFIG"}:
            monkeypatch.delenv(name, raising=False)
    yield home


@pytest.fixture
def transcripts() -> Path:
    return TRANSCRIPTS


@pytest.fixture
def conn(tether_home: Path) -> Iterator[sqlite3.Connection]:
    """A migrated connection to the test's own state database, closed afterwards."""
    from tether.store import connect

    connection = connect(tether_home)
    try:
        yield connection
    finally:
        connection.close()
