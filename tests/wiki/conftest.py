from __future__ import annotations

from pathlib import Path

import pytest

VAULT = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpora" / "obsidian-help-en"


@pytest.fixture
def vault() -> Path:
    if not VAULT.is_dir():
        pytest.skip(
            f"the Obsidian Help vault is not at {VAULT.resolve()} "
            "(a copy of shared/ belongs beside the repository)"
        )
    return VAULT.resolve()
