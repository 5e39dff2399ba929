"""The status message held for the person stays until the orchestrator is active again.

Real tmux with a real client attached (a pseudo-terminal): what the client's
terminal is sent shows whether the message is on its status line.
"""

from __future__ import annotations

import os
import pty
import select
import sqlite3
import time
from pathlib import Path

from tests.watch.watch_support import TmuxLab, gate_event, wait_until

from tether.clock import SystemClock
from tether.config.schema import WatchSettings
from tether.watch.daemon import Watchdog
from tether.watch.registry import Registration, add_orchestrator

HEAD = b"[tether watch] You have been idle"


class Client:
    """``tmux attach`` on a pseudo-terminal: keys in, the client's screen updates out."""

    def __init__(self, lab: TmuxLab) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the attached client
            os.environ["TERM"] = "xterm"
            argv = lab.tmux.argv("attach", "-t", "lab")
            os.execvp(argv[0], argv)  # noqa: S606 - tmux by its argv, no shell
        self.seen = b""

    def read(self, seconds: float = 0.5) -> bytes:
        """What the client drew within ``seconds``."""
        out = b""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                try:
                    out += os.read(self.fd, 65536)
                except OSError:
                    break
        self.seen += out
        return out

    def press(self, key: bytes) -> None:
        os.write(self.fd, key)

    def close(self) -> None:
        os.close(self.fd)
        os.waitpid(self.pid, 0)


def test_the_status_message_stays_until_the_orchestrator_is_active_again(
    lab: TmuxLab,
    subagents_dir: Path,
    tether_home: Path,
    conn: sqlite3.Connection,
    tmp_path: Path,
) -> None:
    pane, recording = lab.orchestrator()
    lab.subagent(subagents_dir / "a", ["--format", "claude-code", "--silent"])
    client = Client(lab)
    try:
        wait_until(lambda: b"[lab]" in client.read(0.2), what="the client to draw its status line")
        settings = WatchSettings(
            subagents_folders=[str(subagents_dir)],
            tmux_socket=lab.socket,
            idle_threshold=0.2,
            wake_min_interval=3600,  # one wake: what is shown later is the held message
        )
        dog = Watchdog(settings, tether_home, conn, clock=SystemClock())
        wait_until(lambda: dog.surveyor.look(conn, time.time()).running, what="the subagent")
        add_orchestrator(
            conn, Registration(tmux_pane=pane, tmux_socket=lab.socket, sessions=("orch-1",))
        )
        gate_event("orch-1", "Stop", tmp_path)  # its turn ended: idle from here
        wait_until(lambda: dog.check().decisions[0].action == "woken", what="the wake")
        assert wait_until(recording.lines)[0]["line"].startswith("[tether watch]")
        wait_until(lambda: HEAD in client.read(0.2), what="the status message")

        # a key press in the client takes a -d 0 message away ...
        client.press(b"x")
        wait_until(lambda: b"[lab]" in client.read(0.2), what="the plain status line again")
        # ... the orchestrator is still idle: the next cycle shows it again
        assert dog.check().decisions[0].action == "rate-limited"
        wait_until(lambda: HEAD in client.read(0.2), what="the held message, shown again")

        # the orchestrator takes the wake up: the message goes, and stays gone
        gate_event("orch-1", "UserPromptSubmit", tmp_path, prompt="answer the subagent")
        assert dog.check().decisions[0].action != "woken"
        wait_until(lambda: b"[lab]" in client.read(0.2), what="the message to be taken away")
        client.press(b"y")
        for _ in range(3):
            dog.check()
        assert HEAD not in client.read(1.0)
        dog.close()
    finally:
        client.close()
