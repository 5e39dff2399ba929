"""What the event log keeps beyond the event name: real hook payloads in, rows out.

Since schema version 2 every event row carries the payload's ``cwd`` and
``transcript_path``; notifications their ``notification_type`` and ``message``;
tool calls and permission requests the tool's input as JSON cut to 2048
characters. The Claude Code sequence was recorded from an interactive session
(tests/gate/record_golden.py notifications): a permission dialog, its
``permission_prompt`` notification, the approved call, the stop and the
``idle_prompt`` notification.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.gate.gate_support import GOLDEN, load_payload, query, run_gate

from tether.gate import contracts, gate_db
from tether.gate.eventlog import read_events

Gate = Callable[..., Any]
SEQUENCE = GOLDEN / "claude-code" / "needs-permission.sequence.jsonl"
DETAIL = (
    "event, tool_name, tool_use_id, notification_type, message, tool_input, cwd, transcript_path"
)


def _sequence() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SEQUENCE.read_text("utf-8").splitlines()]


def _hook(harness: str, event: str | None = None) -> list[str]:
    return ["hook", "--harness", harness, *(["--event", event] if event else [])]


def _input(payload: dict[str, Any], field: str = "tool_input") -> str:
    return json.dumps(payload[field], ensure_ascii=False)


def test_a_recorded_claude_code_session_is_kept_with_its_details(
    tether_home: Path, env_for: Gate, gate_exe: str
) -> None:
    payloads = _sequence()
    for payload in payloads:
        done = run_gate(gate_exe, _hook("claude-code"), env_for(), json.dumps(payload))
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    rows = query(tether_home, f"SELECT {DETAIL} FROM events ORDER BY id")  # noqa: S608
    by_event = {(r[0], r[3]): r for r in rows}
    pre = next(p for p in payloads if p["hook_event_name"] == "PreToolUse")
    cwd, transcript = pre["cwd"], pre["transcript_path"]
    assert [(r[0], r[3]) for r in rows] == [
        (p["hook_event_name"], p.get("notification_type")) for p in payloads
    ]
    assert by_event[("PreToolUse", None)] == (
        "PreToolUse",
        "Bash",
        pre["tool_use_id"],
        None,
        None,
        _input(pre),
        cwd,
        transcript,
    )
    asked = next(p for p in payloads if p["hook_event_name"] == "PermissionRequest")
    assert by_event[("PermissionRequest", None)][1:] == (
        "Bash",
        None,  # Claude Code's PermissionRequest carries no tool_use_id
        None,
        None,
        _input(asked),
        cwd,
        transcript,
    )
    assert '"command": "touch notified.txt"' in _input(asked)
    assert by_event[("Notification", "permission_prompt")][3:] == (
        "permission_prompt",
        "Claude needs your permission",
        None,
        cwd,
        transcript,
    )
    assert by_event[("Notification", "idle_prompt")][3:] == (
        "idle_prompt",
        "Claude is waiting for your input",
        None,
        cwd,
        transcript,
    )
    # the call's result carries the input again: not kept twice
    assert by_event[("PostToolUse", None)][5] is None
    assert by_event[("Stop", None)][5:] == (None, cwd, transcript)


@pytest.mark.parametrize(
    ("harness", "event", "flag", "field"),
    [
        ("codex", "PreToolUse", None, "tool_input"),
        ("copilot", "preToolUse", "preToolUse", "toolArgs"),
        ("copilot", "permissionRequest", "permissionRequest", "toolInput"),
        ("pi", "tool_call", None, "tool_input"),
    ],
)
def test_each_harness_s_tool_input_is_kept(
    tether_home: Path,
    env_for: Gate,
    gate_exe: str,
    harness: str,
    event: str,
    flag: str | None,
    field: str,
) -> None:
    payload = load_payload(harness, event)
    done = run_gate(gate_exe, _hook(harness, flag), env_for(), json.dumps(payload))
    assert (done.returncode, done.stdout) == (0, b"")
    ((kept, cwd, transcript),) = query(
        tether_home, "SELECT tool_input, cwd, transcript_path FROM events"
    )
    assert kept == _input(payload, field)
    assert cwd == payload["cwd"]
    assert transcript == payload.get("transcript_path")


def test_copilot_notifications_keep_their_type(
    tether_home: Path, env_for: Gate, gate_exe: str
) -> None:
    # The camelCase payload of Copilot CLI's hooks reference (`notification` hook):
    # no recording, the CLI fires it only in an interactive session.
    base = load_payload("copilot", "permissionRequest")
    payload = {
        "sessionId": base["sessionId"],
        "timestamp": base["timestamp"],
        "cwd": base["cwd"],
        "hook_event_name": "Notification",
        "message": "Copilot needs your permission to run bash",
        "title": "Permission needed",
        "notification_type": "permission_prompt",
    }
    done = run_gate(gate_exe, _hook("copilot", "notification"), env_for(), json.dumps(payload))
    assert (done.returncode, done.stdout) == (0, b"")
    assert query(
        tether_home, "SELECT session_id, event, notification_type, message FROM events"
    ) == [(base["sessionId"], "notification", "permission_prompt", payload["message"])]


def test_a_huge_input_is_cut_and_the_call_still_counts(
    tether_home: Path, env_for: Gate, gate_exe: str
) -> None:
    payload = load_payload("claude-code", "PreToolUse")
    payload["tool_name"] = "Write"
    payload["tool_input"] = {"file_path": "/w/big.txt", "content": "é" * (4 * 1024 * 1024)}
    data = json.dumps(payload, ensure_ascii=False)
    done = run_gate(gate_exe, _hook("claude-code"), env_for(), data)
    assert (done.returncode, done.stdout) == (0, b"")
    ((kept, decision),) = query(tether_home, "SELECT tool_input, decision FROM events")
    assert decision == "allow"
    assert len(kept) == contracts.TOOL_INPUT_MAX and kept.endswith("…")
    assert kept.startswith('{"file_path": "/w/big.txt", "content": "ééé')


def test_odd_detail_fields_are_left_out_not_fatal(
    tether_home: Path, env_for: Gate, gate_exe: str
) -> None:
    payload = _sequence()[-1]  # the idle_prompt notification
    payload["notification_type"] = {"kind": "idle_prompt"}
    payload["cwd"] = 7
    payload["message"] = "x" * 5000
    done = run_gate(gate_exe, _hook("claude-code"), env_for(), json.dumps(payload))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    ((kind, message, cwd),) = query(
        tether_home, "SELECT notification_type, message, cwd FROM events"
    )
    assert (kind, cwd) == (None, None)
    assert len(message) == contracts.MESSAGE_MAX and message.endswith("…")


def _version_1_db(home: Path) -> None:
    """gate.db as the first schema left it, with one event recorded."""
    home.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(home / "gate.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    gate_db.m001_initial(conn)
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO events (at, session_id, context_key, id_source, harness, event, "
        "tool_name, tool_use_id, decision, calls_used) "
        "VALUES (1.0, 'old', 'old', 'payload', 'claude-code', 'PreToolUse', 'Bash', 'u0', "
        "'allow', 1)"
    )
    conn.execute(
        "INSERT INTO sessions (session_id, calls_used, call_budget, budget_source, "
        "created_at, updated_at) VALUES ('old', 1, 60, 'default', 1.0, 1.0)"
    )
    conn.close()


def test_an_existing_gate_db_is_migrated_by_many_first_calls_at_once(
    tether_home: Path, env_for: Gate, gate_exe: str
) -> None:
    _version_1_db(tether_home)
    payloads = []
    for n in range(8):
        payload = load_payload("claude-code", "PreToolUse")
        payload["tool_use_id"] = f"toolu_{n}"
        payloads.append(json.dumps(payload).encode())
    procs = [
        subprocess.Popen(
            [gate_exe, *_hook("claude-code")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env_for(),
        )
        for _ in payloads
    ]
    for proc, data in zip(procs, payloads, strict=True):
        assert proc.communicate(data, timeout=60) == (b"", b"")
    assert query(tether_home, "PRAGMA user_version") == [(gate_db.SCHEMA_VERSION,)]
    rows = query(tether_home, "SELECT session_id, tool_use_id, tool_input FROM events ORDER BY id")
    assert rows[0] == ("old", "u0", None)  # the old row, untouched
    assert sorted(r[1] for r in rows[1:]) == [f"toolu_{n}" for n in range(8)]
    assert {r[2] for r in rows[1:]} == {'{"command": "echo step 1", "description": "mock step 1"}'}
    assert query(tether_home, "SELECT calls_used FROM sessions WHERE session_id = 'old'") == [(1,)]
    events = read_events(tether_home, session_id="old")
    assert [(e.tool_use_id, e.notification_type, e.cwd) for e in events] == [("u0", None, None)]
