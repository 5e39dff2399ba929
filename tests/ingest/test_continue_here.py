"""`tether ingest continue-here`: the recommendation and its reason once, then a new session
id through the gate's user-request path (refused from inside an agent)."""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
import sys
from pathlib import Path

from tests.outside_agents import detached, without_agent_vars

TETHER = str(Path(sys.executable).parent / "tether")


def _env(**extra: str) -> dict[str, str]:
    env = without_agent_vars(os.environ, "TETHER_DEPTH", "TETHER_SESSION_ID")
    env.update(extra)
    return env


def test_inside_an_agent_it_says_why_and_is_refused() -> None:
    done = subprocess.run(
        [TETHER, "ingest", "continue-here"],
        capture_output=True,
        text=True,
        env=_env(TETHER_RUN_ID="r-1"),
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
        start_new_session=True,
    )
    assert done.returncode == 30
    assert done.stdout.count("Recommendation: /clear first") == 1
    assert "provenance" in done.stdout and "budget" in done.stdout
    assert "refused: `tether session new` runs inside an agent's process tree" in done.stderr


def test_from_a_terminal_it_issues_a_new_session_id(tether_home: Path) -> None:
    gate = str(Path(sys.executable).parent / "tether-gate")
    subprocess.run(
        [gate, "tick", "--session", "ctx-ingest"],
        env=_env(),
        check=True,
        capture_output=True,
        start_new_session=True,
    )
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            detached(["sh", "-c", f"{shlex.quote(TETHER)} ingest continue-here"], new_session=True),
            stdin=follower,
            capture_output=True,
            text=True,
            env=_env(),
            timeout=60,
            check=False,
            start_new_session=True,
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Recommendation: /clear first")
    assert "the next run counts under the new session id" in lines[1]
    assert "(follows ctx-ingest)" in lines[1]
    log = subprocess.run(
        [TETHER, "session", "log", "--json"], capture_output=True, text=True, env=_env(), check=True
    )
    entries = json.loads(log.stdout)
    assert [e["reason"] for e in entries] == ["user-request"]
