"""Fixtures for the gate tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gate_support import clean_env

from tether.gate import hook_install, newsession


@pytest.fixture(scope="session")
def gate_exe() -> str:
    argv = hook_install.gate_argv()
    assert len(argv) == 1 and Path(argv[0]).is_absolute(), argv
    return argv[0]


@pytest.fixture
def env_for(tether_home: Path) -> Any:
    def make(**extra: str) -> dict[str, str]:
        return clean_env(tether_home, **extra)

    return make


@pytest.fixture
def no_agent_ancestor() -> Iterator[None]:
    """Skip when the test process itself runs inside an agent CLI's process tree.

    Tests of the process-tree fallback and of ``session new`` from a plain
    shell need a tree whose nearest agent is the one the test starts.
    """
    why = newsession.agent_ancestry(os.getpid(), environ={})
    if why is not None:
        pytest.skip(f"the test runner runs inside an agent's process tree ({why})")
    yield
