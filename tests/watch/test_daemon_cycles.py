"""The decision of each cycle, driven cycle by cycle (injected clock where time matters).

Real tmux, real subagent processes, real gate hook calls; only time is injected
where the test needs minutes to pass.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import psutil
import pytest
from tests.watch.watch_support import PYTHON, TETHER, TmuxLab, gate_event, wait_until, write_project

from tether.clock import FakeClock, SystemClock
from tether.config.schema import WatchSettings
from tether.store import connect
from tether.watch.daemon import Watchdog
from tether.watch.registry import Registration, add_orchestrator, list_wakes


def _settings(lab: TmuxLab, subagents: Path, **values: object) -> WatchSettings:
    base: dict[str, object] = {"subagents_folders": [str(subagents)], "tmux_socket": lab.socket}
    base.update(values)
    return WatchSettings(**base)  # type: ignore[arg-type]


def _running_subagent(lab: TmuxLab, subagents: Path) -> str:
    pane = lab.subagent(subagents / "a", ["--format", "claude-code", "--silent"])
    return pane


@pytest.mark.slow
def test_an_orchestrator_that_never_resumes_is_woken_at_most_once_per_min_interval(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection
) -> None:
    """Five minutes with the default settings (45 s idle, 60 s between wakes), no sleeping."""
    pane, recording = lab.orchestrator()
    _running_subagent(lab, subagents_dir)
    clock = FakeClock(start=datetime.now(UTC))
    add_orchestrator(conn, Registration(tmux_pane=pane, tmux_socket=lab.socket), clock=clock)
    settings = _settings(lab, subagents_dir)
    assert (settings.idle_threshold, settings.wake_min_interval) == (45.0, 60.0)
    dog = Watchdog(settings, tether_home, conn, clock=clock)
    wait_until(lambda: dog.check().running == 1, what="the subagent to run")
    actions = []
    for _ in range(60):  # 300 s in steps of 5 s
        clock.advance(5)
        report = dog.check()
        actions.append(report.decisions[0].action)
    dog.close()
    wakes = list_wakes(conn)
    times = [datetime.fromisoformat(w.at).timestamp() for w in wakes]
    assert [round(b - a) for a, b in itertools.pairwise(times)] == [60, 60, 60, 60]
    assert len(wakes) == 5  # at 45, 105, 165, 225, 285 s
    assert actions.count("woken") == 5 and "rate-limited" in actions
    assert actions[:8] == ["active"] * 8  # 5 … 40 s: not idle yet
    lines = wait_until(
        lambda: len(recording.lines()) == 5 and recording.lines(),
        what="five wake lines in the orchestrator",
    )
    assert all(line["line"].startswith("[tether watch] You have been idle") for line in lines)
    assert all(w.reason == "idle" and w.subagent == "a (pane %1)" for w in wakes)


def test_busy_and_own_permission_veto_typing_but_not_the_human(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    pane, recording = lab.orchestrator()
    _running_subagent(lab, subagents_dir)
    settings = _settings(lab, subagents_dir, idle_threshold=0.2, wake_min_interval=0)
    dog = Watchdog(settings, tether_home, conn, clock=SystemClock())
    wait_until(lambda: dog.surveyor.look(conn, time.time()).running, what="the subagent to run")

    # a turn the gate saw start and not stop: busy, no wake however long the quiet lasts
    orch = add_orchestrator(
        conn, Registration(tmux_pane=pane, tmux_socket=lab.socket, sessions=("orch-1",))
    )
    gate_event("orch-1", "UserPromptSubmit", tmp_path, prompt="start the subagents")
    busy = wait_until(
        lambda: (d := dog.check().decisions[0]).idle_seconds >= 0.2 and d,  # type: ignore[operator]
        what="the orchestrator to be quiet past the threshold",
    )
    assert busy.action == "busy (turn open since UserPromptSubmit)"
    assert busy.activity_source == "hook UserPromptSubmit"

    # its own permission dialog: only the human is told, nothing is typed
    gate_event("orch-1", "PermissionRequest", tmp_path, tool_name="Bash")
    decision = wait_until(
        lambda: (d := dog.check().decisions[0]).action != "active" and d, what="a decision"
    )
    assert decision.action == "human-only"
    (wake,) = list_wakes(conn)
    assert wake.reason == "own-permission" and wake.orchestrator_id == orch.id
    assert {c["channel"] for c in wake.channels} == {"log", "tmux-status"}
    assert not wake.delivered

    # the turn ends: now it is woken
    gate_event("orch-1", "Stop", tmp_path)
    decision = wait_until(
        lambda: (d := dog.check().decisions[0]).action == "woken" and d, what="a wake"
    )
    assert decision.activity_source == "hook Stop"
    assert wait_until(recording.lines)[0]["line"].startswith("[tether watch]")
    dog.close()


def test_wake_command_runs_with_the_wake_filled_in(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    pane, _ = lab.orchestrator()
    _running_subagent(lab, subagents_dir)
    out = tmp_path / "command.json"
    script = (
        "import json, os, sys; json.dump([sys.argv[1:], os.environ['TETHER_WAKE_REASON']], "
        f"open({str(out)!r}, 'w'))"
    )
    clock = FakeClock(start=datetime.now(UTC))
    add_orchestrator(
        conn, Registration(tmux_pane=pane, tmux_socket=lab.socket, name="boss"), clock=clock
    )
    settings = _settings(
        lab,
        subagents_dir,
        notify=False,
        wake_command=[PYTHON, "-c", script, "{reason}", "{orchestrator}"],
    )
    dog = Watchdog(settings, tether_home, conn, clock=clock)
    wait_until(lambda: dog.check().running == 1, what="the subagent to run")
    clock.advance(46)
    report = dog.check()
    assert report.decisions[0].action == "woken"
    (wake,) = report.wakes
    assert [c["channel"] for c in wake.channels] == ["tmux", "command"]
    assert json.loads(out.read_text()) == [["idle", "boss"], "idle"]
    dog.close()


def test_without_an_orchestrator_the_human_is_told_at_the_same_rate(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection
) -> None:
    _running_subagent(lab, subagents_dir)
    clock = FakeClock(start=datetime.now(UTC))
    lines: list[str] = []
    dog = Watchdog(_settings(lab, subagents_dir), tether_home, conn, clock=clock, log=lines.append)
    report = wait_until(lambda: (r := dog.check()).running == 1 and r, what="the subagent")
    assert [d.action for d in report.decisions] == ["human-only"]
    clock.advance(30)
    assert [d.action for d in dog.check().decisions] == ["rate-limited"]
    clock.advance(30)
    assert [d.action for d in dog.check().decisions] == ["human-only"]
    wakes = list_wakes(conn)
    assert [w.reason for w in wakes] == ["no-orchestrator", "no-orchestrator"]
    assert wakes[0].message.startswith("[tether watch] No orchestrator is registered while 1")
    assert any(line.startswith("wake: [tether watch] No orchestrator") for line in lines)
    dog.close()


def test_a_growing_log_is_activity_and_a_still_one_is_not(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    pane, recording = lab.orchestrator()
    _running_subagent(lab, subagents_dir)
    log = tmp_path / "orchestrator-transcript.jsonl"
    log.write_text("")
    settings = _settings(lab, subagents_dir, idle_threshold=0.5, wake_min_interval=0)
    dog = Watchdog(settings, tether_home, conn)
    wait_until(lambda: dog.surveyor.look(conn, time.time()).running, what="the subagent to run")
    add_orchestrator(conn, Registration(tmux_pane=pane, tmux_socket=lab.socket, log_path=str(log)))
    actions = set()
    deadline = time.monotonic() + 2.0  # four idle thresholds
    while time.monotonic() < deadline:
        with log.open("a") as handle:
            handle.write('{"type": "assistant"}\n')
        decision = dog.check().decisions[0]
        actions.add((decision.action, decision.activity_source))
    # (the first append's mtime may trail the registration: file times are coarse)
    assert {action for action, _ in actions} == {"active"} and ("active", "log") in actions
    decision = wait_until(
        lambda: (d := dog.check().decisions[0]).action == "woken" and d,
        what="a wake once the log stands still",
    )
    assert decision.activity_source == "log"
    assert wait_until(recording.lines)
    dog.close()


def test_the_rate_limit_holds_across_daemons(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection
) -> None:
    """The limit lives in the wake log: a second daemon (or `watch once`) respects it."""
    pane, recording = lab.orchestrator()
    _running_subagent(lab, subagents_dir)
    clock = FakeClock(start=datetime.now(UTC))
    add_orchestrator(conn, Registration(tmux_pane=pane, tmux_socket=lab.socket), clock=clock)
    other = connect(tether_home)
    first = Watchdog(_settings(lab, subagents_dir), tether_home, conn, clock=clock)
    second = Watchdog(_settings(lab, subagents_dir), tether_home, other, clock=clock)
    wait_until(lambda: first.surveyor.look(conn, time.time()).running, what="the subagent")
    clock.advance(50)
    assert first.check().decisions[0].action == "woken"
    assert second.check().decisions[0].action == "rate-limited"
    clock.advance(60)
    assert second.check().decisions[0].action == "woken"
    assert first.check().decisions[0].action == "rate-limited"
    assert len(wait_until(lambda: len(recording.lines()) == 2 and recording.lines())) == 2
    for dog in (first, second):
        dog.close()
    other.close()


@pytest.mark.parametrize("how", ["pane", "pid"])
def test_a_gone_orchestrator_is_reported_to_the_human_at_the_wake_rate(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection, how: str
) -> None:
    """Nobody will start a turn: as with no orchestrator at all, the human is told."""
    clock = FakeClock(start=datetime.now(UTC))
    _running_subagent(lab, subagents_dir)  # first: killing a server's only pane ends the server
    if how == "pane":
        pane, _ = lab.orchestrator()
        orch = add_orchestrator(
            conn, Registration(tmux_pane=pane, tmux_socket=lab.socket), clock=clock
        )
        lab.run("kill-pane", "-t", pane)
        why = f"pane {pane} is gone"
    else:
        proc = subprocess.Popen(["sleep", "600"])
        started = psutil.Process(proc.pid).create_time()
        orch = add_orchestrator(
            conn, Registration(pid=proc.pid, pid_start_time=started), clock=clock
        )
        proc.kill()
        proc.wait()
        why = f"process {proc.pid} has ended"
    lines: list[str] = []
    dog = Watchdog(_settings(lab, subagents_dir), tether_home, conn, clock=clock, log=lines.append)
    report = wait_until(lambda: (r := dog.check()).running == 1 and r, what="the subagent")
    (decision,) = report.decisions
    assert (decision.action, decision.note) == ("orchestrator-gone", why)
    (wake,) = report.wakes
    assert decision.wake_id == wake.id
    assert (wake.reason, wake.orchestrator_id, wake.delivered) == (
        "orchestrator-gone",
        orch.id,
        False,
    )
    assert wake.message.startswith(
        f"[tether watch] The registered orchestrator {orch.name} is gone ({why}) while 1 "
        "subagent runs. Still working: a (pane %"
    )
    assert wake.message.endswith("or check on them yourself (tether subagents list).")
    assert [c["channel"] for c in wake.channels] == ["log"]  # no pane to type into or show
    assert lines == [f"wake: {wake.message}"]
    clock.advance(30)
    assert (dog.check().decisions[0].action, len(list_wakes(conn))) == ("orchestrator-gone", 1)
    clock.advance(30)
    assert dog.check().decisions[0].wake_id is not None
    assert [w.reason for w in list_wakes(conn)] == ["orchestrator-gone"] * 2
    dog.close()


def test_a_pane_of_a_restarted_tmux_server_is_not_the_registered_orchestrator(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path, tether_home: Path, conn: sqlite3.Connection
) -> None:
    """tmux numbers panes from %0 again: the id alone would point at an unrelated pane."""
    pane, _ = lab.orchestrator("first")
    project = write_project(tmp_path / "project", lab, subagents_dir)
    subprocess.run(
        [TETHER, "watch", "add-orchestrator", "--tmux-pane", pane],
        cwd=project,
        capture_output=True,
        timeout=30,
        check=True,
    )
    lab.restart()
    impostor, recording = lab.orchestrator("second")
    assert impostor == pane
    _running_subagent(lab, subagents_dir)
    clock = FakeClock(start=datetime.now(UTC))
    dog = Watchdog(_settings(lab, subagents_dir), tether_home, conn, clock=clock)
    wait_until(lambda: dog.surveyor.look(conn, time.time()).running, what="the subagent")
    clock.advance(50)  # idle past the threshold: a live orchestrator would be woken now
    report = dog.check()
    (decision,) = report.decisions
    assert decision.action == "orchestrator-gone"
    assert decision.note is not None
    assert decision.note.startswith(f"pane {pane} now runs another process (pid ")
    (wake,) = report.wakes
    assert wake.reason == "orchestrator-gone"
    assert [c["channel"] for c in wake.channels] == ["log"]
    assert recording.lines() == []
    dog.close()
