"""A real Pi subagent that runs `sleep 100` as a tool: a long tool, not a confirmation wait.

Pi (the real CLI, tier ``real_harness``) runs in another window of the
orchestrator's tmux session against the scripted model server, whose first
answer is one shell call ``sleep 100``. Pi has no permission dialogs, so the
watchdog reports the open call as "runs a long tool (N s)" and wakes the idle
orchestrator once.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests import agent_clis
from tests.watch.watch_support import TmuxLab, wait_until

from tether.clock import SystemClock
from tether.config.schema import WatchSettings
from tether.testing.model_server import ModelServer, client_setup
from tether.testing.model_server.scenario import Action, FinalText, Scenario, ShellCalls
from tether.watch.daemon import Watchdog
from tether.watch.registry import Registration, add_orchestrator, list_wakes

pytestmark = pytest.mark.real_harness

LONG = "sleep 100"


def _sleep_then_done(step: int) -> Action:
    return ShellCalls((LONG,)) if step == 1 else FinalText("Slept.")


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(Scenario("sleep-100", _sleep_then_done, last_step=2)) as running:
        yield running


def test_a_real_pi_running_sleep_100_is_a_long_tool_and_wakes_the_orchestrator_once(
    lab: TmuxLab, server: ModelServer, tmp_path: Path, tether_home: Path, conn: sqlite3.Connection
) -> None:
    pi = str(agent_clis.require("pi"))
    pane, recording = lab.orchestrator()
    work = tmp_path / "elsewhere"
    work.mkdir()
    setup = client_setup("pi", tmp_path / "pi-home", server.port)
    env = {"PATH": os.environ["PATH"], "TERM": "xterm-256color", **setup.env}
    argv = [pi, *setup.extra_args, "--model", "mock-model", "-p", "Sleep a while."]
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    script = f"cd {shlex.quote(str(work))} && env {assignments} {shlex.join(argv)}; read -r done"
    sub = lab.window(tmp_path / "start", ["bash", "-c", script])
    wait_until(lambda: any(r.step == 1 for r in server.requests), timeout=60, what="Pi's call")

    settings = WatchSettings(
        tmux_socket=lab.socket,
        idle_threshold=0.5,
        confirm_after=0.5,
        wake_min_interval=3600,
        interval=0.5,
    )
    dog = Watchdog(settings, tether_home, conn, clock=SystemClock())
    # registered first (its session is what makes Pi's window a subagent), checked later
    add_orchestrator(conn, Registration(tmux_pane=pane, tmux_socket=lab.socket))
    try:

        def long_tool() -> str | None:
            survey = dog.surveyor.look(conn, time.time())
            for view in survey.subagents:
                if view.subagent.key == f"pane:{sub}" and view.state == "runs-a-long-tool":
                    assert view.wait is not None
                    return view.wait.describe(survey.now)
            return None

        described = wait_until(long_tool, timeout=60, every=0.2, what="the long tool")
        assert described.startswith("runs a long tool (") and LONG in described
        wait_until(lambda: dog.check().wakes, timeout=30, every=0.2, what="the wake")
        for _ in range(6):  # more cycles while Pi still sleeps: no second wake
            dog.check()
            time.sleep(settings.interval)
        (wake,) = list_wakes(conn)
        assert wake.reason == "idle" and wake.pending_tool == "bash"
        (line,) = wait_until(recording.lines, what="the wake typed into the orchestrator")
        assert "runs a long tool (" in line["line"] and LONG in line["line"]
        assert "waits for confirmation" not in line["line"]
    finally:
        dog.close()
