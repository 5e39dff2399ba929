"""Codex under ``tether run --iterations N``: the gate refuses a call of model step N+1.

No Codex hook can end Codex between model calls, and the supervisor's reading
of its rollout can fall behind on a loaded machine; so the gate itself reads
the rollout the hook payload names (``transcript_path``) and refuses any call
that belongs to a response past the run's iteration limit. The rollouts here
are a real Codex rollout (tests/transcripts/codex/five-steps.session.jsonl: step
1 one call, step 2 two, steps 3 and 4 one each) cut where a hook could see it:
Codex records a call's item before it starts the call, its response's
``token_usage_record`` maybe only after.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from tests.gate.gate_support import clean_env, load_payload, query, run_gate

from tether.gate import runstop, serve, stream_mark
from tether.gate.codex_rollout import call_step, count_records, locate
from tether.gate.counter import session_status, set_session_budget
from tether.run_status import RunStatus
from tether.runs.record import RunPaths
from tether.runs.watching import gate_refusal

ROLLOUT = Path(__file__).resolve().parents[1] / "transcripts" / "codex" / "five-steps.session.jsonl"
LINES = ROLLOUT.read_bytes().splitlines(keepends=True)
CALLS = {
    1: "call_mock_s1_c0_3e4760c9",
    "2a": "call_mock_s2_c0_0c0b1a02",
    "2b": "call_mock_s2_c1_022604e8",
    3: "call_mock_s3_c0_509e46da",
    4: "call_mock_s4_c0_b3828d95",
}
RUN = "run-1"
SESSION = "run-session"


def _upto(call_id: str, *, recorded: bool) -> bytes:
    """The rollout up to the call's item, and its response's record when ``recorded``."""
    at = next(i for i, line in enumerate(LINES) if f'"call_id":"{call_id}"'.encode() in line)
    if recorded:
        at = next(i for i in range(at, len(LINES)) if b'"type":"token_usage_record"' in LINES[i])
    return b"".join(LINES[: at + 1])


@pytest.mark.parametrize("recorded", [False, True])
def test_a_call_belongs_to_the_response_whose_item_holds_it(recorded: bool) -> None:
    for step, call_id in [(1, CALLS[1]), (2, CALLS["2a"]), (2, CALLS["2b"]), (4, CALLS[4])]:
        found = locate(_upto(call_id, recorded=recorded), call_id)
        assert found.step == step
        assert found.completed == (step if recorded else step - 1)
        assert found.past(step - 1) and not found.past(step)


def test_a_call_not_written_yet_is_later_than_every_record() -> None:
    text = _upto(CALLS[3], recorded=False)
    without = text[: text.rindex(b"\n", 0, len(text) - 1) + 1]  # its item not written yet
    found = locate(without, CALLS[3])
    assert (found.step, found.completed, found.earliest) == (None, 2, 3)
    assert found.past(2) and not found.past(3)


def test_outputs_and_quoted_markers_are_not_counted() -> None:
    # a tool output quoting a record (a rollout read by a shell call) is escaped JSON
    quoted = json.dumps({"type": "token_usage_record", "call_id": CALLS[4]}).encode()
    line = json.dumps(
        {
            "timestamp": "t",
            "ordinal": 99,
            "type": "response_item",
            "payload": {
                "type": "function_call_output",
                "call_id": CALLS[4],
                "output": quoted.decode(),
            },
        },
        separators=(",", ":"),
    ).encode()
    text = _upto(CALLS[3], recorded=True) + line + b"\n"
    assert count_records(text) == 3
    assert locate(text, CALLS[4]).step is None


def _setup(tmp_path: Path, rollout: bytes) -> tuple[dict[str, str], Path, Path]:
    home = tmp_path / "home"
    run_dir = home / "runs" / RUN
    run_dir.mkdir(parents=True)
    set_session_budget(home, SESSION, calls=60, iterations=3, run_id=RUN)
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(rollout)
    env = clean_env(home, TETHER_SESSION_ID=SESSION, TETHER_RUN_ID=RUN)
    return env, path, run_dir


def _payload(path: Path, call_id: str) -> str:
    payload: dict[str, Any] = load_payload("codex", "PreToolUse")
    payload["transcript_path"] = str(path)
    payload["tool_use_id"] = call_id
    return json.dumps(payload)


def test_a_call_of_step_n_is_allowed_before_its_response_is_recorded(
    tmp_path: Path, gate_exe: str
) -> None:
    # Codex may start a call while its response still streams: step 3's call
    # with only two records in the rollout is step 3's, within a limit of 3.
    env, path, run_dir = _setup(tmp_path, _upto(CALLS[3], recorded=False))
    done = run_gate(gate_exe, ["hook", "--harness", "codex"], env, _payload(path, CALLS[3]))
    assert done.returncode == 0 and done.stdout == b"", done.stderr
    assert not (run_dir / runstop.REFUSED_FILE).exists()
    assert session_status(Path(env["TETHER_HOME"]), SESSION).locked is False


def test_a_call_of_step_n_plus_1_is_refused_and_names_the_iteration_limit(
    tmp_path: Path, gate_exe: str
) -> None:
    # The rollout holds four records: the supervisor's reading of it fell behind,
    # and the call of step 4 reaches the gate first.
    env, path, run_dir = _setup(tmp_path, _upto(CALLS[4], recorded=True))
    # The gate's answer is held until the agent that asked is gone, and the gate
    # ends with it: nobody is left to read the refusal, and no model call follows.
    pid_file, out = tmp_path / "gate.pid", tmp_path / "out"
    # (a job started with & reads /dev/null: the payload comes in on fd 3)
    script = 'exec 3<&0; "$0" hook --harness codex <&3 > "$1" & echo $! > "$2"; wait'
    parent = subprocess.Popen(
        ["sh", "-c", script, gate_exe, str(out), str(pid_file)],
        env=env,
        stdin=subprocess.PIPE,
    )
    assert parent.stdin is not None
    parent.stdin.write(_payload(path, CALLS[4]).encode())
    parent.stdin.close()
    refused_file = run_dir / runstop.REFUSED_FILE
    deadline = time.monotonic() + 60
    while not refused_file.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert refused_file.exists()
    time.sleep(0.2)
    # held: the agent has no answer yet, so it cannot ask the model again
    assert parent.poll() is None and out.read_bytes() == b""
    gate = int(pid_file.read_text())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    while _running(gate):
        assert time.monotonic() < deadline, "the held gate outlived the agent"
        time.sleep(0.01)
    assert out.read_bytes() == b""
    refusal = runstop.read_refusal(str(run_dir))
    assert refusal is not None and refusal.past_iterations
    assert (refusal.step, refusal.iteration_budget, refusal.tool_use_id) == (4, 3, CALLS[4])
    # the supervisor ends the run as the iteration limit, not the call budget
    assert gate_refusal(RunPaths(run_dir)) is RunStatus.ITERATION_LIMIT
    status = session_status(Path(env["TETHER_HOME"]), SESSION)
    assert (status.locked, status.batches, status.calls_used) == (True, 3, 1)
    decisions = query(Path(env["TETHER_HOME"]), "SELECT decision FROM events ORDER BY id")
    assert decisions == [("deny",)]


def _running(pid: int) -> bool:
    try:
        with Path(f"/proc/{pid}/stat").open("rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        return False


def test_a_call_not_yet_in_a_rollout_with_n_records_is_refused(
    tmp_path: Path, gate_exe: str
) -> None:
    # Three records written, step 4's call item not yet: whatever it is, it
    # comes after response 3, so it is past the limit.
    env, path, _run_dir = _setup(tmp_path, _upto(CALLS[3], recorded=True))
    env["TETHER_RUN_ID"] = "no-such-run"  # no supervisor watching: nothing is held
    done = run_gate(gate_exe, ["hook", "--harness", "codex"], env, _payload(path, CALLS[4]))
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny", done.stderr
    assert "model step 4, past the iteration limit of 3" in answer["permissionDecisionReason"]


def test_without_a_run_the_rollout_is_not_read(tmp_path: Path, gate_exe: str) -> None:
    env, path, _run_dir = _setup(tmp_path, _upto(CALLS[4], recorded=True))
    del env["TETHER_RUN_ID"]
    done = run_gate(gate_exe, ["hook", "--harness", "codex"], env, _payload(path, CALLS[4]))
    assert done.returncode == 0 and done.stdout == b"", done.stderr


def test_a_call_budget_refusal_still_ends_the_run_as_the_call_limit(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / RUN
    run_dir.mkdir(parents=True)
    paths = RunPaths(run_dir)
    assert gate_refusal(paths) is None
    call = runstop.RefusedCall("codex", "Bash", "c-3", None, 3, 2, runstop.CALL_BUDGET_SPENT)
    runstop.record_refusal(str(tmp_path), call, environ={"TETHER_RUN_ID": RUN})
    assert gate_refusal(paths) is RunStatus.TOOL_CALL_LIMIT


def test_inside_the_sandbox_the_hook_is_told_to_hold_the_refusal(tmp_path: Path) -> None:
    # A sandboxed run's calls are counted by its supervisor over the run's socket:
    # the supervisor answers at once, and the hook inside the sandbox holds.
    env, path, run_dir = _setup(tmp_path, _upto(CALLS[4], recorded=True))
    payload = _payload(path, CALLS[4]).encode()
    reply = serve.answer(["hook", "--harness", "codex"], payload, False, SESSION, env)
    assert reply.get("hold") is True
    answer = json.loads(str(reply["out"]))["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert gate_refusal(RunPaths(run_dir)) is RunStatus.ITERATION_LIMIT
    # a call within the limit is answered as ever, with nothing to hold
    env2, path2, _ = _setup(tmp_path / "within", _upto(CALLS[3], recorded=False))
    payload = _payload(path2, CALLS[3]).encode()
    reply = serve.answer(["hook", "--harness", "codex"], payload, False, SESSION, env2)
    assert "hold" not in reply and reply["out"] == ""


@pytest.mark.parametrize("harness", ["codex", "copilot"])
def test_while_a_run_stops_its_refusals_are_held(tmp_path: Path, harness: str) -> None:
    # The supervisor locked the session and marked the run stopping; a call the
    # agent still makes is refused, and held until the agent is gone.
    env, path, run_dir = _setup(tmp_path, _upto(CALLS[1], recorded=True))
    set_session_budget(Path(env["TETHER_HOME"]), SESSION, calls=0)
    event = "preToolUse" if harness == "copilot" else "PreToolUse"
    payload: dict[str, Any] = load_payload(harness, event)
    payload["transcript_path"] = str(path)
    args = ["hook", "--harness", harness, "--event", event]
    raw = json.dumps(payload).encode()
    stream_mark.write(str(run_dir), 1)  # Copilot's call: the supervisor has read it
    assert "hold" not in serve.answer(args, raw, False, SESSION, env)
    runstop.mark_stopping(str(run_dir))
    payload["tool_use_id"] = "another-call"
    payload["timestamp"] = 1796230000123  # Copilot's call: its own instant
    reply = serve.answer(args, json.dumps(payload).encode(), False, SESSION, env)
    assert reply.get("hold") is True and "call refused" in str(reply["out"])


def test_the_run_reads_the_rollout_once_and_places_every_call_the_same(tmp_path: Path) -> None:
    # The rollout growing line by line as Codex writes it; at every length, each
    # call whose hook can still run is placed from where earlier calls stopped
    # reading, and must stand where a whole read puts it.
    rollout, scan = tmp_path / "rollout.jsonl", str(tmp_path / "scan")
    ids = list(CALLS.values())
    scanned_from = []
    for length in range(1, len(LINES) + 1):
        text = b"".join(LINES[:length])
        rollout.write_bytes(text)
        placed = {i: step for i in ids if (step := locate(text, i).step) is not None}
        # a call's hook runs before the response after its own is recorded
        hookable = [i for i, step in placed.items() if step >= count_records(text)]
        for call_id in hookable:
            whole = locate(text, call_id)
            got = call_step(str(rollout), call_id, wait=0, scan=scan)
            assert got is not None
            assert (got.step, got.completed) == (whole.step, whole.completed), (length, call_id)
        if Path(scan).exists():
            scanned_from.append(int(Path(scan).read_text().split()[0]))
    # it read on from the last record but one, not from the start
    assert scanned_from and scanned_from == sorted(scanned_from) and scanned_from[-1] > 0
