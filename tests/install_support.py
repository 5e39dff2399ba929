"""`tether mcp|skills install|uninstall` against a private home: the command and its folders.

Every harness's own home variable is cleared, so each harness looks under the
given ``HOME`` (Vibe's ``~/.vibe`` included) and never at the user's files.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TETHER = str(Path(sys.executable).parent / "tether")
HARNESS_HOMES = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "COPILOT_HOME",
    "PI_CODING_AGENT_DIR",
    "VIBE_HOME",
)


def tether_in(
    project: Path, home: Path, group: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """``tether GROUP ARGS --project-dir PROJECT`` with ``HOME`` set to ``home``."""
    env = {k: v for k, v in os.environ.items() if k not in HARNESS_HOMES}
    env["HOME"] = str(home)
    return subprocess.run(
        [TETHER, group, *args, "--project-dir", str(project)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder
