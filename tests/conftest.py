from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

TRANSCRIPTS = Path(__file__).parent / "transcripts"


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
