"""``tether doctor`` bad input: one line and the usage exit code, before any probe runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TETHER = str(Path(sys.executable).parent / "tether")


def test_unknown_harness_is_one_line_and_exit_2(tmp_path: Path, tether_home: Path) -> None:
    done = subprocess.run(
        [TETHER, "doctor", "--harness", "cursor"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "tether: error: unknown harness 'cursor'; known: claude-code, codex, copilot, pi, vibe"
    ]
