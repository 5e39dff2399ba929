"""A gate database held by another process: the calls it cannot count are refused.

Holding the write lock must not buy an agent uncounted calls. While another
process holds ``gate.db`` (``holding_gate.py``: a gate whose counting call waits
inside its open transaction, or a connection in exclusive locking mode),
a tool call is refused in the harness's deny contract and ``tick`` exits 30: a
locked session with its usual refusal (WAL lets the gate read the lock state),
any other with the message that the database is held. A broken database still
fails open (test_gate_malformed.py). The busy timeout is shortened for these
tests through TETHER_GATE_BUSY_TIMEOUT_MS, which can only shorten it.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.gate.gate_support import holding_gate, load_payload, query, run_gate

from tether.gate import gate_db
from tether.gate.counter import session_status, set_session_budget

Env = Callable[..., dict[str, str]]
SHORT = {gate_db.BUSY_TIMEOUT_ENV: "150"}

# (harness, golden event, the --event flag the installed config passes)
TOOL_EVENTS = [
    ("claude-code", "PreToolUse", None),
    ("codex", "PreToolUse", None),
    ("copilot", "preToolUse", "preToolUse"),
    ("pi", "tool_call", None),
]


def _args(harness: str, flag: str | None) -> list[str]:
    return ["hook", "--harness", harness, *(["--event", flag] if flag else [])]


def _session_of(payload: dict[str, Any]) -> str:
    return str(payload.get("session_id") or payload.get("sessionId"))


def _reason(harness: str, stdout: bytes) -> str:
    answer = json.loads(stdout)
    if harness in ("claude-code", "codex"):
        assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
        return str(answer["hookSpecificOutput"]["permissionDecisionReason"])
    if harness == "copilot":
        assert answer["permissionDecision"] == "deny"
        return str(answer["permissionDecisionReason"])
    assert answer["block"] is True
    return str(answer["reason"])


@contextmanager
def _held(gate_exe: str, env: dict[str, str], marker: Path) -> Iterator[None]:
    """Another gate process holds the write lock of gate.db inside the block."""
    holder = subprocess.Popen(
        [*holding_gate(marker), "tick", "--session", "the-holder"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert holder.poll() is None, "the holder ended before taking the lock"
            assert time.monotonic() < deadline, "the holder never took the lock"
            time.sleep(0.005)
        yield
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)


@pytest.fixture
def held(env_for: Env, gate_exe: str, tmp_path: Path) -> Iterator[None]:
    with _held(gate_exe, env_for(), tmp_path / "holding"):
        yield


@pytest.mark.parametrize(("harness", "event", "flag"), TOOL_EVENTS)
def test_a_locked_session_is_refused_while_another_process_holds_the_database(
    tether_home: Path,
    env_for: Env,
    gate_exe: str,
    tmp_path: Path,
    harness: str,
    event: str,
    flag: str | None,
) -> None:
    payload = load_payload(harness, event)
    session = _session_of(payload)
    set_session_budget(tether_home, session, calls=0)
    with _held(gate_exe, env_for(), tmp_path / "holding"):
        done = run_gate(gate_exe, _args(harness, flag), env_for(**SHORT), json.dumps(payload))
    assert done.returncode == 0
    reason = _reason(harness, done.stdout)
    assert f"0 of 0 calls used in session {session}" in reason
    assert b"could not count" not in done.stderr  # no fail-open warning
    assert session_status(tether_home, session).calls_used == 0


@pytest.mark.parametrize(("harness", "event", "flag"), TOOL_EVENTS)
@pytest.mark.usefixtures("held")
def test_a_call_that_cannot_be_counted_because_the_database_is_held_is_refused(
    tether_home: Path,
    env_for: Env,
    gate_exe: str,
    harness: str,
    event: str,
    flag: str | None,
) -> None:
    payload = load_payload(harness, event)
    done = run_gate(gate_exe, _args(harness, flag), env_for(**SHORT), json.dumps(payload))
    assert done.returncode == 0
    reason = _reason(harness, done.stdout)
    assert f"database {tether_home / 'gate.db'} is held by another process" in reason
    assert "cannot be counted" in reason
    assert "Do not call more tools" in reason
    assert reason in done.stderr.decode()


def test_tick_exits_30_while_the_database_is_held(
    tether_home: Path, env_for: Env, gate_exe: str, tmp_path: Path
) -> None:
    set_session_budget(tether_home, "spent", calls=0)
    env = env_for(**SHORT)
    with _held(gate_exe, env, tmp_path / "holding"):
        locked = run_gate(gate_exe, ["tick", "--session", "spent"], env)
        other = run_gate(gate_exe, ["tick", "--session", "fresh"], env)
    assert locked.returncode == 30
    assert b"0 of 0 calls used in session spent" in locked.stderr
    assert other.returncode == 30
    assert f"{tether_home / 'gate.db'} is held by another process".encode() in other.stderr
    assert b"could not count" not in other.stderr


def test_calls_refused_while_held_are_not_counted_and_counting_goes_on_after(
    tether_home: Path, env_for: Env, gate_exe: str, tmp_path: Path
) -> None:
    env = env_for(**SHORT)
    for _ in range(2):
        assert run_gate(gate_exe, ["tick", "--session", "later"], env).returncode == 0
    with _held(gate_exe, env, tmp_path / "holding"):
        for _ in range(3):
            assert run_gate(gate_exe, ["tick", "--session", "later"], env).returncode == 30
    assert run_gate(gate_exe, ["tick", "--session", "later"], env).returncode == 0
    assert session_status(tether_home, "later").calls_used == 3
    assert query(tether_home, "SELECT calls_used FROM events WHERE session_id = 'later'") == [
        (1,),
        (2,),
        (3,),
    ]


def test_a_connection_that_shuts_out_readers_too_gets_every_call_refused(
    tether_home: Path, env_for: Env, gate_exe: str
) -> None:
    # Exclusive locking mode keeps even WAL readers out, so the lock state
    # cannot be read either: the call is refused as uncountable.
    set_session_budget(tether_home, "spent", calls=0)
    holder = sqlite3.connect(tether_home / "gate.db", isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("UPDATE sessions SET updated_at = updated_at")
        payload = json.dumps(load_payload("claude-code", "PreToolUse"))
        env = env_for(**SHORT)
        done = run_gate(gate_exe, _args("claude-code", None), env, payload)
        tick = run_gate(gate_exe, ["tick", "--session", "spent"], env)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "is held by another process" in _reason("claude-code", done.stdout)
    assert tick.returncode == 30
    assert b"is held by another process" in tick.stderr


def test_a_non_tool_event_on_a_held_database_is_let_through_with_a_warning(
    tether_home: Path, env_for: Env, gate_exe: str, held: None
) -> None:
    # Only tool calls are decided; a recorded event has nothing to refuse.
    payload = json.dumps(load_payload("claude-code", "PostToolUse"))
    done = run_gate(gate_exe, _args("claude-code", None), env_for(**SHORT), payload)
    assert done.returncode == 0
    assert "systemMessage" in json.loads(done.stdout)


@pytest.mark.parametrize(
    ("raw", "expected", "warns"),
    [
        (None, gate_db.BUSY_TIMEOUT_MS, False),
        ("", gate_db.BUSY_TIMEOUT_MS, False),
        ("250", 250, False),
        (" 0 ", 0, False),
        (str(gate_db.BUSY_TIMEOUT_MS), gate_db.BUSY_TIMEOUT_MS, False),
        ("600000", gate_db.BUSY_TIMEOUT_MS, True),
        ("-5", gate_db.BUSY_TIMEOUT_MS, True),
        ("soon", gate_db.BUSY_TIMEOUT_MS, True),
    ],
)
def test_the_busy_timeout_can_only_be_shortened(
    raw: str | None, expected: int, warns: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    environ = {} if raw is None else {gate_db.BUSY_TIMEOUT_ENV: raw}
    assert gate_db.busy_timeout_ms(environ) == expected
    assert (gate_db.BUSY_TIMEOUT_ENV in capsys.readouterr().err) is warns


def test_connections_use_the_shortened_busy_timeout(
    tether_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(gate_db.BUSY_TIMEOUT_ENV, "250")
    conn = gate_db.connect(str(tether_home))
    try:
        assert conn.execute("PRAGMA busy_timeout").fetchone() == (250,)
    finally:
        conn.close()
