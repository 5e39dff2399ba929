"""``tether status --watch`` in a real tmux pane: it draws, refreshes in place, ends on Ctrl-C."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.status.world import World, add_run

SOCKET_NAME = "sock"


class Pane:
    def __init__(self, folder: Path) -> None:
        self.socket = folder / SOCKET_NAME

    def tmux(self, *args: str) -> str:
        # the pane's size must decide the width, not a COLUMNS/LINES the test runner set
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        return done.stdout

    def capture(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "status")

    def wait_for(self, text: str, timeout: float = 15.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} did not appear; the pane shows:\n{screen}")

    def dead(self) -> bool:
        return self.tmux("display-message", "-p", "-t", "status", "#{pane_dead}").strip() == "1"


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is needed for this test")
    made = Pane(tmp_path)
    try:
        yield made
    finally:
        subprocess.run(["tmux", "-S", str(made.socket), "kill-server"], capture_output=True)


@pytest.mark.slow
def test_watch_draws_every_panel_refreshes_in_place_and_stops_on_ctrl_c(
    world: World, pane: Pane
) -> None:
    command = shlex.join(
        [sys.executable, "-m", "tether.cli.main", "status", "--watch", "--interval", "0.3"]
    )
    pane.tmux(
        "new-session",
        "-d",
        "-s",
        "status",
        "-x",
        "150",
        "-y",
        "70",
        "-c",
        str(world.project),
        "-e",
        f"TETHER_HOME={world.home}",
        "-e",
        f"TETHER_WATCH_TMUX_SOCKET={pane.socket}",
        command,
    )
    pane.tmux("set-option", "-t", "status", "remain-on-exit", "on")
    screen = pane.wait_for("Last ended runs")
    for title in ("Runs in progress", "Loop", "Watchdog", "Gate sessions", "Ingest queue", "Room"):
        assert title in screen
    assert "r-20260302-092000-aaaaaa" in screen and "STOP (user-only)" in screen
    assert "9/10" in screen  # the gate session near its budget, as a bar
    assert "lead" in screen and "gone" in screen  # the orchestrator's process does not exist

    add_run(
        world.home,
        "r-20260302-093000-eeeeee",
        unit="T-4",
        iterations=2,
        started_at="2026-03-02T09:29:00.000000Z",
    )
    screen = pane.wait_for("r-20260302-093000-eeeeee")
    assert screen.count("Runs in progress") == 1  # refreshed in place, not printed again
    pane.tmux("send-keys", "-t", "status", "C-c")
    deadline = time.monotonic() + 10
    while not pane.dead():
        assert time.monotonic() < deadline, "status --watch did not end on Ctrl-C"
        time.sleep(0.1)
    assert "Traceback" not in pane.capture()


def test_watch_in_80_by_24_keeps_its_top_and_says_what_is_cut(world: World, pane: Pane) -> None:
    """The screen is cut to the terminal's height, never scrolled: the header and the runs in
    progress stay on top, the last line says how many lines a taller terminal would show."""
    command = shlex.join([sys.executable, "-m", "tether.cli.main", "status", "--watch"])
    pane.tmux(
        "new-session", "-d", "-s", "status", "-x", "80", "-y", "24", "-c", str(world.project),
        "-e", f"TETHER_HOME={world.home}", "-e", f"TETHER_WATCH_TMUX_SOCKET={pane.socket}",
        command,
    )  # fmt: skip
    pane.tmux("set-option", "-t", "status", "remain-on-exit", "on")
    screen = pane.wait_for("more lines (a taller terminal shows them)")
    lines = screen.rstrip("\n").splitlines()
    assert len(lines) <= 24
    assert lines[0].startswith("tether status ·") and "Runs in progress" in lines[1]
    assert "more lines" in lines[-1]
    assert max(len(line) for line in lines) <= 80
    pane.tmux("send-keys", "-t", "status", "C-c")
    deadline = time.monotonic() + 10
    while not pane.dead():
        assert time.monotonic() < deadline, "status --watch did not end on Ctrl-C"
        time.sleep(0.1)
