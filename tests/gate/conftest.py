"""Fixtures for the gate tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.gate.gate_support import clean_env

from tether.gate import hook_command


@pytest.fixture(scope="session")
def gate_exe() -> str:
    argv = hook_command.gate_argv()
    assert len(argv) == 1 and Path(argv[0]).is_absolute(), argv
    return argv[0]


@pytest.fixture
def env_for(tether_home: Path) -> Any:
    def make(**extra: str) -> dict[str, str]:
        return clean_env(tether_home, **extra)

    return make
