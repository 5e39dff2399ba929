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
import time
from pathlib import Path
from typing import Any

from tests.gate.gate_support import clean_env, load_payload, query, refused_line, run_gate

from tether.core.project import ENV_ROOM_DIR
from tether.gate import counter, runstop, serve, stream_mark
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
    stream_mark.write(str(run_dir), 0)  # as the supervisor does when the run starts
    return clean_env(home, TETHER_SESSION_ID=SESSION, TETHER_RUN_ID=RUN), run_dir


def _payload(instant: int, command: str | None = None) -> bytes:
    payload: dict[str, Any] = load_payload("copilot", "preToolUse")
    payload["timestamp"] = instant  # Copilot's call: its own instant
    if command is not None:
        payload["toolArgs"]["command"] = command
    return json.dumps(payload).encode()


def _claude_shape(instant: int, command: str = "echo step 1") -> bytes:
    """The same call as Copilot hands it to a project's Claude Code hook file: the
    same instant (as ISO text), tool and input, in Claude Code's shape."""
    seconds, millis = divmod(instant, 1000)
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "31732482-1020-4b82-ae2d-34831084b29e",
        "timestamp": iso,
        "cwd": "/tmp/work",
        "tool_name": "Bash",
        "tool_input": {"description": "mock step 1", "command": command},
    }
    return json.dumps(payload).encode()


def _denied(out: str | bytes) -> str:
    """The reason of a Copilot or Claude Code shaped refusal (fails on an allow)."""
    answer = json.loads(out)
    answer = answer.get("hookSpecificOutput", answer)
    assert answer["permissionDecision"] == "deny", answer
    return str(answer["permissionDecisionReason"])


def _in_a_room(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    room = tmp_path / "room"
    room.mkdir()
    return {**env, ENV_ROOM_DIR: str(room), "TETHER_ROOM_ID": "room-1"}


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
    # The call is on the stream all the same, and Copilot hands it to a project's
    # Claude Code hook file too: that delivery gets the same answer at once, and
    # the call is among the calls made once.
    home = Path(env["TETHER_HOME"])
    again = run_gate(
        gate_exe, ["hook", "--harness", "claude-code"], env, _claude_shape(1796230000000)
    )
    assert "had not read this call" in _denied(again.stdout)
    assert query(home, "SELECT decision FROM events") == [(counter.UNREAD,)]
    # The supervisor reads on: it has read that call, and the next one is not read
    # yet when the run stops. Counting the unread call's refusal as no call, the
    # gate would take the supervisor's one read for the next call and let it through.
    stream_mark.write(str(run_dir), 1)
    runstop.mark_stopping(str(run_dir), "iteration_limit")
    reply = _served(env, _payload(1796230001000, "echo step 2"))
    assert "iteration limit and is being stopped" in _denied(str(reply["out"]))
    assert session_status(home, SESSION).calls_used == 0


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
    env, run_dir = _setup(tmp_path)  # the supervisor keeps the count from the start
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
    # held like Copilot's own hook's refusal: Copilot would hand it to the model at once
    assert replies[0].get("hold") is True, replies
    assert session_status(Path(env["TETHER_HOME"]), SESSION).calls_used == 0


def test_a_call_a_room_refused_is_among_the_calls_the_next_one_waits_for(
    tmp_path: Path, gate_exe: str
) -> None:
    # A reading room's run: step 1's call breaks the room's rule and is refused
    # uncounted, but Copilot printed it and the supervisor read it. Steps 2 and 3
    # are read and allowed; the run stops at step 3's last result, so step 4's call
    # is never read. Counting the refused call as no call, the gate would take the
    # supervisor's third read for step 4's call and let it through.
    env, run_dir = _setup(tmp_path)
    env = _in_a_room(env, tmp_path)
    done = run_gate(gate_exe, ARGS, env, _payload(1796230000000, "cat notes.md"))
    assert done.returncode == 0, done.stderr
    assert "Inside room room-1" in _denied(done.stdout)
    for step in (2, 3):
        stream_mark.write(str(run_dir), step)
        reply = _served(env, _payload(1796230000000 + step, f"tether wiki read p{step}"))
        assert reply["out"] == "", reply
    runstop.mark_stopping(str(run_dir), "iteration_limit")
    reply = _served(env, _payload(1796230000004, "tether wiki read p4"))
    assert reply.get("hold") is True, reply
    assert "iteration limit and is being stopped" in _denied(str(reply["out"]))
    home = Path(env["TETHER_HOME"])
    assert session_status(home, SESSION).calls_used == 2  # the room's refusal is no count


def test_a_call_both_hook_files_deliver_is_one_call_for_the_wait(
    tmp_path: Path, gate_exe: str
) -> None:
    # Copilot hands step 1's call to its own hook file and to a project's Claude Code
    # one; the room's rule refuses it in both. It is one call on the stream: with
    # two calls read, step 2's call is read, and is allowed even once the run stops
    # (counted twice, it would wait for a third read and be refused).
    env, run_dir = _setup(tmp_path)
    env = _in_a_room(env, tmp_path)
    instant = 1796230000000
    first = run_gate(gate_exe, ARGS, env, _payload(instant, "cat notes.md"))
    assert "Inside room room-1" in _denied(first.stdout)
    claude_args = ["hook", "--harness", "claude-code"]
    second = run_gate(gate_exe, claude_args, env, _claude_shape(instant, "cat notes.md"))
    assert "Inside room room-1" in _denied(second.stdout)
    home = Path(env["TETHER_HOME"])
    assert query(home, "SELECT decision FROM events") == [(counter.ROOM_RULE,)]
    stream_mark.write(str(run_dir), 2)
    runstop.mark_stopping(str(run_dir), "iteration_limit")
    for argv, raw in (
        (ARGS, _payload(instant + 1, "tether wiki read p2")),
        (claude_args, _claude_shape(instant + 1, "tether wiki read p2")),
    ):
        reply = serve.answer(argv, raw, False, SESSION, env)
        assert reply["out"] == "", reply
    assert session_status(home, SESSION).calls_used == 1
