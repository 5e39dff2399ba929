"""`tether run` drives a real agent CLI that would never stop, and stops it on budget."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.limited_run import limited_run

from tether.harnesses.base import Harness
from tether.testing.model_server import ModelServer

pytestmark = pytest.mark.real_harness


@pytest.mark.parametrize("harness", ["codex", "pi", "pi-1", "claude-code"])
def test_never_stopping_agent_is_stopped_at_the_iteration_limit(
    harness: str,
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
    tether_home: Path,
) -> None:
    adapter, exe = agent_cli(harness)
    server = model_server("forever", think=0.05)
    done, _work = limited_run(
        adapter.name, exe, server.port, tmp_path, tether_home, ["--iterations", "3"], wait=120
    )
    why = f"stderr: {done.stderr[-2000:]}\nrequests: {[r.step for r in server.requests]}"
    assert done.returncode == 20, why
    record = json.loads(done.stdout)
    assert record["status"] == "iteration_limit", why
    # the model was asked at most limit times, plus at most one call in flight at the stop
    assert server.model_calls <= 4, why
    if adapter.name in ("claude-code", "pi"):
        # their per-run hooks end the session before model call 4 is sent
        assert server.model_calls == 3, why
        assert record["tool_calls"] == 3, why
    assert record["iterations"] >= 3, why
    report = record["report"]
    assert report["stop_reason"] == "iteration_limit"
    assert Path(record["run_dir"], "report.md").exists()
    assert record["harness_session_id"], why


def test_claude_code_ends_itself_at_the_iteration_limit_by_the_run_hook(
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
    tether_home: Path,
) -> None:
    """At the boundary after step N tether waits for the run's ``PostToolBatch`` answer
    to end Claude Code; a SIGTERM there made Claude Code skip that hook and, on a
    loaded machine, send model request N+1 while it shut down."""
    adapter, exe = agent_cli("claude-code")
    server = model_server("forever", think=0.05)
    done, _work = limited_run(
        adapter.name, exe, server.port, tmp_path, tether_home, ["--iterations", "3"], wait=120
    )
    why = f"stderr: {done.stderr[-2000:]}\nrequests: {[r.step for r in server.requests]}"
    assert done.returncode == 20, why
    run = json.loads(Path(json.loads(done.stdout)["run_dir"], "run.json").read_text())
    assert run["stop_reason"] == "iteration_limit", why  # not "iteration_limit (sigterm)"
    with sqlite3.connect(tether_home / "gate.db") as conn:
        batches = [
            decision
            for (decision,) in conn.execute(
                "SELECT decision FROM events WHERE event = 'PostToolBatch' ORDER BY id"
            )
        ]
    assert batches == ["continue", "continue", "stop"], why
    assert server.model_calls == 3, why
