"""One switch rewrites golden files, ``--update-goldens``, and CI refuses it.

A golden that may write itself during a CI run compares the code with itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_update_goldens_is_refused_under_ci() -> None:
    env = {**os.environ, "CI": "true"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--update-goldens",
            "tests/test_clock.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 4, done.stdout + done.stderr  # pytest's usage error
    assert "--update-goldens is refused under CI=true" in done.stderr


def test_no_other_switch_rewrites_goldens() -> None:
    """No test reads an environment variable to decide whether to write its golden."""
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("*.py")
        if path.name != "test_goldens.py" and "UPDATE_GOLDEN" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
