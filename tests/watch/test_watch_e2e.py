"""The daemon as a real process, against a real tmux server, with scaled-down intervals.

The orchestrator is a pane running a small program that records every line
typed into its terminal with the time; subagents are scripted agents in panes
under a subagents folder. The intervals are the defaults divided by 60
(interval 0.5 s, idle threshold 0.75 s) so each test takes seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.watch.watch_support import TETHER, TmuxLab, gate_event, wait_until, write_project

from tether.clock import from_iso
from tether.watch.transcript import OpenCall, TranscriptReader

INTERVAL = 0.5
IDLE = 0.75


def _project(tmp_path: Path, lab: TmuxLab, subagents: Path, **watch: Any) -> Path:
    values: dict[str, Any] = {
        "interval": INTERVAL,
        "idle_threshold": IDLE,
        "wake_min_interval": 30,
        "confirm_after": 1.0,
    }
    values.update(watch)
    return write_project(tmp_path / "project", lab, subagents, **values)


def _tether(project: Path, *args: str, env: dict[str, str] | None = None) -> Any:
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
    return json.loads(done.stdout) if "--json" in args else done.stdout


def _daemon(project: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [TETHER, "watch", *args],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _line_with(daemon: subprocess.Popen[str], text: str, timeout: float = 60.0) -> str:
    """The first line of the daemon's output that holds ``text`` (lines before it are read)."""
    assert daemon.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([daemon.stdout], [], [], 0.2)
        if ready:
            line = daemon.stdout.readline()
            if text in line:
                return line
            assert line, f"the daemon ended before it said {text!r}"
    raise AssertionError(f"the daemon did not say {text!r} within {timeout} s")


def _stop(daemon: subprocess.Popen[str]) -> str:
    if daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
    out, err = daemon.communicate(timeout=20)
    assert daemon.returncode == 0, err
    return out


def test_an_idle_orchestrator_is_woken_at_the_first_look_after_it_is_idle(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path
) -> None:
    pane, recording = lab.orchestrator()
    lab.subagent(
        subagents_dir / "writer", ["--format", "claude-code", "--forever", "--step-delay", "0.2"]
    )
    project = _project(tmp_path, lab, subagents_dir)
    # The daemon is up and looking (it has seen the subagent) before the orchestrator
    # is registered: its own start, seconds on a loaded machine, is not the wake's delay.
    daemon = _daemon(project)
    try:
        _line_with(daemon, "subagent writer (pane %1): working")
        orch = _tether(project, "watch", "add-orchestrator", "--tmux-pane", pane, "--json")
        (line,) = wait_until(recording.lines, timeout=15, what="the wake in the orchestrator")
    finally:
        out = _stop(daemon)
    idle_from = from_iso(orch["added_at"]).timestamp() + IDLE  # idle since it was added
    assert line["t"] >= idle_from - 0.05  # not before it was idle
    # the first look after it became idle wakes it (a cycle's own work, on a loaded
    # machine, is the rest of the margin)
    assert line["t"] - idle_from <= INTERVAL + 2.0
    assert re.match(
        r"\[tether watch\] You have been idle for \d+ s while 1 subagent runs\.", line["line"]
    )
    assert "writer (pane %1)" in line["line"]
    assert "stopped by signal; watching ends." in out
    # (before the orchestrator was added, the person alone was told of the subagent)
    wakes = _tether(project, "watch", "log", "--json")
    (wake,) = [w for w in wakes if w["orchestrator_id"] == orch["id"]]
    assert wake["reason"] == "idle"
    assert wake["channels"][0] == {"channel": "tmux", "ok": True, "detail": f"send-keys {pane}"}


@pytest.mark.slow
def test_an_orchestrator_with_hook_events_every_little_while_is_never_woken(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path
) -> None:
    """Hook events every 0.4 s against an idle threshold of 3 s: no wake ever.

    The margin is wide on purpose: a false wake needs one hook call to take 2.6 s,
    which a loaded machine does not make of a process start. After the orchestrator
    ends its turn it is woken, and never before the threshold has passed since
    that last event (the daemon counted it)."""
    threshold = 3.0
    pane, recording = lab.orchestrator()
    lab.subagent(subagents_dir / "a", ["--format", "claude-code", "--silent"])
    project = _project(tmp_path, lab, subagents_dir, idle_threshold=threshold)
    _tether(project, "watch", "add-orchestrator", "--tmux-pane", pane, "--session", "orch-1")
    daemon = _daemon(project)
    try:
        events = ["PreToolUse", "PostToolUse"]
        deadline = time.monotonic() + 2.5 * threshold  # fifteen cycles and more
        n = 0
        while time.monotonic() < deadline:
            started = time.monotonic()
            gate_event(
                "orch-1", events[n % 2], tmp_path, tool_name="Bash", tool_use_id=f"u{n // 2}"
            )
            n += 1
            assert recording.lines() == []
            time.sleep(max(0.0, 0.4 - (time.monotonic() - started)))
        assert recording.lines() == []
        # the orchestrator ends its turn and goes quiet: now it is woken
        stopped = time.time()
        gate_event("orch-1", "Stop", tmp_path)
        (line,) = wait_until(recording.lines, timeout=30, what="the wake after the quiet")
        assert line["t"] >= stopped + threshold - 0.05
    finally:
        _stop(daemon)


def test_a_hanging_tool_call_is_named_in_the_wake(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path
) -> None:
    pane, recording = lab.orchestrator()
    folder = subagents_dir / "deployer"
    lab.subagent(
        folder,
        [
            "--format",
            "claude-code",
            "--steps",
            "10",
            "--step-delay",
            "0.1",
            "--hang-before-result",
            "2",
        ],
    )
    reader = TranscriptReader()

    def hanging() -> OpenCall | None:
        # step 1's call is open for a moment too: only step 2's is the one that hangs
        state = reader.read(folder / "agent.jsonl")
        call = state.open_call if state is not None else None
        return call if call is not None and "echo step 2" in call.input else None

    call = wait_until(hanging, what="the subagent to hang on step 2's tool call")
    assert call.tool == "Bash"
    wait_until(lambda: time.time() - call.since > 1.0, what="confirm_after to pass")
    project = _project(tmp_path, lab, subagents_dir)
    _tether(project, "watch", "add-orchestrator", "--tmux-pane", pane)
    daemon = _daemon(project)
    try:
        (line,) = wait_until(recording.lines, timeout=15, what="the wake")
    finally:
        _stop(daemon)
    text = line["line"]
    assert "Subagent deployer (pane %1) waits for confirmation: Bash" in text
    assert '"command": "echo step 2"' in text and "has had no result for" in text
    (wake,) = _tether(project, "watch", "log", "--json")
    assert (wake["reason"], wake["pending_tool"]) == ("confirmation", "Bash")
    assert wake["pending_call_id"] == call.call_id


def _let_go(fifo: Path) -> None:
    """Open ``fifo`` for writing and close it, if a reader still waits on it."""
    with contextlib.suppress(OSError):  # no reader (ENXIO): nobody waits
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def _stamped(text: str, needle: str) -> float:
    """The daemon's own time (seconds into its day) of its first line containing ``needle``."""
    line = next(x for x in text.splitlines() if needle in x)
    hours, minutes, seconds = line.split(" ", 1)[0].split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


@pytest.mark.slow  # a daemon, tmux, waits an interval
def test_watching_ends_by_itself_one_interval_after_the_last_subagent_ended(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path
) -> None:
    pane, _ = lab.orchestrator()
    folder = subagents_dir / "short"
    # the subagent's one tool call blocks on a fifo: it ends only once the test lets it,
    # after the daemon has logged it running (a daemon started late never misses it)
    release = tmp_path / "release.fifo"
    os.mkfifo(release)
    commands = tmp_path / "short-commands.txt"
    commands.write_text(f"cat {release}\n", encoding="utf-8")
    lab.subagent(folder, ["--format", "pi", "--commands-file", str(commands)])
    project = _project(tmp_path, lab, subagents_dir, idle_threshold=30)
    _tether(project, "watch", "add-orchestrator", "--tmux-pane", pane)
    log = tmp_path / "daemon.out"
    with log.open("w", encoding="utf-8") as sink:
        daemon = subprocess.Popen(
            [TETHER, "watch"], cwd=project, stdout=sink, stderr=subprocess.PIPE, text=True
        )
    try:
        wait_until(
            lambda: "subagent short (pane %1): runs-a-long-tool" in log.read_text("utf-8"),
            timeout=60,
            what="the daemon to log the subagent in its blocked tool call",
        )
        with release.open("w", encoding="utf-8") as fifo:  # the tool call returns; the agent ends
            fifo.write("released\n")
        _, err = daemon.communicate(timeout=60)
    finally:
        _let_go(release)  # a failed wait must not leave the agent blocked past the test
        if daemon.poll() is None:
            daemon.kill()
            daemon.communicate(timeout=20)
    assert daemon.returncode == 0, err
    out = log.read_text("utf-8")
    assert out.rstrip().endswith("since the last one ended; watching ends.")
    assert "subagent short (pane %1): ended" in out
    # it waits one interval after the cycle that saw the end (by the daemon's own clock)
    waited = _stamped(out, "watching ends.") - _stamped(out, "subagent short (pane %1): ended")
    assert INTERVAL <= waited % 86400 <= 2 * INTERVAL + 1.0


def test_a_bash_pane_with_a_live_agent_child_runs_and_bash_on_read_does_not(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path
) -> None:
    live = lab.subagent(subagents_dir / "live", ["--format", "pi", "--silent"])
    done = lab.window(subagents_dir / "done", ["bash", "-c", "read -r line"])
    lab.window(tmp_path / "elsewhere", ["bash", "-c", "read -r line"])  # not a subagent folder
    project = _project(tmp_path, lab, subagents_dir)

    def listed() -> dict[str, Any] | None:
        found = {s["pane"]: s for s in _tether(project, "subagents", "list", "--json")["subagents"]}
        return found if found.get(live, {}).get("running") else None

    found = wait_until(listed, what="the live subagent")
    assert set(found) == {live, done}
    assert found[live]["pane_command"] == found[done]["pane_command"] == "bash"
    assert found[live]["state"] == "working"
    assert found[live]["agent"]["name"] == "tether.harnesses.scripted"
    assert (found[done]["state"], found[done]["agent"]) == ("ended", None)
    text = _tether(project, "subagents", "list")
    assert text.startswith("1 of 2 subagent(s) running")


@pytest.mark.slow  # a detached daemon
def test_detached_daemon_writes_its_pid_and_ends_cleanly_on_sigterm(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path, tether_home: Path
) -> None:
    project = _project(tmp_path, lab, subagents_dir)
    pid_file = tmp_path / "watch.pid"
    out = _tether(project, "watch", "--detach", "--pid-file", str(pid_file), "--forever")
    assert out.startswith("tether watch: running as pid ")
    pid = int(pid_file.read_text())
    proc = psutil.Process(pid)
    log = tether_home / "watch" / "watch.log"
    wait_until(
        lambda: log.exists() and "watching (interval 0.5 s" in log.read_text(),
        what="the daemon to start",
    )
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    assert "stopped by signal; watching ends." in log.read_text()
    assert not pid_file.exists()


def test_detach_needs_a_pid_file(lab: TmuxLab, subagents_dir: Path, tmp_path: Path) -> None:
    project = _project(tmp_path, lab, subagents_dir)
    done = subprocess.run(
        [TETHER, "watch", "--detach"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "--detach needs --pid-file" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tmux-pane", "%99"], "no tmux pane %99"),
        (["--pid", "999999999"], "no process 999999999"),
        ([], "give exactly one of --tmux-pane"),
    ],
)
def test_add_orchestrator_refuses_what_is_not_there(
    lab: TmuxLab, subagents_dir: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    lab.orchestrator()
    project = _project(tmp_path, lab, subagents_dir)
    done = subprocess.run(
        [TETHER, "watch", "add-orchestrator", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
