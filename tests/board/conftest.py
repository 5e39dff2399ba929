from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tether.board import Board
from tether.clock import FakeClock

TETHER = str(Path(sys.executable).parent / "tether")
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2025, 6, 1, 9, 30, tzinfo=UTC))


@pytest.fixture
def board(tmp_path: Path, clock: FakeClock) -> Board:
    created = Board(tmp_path / "project" / "tickets", tmp_path / "project", clock=clock)
    created.ensure()
    return created


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the board (dotfiles too), by relative path, with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def tether(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run(
        [TETHER, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
