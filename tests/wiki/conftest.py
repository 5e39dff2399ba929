from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

VAULT = TESTS.parent / ".." / "shared" / "corpora" / "obsidian-help-en"


@pytest.fixture
def vault() -> Path:
    if not VAULT.is_dir():
        pytest.skip(
            f"the Obsidian Help vault is not at {VAULT.resolve()} "
            "(a copy of shared/ belongs beside the repository)"
        )
    return VAULT.resolve()
