"""BLOCKED checks: run as argv (never a shell), bounded, with the evidence on the ticket."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import psutil
from tests.loop.conftest import Project

from tether.board import State
from tether.loop import Signal, tick
from tether.loop.blockers import run_check


def test_a_hanging_check_is_killed_at_its_timeout_and_the_ticket_stays_blocked(
    project: Project,
) -> None:
    project.all_sources_ready()
    (project.root / "tether.toml").write_text(
        (project.root / "tether.toml")
        .read_text()
        .replace('check_timeout = "5s"', 'check_timeout = "500ms"')
    )
    pid_file = project.root / "check.pid"
    hang = [
        sys.executable,
        "-c",
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)",
    ]
    ticket = project.add(
        "Wait for the mirror", State.BLOCKED, "foreign-state", blocked_by="mirror sync", check=hang
    )
    loop = project.open()
    started = time.monotonic()
    result = tick(loop)
    elapsed = time.monotonic() - started
    assert result.signal is Signal.EXHAUSTED  # still blocked: nothing autonomous left
    assert elapsed < 60  # bounded (the exact time is the bench's business)
    checks = next(e for e in result.level1.evidence if e["source"] == "blocked")["checks"]
    assert checks[0]["timed_out"] is True and checks[0]["exit_code"] is None
    assert checks[0]["passed"] is False
    pid = int(pid_file.read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    after = loop.board.get(ticket.id)
    assert after.state is State.BLOCKED
    evidence = after.front["last_check"]
    assert evidence["command"] == hang and evidence["timed_out"] is True
    assert evidence["passed"] is False and evidence["exit_code"] is None


def test_shell_metacharacters_in_a_check_run_nothing_else(project: Project) -> None:
    project.all_sources_ready()
    sneaky = [
        "echo",
        "ok; touch pwned1",
        "$(touch pwned2)",
        "`touch pwned3`",
        "| touch pwned4",
        "&& touch pwned5",
    ]
    glued = ["true;", "touch", "pwned6"]
    first = project.add("Echo check", State.BLOCKED, "lock", blocked_by="x", check=sneaky)
    second = project.add(
        "Glued check", State.BLOCKED, "lock", blocked_by="y", check=glued, priority="P1"
    )
    loop = project.open()
    view = loop.board.load()
    glued_result = run_check(loop, view, loop.board.get(second.id))
    assert glued_result.passed is False
    assert "executable 'true;' not found" in glued_result.evidence["verdict"]
    echo_result = run_check(loop, view, loop.board.get(first.id))
    assert echo_result.passed is True
    assert echo_result.evidence["output_tail"] == (
        "ok; touch pwned1 $(touch pwned2) `touch pwned3` | touch pwned4 && touch pwned5"
    )
    assert sorted(p.name for p in project.root.glob("pwned*")) == []
    assert sorted(p.name for p in Path.cwd().glob("pwned*")) == []


def test_a_passing_check_unblocks_with_evidence_and_the_ticket_is_worked(
    project: Project,
) -> None:
    (project.root / "build").mkdir()
    (project.root / "build" / "ready.txt").write_text("yes")
    ticket = project.add(
        "Package the release",
        State.BLOCKED,
        "dependency",
        blocked_by="the build",
        check=["test", "-f", "build/ready.txt"],
    )
    loop = project.open()
    result = tick(loop)
    assert result.level1.work is not None and result.level1.work.source == "blocked"
    assert result.dispatched is not None and result.dispatched.stop == "completed"
    done = loop.board.get(ticket.id)
    assert done.state is State.DONE
    assert done.front["last_check"]["command"] == ["test", "-f", "build/ready.txt"]
    assert done.front["last_check"]["exit_code"] == 0
    assert "unblocked: check `test -f build/ready.txt` exited 0" in done.body
    assert done.runs == (result.dispatched.run_id,)


def test_a_ticket_check_waits_for_the_other_ticket_to_be_done(project: Project) -> None:
    project.all_sources_ready()
    other = project.add("Upstream fix", State.PARKED, "backlog")
    waiting = project.add(
        "Downstream", State.BLOCKED, "dependency", blocked_by="upstream", check=other.id
    )
    loop = project.open()
    assert tick(loop).signal is Signal.EXHAUSTED
    assert loop.board.get(waiting.id).front["last_check"]["state"] == "PARKED/backlog"
    loop.board.move(other.id, State.DONE)
    result = tick(loop, dry_run=True)
    assert result.level1.work is not None and result.level1.work.ticket is not None
    assert result.level1.work.ticket.id == waiting.id


def test_failing_checks_are_not_rerun_within_check_interval(project: Project) -> None:
    project.all_sources_ready()
    text = (project.root / "tether.toml").read_text()
    (project.root / "tether.toml").write_text(
        text.replace('check_timeout = "5s"', 'check_timeout = "5s"\ncheck_interval = "10m"')
    )
    counter = project.root / "count.txt"
    check = [
        sys.executable,
        "-c",
        f"p={str(counter)!r}; import os; n=int(open(p).read()) if os.path.exists(p) else 0; "
        "open(p,'w').write(str(n+1)); raise SystemExit(1)",
    ]
    project.add("Quota", State.BLOCKED, "quota", blocked_by="quota", check=check)
    loop = project.open()
    tick(loop)
    project.clock.advance(60)
    tick(loop, dry_run=True)
    assert counter.read_text() == "1"
    project.clock.advance(600)
    tick(loop, dry_run=True)
    assert counter.read_text() == "2"
