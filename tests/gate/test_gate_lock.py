"""The call that spends a session's budget locks it: not one call later.

``locked`` is what the gate answers from when it cannot count (a payload it
cannot read fails closed only for a locked session) and what ``tether session
new`` refuses to reset from a unit boundary. So it must be set by the call that
uses the last of the budget, the moment nothing more may be allowed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.gate.gate_support import run_gate

from tether.gate import gate_db
from tether.gate.counter import Seen, count_call, session_status, set_session_budget

Env = Callable[..., dict[str, str]]


@pytest.mark.parametrize("budget", [1, 3])
def test_the_call_that_uses_the_last_of_the_budget_locks_the_session(
    tether_home: Path, budget: int
) -> None:
    set_session_budget(tether_home, "s-1", calls=budget)
    conn = gate_db.connect(str(tether_home))
    try:
        for n in range(1, budget + 2):
            seen = Seen("s-1", "payload", "claude-code", "PreToolUse", "Bash", f"toolu-{n}")
            outcome = count_call(conn, seen)
            status = session_status(tether_home, "s-1")
            assert (outcome.allowed, status.calls_used) == (n <= budget, n)
            assert status.locked is (n >= budget), f"after call {n} of a budget of {budget}"
    finally:
        conn.close()


def test_a_session_locked_by_its_last_allowed_call_refuses_what_it_cannot_read(
    tether_home: Path, env_for: Env, gate_exe: str
) -> None:
    """Right after the last allowed call, an unreadable payload for the session is
    refused (fails closed), where an unlocked session's would fail open."""
    set_session_budget(tether_home, "s-2", calls=2)
    env = env_for(TETHER_SESSION_ID="s-2")
    assert run_gate(gate_exe, ["tick", "--session", "s-2"], env).returncode == 0
    unlocked = run_gate(gate_exe, ["hook", "--harness", "claude-code"], env, b"{oops")
    assert "permissionDecision" not in unlocked.stdout.decode()  # fails open, warned
    assert run_gate(gate_exe, ["tick", "--session", "s-2"], env).returncode == 0
    locked = run_gate(gate_exe, ["hook", "--harness", "claude-code"], env, b"{oops")
    answer = json.loads(locked.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "2 of 2 calls used" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert session_status(tether_home, "s-2").calls_used == 2
