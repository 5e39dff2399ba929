"""The gate, installed by ``tether hooks install``, inside the real agent CLIs.

Each CLI (Vibe too) runs the five-steps script of the scripted model (tool calls 1, 2a,
2b, 3, 4) in a project with the gate installed and a budget of 3: calls 4 and
5 are refused by the CLI itself, in its own hook contract. Claude Code and Pi
also stop before their third model call when the run's iteration budget is 2.
CLIs are found by tests/agent_clis.py: a missing one skips its test, and
fails it under CI=true.
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
from tests import agent_clis
from tests.gate.gate_support import query

from tether.gate import hook_file, hook_install
from tether.gate.counter import session_status, set_session_budget
from tether.testing.model_server import ModelServer, client_setup

pytestmark = pytest.mark.real_harness

PROMPT = "Run the scripted steps."
TOOL_EVENT = {"claude-code": "PreToolUse", "codex": "PreToolUse", "copilot": "preToolUse"}
TOOL_EVENT["pi"] = TOOL_EVENT["pi-1"] = "tool_call"
TOOL_EVENT["vibe"] = "pre_tool"
# pi-1: Pi 1.x next to Pi 0.73 (the same harness, its own CLI; tests/agent_clis.py)
NODE_CLIS: list[Any] = ["claude-code", "codex", "copilot", "pi", "pi-1"]
# Vibe starts slowly (a minute on a loaded machine): beyond the default 120 s.
VIBE = pytest.param("vibe", marks=pytest.mark.timeout(600))


def _argv(harness: str, exe: Path, extra: tuple[str, ...]) -> list[str]:
    if harness == "claude-code":
        head = [str(exe), "-p", PROMPT, "--output-format", "stream-json", "--verbose"]
        return [*head, "--model", "mock-model", *extra]
    if harness == "codex":
        return [str(exe), "exec", "--json", *extra, "--dangerously-bypass-hook-trust", PROMPT]
    if harness == "copilot":
        return [str(exe), "-p", PROMPT, "--output-format", "json", *extra]
    if harness == "vibe":  # --trust (in extra): project hooks load in a trusted folder only
        return [str(exe), "-p", PROMPT, "--output", "streaming", *extra]
    if harness == "pi-1":  # Pi 1.x loads a project's extensions in a trusted project only
        extra = (*extra, "--approve")
    return [str(exe), *extra, "--model", "mock-model", "--mode", "json", PROMPT]


def _run(
    harness: str, tmp_path: Path, home: Path, env_extra: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], ModelServer]:
    exe = agent_clis.require(harness)
    project = tmp_path / "project"
    project.mkdir()
    base = agent_clis.harness_of(harness)
    with ModelServer("five-steps") as server:
        setup = client_setup(base, tmp_path / "agent-home", server.port)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **setup.env}
        env |= {"TETHER_HOME": str(home), **env_extra}
        if harness == "codex":  # project hooks load in a trusted project only
            with (Path(setup.env["CODEX_HOME"]) / "config.toml").open("a") as config:
                config.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
        if harness == "copilot":  # repository hooks load in a trusted folder only
            copilot_home = Path(setup.env["COPILOT_HOME"])
            copilot_home.mkdir(parents=True, exist_ok=True)
            (copilot_home / "config.json").write_text(
                json.dumps({"trustedFolders": [str(project)]})
            )
        change = hook_install.plan(
            base, "project", install=True, project_dir=str(project), environ=env
        )
        hook_file.apply(change)
        done = subprocess.run(
            _argv(harness, exe, setup.extra_args),
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return done, server


@pytest.mark.parametrize("harness", [*NODE_CLIS, VIBE])
def test_the_cli_itself_refuses_calls_past_the_budget(
    harness: str, tmp_path: Path, tether_home: Path
) -> None:
    done, server = _run(harness, tmp_path, tether_home, {"TETHER_GATE_BUDGET": "3"})
    assert done.returncode == 0, done.stderr[-2000:]
    decisions = query(
        tether_home,
        "SELECT decision FROM events WHERE event = ? ORDER BY id",
        (TOOL_EVENT[harness],),
    )
    assert [d for (d,) in decisions] == ["allow"] * 3 + ["deny"] * 2
    # each call's input and working folder are in the event log, for the watchdog
    details = query(
        tether_home,
        "SELECT tool_input, cwd FROM events WHERE event = ? ORDER BY id",
        (TOOL_EVENT[harness],),
    )
    assert all('"command": "echo step' in kept and cwd for kept, cwd in details), details
    (session,) = query(tether_home, "SELECT session_id FROM sessions")
    status = session_status(tether_home, session[0])
    assert (status.calls_used, status.locked) == (5, True)
    # The agent went on to its final answer with the refusals as tool results.
    assert server.model_calls == 5
    assert "call budget of this session is spent" in done.stdout + done.stderr


@pytest.mark.parametrize("harness", ["claude-code", "pi", "pi-1"])
def test_the_cli_stops_before_the_model_call_past_the_iteration_budget(
    harness: str, tmp_path: Path, tether_home: Path
) -> None:
    set_session_budget(tether_home, "run-session", calls=60, iterations=2, run_id="run-1")
    env = {"TETHER_SESSION_ID": "run-session", "TETHER_RUN_ID": "run-1"}
    _done, server = _run(harness, tmp_path, tether_home, env)
    assert server.model_calls == 2
    assert session_status(tether_home, "run-session").batches == 2


@pytest.mark.parametrize("harness", [*NODE_CLIS, VIBE])
def test_a_run_budget_holds_for_the_cli_own_session_id(
    harness: str, tmp_path: Path, tether_home: Path
) -> None:
    # As under `tether run`: the run's budget is set on its session, the agent
    # gets TETHER_SESSION_ID and TETHER_RUN_ID, and the CLI reports its own
    # session id in the payload; the first call binds that id to the run.
    set_session_budget(tether_home, "run-session", calls=2, run_id="run-1")
    env = {"TETHER_SESSION_ID": "run-session", "TETHER_RUN_ID": "run-1"}
    done, _server = _run(harness, tmp_path, tether_home, env)
    assert done.returncode == 0, done.stderr[-2000:]
    decisions = query(
        tether_home,
        "SELECT decision FROM events WHERE event = ? ORDER BY id",
        (TOOL_EVENT[harness],),
    )
    assert [d for (d,) in decisions] == ["allow"] * 2 + ["deny"] * 3
    assert query(tether_home, "SELECT DISTINCT session_id FROM events") == [("run-session",)]
    ((own_id,),) = query(tether_home, "SELECT context_key FROM contexts")
    assert own_id != "run-session"
    assert session_status(tether_home, "run-session").calls_used == 5


def test_codex_gets_no_call_of_a_model_step_past_the_iteration_budget(
    tmp_path: Path, tether_home: Path
) -> None:
    # As under `tether run --iterations 3`, but with no supervisor reading the
    # rollout: the gate alone must refuse the call of step 4. The test plays the
    # supervisor's part that is left, stopping Codex once the gate recorded the
    # refusal; the gate holds its answer until then, so Codex cannot ask the
    # model a fifth time. Each call of touch-forever leaves a file: tick-K ran.
    exe = agent_clis.require("codex")
    project = tmp_path / "project"
    project.mkdir()
    (tether_home / "runs" / "run-1").mkdir(parents=True)
    set_session_budget(tether_home, "run-session", calls=60, iterations=3, run_id="run-1")
    refused = tether_home / "runs" / "run-1" / "refused.json"
    with ModelServer("touch-forever", think=0.05) as server:
        setup = client_setup("codex", tmp_path / "agent-home", server.port)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **setup.env}
        env |= {"TETHER_HOME": str(tether_home), "TETHER_SESSION_ID": "run-session"}
        env["TETHER_RUN_ID"] = "run-1"
        with (Path(setup.env["CODEX_HOME"]) / "config.toml").open("a") as config:
            config.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
        change = hook_install.plan(
            "codex", "project", install=True, project_dir=str(project), environ=env
        )
        hook_file.apply(change)
        agent = subprocess.Popen(
            _argv("codex", exe, setup.extra_args),
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 240
            while not refused.exists() and agent.poll() is None:
                assert time.monotonic() < deadline, "no refusal"
                time.sleep(0.02)
        finally:
            os.killpg(agent.pid, signal.SIGTERM)
            agent.wait(timeout=60)
        model_calls = server.model_calls
    files = sorted(p.name for p in project.glob("tick-*.done"))
    assert files == ["tick-1.done", "tick-2.done", "tick-3.done"]
    assert model_calls == 4
    record = json.loads(refused.read_text())
    assert (record["reason"], record["step"], record["iteration_budget"]) == (
        "iteration limit reached",
        4,
        3,
    )
    assert "tick-4.done" in record["input"]
    status = session_status(tether_home, "run-session")
    assert (status.batches, status.locked) == (3, True)
