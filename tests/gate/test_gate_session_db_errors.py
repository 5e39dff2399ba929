"""``tether session status|log|new`` on a gate database they cannot use.

One line that names the file and says what to do, exit 3 (a bad file is a
configuration error, docs/reference/exit-codes.md), no traceback, and the file
left as it was.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.outside_agents import detached

TETHER = str(Path(sys.executable).parent / "tether")
Env = Callable[..., dict[str, str]]
GARBAGE = bytes(range(256)) * 64  # 16 KiB that no SQLite header starts with

COMMANDS = [
    pytest.param(["status", "--session", "ctx-1"], id="status-session"),
    pytest.param(["status"], id="status"),
    pytest.param(["status", "--json"], id="status-json"),
    pytest.param(["log"], id="log"),
    pytest.param(["log", "--json", "--limit", "3"], id="log-json"),
    pytest.param(["new", "--reason", "unit-boundary", "--unit", "a"], id="new"),
]


def _session(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    if args[0] == "new":
        (cwd / "PLAN.md").write_text("# Plan\n\n- [ ] unit: a  the first unit\n")
        args = [*args, "--plan", "PLAN.md"]
    return subprocess.run(
        detached([TETHER, "session", *args], new_session=True),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
        start_new_session=True,
    )


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 3, done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("tether: error: ")
    return line


@pytest.mark.parametrize("args", COMMANDS)
def test_a_garbage_gate_db_is_one_clear_line_and_exit_3(
    tether_home: Path, env_for: Env, tmp_path: Path, args: list[str]
) -> None:
    tether_home.mkdir()
    gate_db = tether_home / "gate.db"
    gate_db.write_bytes(GARBAGE)
    line = _one_error_line(_session(args, env_for(), tmp_path))
    assert f"{gate_db} is not a readable gate database (file is not a database)" in line
    assert "Restore it from a backup, or move it aside" in line
    assert gate_db.read_bytes() == GARBAGE
    assert sorted(p.name for p in tether_home.iterdir()) == ["gate.db"]


@pytest.mark.parametrize("args", COMMANDS)
def test_a_gate_db_from_a_newer_tether_says_to_upgrade(
    tether_home: Path, env_for: Env, tmp_path: Path, args: list[str]
) -> None:
    tether_home.mkdir()
    conn = sqlite3.connect(tether_home / "gate.db")
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    line = _one_error_line(_session(args, env_for(), tmp_path))
    assert "schema version 99, newer than this tether-gate understands" in line
    assert line.endswith("upgrade tether")


def test_a_gate_db_that_cannot_be_opened_names_the_file(
    tether_home: Path, env_for: Env, tmp_path: Path
) -> None:
    (tether_home / "gate.db").mkdir(parents=True)  # a folder where the file belongs
    line = _one_error_line(_session(["log"], env_for(), tmp_path))
    assert f"cannot use the gate database {tether_home / 'gate.db'}" in line
    assert "readable and writable" in line
