from __future__ import annotations

import compileall
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests import agent_clis  # noqa: F401  (reads $TETHER_AGENT_BIN_DIR before any test clears it)
from tests.skip_guard import SkipGuard, in_ci

TRANSCRIPTS = Path(__file__).parent / "transcripts"


# The per-user folders a program finds through HOME unless these name others.
XDG_DIRS = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
# Who commits in the tests' git repositories, whatever the machine's git configuration says.
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "tether tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "tether tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}


# Keep the compiled test modules (pytest's rewritten ones included) even where
# PYTHONDONTWRITEBYTECODE=1 is set: else every xdist worker compiles every test
# module again at collection (measured: 8.5 s of CPU per worker instead of 3.6 s).
sys.dont_write_bytecode = False


def _compile_tether() -> None:
    """Byte-compile tether once per session, before any test starts it.

    The suite starts ``tether``, ``tether-gate`` and the scripted agent as
    processes thousands of times; under PYTHONDONTWRITEBYTECODE=1 an editable
    install has no .pyc, and each of them would compile its modules from source
    again (a quarter of ``tether board list``'s CPU time, measured).
    """
    import tether

    compileall.compile_dir(Path(tether.__file__).parent, quiet=1)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="rewrite the golden files the tests compare with (refused under CI=true)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # One way to rewrite goldens, and never in CI: there a golden that writes itself
    # would make every comparison pass.
    if config.getoption("--update-goldens") and in_ci():
        raise pytest.UsageError("--update-goldens is refused under CI=true: update goldens locally")
    # Under CI=true a skip outside tests/skip_allowlist.py fails the session.
    config.pluginmanager.register(SkipGuard(), "tether-skip-guard")
    if not hasattr(config, "workerinput"):  # once, in the process that starts the workers
        _compile_tether()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (the README's command) starts two workers per core.

    The suite waits on the processes it starts (``tether``, the agent CLIs, the gate,
    git, PostgreSQL, Chromium) much of the time: with one worker per core the quick
    tier used 248 s of CPU in 239 s of wall on two cores, half of what they had. A
    second worker per core runs while the first waits. When it is set,
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` decides.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    return 2 * len(os.sched_getaffinity(0))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A test that drives a real agent CLI takes seconds at least: it is in the slow tier.
    for item in items:
        if item.get_closest_marker("real_harness") is not None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    """True when the session runs with ``--update-goldens`` (never under CI=true)."""
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture(autouse=True)
def tether_home(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every test gets its own TETHER_HOME, its own HOME, and no user or project
    configuration leaks in.

    Its own HOME keeps what the agent CLIs and tools a test starts write there
    (session files, caches, browser profiles) out of the developer's home, and
    keeps tests that run at the same time (pytest-xdist) out of each other's.
    """
    home = tmp_path / "tether-home"
    monkeypatch.setenv("TETHER_HOME", str(home))
    monkeypatch.setenv("TETHER_USER_CONFIG", str(tmp_path / "no-user-config.toml"))
    for name in list(os.environ):
        if name.startswith("TETHER_") and name not in {"TETHER_HOME", "TETHER_USER_CONFIG"}:
            monkeypatch.delenv(name, raising=False)
    # beside tmp_path, not in it: a test may own everything in its tmp_path
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("user-home")))
    for name in XDG_DIRS:
        monkeypatch.delenv(name, raising=False)
    for name, value in GIT_IDENTITY.items():
        monkeypatch.setenv(name, value)
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
