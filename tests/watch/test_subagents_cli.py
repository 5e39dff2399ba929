"""``tether subagents wait|list`` and runs started by ``tether run`` as subagents."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.watch.watch_support import TETHER, TmuxLab, wait_until, write_project

from tether.config.schema import WatchSettings
from tether.watch.daemon import Watchdog
from tether.watch.registry import list_orchestrators


def _project(tmp_path: Path, lab: TmuxLab, subagents: Path, idle_threshold: float = 0.75) -> Path:
    return write_project(
        tmp_path / "project",
        lab,
        subagents,
        interval=0.5,
        idle_threshold=idle_threshold,
        confirm_after=1.0,
    )


def _json(project: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    done = subprocess.run(
        [TETHER, *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _agent_in(folder: Path) -> psutil.Process | None:
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if "tether.harnesses.scripted" in (proc.info["cmdline"] or []) and proc.cwd() == str(
                folder
            ):
                return proc
        except psutil.Error:
            continue
    return None


@pytest.mark.slow  # a subagent in tmux and a blocked waiter
def test_subagents_wait_returns_on_a_change_and_counts_as_activity(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path, conn: sqlite3.Connection
) -> None:
    pane, _ = lab.orchestrator()
    folder = subagents_dir / "a"
    lab.subagent(folder, ["--format", "claude-code", "--silent"])
    project = _project(tmp_path, lab, subagents_dir)
    _json(project, "watch", "add-orchestrator", "--tmux-pane", pane, "--json")
    agent = wait_until(lambda: _agent_in(folder), what="the subagent")
    env = {**os.environ, "TMUX_PANE": pane, "CLAUDE_CODE_SESSION_ID": "orch-session"}
    waiter = subprocess.Popen(
        [TETHER, "subagents", "wait", "--timeout", "30", "--json"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    # the call touched the orchestrator and bound its session before it blocked
    (orch,) = wait_until(
        lambda: [o for o in list_orchestrators(conn) if o.last_activity_source == "subagents wait"],
        what="the call to count as activity",
    )
    assert orch.sessions == ("orch-session",)
    assert waiter.poll() is None  # nothing changed yet: it blocks
    agent.send_signal(signal.SIGTERM)
    out, _ = waiter.communicate(timeout=30)
    assert waiter.returncode == 0
    result = json.loads(out)
    assert result["changed"] is True and result["timed_out"] is False
    assert result["changes"] == [{"key": f"pane:{'%1'}", "from": "working", "to": "ended"}]
    assert result["orchestrator"] == orch.id
    assert [s["state"] for s in result["subagents"]] == ["ended"]


def test_subagents_wait_times_out_with_every_state(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path
) -> None:
    lab.subagent(subagents_dir / "slow", ["--format", "pi", "--silent"])
    project = _project(tmp_path, lab, subagents_dir)
    wait_until(lambda: _agent_in(subagents_dir / "slow"), what="the subagent")
    result = _json(project, "subagents", "wait", "--timeout", "0.6", "--json")
    assert (result["changed"], result["timed_out"], result["orchestrator"]) == (False, True, None)
    assert [(s["key"], s["state"]) for s in result["subagents"]] == [("pane:%0", "working")]


@pytest.mark.slow
def test_a_run_started_by_tether_run_is_a_subagent_and_its_hang_is_seen(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path
) -> None:
    """Runs register themselves: the store has their process group; no pane is needed."""
    pane, recording = lab.orchestrator()
    project = _project(tmp_path, lab, subagents_dir)
    args = json.dumps(
        [
            "--format",
            "claude-code",
            "--steps",
            "9",
            "--step-delay",
            "0.1",
            "--hang-before-result",
            "3",
        ]
    )
    with (project / "tether.toml").open("a") as handle:
        handle.write(f'\n[profiles.sub]\nharness = "scripted"\nargs = {args}\ndefault = true\n')
    run = subprocess.Popen(
        [TETHER, "run", "--unit", "T-1", "--prompt", "Do the unit."],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def waiting() -> dict[str, Any] | None:
            found = _json(project, "subagents", "list", "--json")["subagents"]
            return next((s for s in found if s["state"] == "waits-for-confirmation"), None)

        # each look starts a `tether` process (~0.25 s of CPU): twice a second is enough
        sub = wait_until(waiting, timeout=20, every=0.5, what="the run to hang on step 3")
        assert sub["kind"] == "run" and sub["label"].endswith("(T-1)")
        assert sub["wait"]["tool"] == "Bash" and "echo step 3" in sub["wait"]["input"]
        assert sub["log"].endswith("events.jsonl")
        _json(project, "watch", "add-orchestrator", "--tmux-pane", pane, "--json")
        report = _json(project, "watch", "once", "--idle-threshold", "0.01", "--json")
        assert [d["action"] for d in report["orchestrators"]] == ["woken"]
        (line,) = wait_until(recording.lines, what="the wake")
        assert f"Subagent {sub['label']} waits for confirmation: Bash" in line["line"]
    finally:
        run.send_signal(signal.SIGTERM)
        run.communicate(timeout=30)
    final = _json(project, "subagents", "list", "--json")["subagents"]
    assert [s for s in final if s["kind"] == "run"] == []  # no longer running


@pytest.mark.slow
def test_an_orchestrator_blocked_in_subagents_wait_is_never_taken_for_idle(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path, tether_home: Path, conn: sqlite3.Connection
) -> None:
    """A --timeout of several idle thresholds: the call counts as activity all along."""
    pane, recording = lab.orchestrator()
    lab.subagent(subagents_dir / "a", ["--format", "claude-code", "--silent"])
    # A threshold of 3 s against touches every 1 s: a false "idle" needs a touch to come
    # 2 s late, which a loaded machine does not make of a process's sleep.
    threshold = 3.0
    project = _project(tmp_path, lab, subagents_dir, idle_threshold=threshold)
    _json(project, "watch", "add-orchestrator", "--tmux-pane", pane, "--json")
    wait_until(lambda: _agent_in(subagents_dir / "a"), what="the subagent")
    waiter = subprocess.Popen(
        [TETHER, "subagents", "wait", "--timeout", str(4 * threshold), "--json"],
        cwd=project,
        env={**os.environ, "TMUX_PANE": pane},
        stdout=subprocess.PIPE,
        text=True,
    )
    wait_until(
        lambda: [o for o in list_orchestrators(conn) if o.last_activity_source == "subagents wait"],
        what="the call to count as activity",
    )
    settings = WatchSettings(
        subagents_folders=[str(subagents_dir)],
        tmux_socket=lab.socket,
        idle_threshold=threshold,
        wake_min_interval=0,
        notify=False,
    )
    dog = Watchdog(settings, tether_home, conn)
    actions = []
    while waiter.poll() is None:
        decision = dog.check().decisions[0]
        actions.append((decision.action, decision.activity_source))
    dog.close()
    out, _ = waiter.communicate(timeout=30)
    assert json.loads(out)["timed_out"] is True
    assert {action for action, _ in actions} == {"active"}, actions
    assert ("active", "subagents wait") in actions
    assert recording.lines() == []
