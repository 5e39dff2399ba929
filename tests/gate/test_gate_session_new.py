"""``tether session new``: only at legitimate boundaries, never from inside the agent."""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.gate.gate_support import query, run_gate
from tests.outside_agents import detached

from tether.core import agent_tree
from tether.gate.counter import session_status, set_session_budget
from tether.gate.plan import PlanError, find_unit, parse_plan

TETHER = str(Path(sys.executable).parent / "tether")
Env = Callable[..., dict[str, str]]

PLAN = """\
# Plan: ingest the March sources

Free text between the units is fine.

- [ ] unit: source-a  Ingest incoming/a.pdf
- [x] unit: source-b  Ingest incoming/b.pdf
- [ ] unit: source-c — Ingest incoming/c.pdf
## unit: ticket-42
"""


@pytest.fixture
def terminal() -> Iterator[int]:
    """A pseudo-terminal for stdin, as a human's shell has."""
    leader, follower = pty.openpty()
    try:
        yield follower
    finally:
        os.close(leader)
        os.close(follower)


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    path = tmp_path / "PLAN.md"
    path.write_text(PLAN)
    return path


def _tether(
    args: list[str], env: dict[str, str], stdin: int | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        detached([TETHER, *args], new_session=True),
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
        start_new_session=True,
    )


def _seen(gate: str, env: dict[str, str], session: str, calls: int = 1) -> None:
    for _ in range(calls):
        run_gate(gate, ["tick", "--session", session], env)


def test_from_a_plain_terminal_shell_a_user_request_is_allowed_and_logged(
    tether_home: Path, env_for: Env, gate_exe: str, terminal: int
) -> None:
    env = env_for()
    _seen(gate_exe, env, "ctx-1", calls=3)
    shell = subprocess.run(
        detached(
            ["sh", "-c", f"{shlex.quote(TETHER)} session new --reason user-request --json"],
            new_session=True,
        ),
        stdin=terminal,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
        start_new_session=True,
    )
    assert shell.returncode == 0, shell.stderr
    record = json.loads(shell.stdout)
    assert record["previous_session_id"] == "ctx-1"
    assert record["context_key"] == "ctx-1"
    assert record["reason"] == "user-request"
    assert "/dev/pts/" in record["who"]
    # The context now counts under the new id, with a fresh budget.
    _seen(gate_exe, env, "ctx-1")
    assert session_status(tether_home, record["session_id"]).calls_used == 1
    assert session_status(tether_home, "ctx-1").calls_used == 3  # the old session, as it was
    shown = run_gate(gate_exe, ["status", "--session", "ctx-1", "--json"], env).stdout
    assert json.loads(shown)["session_id"] == record["session_id"]  # what the context counts on
    log = json.loads(_tether(["session", "log", "--json"], env).stdout)
    assert [(e["session_id"], e["reason"]) for e in log] == [(record["session_id"], "user-request")]
    listed = _tether(["session", "log"], env).stdout
    assert record["session_id"][:8] in listed


def test_inside_a_scripted_agent_session_new_is_refused(
    tether_home: Path, env_for: Env, gate_exe: str, tmp_path: Path, plan_file: Path
) -> None:
    env = env_for()
    _seen(gate_exe, env, "ctx-agent")
    results = tmp_path / "results"
    results.mkdir()
    attempts = {
        "user": f"{shlex.quote(TETHER)} session new --reason user-request",
        "unit": f"{shlex.quote(TETHER)} session new --reason unit-boundary "
        f"--plan {shlex.quote(str(plan_file))} --unit source-a",
    }
    # The agent runs each attempt as a PreToolUse hook: a child of the agent process.
    script = "; ".join(
        f"{cmd} > {results}/{name}.out 2> {results}/{name}.err; echo $? > {results}/{name}.rc"
        for name, cmd in attempts.items()
    )
    settings = tmp_path / "settings.json"
    hook = {"type": "command", "command": shlex.join(["sh", "-c", script])}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [hook]}]}}))
    scripted = [sys.executable, "-m", "tether.harnesses.scripted", "go", "--steps", "2"]
    agent = subprocess.run(
        [*scripted, "--settings", str(settings)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert agent.returncode == 0, agent.stderr
    for name in attempts:
        assert (results / f"{name}.rc").read_text().strip() == "30"
        err = (results / f"{name}.err").read_text()
        assert "inside an agent's process tree" in err
        assert "tether.harnesses.scripted" in err
    assert query(tether_home, "SELECT COUNT(*) FROM session_ids") == [(0,)]


def test_under_tether_run_session_new_is_refused(
    env_for: Env, gate_exe: str, terminal: int
) -> None:
    env = env_for(TETHER_RUN_ID="run-7")
    _seen(gate_exe, env_for(), "ctx-run")
    done = _tether(["session", "new", "--reason", "user-request"], env, stdin=terminal)
    assert done.returncode == 30
    assert "TETHER_RUN_ID is set" in done.stderr


def test_a_user_request_needs_a_terminal(env_for: Env, gate_exe: str) -> None:
    env = env_for()
    _seen(gate_exe, env, "ctx-2")
    done = _tether(["session", "new", "--reason", "user-request"], env)
    assert done.returncode == 30
    assert "needs a human at a terminal" in done.stderr


def test_a_recorded_unit_boundary_starts_one_session(
    tether_home: Path, env_for: Env, gate_exe: str, plan_file: Path
) -> None:
    env = env_for()
    _seen(gate_exe, env, "ctx-3", calls=10)
    args = ["session", "new", "--reason", "unit-boundary", "--plan", str(plan_file), "--json"]
    first = _tether([*args, "--unit", "source-a"], env)
    assert first.returncode == 0, first.stderr
    record = json.loads(first.stdout)
    assert (record["unit"], record["plan"]) == ("source-a", str(plan_file))
    assert record["who"].endswith("(no terminal)")
    again = _tether([*args, "--unit", "source-a"], env)
    assert again.returncode == 30
    assert "already started session" in again.stderr
    done_unit = _tether([*args, "--unit", "source-b"], env)
    assert done_unit.returncode == 30
    assert "marked done" in done_unit.stderr
    unknown = _tether([*args, "--unit", "source-x"], env)
    assert unknown.returncode == 3
    assert "not a recorded boundary" in unknown.stderr
    assert "Recorded: source-a, source-b, source-c, ticket-42" in unknown.stderr
    nxt = _tether([*args, "--unit", "ticket-42"], env)
    assert json.loads(nxt.stdout)["previous_session_id"] == record["session_id"]
    assert len(json.loads(_tether(["session", "log", "--json"], env).stdout)) == 2


def test_a_locked_session_is_reset_only_by_a_human(
    tether_home: Path, env_for: Env, gate_exe: str, plan_file: Path, terminal: int
) -> None:
    env = env_for()
    set_session_budget(tether_home, "ctx-4", calls=2)
    _seen(gate_exe, env, "ctx-4", calls=3)
    assert session_status(tether_home, "ctx-4").locked is True
    boundary = ["--reason", "unit-boundary", "--plan", str(plan_file), "--unit", "source-c"]
    unit = _tether(["session", "new", *boundary, "--session", "ctx-4"], env)
    assert unit.returncode == 30
    assert "is locked (3 of 2 calls used)" in unit.stderr
    assert "--reason user-request" in unit.stderr
    human = _tether(
        ["session", "new", "--reason", "user-request", "--session", "ctx-4", "--json"],
        env,
        stdin=terminal,
    )
    assert human.returncode == 0, human.stderr
    assert run_gate(gate_exe, ["tick", "--session", "ctx-4"], env).returncode == 0


def test_usage_errors(env_for: Env, plan_file: Path) -> None:
    env = env_for()
    missing = _tether(["session", "new", "--reason", "unit-boundary"], env)
    assert missing.returncode == 2
    assert "needs --plan PLAN.md and --unit ID" in missing.stderr
    mixed = _tether(["session", "new", "--reason", "user-request", "--plan", str(plan_file)], env)
    assert mixed.returncode == 2
    nothing = _tether(["session", "status"], env)
    assert nothing.returncode == 2
    assert "no session has passed the gate yet" in nothing.stderr


def test_session_status_shows_the_counts(tether_home: Path, env_for: Env, gate_exe: str) -> None:
    env = env_for()
    set_session_budget(tether_home, "ctx-5", calls=4, iterations=3, run_id="run-5")
    _seen(gate_exe, env, "ctx-5", calls=2)
    shown = _tether(["session", "status"], env).stdout
    assert "ctx-5" in shown and "2 of 4 used" in shown and "of 3" in shown and "run-5" in shown
    data: dict[str, Any] = json.loads(_tether(["session", "status", "--json"], env).stdout)
    assert (data["calls_used"], data["call_budget"], data["locked"]) == (2, 4, False)


def test_the_plan_format() -> None:
    units = parse_plan(PLAN)
    assert [(u.id, u.done, u.line) for u in units] == [
        ("source-a", False, 5),
        ("source-b", True, 6),
        ("source-c", False, 7),
        ("ticket-42", False, 8),
    ]
    assert units[2].title == "Ingest incoming/c.pdf"
    with pytest.raises(PlanError, match="recorded twice"):
        parse_plan("- unit: a\n- unit: a\n")


def test_plan_errors_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="does not exist"):
        find_unit(str(tmp_path / "none.md"), "a")
    empty = tmp_path / "empty.md"
    empty.write_text("# nothing here\n")
    with pytest.raises(PlanError, match="records no unit boundaries"):
        find_unit(str(empty), "a")
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(PlanError, match="not UTF-8"):
        find_unit(str(binary), "a")
    close = tmp_path / "close.md"
    close.write_text("- unit: source-a\n")
    with pytest.raises(PlanError, match="Did you mean 'source-a'"):
        find_unit(str(close), "source_a")


def test_agent_ancestry_reads_variables_and_the_process_tree() -> None:
    assert agent_tree.agent_ancestry(os.getpid(), {"CLAUDECODE": "1"}) == "CLAUDECODE is set"
    assert agent_tree.agent_ancestry(os.getpid(), {"TETHER_RUN_ID": "r"}) == (
        "TETHER_RUN_ID is set"
    )
