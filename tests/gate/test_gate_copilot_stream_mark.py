"""Copilot under ``tether run``: the gate lets a call through only once the supervisor read it.

Copilot prints each tool call on its stream before its ``preToolUse`` hook runs,
and its payload says nothing about the model step. The supervisor writes how
many calls it has read (``stream-calls`` in the run folder) while its limit rule
lets them pass, and marks the run stopping instead once the rule stops it; the
gate waits for one or the other (gate/stream_mark.py). So a call announced
after step N's last result is refused however late the supervisor's reading
comes.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

from tests.gate.gate_support import clean_env, load_payload, query, refused_line, run_gate

from tether.gate import runstop, serve, stream_mark
from tether.gate.counter import session_status, set_session_budget
from tether.runs.record import RunPaths
from tether.runs.watching import gate_refusal

RUN = "run-1"
SESSION = "run-session"
ARGS = ["hook", "--harness", "copilot", "--event", "preToolUse"]


def _setup(tmp_path: Path) -> tuple[dict[str, str], Path]:
    home = tmp_path / "home"
    run_dir = home / "runs" / RUN
    run_dir.mkdir(parents=True)
    set_session_budget(home, SESSION, calls=60, iterations=3, run_id=RUN)
    return clean_env(home, TETHER_SESSION_ID=SESSION, TETHER_RUN_ID=RUN), run_dir


def _payload(instant: int) -> bytes:
    payload: dict[str, Any] = load_payload("copilot", "preToolUse")
    payload["timestamp"] = instant  # Copilot's call: its own instant
    return json.dumps(payload).encode()


def _served(env: dict[str, str], raw: bytes) -> dict[str, object]:
    return serve.answer(ARGS, raw, False, SESSION, env)


def test_a_call_the_supervisor_has_not_read_is_refused_once_the_run_stops(
    tmp_path: Path,
) -> None:
    # Three calls read and counted (steps 1-3); the fourth reaches the gate while
    # the supervisor's reading is still behind it. Its stream rule then stops the
    # run at step 3's last result: that call is never read, and never allowed.
    env, run_dir = _setup(tmp_path)
    stream_mark.write(str(run_dir), 3)
    for k in range(3):
        assert _served(env, _payload(1796230000000 + k))["out"] == ""
    replies: list[dict[str, object]] = []
    fourth = threading.Thread(target=lambda: replies.append(_served(env, _payload(1796230009999))))
    fourth.start()
    runstop.mark_stopping(str(run_dir), "iteration_limit")
    fourth.join()
    reply = replies[0]
    assert reply.get("hold") is True, reply
    answer = json.loads(str(reply["out"]))
    assert answer["permissionDecision"] == "deny", reply
    assert "iteration limit and is being stopped" in answer["permissionDecisionReason"]
    # not counted: the call never got past the supervisor's reading
    assert session_status(Path(env["TETHER_HOME"]), SESSION).calls_used == 3
    # ... but recorded like every refusal of the run, and named by its report
    refusal = runstop.read_refusal(str(run_dir))
    assert refusal is not None
    assert (refusal.reason, refusal.stop) == (runstop.RUN_STOPPING, "iteration_limit")
    assert (refusal.tool, refusal.calls_used, refusal.call_budget) == ("bash", 3, 60)
    assert gate_refusal(RunPaths(run_dir)) is None  # the run's own stop decides its status
    line = refused_line(run_dir, "iteration_limit")
    assert "made while the run was being stopped: it had reached its iteration limit of 3" in line
    assert "refused by the gate, not executed" in line


def test_a_call_is_allowed_once_the_supervisor_has_read_it(tmp_path: Path, gate_exe: str) -> None:
    env, run_dir = _setup(tmp_path)
    gate = subprocess.Popen(
        [gate_exe, *ARGS], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert gate.stdin is not None
    gate.stdin.write(_payload(1796230000000))
    gate.stdin.close()
    stream_mark.write(str(run_dir), 1)
    assert gate.stdout is not None
    with gate.stdout:
        assert gate.stdout.read() == b""
    assert gate.wait(timeout=60) == 0
    home = Path(env["TETHER_HOME"])
    assert query(home, "SELECT decision, calls_used FROM events") == [("allow", 1)]
    # Copilot's second hook file delivering the same call waits for nothing more
    done = run_gate(gate_exe, ARGS, env, _payload(1796230000000))
    assert done.returncode == 0 and done.stdout == b"", done.stderr
    assert query(home, "SELECT decision, calls_used FROM events") == [("allow", 1)]


def test_a_call_never_read_is_refused_not_let_through(tmp_path: Path, gate_exe: str) -> None:
    # The supervisor reads nothing and never stops the run (stuck); the agent that
    # asked goes away. The gate refuses rather than let an unread call through.
    env, run_dir = _setup(tmp_path)
    pid_file, out = tmp_path / "gate.pid", tmp_path / "out"
    # (a job started with & reads /dev/null: the payload comes in on fd 3)
    script = 'exec 3<&0; "$0" "$@" <&3 > "$OUT" & echo $! > "$PIDFILE"; wait'
    parent = subprocess.Popen(
        ["sh", "-c", script, gate_exe, *ARGS],
        env={**env, "OUT": str(out), "PIDFILE": str(pid_file)},
        stdin=subprocess.PIPE,
    )
    assert parent.stdin is not None
    parent.stdin.write(_payload(1796230000000))
    parent.stdin.close()
    while not pid_file.exists() or not pid_file.read_text().strip():
        threading.Event().wait(0.01)
    gate_pid = int(pid_file.read_text())
    parent.kill()
    parent.wait()
    while _alive(gate_pid):
        threading.Event().wait(0.01)
    answer = json.loads(out.read_text())
    assert answer["permissionDecision"] == "deny", answer
    assert "had not read this call" in answer["permissionDecisionReason"]
    assert session_status(Path(env["TETHER_HOME"]), SESSION).calls_used == 0
    # recorded, and named for what happened; no limit was reached, so the supervisor
    # (once it reads on) ends the run for what its own limits say
    refusal = runstop.read_refusal(str(run_dir))
    assert refusal is not None and refusal.reason == runstop.SUPERVISOR_BEHIND, refusal
    assert gate_refusal(RunPaths(run_dir)) is None
    line = refused_line(run_dir, "iteration_limit")
    assert "supervisor had not read it from the agent's stream in time" in line


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie reparented to us is gone all but its entry
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_without_a_run_the_gate_waits_for_no_supervisor(tmp_path: Path, gate_exe: str) -> None:
    # an interactive Copilot session: nothing reads its stream, nothing to wait for
    home = tmp_path / "home"
    set_session_budget(home, SESSION, calls=60)
    env = clean_env(home, TETHER_SESSION_ID=SESSION)
    done = run_gate(gate_exe, ARGS, env, _payload(1796230000000))
    assert done.returncode == 0 and done.stdout == b"", done.stderr
    assert query(home, "SELECT decision, calls_used FROM events") == [("allow", 1)]


def test_copilot_delivering_a_call_to_a_claude_code_hook_waits_too(tmp_path: Path) -> None:
    # Copilot also runs a project's Claude Code hooks; the gate answers a call it
    # counted already with its first answer, so that delivery must wait as well.
    env, run_dir = _setup(tmp_path)
    stream_mark.write(str(run_dir), 0)  # the supervisor keeps the count from the start
    payload: dict[str, Any] = load_payload("claude-code", "PreToolUse")
    replies: list[dict[str, object]] = []
    args = ["hook", "--harness", "claude-code"]
    raw = json.dumps(payload).encode()
    call = threading.Thread(
        target=lambda: replies.append(serve.answer(args, raw, False, SESSION, env))
    )
    call.start()
    runstop.mark_stopping(str(run_dir))
    call.join()
    answer = json.loads(str(replies[0]["out"]))["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny", replies
    assert session_status(Path(env["TETHER_HOME"]), SESSION).calls_used == 0
