"""Malformed, oversized and incomplete payloads; a broken database.

The documented policy (docs/reference/tether-gate.md): a spent budget fails
closed (whenever the gate can tell the session is locked, the call is refused),
a broken tether fails open (the call goes through uncounted, with a warning).
Either way the counter is untouched.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.gate.gate_support import load_payload, query, run_gate

from tether.gate.counter import session_status, set_session_budget
from tether.gate.payload import MAX_PAYLOAD_BYTES

Env = Callable[..., dict[str, str]]
SESSION = "malformed-session"


def _events(home: Path) -> int:
    if not (home / "gate.db").exists():
        return 0
    return int(query(home, "SELECT COUNT(*) FROM events")[0][0])


def _huge_payload() -> bytes:
    """A 50 MB PreToolUse (a Write of a giant file) that names its session up front."""
    head = json.dumps({"session_id": SESSION, "hook_event_name": "PreToolUse"})[:-1]
    body = ', "tool_name": "Write", "tool_input": {"content": "' + "x" * (50 * 1024 * 1024)
    return (head + body + '"}}').encode()


BAD = [
    pytest.param(b"this is not json", "not JSON", id="not-json"),
    pytest.param(b"", "empty input", id="empty"),
    pytest.param(b'{"session_id": "malformed-session", "hook_event_na', "not JSON", id="cut-off"),
    pytest.param(b"[1, 2, 3]", "not an object", id="array"),
    pytest.param(b'{"session_id": "malformed-session"}', "no hook_event_name", id="no-event"),
    pytest.param(
        b'{"session_id": "malformed-session", "hook_event_name": "PreToolUse"}',
        "has no tool name",
        id="no-tool-name",
    ),
    pytest.param(
        b'{"session_id": 7.5e400, "hook_event_name": "PreToolUse", "tool_name": "Bash"}',
        None,
        id="odd-number",
    ),
    pytest.param(
        b'{"session_id": ["x"], "hook_event_name": "PreToolUse", "tool_name": "Bash"}',
        "not a string",
        id="session-not-string",
    ),
]


@pytest.mark.parametrize(("raw", "says"), BAD)
def test_a_bad_payload_fails_open_with_a_warning_and_is_not_counted(
    tether_home: Path, env_for: Env, gate_exe: str, raw: bytes, says: str | None
) -> None:
    set_session_budget(tether_home, SESSION, calls=5)
    before = _events(tether_home)
    done = run_gate(gate_exe, ["hook", "--harness", "claude-code"], env_for(), raw)
    assert done.returncode == 0
    stderr = done.stderr.decode()
    if says is None:  # a payload that is odd but readable is simply counted
        return
    assert "cannot read the claude-code hook payload" in stderr
    assert says in stderr
    assert "not counted" in stderr
    answer = json.loads(done.stdout)
    assert set(answer) == {"systemMessage"}  # allowed, with a warning the user sees
    assert session_status(tether_home, SESSION).calls_used == 0
    assert _events(tether_home) == before


@pytest.mark.parametrize(("raw", "says"), [p for p in BAD if p.id != "odd-number"])
def test_a_bad_payload_for_a_locked_session_fails_closed(
    tether_home: Path, env_for: Env, gate_exe: str, raw: bytes, says: str
) -> None:
    set_session_budget(tether_home, SESSION, calls=0)
    # Where the payload does not even name the session, the run's variable does.
    env = env_for(TETHER_SESSION_ID=SESSION)
    done = run_gate(gate_exe, ["hook", "--harness", "claude-code"], env, raw)
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "0 of 0 calls used" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert says in done.stderr.decode()
    assert session_status(tether_home, SESSION).calls_used == 0
    assert _events(tether_home) == 0


def test_a_50_mb_payload_is_drained_refused_when_locked_and_never_counted(
    tether_home: Path, env_for: Env, gate_exe: str
) -> None:
    raw = _huge_payload()
    assert len(raw) > MAX_PAYLOAD_BYTES
    set_session_budget(tether_home, SESSION, calls=3)
    done = run_gate(gate_exe, ["hook", "--harness", "codex"], env_for(), raw)
    assert done.returncode == 0
    assert f"larger than {MAX_PAYLOAD_BYTES} bytes" in done.stderr.decode()
    assert "systemMessage" in json.loads(done.stdout)
    assert session_status(tether_home, SESSION).calls_used == 0
    # Locked: the session id is read from the head of the payload, and the call refused.
    set_session_budget(tether_home, SESSION, calls=0)
    done = run_gate(gate_exe, ["hook", "--harness", "codex"], env_for(), raw)
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert session_status(tether_home, SESSION).calls_used == 0
    assert _events(tether_home) == 0


@pytest.mark.parametrize(
    ("harness", "warning_key"), [("copilot", None), ("pi", "warning"), ("codex", "systemMessage")]
)
def test_every_harness_gets_a_readable_answer_to_a_bad_payload(
    tether_home: Path, env_for: Env, gate_exe: str, harness: str, warning_key: str | None
) -> None:
    done = run_gate(gate_exe, ["hook", "--harness", harness], env_for(), b"{oops")
    assert done.returncode == 0
    if warning_key is None:
        assert done.stdout == b""  # Copilot has no warning field: stderr only
    else:
        assert warning_key in json.loads(done.stdout)
    assert b"not counted" in done.stderr


def test_a_broken_database_fails_open_with_a_warning(
    tmp_path: Path, env_for: Env, gate_exe: str
) -> None:
    home = tmp_path / "broken-home"
    home.mkdir()
    (home / "gate.db").write_bytes(b"this is no sqlite database, just text " * 100)
    env = env_for(TETHER_HOME=str(home))
    payload = json.dumps(load_payload("claude-code", "PreToolUse"))
    done = run_gate(gate_exe, ["hook", "--harness", "claude-code"], env, payload)
    assert done.returncode == 0
    assert "could not count this call" in done.stderr.decode()
    assert "systemMessage" in json.loads(done.stdout)
    # Plain mode: allowed (exit 0), with the same warning.
    tick = run_gate(gate_exe, ["tick", "--session", "x"], env)
    assert tick.returncode == 0
    assert b"could not count this call" in tick.stderr
    # Status says what is wrong and fails.
    status = run_gate(gate_exe, ["status", "--session", "x"], env)
    assert status.returncode == 1
    assert b"gate.db" in status.stderr


def test_a_home_that_cannot_be_created_fails_open(
    tmp_path: Path, env_for: Env, gate_exe: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    env = env_for(TETHER_HOME=str(blocker / "home"))
    done = run_gate(gate_exe, ["tick", "--session", "x"], env)
    assert done.returncode == 0
    assert b"could not count this call" in done.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["hook"], "--harness is required"),
        (["hook", "--harness", "vscode"], "unknown harness 'vscode'"),
        (["tick", "--budget", "3"], "unknown argument '--budget'"),
        (["tick", "--session"], "--session needs a value"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        ([], "usage: tether-gate"),
    ],
)
def test_usage_errors_exit_2_with_the_usage(
    env_for: Env, gate_exe: str, args: list[str], says: str
) -> None:
    done = run_gate(gate_exe, args, env_for())
    assert done.returncode == 2
    assert says in (done.stderr + done.stdout).decode()


def test_a_bad_budget_setting_warns_and_falls_back(
    tether_home: Path, env_for: Env, gate_exe: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "tether.toml").write_text("gate_budget = 4\n")
    done = run_gate(
        gate_exe, ["tick", "--session", "b"], env_for(TETHER_GATE_BUDGET="many"), cwd=project
    )
    assert done.returncode == 0
    assert b"TETHER_GATE_BUDGET must be a whole number" in done.stderr
    status = session_status(tether_home, "b")
    assert (status.call_budget, status.budget_source) == (
        4,
        f"config:{project / 'tether.toml'}",
    )


def test_a_bad_budget_setting_in_the_hook_warns_and_still_decides(
    tether_home: Path, env_for: Env, gate_exe: str
) -> None:
    # The hook runs on every tool call: a bad setting must not fail every call.
    payload = load_payload("claude-code", "PreToolUse")
    env = env_for(TETHER_GATE_BUDGET="many")
    done = run_gate(gate_exe, ["hook", "--harness", "claude-code"], env, json.dumps(payload))
    assert done.returncode == 0
    assert done.stdout == b""  # allowed: no answer
    assert b"TETHER_GATE_BUDGET must be a whole number" in done.stderr
    status = session_status(tether_home, payload["session_id"])
    assert (status.calls_used, status.call_budget, status.budget_source) == (
        1,
        60,
        "default",
    )


def test_an_unknown_harness_in_hook_mode_exits_2_and_counts_nothing(
    tether_home: Path, env_for: Env, gate_exe: str
) -> None:
    # Claude Code and Codex read exit 2 as "block": a typo fails closed, visibly.
    payload = json.dumps(load_payload("claude-code", "PreToolUse"))
    done = run_gate(gate_exe, ["hook", "--harness", "claude"], env_for(), payload)
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"unknown harness 'claude'" in done.stderr
    assert not (tether_home / "gate.db").exists()
