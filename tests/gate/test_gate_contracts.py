"""Real hook payloads in, each harness's documented answer out (golden files).

The payloads under golden/<harness>/ were recorded from Claude Code 2.1.332,
Codex 0.171.0, Copilot CLI 1.0.102 and Pi 0.73.1 (tests/gate/record_golden.py),
and from Vibe 2.26.1 by a hook in its hooks.toml that saved its stdin.
Each goes through the installed ``tether-gate`` console script. Answers are
compared with golden/<harness>/<event>.<state>.json. A missing golden fails its
test; ``.venv/bin/python -m pytest tests/gate/test_gate_contracts.py --update-goldens``
rewrites them (refused under CI=true).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.gate.gate_support import GOLDEN, load_payload, query, run_gate

from tether.gate import hook
from tether.gate.counter import session_status, set_session_budget

REGENERATE = ".venv/bin/python -m pytest tests/gate/test_gate_contracts.py --update-goldens"

# (harness, event, the --event flag the installed config passes, if any)
TOOL_EVENTS = [
    ("claude-code", "PreToolUse", None),
    ("codex", "PreToolUse", None),
    ("copilot", "preToolUse", "preToolUse"),
    ("pi", "tool_call", None),
    ("vibe", "pre_tool", None),
]
RECORDED_ONLY = [
    ("claude-code", "PostToolUse", None),
    ("claude-code", "UserPromptSubmit", None),
    ("claude-code", "Stop", None),
    ("claude-code", "SessionStart", None),
    ("codex", "PostToolUse", None),
    ("codex", "Stop", None),
    ("copilot", "postToolUse", "postToolUse"),
    ("copilot", "permissionRequest", "permissionRequest"),
    ("copilot", "agentStop", "agentStop"),
    ("pi", "turn_end", None),
    ("pi", "session_start", None),
    ("vibe", "post_agent", None),
]


def _session_of(payload: dict[str, Any]) -> str:
    return str(payload.get("session_id") or payload.get("sessionId"))


def _args(harness: str, flag: str | None) -> list[str]:
    return ["hook", "--harness", harness, *(["--event", flag] if flag else [])]


def _fill(session: str, calls: int) -> None:
    """Count ``calls`` plain calls for ``session`` in-process (cheap, same code)."""
    for _ in range(calls):
        assert hook.main(["tick", "--session", session]) in (0, 30)


Gate = Callable[..., Any]
CheckGolden = Callable[[Path, dict[str, Any]], None]


@pytest.fixture
def check_golden(update_goldens: bool) -> CheckGolden:
    """Compare an answer with its golden file, rewritten first under ``--update-goldens``
    (which tests/conftest.py refuses under CI=true).

    A missing golden is a failure: goldens never write themselves."""
    update = update_goldens

    def check(name: Path, answer: dict[str, Any]) -> None:
        if update:
            name.write_text(json.dumps(answer, indent=2, ensure_ascii=False) + "\n")
        assert name.is_file(), f"golden {name} is missing; write it with: {REGENERATE}"
        assert answer == json.loads(name.read_text())

    return check


@pytest.mark.parametrize(("harness", "event", "flag"), TOOL_EVENTS)
def test_an_allowed_call_gets_no_answer_and_is_counted(
    tether_home: Path, env_for: Gate, gate_exe: str, harness: str, event: str, flag: str | None
) -> None:
    payload = load_payload(harness, event)
    done = run_gate(gate_exe, _args(harness, flag), env_for(), json.dumps(payload))
    assert done.returncode == 0
    assert done.stdout == b""  # no decision: the harness's own permissions still apply
    status = session_status(tether_home, _session_of(payload))
    assert (status.calls_used, status.locked) == (1, False)
    assert query(tether_home, "SELECT event, tool_name, decision, id_source FROM events") == [
        (event, payload.get("tool_name") or payload.get("toolName"), "allow", "payload")
    ]


@pytest.mark.parametrize(("harness", "event", "flag"), TOOL_EVENTS)
def test_a_call_over_budget_gets_the_documented_deny(
    tether_home: Path,
    env_for: Gate,
    gate_exe: str,
    monkeypatch: pytest.MonkeyPatch,
    check_golden: CheckGolden,
    harness: str,
    event: str,
    flag: str | None,
) -> None:
    payload = load_payload(harness, event)
    session = _session_of(payload)
    set_session_budget(tether_home, session, calls=2)
    monkeypatch.setattr("sys.stderr", io.StringIO())
    _fill(session, 2)
    done = run_gate(gate_exe, _args(harness, flag), env_for(), json.dumps(payload))
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    check_golden(GOLDEN / harness / f"{event}.deny.json", answer)
    text = json.dumps(answer)
    assert f"2 of 2 calls used in session {session}" in text
    assert "tether session new" in text
    assert b"call refused" in done.stderr
    assert session_status(tether_home, session).calls_used == 3


def test_claude_code_deny_shape_is_pinned(
    tether_home: Path, env_for: Gate, gate_exe: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = load_payload("claude-code", "PreToolUse")
    set_session_budget(tether_home, payload["session_id"], calls=0)
    done = run_gate(gate_exe, _args("claude-code", None), env_for(), json.dumps(payload))
    answer = json.loads(done.stdout)
    assert set(answer) == {"hookSpecificOutput"}
    specific = answer["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"].startswith("tether: call refused.")


def test_a_repeated_delivery_of_one_tool_call_is_counted_once(
    tether_home: Path, env_for: Gate, gate_exe: str
) -> None:
    payload = json.dumps(load_payload("claude-code", "PreToolUse"))
    for _ in range(3):
        assert run_gate(gate_exe, _args("claude-code", None), env_for(), payload).stdout == b""
    session = load_payload("claude-code", "PreToolUse")["session_id"]
    assert session_status(tether_home, session).calls_used == 1


def test_post_tool_batch_counts_iterations_and_stops_at_the_budget(
    tether_home: Path, env_for: Gate, gate_exe: str, check_golden: CheckGolden
) -> None:
    payload = load_payload("claude-code", "PostToolBatch")
    session = payload["session_id"]
    set_session_budget(tether_home, session, iterations=2)
    first = run_gate(gate_exe, _args("claude-code", None), env_for(), json.dumps(payload))
    assert (first.returncode, first.stdout) == (0, b"")
    payload["tool_calls"][0]["tool_use_id"] = "toolu_second_batch"
    second = run_gate(gate_exe, _args("claude-code", None), env_for(), json.dumps(payload))
    answer = json.loads(second.stdout)
    check_golden(GOLDEN / "claude-code" / "PostToolBatch.stop.json", answer)
    assert answer["continue"] is False
    assert answer["stopReason"].startswith("tether: iteration limit 2 reached")
    assert session_status(tether_home, session).batches == 2
    # The same batch delivered again is not a new iteration.
    again = run_gate(gate_exe, _args("claude-code", None), env_for(), json.dumps(payload))
    assert json.loads(again.stdout)["continue"] is False
    assert session_status(tether_home, session).batches == 2


def test_post_tool_batch_without_an_iteration_budget_never_stops(
    tether_home: Path, env_for: Gate, gate_exe: str
) -> None:
    payload = load_payload("claude-code", "PostToolBatch")
    for n in range(3):
        payload["tool_calls"][0]["tool_use_id"] = f"toolu_{n}"
        done = run_gate(gate_exe, _args("claude-code", None), env_for(), json.dumps(payload))
        assert done.stdout == b""
    assert session_status(tether_home, payload["session_id"]).batches == 3


def test_pi_stops_before_the_model_request_past_its_iteration_budget(
    tether_home: Path, env_for: Gate, gate_exe: str, check_golden: CheckGolden
) -> None:
    payload = load_payload("pi", "model_request")
    session = payload["session_id"]
    set_session_budget(tether_home, session, iterations=2)
    answers = [
        run_gate(gate_exe, _args("pi", None), env_for(), json.dumps(payload)).stdout
        for _ in range(3)
    ]
    assert answers[:2] == [b"", b""]  # model calls 1 and 2 may start
    stop = json.loads(answers[2])  # call 3 would begin iteration 3
    check_golden(GOLDEN / "pi" / "model_request.stop.json", stop)
    assert stop["stop"] is True
    assert session_status(tether_home, session).batches == 2


@pytest.mark.parametrize(("harness", "event", "flag"), RECORDED_ONLY)
def test_other_events_are_recorded_with_their_time_and_answered_with_nothing(
    tether_home: Path, env_for: Gate, gate_exe: str, harness: str, event: str, flag: str | None
) -> None:
    payload = load_payload(harness, event)
    session = _session_of(payload)
    set_session_budget(tether_home, session, calls=0)  # even a locked session
    done = run_gate(gate_exe, _args(harness, flag), env_for(), json.dumps(payload))
    assert (done.returncode, done.stdout) == (0, b"")
    rows = query(tether_home, "SELECT session_id, harness, event, decision, at FROM events")
    assert [r[:4] for r in rows] == [(session, harness, event, "record")]
    assert rows[0][4] > 0
    assert session_status(tether_home, session).calls_used == 0


def test_under_tether_run_the_harness_id_counts_under_the_run_session(
    tether_home: Path, env_for: Gate, gate_exe: str
) -> None:
    # Codex cannot take a session id up front: its first call binds its own id
    # to the run's id, so the budget the supervisor set applies.
    set_session_budget(tether_home, "run-session", calls=1, run_id="run-1")
    env = env_for(TETHER_SESSION_ID="run-session", TETHER_RUN_ID="run-1")
    payload = load_payload("codex", "PreToolUse")
    first = run_gate(gate_exe, _args("codex", None), env, json.dumps(payload))
    payload["tool_use_id"] = "call_two"
    second = run_gate(gate_exe, _args("codex", None), env, json.dumps(payload))
    assert first.stdout == b""
    assert (
        "run-session" in json.loads(second.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    )
    assert session_status(tether_home, "run-session").calls_used == 2


def test_the_event_log_reads_back_in_order(tether_home: Path, env_for: Gate, gate_exe: str) -> None:
    from tether.gate.eventlog import read_events

    for event in ("SessionStart", "PreToolUse", "PostToolUse", "PostToolBatch", "Stop"):
        payload = load_payload("claude-code", event)
        run_gate(gate_exe, _args("claude-code", None), env_for(), json.dumps(payload))
    session = load_payload("claude-code", "Stop")["session_id"]
    events = read_events(tether_home, session_id=session)
    assert [e.event for e in events] == [
        "SessionStart",
        "PreToolUse",
        "PostToolUse",
        "PostToolBatch",
        "Stop",
    ]
    assert [e.decision for e in events] == ["record", "allow", "record", "continue", "record"]
    assert [e.at for e in events] == sorted(e.at for e in events)
    newer = read_events(tether_home, after_id=events[2].id)
    assert [e.event for e in newer] == ["PostToolBatch", "Stop"]
    assert read_events(tether_home, limit=1)[0].event == "SessionStart"
