"""The gate over a sandboxed run's socket: the supervisor counts, the hook fails closed.

The hook runs as its own process, as a harness starts it, with
``TETHER_GATE_SOCKET`` set; the server is the one a run's supervisor starts
(``tether.gate.serve.GateServer``) on a real Unix socket.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.gate.counter import session_status, set_session_budget
from tether.gate.serve import GateServer

GATE = str(Path(sys.executable).parent / "tether-gate")
RUN_SESSION = "run-session-1"


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="tg-") as folder:  # short: a socket path is short
        yield Path(folder)


@pytest.fixture
def server(tether_home: Path, socket_dir: Path) -> Iterator[GateServer]:
    tether_home.mkdir(parents=True, exist_ok=True)
    set_session_budget(tether_home, RUN_SESSION, calls=2, run_id="r-1")
    env = {"TETHER_HOME": str(tether_home), "TETHER_RUN_ID": "r-1"}
    started = GateServer(str(socket_dir / "gate.sock"), RUN_SESSION, env).start()
    yield started
    started.stop()


def _hook(socket: Path, session: str, call: str, *args: str) -> subprocess.CompletedProcess[str]:
    payload = {
        "session_id": session,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "echo hi"},
        "tool_use_id": call,
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env["TETHER_GATE_SOCKET"] = str(socket)
    # the agent's own view of the home is read-only in a sandbox: never used here
    env["TETHER_HOME"] = str(socket.parent / "not-the-home")
    return subprocess.run(
        [GATE, *(args or ("hook", "--harness", "claude-code"))],
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _denied(done: subprocess.CompletedProcess[str]) -> bool:
    if not done.stdout.strip():
        return False
    answer = json.loads(done.stdout)
    return bool(answer["hookSpecificOutput"]["permissionDecision"] == "deny")


def test_calls_count_under_the_run_whatever_session_they_name(
    server: GateServer, tether_home: Path
) -> None:
    socket = Path(server.path)
    first = _hook(socket, "some-other-session", "call-1")
    second = _hook(socket, RUN_SESSION, "call-2")
    third = _hook(socket, "a-third-one", "call-3")
    assert first.returncode == 0 and not _denied(first), first.stderr
    assert second.returncode == 0 and not _denied(second), second.stderr
    assert third.returncode == 0 and _denied(third), third.stdout
    status = session_status(tether_home, RUN_SESSION)
    assert status.calls_used == 3 and status.locked
    assert not session_status(tether_home, "some-other-session").known
    tick = _hook(socket, RUN_SESSION, "", "tick", "--session", "elsewhere")
    assert tick.returncode == 30
    assert session_status(tether_home, RUN_SESSION).calls_used == 4
    assert not (socket.parent / "not-the-home").exists()


def test_the_socket_serves_only_counting_calls(server: GateServer) -> None:
    from tether.gate.serve import answer

    # the hook forwards only hook and tick; a caller that sends more is refused
    reply = answer(["status"], b"", False, RUN_SESSION, server.env)
    assert reply["code"] == 30
    assert "serves only `hook` and `tick`" in str(reply["err"])


def test_no_answer_is_a_refusal(socket_dir: Path) -> None:
    missing = socket_dir / "gate.sock"
    done = _hook(missing, RUN_SESSION, "call-1")
    assert done.returncode == 0
    assert _denied(done), done.stdout
    assert "no answer from this run's supervisor" in done.stderr
    tick = _hook(missing, RUN_SESSION, "", "tick")
    assert tick.returncode == 30
