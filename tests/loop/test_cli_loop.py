"""``tether loop tick|run`` as a user runs them: the last line, the exit code, Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.loop.conftest import Project

from tether.board import Board, State
from tether.store import connect
from tether.store.runs import list_runs

TETHER = str(Path(sys.executable).parent / "tether")


@pytest.mark.slow
def test_tick_ends_with_the_signal_line_and_its_exit_code(project: Project) -> None:
    project.note("idea.txt", "Write the release notes\n")
    first = project.tether("loop", "tick")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[-1] == (
        "TETHER-LOOP: CONTINUE — level 1 did work, the loop goes on."
    )
    project.board.move(project.board.load().in_state(State.ACTIONABLE)[0].id, State.DONE)
    blind = project.tether("loop", "tick")
    assert blind.returncode == 11
    assert blind.stdout.splitlines()[-1].startswith(
        "TETHER-LOOP: STOP (blind, 4/4 sources unavailable: decisions.ledger, memory.organic, "
        "memory.curated, user.model)"
    )
    guard = project.tether("loop", "tick")
    assert guard.returncode == 13
    assert guard.stdout.splitlines()[-1].startswith("TETHER-LOOP: STOP (guard, blind unchanged")
    project.all_sources_ready()
    exhausted = project.tether("loop", "tick")
    assert exhausted.returncode == 10
    assert exhausted.stdout.splitlines()[-1].startswith("TETHER-LOOP: STOP (exhausted)")
    assert project.tether("loop", "tick").returncode == 12
    project.add("Pick the licence", State.USER, "decision", needs="MIT or Apache-2.0")
    user_only = project.tether("loop", "tick")
    assert user_only.returncode == 14
    lines = user_only.stdout.splitlines()
    assert lines[-1].startswith("TETHER-LOOP: STOP (user-only)")
    assert lines[-3] == "For you, in one bundle (1 item):"
    assert sum(line.startswith("TETHER-LOOP:") for line in lines) == 1


def test_tick_json_gives_the_evidence_and_keeps_stdout_json(project: Project) -> None:
    project.all_sources_ready()
    (project.bin / "organic-memory").unlink()
    done = project.tether("loop", "tick", "--json")
    assert done.returncode == 11
    data = json.loads(done.stdout)
    assert data["line"] == done.stderr.splitlines()[-1]
    assert [s["status"] for s in data["level2"]["sources"]] == [
        "empty",
        "unavailable",
        "empty",
        "empty",
    ]
    assert data["level1"]["work"] is None
    assert [s["source"] for s in data["level1"]["sources"]] == [
        "intake",
        "actionable",
        "blocked",
        "waiting",
        "todo",
        "routine",
        "follow-up",
    ]


def test_dry_run_runs_no_agent_and_moves_no_ticket(project: Project) -> None:
    ticket = project.add("Fix the typo")
    dry = project.tether("loop", "tick", "--dry-run")
    assert dry.returncode == 0
    assert f'dry run: would start a run on {ticket.id} "Fix the typo"' in dry.stdout
    assert project.location(ticket.id) == "ACTIONABLE"
    assert not (project.home / "runs").exists()


def test_loop_run_ticks_until_a_stop_with_one_progress_line_per_tick(project: Project) -> None:
    project.all_sources_ready()
    project.note("a.txt", "First thing\n")
    project.add("Second thing", priority="P1")
    done = project.tether("loop", "run")
    assert done.returncode == 10, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("tick ")]
    assert [line.split(":")[0] for line in lines] == ["tick 1", "tick 2", "tick 3", "tick 4"]
    assert "triaged 1 INBOX entry" in lines[0]
    assert "completed" in lines[1] and "Second thing" not in lines[1]
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("TETHER-LOOP: STOP (exhausted)")
    conn = connect(project.home)
    runs = list_runs(conn)
    conn.close()
    assert len(runs) == 2 and len({r.session_id for r in runs}) == 2  # one session per unit
    starts = sorted((r.started_at, r.ended_at or "") for r in runs)
    assert starts[0][1] <= starts[1][0]  # one after the other, never at once


def test_loop_run_stops_at_max_ticks(project: Project) -> None:
    for title in ("one", "two", "three"):
        project.add(title)
    done = project.tether("loop", "run", "--max-ticks", "2")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1].startswith("TETHER-LOOP: CONTINUE")
    assert len(project.board.load().in_state(State.DONE)) == 2


def test_ctrl_c_stops_the_loop_cleanly_after_recording_and_one_loop_per_board(
    project: Project,
) -> None:
    project.write_config(
        '\n[profiles.slow]\nharness = "scripted"\nargs = ["--silent"]\ndefault = true\n'
    )
    ticket = project.add("Long job")
    project.add("Next job", priority="P3")
    proc = subprocess.Popen(
        [TETHER, "loop", "run"],
        cwd=project.root,
        env=project.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    conn = connect(project.home)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        running = [r for r in list_runs(conn) if r.status == "running" and r.agent_pgid]
        if running:
            break
        time.sleep(0.05)
    assert running, "the run never started"
    second = project.tether("loop", "tick")  # one loop per board at a time
    assert second.returncode == 30  # refused, like a second room: not a usage error
    assert f"another tether loop is working on {project.root / 'tickets'} (pid {proc.pid})" in (
        second.stderr
    )
    assert project.tether("loop", "tick", "--dry-run").returncode == 0  # looking is fine
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 24, out + err
    assert "stopped by Ctrl-C" in out
    runs = list_runs(conn)
    conn.close()
    assert [r.status for r in runs] == ["cancelled"]  # the next job was never started
    after = project.board.get(ticket.id)
    assert after.state is State.ACTIONABLE and after.last_run == runs[0].id
    assert after.report is not None and Path(after.report).is_file()


def test_a_repeated_user_only_tick_shows_the_bundle_again(project: Project) -> None:
    project.all_sources_ready()
    project.add("Pick the licence", State.USER, "decision", needs="MIT or Apache-2.0")
    for attempt in ("chain", "guard"):
        done = project.tether("loop", "tick")
        assert done.returncode == 14, (attempt, done.stdout)
        lines = done.stdout.splitlines()
        assert lines[-1].startswith("TETHER-LOOP: STOP (user-only)")
        assert lines[-3] == "For you, in one bundle (1 item):"
        assert '"Pick the licence" — needs: MIT or Apache-2.0' in lines[-2]
    assert "level 2: guard holds (exhausted at " in done.stdout
    assert "no work left" not in done.stdout and "unchanged since" not in done.stdout


def test_an_inbox_tether_cannot_triage_exits_41_naming_the_file(project: Project) -> None:
    project.note("broken.md", "---\ntitle: [unclosed\n---\nbody\n")
    done = project.tether("loop", "tick")
    assert done.returncode == 41, done.stdout + done.stderr
    assert "broken.md" in done.stderr and "TETHER-LOOP:" not in done.stdout
    assert (project.root / "tickets" / "INBOX" / "broken.md").is_file()


def test_an_unconfigured_project_exits_3_with_one_line_and_records_nothing(
    tmp_path: Path, project: Project
) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / ".git").mkdir()  # a project root without tether.toml
    board = Board(fresh / "tickets", fresh)
    board.ensure()
    ticket = board.add("Real work", state=State.ACTIONABLE)
    before = ticket.path.read_bytes()
    for command in (["loop", "tick"], ["loop", "run"], ["loop", "tick", "--dry-run"]):
        done = subprocess.run(
            [TETHER, *command],
            cwd=fresh,
            env=project.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 3, (command, done.stdout + done.stderr)
        assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
        assert "no agent profile is configured" in done.stderr
        assert "TETHER-LOOP:" not in done.stdout  # `while tether loop tick` ends at once
    assert board.get(ticket.id).location == "ACTIONABLE"
    assert board.get(ticket.id).path.read_bytes() == before
    assert not (project.home / "runs").exists() or not any((project.home / "runs").iterdir())


@pytest.mark.slow
def test_loop_run_prints_each_ticks_signal_line_after_its_progress_line(
    project: Project,
) -> None:
    project.all_sources_ready()
    project.add("one")
    project.add("two", priority="P3")
    done = project.tether("loop", "run")
    assert done.returncode == 10, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    ticks = [n for n, line in enumerate(lines) if line.startswith("tick ")]
    assert len(ticks) == 3
    for n in ticks:  # the signal line follows each progress line
        assert lines[n + 1].startswith("TETHER-LOOP: "), lines
    assert [lines[n + 1].split(" — ")[0] for n in ticks] == [
        "TETHER-LOOP: CONTINUE",
        "TETHER-LOOP: CONTINUE",
        "TETHER-LOOP: STOP (exhausted)",
    ]
    assert lines[-1].startswith("TETHER-LOOP: STOP (exhausted)")
