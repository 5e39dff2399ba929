"""Where the tests find the real agent CLIs: the one lookup every test and script uses.

``.ci/install-agents`` puts pinned CLIs under ``.ci/agents/``: the npm ones in
``.ci/agents/node_modules/.bin``, Python ones in their own venv there (see
:data:`CLIS`). ``$TETHER_AGENT_BIN_DIR``, when set, names the one folder to
look in instead (read at import: the autouse fixture in ``tests/conftest.py``
clears ``TETHER_*`` variables for each test).

A missing CLI skips its test on a developer's machine; under ``CI=true`` it is a
failure, since CI installs every CLI in :data:`CLIS`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
AGENTS = REPO / ".ci" / "agents"
NPM_BIN = AGENTS / "node_modules" / ".bin"
BIN_DIR_ENV = "TETHER_AGENT_BIN_DIR"
BIN_DIR_OVERRIDE = os.environ.get(BIN_DIR_ENV) or None
IN_CI = os.environ.get("CI") == "true"


@dataclass(frozen=True)
class Cli:
    """One agent CLI: its executable's name and where ``.ci/install-agents`` puts it."""

    executable: str
    installed_at: Path


# Harness name -> its CLI. A CLI installed some other way (a venv, a release
# binary) is one more row with its own ``installed_at``. ``jiti`` is the
# TypeScript loader Pi runs its extensions with (installed with pi). ``pi-1`` is
# Pi 1.x (``@earendil-works/pi-coding-agent``, on its own Node 22) next to Pi 0.73
# (``pi``): the same harness, a second CLI the real tier runs too.
CLIS: dict[str, Cli] = {
    "claude-code": Cli("claude", NPM_BIN / "claude"),
    "codex": Cli("codex", NPM_BIN / "codex"),
    "copilot": Cli("copilot", NPM_BIN / "copilot"),
    "pi": Cli("pi", NPM_BIN / "pi"),
    "pi-1": Cli("pi", AGENTS / "pi1" / "bin" / "pi"),
    "vibe": Cli("vibe", AGENTS / "vibe-venv" / "bin" / "vibe"),
    "jiti": Cli("jiti", NPM_BIN / "jiti"),
}


# a second CLI of a harness -> the harness tether drives it as
VARIANT_OF = {"pi-1": "pi"}


def harness_of(name: str) -> str:
    """The tether harness a CLI name (``pi-1``) is driven as (``pi``)."""
    return VARIANT_OF.get(name, name)


def candidates(harness: str) -> list[Path]:
    """Where ``harness``'s CLI is looked for, in order."""
    cli = CLIS[harness]
    if BIN_DIR_OVERRIDE is not None:
        return [Path(BIN_DIR_OVERRIDE) / cli.executable]
    return [cli.installed_at]


def find(harness: str) -> Path | None:
    """``harness``'s CLI executable, or None when it is not installed."""
    for path in candidates(harness):
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def missing_reason(harness: str) -> str:
    searched = ", ".join(str(p) for p in candidates(harness))
    return (
        f"the {harness} CLI is not installed (looked for {searched}; "
        f"run .ci/install-agents or set {BIN_DIR_ENV})"
    )


def require(harness: str) -> Path:
    """``harness``'s CLI executable; a missing one skips the test, or fails it under CI."""
    path = find(harness)
    if path is not None:
        return path
    if IN_CI:
        pytest.fail(f"{missing_reason(harness)}; CI=true runs every agent CLI")
    pytest.skip(missing_reason(harness))
