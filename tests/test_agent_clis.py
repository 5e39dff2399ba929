"""tests/agent_clis.py: one lookup of the real CLIs; a missing one fails under CI=true."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

CASE = """\
from tests import agent_clis


def test_needs_codex():
    assert agent_clis.require("codex").name == "codex"
"""


def _pytest(folder: Path, bin_dir: Path, ci: bool) -> subprocess.CompletedProcess[str]:
    ours = ("CI", "PYTEST_", "TETHER_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    env.update(PYTHONPATH=str(REPO), TETHER_AGENT_BIN_DIR=str(bin_dir))
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", "test_case.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_a_missing_cli_skips_on_a_laptop_and_fails_under_ci(tmp_path: Path) -> None:
    (tmp_path / "test_case.py").write_text(CASE)
    empty = tmp_path / "no-clis"
    empty.mkdir()
    laptop = _pytest(tmp_path, empty, ci=False)
    assert laptop.returncode == 0, laptop.stdout
    assert "the codex CLI is not installed" in laptop.stdout and "1 skipped" in laptop.stdout
    ci = _pytest(tmp_path, empty, ci=True)
    assert ci.returncode == 1, ci.stdout
    assert "CI=true runs every agent CLI" in ci.stdout and "1 failed" in ci.stdout
    found = tmp_path / "clis"
    found.mkdir()
    (found / "codex").write_text("#!/bin/sh\n")
    (found / "codex").chmod(0o755)
    assert _pytest(tmp_path, found, ci=True).returncode == 0
