"""A call refused while its run is being stopped names the stop, on every harness.

When the supervisor stops a run at a limit it read from the stream, it marks the
run stopping (with the stop's status) and, right after the SIGTERM, locks the
run's gate session by shrinking its call budget to the calls used. A call the
agent still makes is refused by that lock; named "call budget spent", it would
read in the run's record and report like a call-budget stop under a status of
``iteration_limit``. It names the stop instead, and ends nothing by itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.gate.gate_support import clean_env, load_payload, refused_line, run_gate

from tether.gate import runstop, serve
from tether.gate.counter import set_session_budget
from tether.run_status import RunStatus
from tether.runs.gate_setup import lock_session
from tether.runs.record import RunPaths
from tether.runs.watching import gate_refusal

RUN = "run-1"
SESSION = "run-session"
EVENTS = {
    "claude-code": "PreToolUse",
    "codex": "PreToolUse",
    "copilot": "preToolUse",
    "pi": "tool_call",
    "vibe": "pre_tool",
}


def _stopped_at_the_iteration_limit(tmp_path: Path, gate: str) -> tuple[dict[str, str], Path]:
    """A run whose supervisor stopped it at its iteration limit after 2 calls: marked
    stopping, then its session locked, as the stop does it."""
    home = tmp_path / "home"
    run_dir = home / "runs" / RUN
    run_dir.mkdir(parents=True)
    set_session_budget(home, SESSION, calls=60, iterations=3, run_id=RUN)
    env = clean_env(home, TETHER_SESSION_ID=SESSION, TETHER_RUN_ID=RUN)
    for _ in range(2):
        assert run_gate(gate, ["tick", "--tool", "Bash"], env).returncode == 0
    runstop.mark_stopping(str(run_dir), RunStatus.ITERATION_LIMIT.value)
    lock_session(str(home), SESSION)
    return env, run_dir


def _assert_names_the_stop(run_dir: Path, text: str) -> None:
    assert "call budget" not in text, text
    assert "iteration limit" in text, text
    refusal = runstop.read_refusal(str(run_dir))
    assert refusal is not None
    assert (refusal.reason, refusal.stop) == (runstop.RUN_STOPPING, "iteration_limit"), refusal
    # no call-budget stop is read into it: the run ends as the supervisor stopped it
    assert gate_refusal(RunPaths(run_dir)) is None
    line = refused_line(run_dir, "iteration_limit")
    assert "made while the run was being stopped: it had reached its iteration limit" in line
    assert "of a budget of" not in line


@pytest.mark.parametrize("harness", sorted(EVENTS))
def test_a_call_after_the_stops_lock_is_refused_for_the_stop(
    tmp_path: Path, gate_exe: str, harness: str
) -> None:
    env, run_dir = _stopped_at_the_iteration_limit(tmp_path, gate_exe)
    payload: dict[str, Any] = load_payload(harness, EVENTS[harness])
    args = ["hook", "--harness", harness, "--event", EVENTS[harness]]
    # answered as the run's socket server answers a sandboxed agent's call
    reply = serve.answer(args, json.dumps(payload).encode(), False, SESSION, env)
    out = str(reply["out"])
    assert out, reply
    _assert_names_the_stop(run_dir, out)


def test_the_hook_outside_a_sandbox_names_the_stop(tmp_path: Path, gate_exe: str) -> None:
    env, run_dir = _stopped_at_the_iteration_limit(tmp_path, gate_exe)
    payload = json.dumps(load_payload("claude-code", "PreToolUse"))
    done = run_gate(gate_exe, ["hook", "--harness", "claude-code"], env, payload)
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny", done
    _assert_names_the_stop(run_dir, answer["permissionDecisionReason"])


def test_a_tick_after_the_stops_lock_names_the_stop(tmp_path: Path, gate_exe: str) -> None:
    env, run_dir = _stopped_at_the_iteration_limit(tmp_path, gate_exe)
    done = run_gate(gate_exe, ["tick", "--tool", "Bash"], env)
    assert done.returncode == 30, done
    _assert_names_the_stop(run_dir, done.stderr.decode())


def test_a_damaged_payload_after_the_stops_lock_is_refused_for_the_stop(
    tmp_path: Path, gate_exe: str
) -> None:
    # no call to count or name: refused for the stop, in words that say so
    env, _ = _stopped_at_the_iteration_limit(tmp_path, gate_exe)
    done = run_gate(gate_exe, ["hook", "--harness", "claude-code"], env, b"{not json")
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny", done
    assert "reached its iteration limit and is being stopped" in answer["permissionDecisionReason"]
    assert "call budget" not in answer["permissionDecisionReason"]


def test_a_call_past_the_budget_before_any_stop_still_names_the_budget(
    tmp_path: Path, gate_exe: str
) -> None:
    # the gate's own budget refusal is the stop: the supervisor ends the run on it
    home = tmp_path / "home"
    run_dir = home / "runs" / RUN
    run_dir.mkdir(parents=True)
    set_session_budget(home, SESSION, calls=1, iterations=3, run_id=RUN)
    env = clean_env(home, TETHER_SESSION_ID=SESSION, TETHER_RUN_ID=RUN)
    assert run_gate(gate_exe, ["tick", "--tool", "Bash"], env).returncode == 0
    done = run_gate(gate_exe, ["tick", "--tool", "Bash"], env)
    assert done.returncode == 30 and "call budget" in done.stderr.decode(), done
    refusal = runstop.read_refusal(str(run_dir))
    assert refusal is not None and refusal.reason == runstop.CALL_BUDGET_SPENT
    assert gate_refusal(RunPaths(run_dir)) is RunStatus.TOOL_CALL_LIMIT
    assert "(call 2 of a budget of 1;" in refused_line(run_dir, "tool_call_limit")


def test_the_first_stop_mark_stays_with_its_cause(tmp_path: Path) -> None:
    assert runstop.stop_cause(str(tmp_path)) is None
    runstop.mark_stopping(str(tmp_path), "iteration_limit")
    runstop.mark_stopping(str(tmp_path))  # the supervisor's last-resort stop
    assert runstop.stop_cause(str(tmp_path)) == "iteration_limit"
