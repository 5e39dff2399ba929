"""Who runs (real process trees) and what the watch tables keep."""

from __future__ import annotations

import os
import shlex
import sqlite3
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.watch.watch_support import agent_argv, wait_until

from tether.clock import FakeClock, to_iso
from tether.core.agents import match_agent
from tether.core.errors import UsageError
from tether.watch.proctree import ProcessInspector
from tether.watch.registry import (
    Registration,
    WakeRecord,
    add_orchestrator,
    bind_session,
    last_wake_at,
    list_orchestrators,
    list_wakes,
    record_wake,
    remove_orchestrator,
    touch,
)


@pytest.mark.parametrize(
    ("name", "argv", "expected"),
    [
        ("pi", ("pi",), "pi"),
        ("node", ("node", "/x/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"), "pi"),
        ("node", ("node", "--no-warnings", "/usr/bin/codex"), "codex"),
        ("claude", ("/opt/claude-code/bin/claude.exe", "--resume"), "claude"),
        (
            "python3",
            ("python3", "-m", "tether.harnesses.scripted", "--", "x"),
            "tether.harnesses.scripted",
        ),
        ("bash", ("bash", "-c", "pi --help"), None),  # a keyword in a command line is no agent
        ("python3", ("python3", "-c", "import pi"), None),
        ("vim", ("vim", "pi.txt"), None),
    ],
)
def test_agent_matcher(name: str, argv: tuple[str, ...], expected: str | None) -> None:
    assert match_agent(name, argv) == expected


def test_matcher_only_knows_the_names_it_is_given() -> None:
    argv = ("node", "/x/node_modules/@mariozechner/pi-coding-agent/dist/cli.js")
    assert match_agent("node", argv, frozenset({"claude"})) is None


def test_an_agent_below_a_shell_is_found_and_gone_when_it_ends(tmp_path: Path) -> None:
    """bash -c "agent; read": the agent is a child of bash while it runs, then only bash."""
    fifo = tmp_path / "go"
    agent = shlex.join(agent_argv("--silent"))
    script = f"{agent} & echo $! > {tmp_path / 'pid'}; read -r x < {fifo}"
    os.mkfifo(fifo)
    shell = subprocess.Popen(["bash", "-c", script])
    inspector = ProcessInspector()
    try:
        agent_pid = int(
            wait_until(
                lambda: (tmp_path / "pid").exists() and (tmp_path / "pid").read_text().strip(),
                what="agent pid",
            )
        )
        table = wait_until(
            lambda: t if (t := inspector.snapshot()).find_agent(shell.pid) else None,
            what="the agent under the shell",
        )
        found = table.find_agent(shell.pid)
        assert found is not None and found.pid == agent_pid
        assert found.name == "tether.harnesses.scripted"
        assert table.agent(shell.pid) is None  # the shell itself is no agent
        assert shell.pid in list(table.ancestors(agent_pid))
        os.kill(agent_pid, 15)
        wait_until(
            lambda: inspector.snapshot().find_agent(shell.pid) is None, what="the agent to be gone"
        )
        assert inspector.snapshot().alive(shell.pid)  # bash still waits on read
    finally:
        with open(fifo, "w") as handle:
            handle.write("done\n")
        shell.wait(timeout=10)


def test_orchestrators_are_registered_replaced_and_removed(conn: sqlite3.Connection) -> None:
    clock = FakeClock(start=FakeClock().now())
    first = add_orchestrator(
        conn, Registration(tmux_pane="%3", tmux_socket="s", sessions=("abc",)), clock=clock
    )
    assert first.name == "pane %3" and first.sessions == ("abc",)
    again = add_orchestrator(conn, Registration(tmux_pane="%3", tmux_socket="s"), clock=clock)
    assert [o.id for o in list_orchestrators(conn)] == [again.id]  # same pane: replaced
    by_pid = add_orchestrator(
        conn, Registration(pid=4242, log_path="/tmp/o.log", name="main"), clock=clock
    )
    assert {o.name for o in list_orchestrators(conn)} == {"pane %3", "main"}
    assert bind_session(conn, "sess-1", by_pid.id, harness="pi", source="env:PI_SESSION_ID")
    assert not bind_session(conn, "sess-1", by_pid.id, source="again")
    touch(conn, by_pid.id, 200.0, "subagents wait")
    touch(conn, by_pid.id, 100.0, "older")  # never moves back
    (current,) = [o for o in list_orchestrators(conn) if o.id == by_pid.id]
    assert (current.last_activity, current.last_activity_source) == (200.0, "subagents wait")
    assert current.sessions == ("sess-1",)
    assert remove_orchestrator(conn, by_pid.id, clock=clock)
    assert not remove_orchestrator(conn, by_pid.id, clock=clock)
    with pytest.raises(UsageError):
        add_orchestrator(conn, Registration())


def test_wakes_are_logged_in_order(conn: sqlite3.Connection) -> None:
    orch = add_orchestrator(conn, Registration(tmux_pane="%1"))
    assert last_wake_at(conn, orch.id) is None
    start = datetime.now(UTC)
    for n in range(3):
        record_wake(
            conn,
            WakeRecord(
                at=to_iso(start + timedelta(seconds=n)),
                orchestrator_id=orch.id,
                reason="confirmation",
                subagent="a (pane %4)",
                pending_tool="Bash",
                pending_call_id=f"c{n}",
                idle_seconds=50.0,
                message=f"wake {n}",
                channels=({"channel": "tmux", "ok": True, "detail": "send-keys %1"},),
                delivered=True,
            ),
        )
    wakes = list_wakes(conn)
    assert [w.message for w in wakes] == ["wake 0", "wake 1", "wake 2"]
    assert wakes[-1].pending_tool == "Bash" and wakes[-1].channels[0]["channel"] == "tmux"
    assert last_wake_at(conn, orch.id) == pytest.approx(start.timestamp() + 2, abs=1e-3)
    assert [w.message for w in list_wakes(conn, limit=1)] == ["wake 2"]


def test_watch_tables_exist_after_migration(conn: sqlite3.Connection) -> None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"watch_orchestrators", "watch_sessions", "watch_wakes"} <= tables
    columns = [r[1] for r in conn.execute("PRAGMA table_info(watch_wakes)")]
    assert columns == [
        "id",
        "at",
        "orchestrator_id",
        "reason",
        "subagent",
        "pending_tool",
        "pending_call_id",
        "idle_seconds",
        "message",
        "channels",
        "delivered",
    ]
