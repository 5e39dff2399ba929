"""The tmux command line, spoken through argv lists (never a shell).

``Tmux(socket)`` addresses one tmux server: ``None`` is the default server,
a plain name is ``-L NAME``, a path is ``-S PATH``. Typing into a pane is two
calls: the text with ``send-keys -l`` (literal: no key names are looked up) and
then ``Enter`` as a key of its own, so the text is submitted exactly as written.

A full-screen agent (Claude Code, Pi) that reads the text and the Enter in one
chunk takes the whole as a paste, and the Enter never submits it: the text sits
in its input box. So the Enter waits until the pane shows the text was read,
and is pressed once more when the pane did not change after it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tether.core.errors import TetherError
from tether.core.process_tree import unreaped_end

if TYPE_CHECKING:
    import subprocess

_FIELDS = (
    "#{pane_id}",
    "#{pane_pid}",
    "#{pane_current_path}",
    "#{pane_current_command}",
    "#{session_name}",
    "#{window_index}",
    "#{pane_dead}",
    "#{pane_dead_status}",
    "#{pane_dead_signal}",
    "#{pid}",  # the server's: a pane's process is its child
)
_SEP = "\t"
TIMEOUT_S = 5.0
ECHO_WAIT_S = 3.0  # for the pane to show typed text before Enter is pressed
SETTLE_S = 0.15  # then a pause, so the Enter arrives in a read of its own
ENTER_WAIT_S = 1.0  # for the pane to change after an Enter before it is pressed again
ENTER_TRIES = 2
POLL_S = 0.05


class TmuxError(TetherError):
    """A tmux command failed (the server is gone, the pane does not exist, ...)."""


@dataclass(frozen=True)
class Pane:
    pane_id: str  # "%3"
    pane_pid: int  # the pane's first process (its shell)
    current_path: str
    current_command: str  # what tmux shows; never used to decide "running"
    session: str
    window: int
    dead: bool
    # a dead pane kept by remain-on-exit: how its process ended (tmux knows, or soon will)
    dead_status: int | None = None
    dead_signal: int | None = None

    @property
    def end_known(self) -> bool:
        """Dead, and how its process ended is known (its exit status or signal)."""
        return self.dead and (self.dead_status is not None or self.dead_signal is not None)

    @property
    def label(self) -> str:
        return f"{self.session}:{self.window} {self.pane_id}"


def _unreaped(pane: Pane, server: str) -> Pane:
    """A pane tmux lists dead without its status: its process has closed the terminal and
    tmux has not reaped it yet. That lasts a moment, or long: a tmux before 3.6 built with
    libutempter misses the SIGCHLD of a pane's process that ends while another pane closes
    (libutempter's own handler is in place while its helper runs), and leaves the process
    unreaped until another of its children ends. The kernel keeps how it ended until then.
    """
    end = unreaped_end(pane.pane_pid, int(server))
    if end is None:
        return pane  # not known yet: the reader waits a moment for tmux to say
    return replace(pane, dead_status=end[0], dead_signal=end[1])


class Tmux:
    def __init__(self, socket: str | None = None, binary: str | None = None) -> None:
        self.socket = socket
        self._binary = binary

    @property
    def binary(self) -> str:
        """The tmux program (looked up on first use: a question about the socket needs none)."""
        if self._binary is None:
            import shutil

            self._binary = shutil.which("tmux") or "tmux"
        return self._binary

    def argv(self, *args: str) -> list[str]:
        base = [self.binary]
        if self.socket:
            base += ["-S", self.socket] if "/" in self.socket else ["-L", self.socket]
        return [*base, *args]

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        import subprocess  # here: asking whether a server may run (tether status) spawns nothing

        try:
            done = subprocess.run(
                self.argv(*args),
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except FileNotFoundError as exc:
            raise TmuxError(f"tmux is not installed ({self.binary} not found)") from exc
        except subprocess.TimeoutExpired as exc:
            raise TmuxError(f"tmux {' '.join(args[:2])} did not answer in {TIMEOUT_S} s") from exc
        if check and done.returncode != 0:
            raise TmuxError(f"tmux {' '.join(args[:3])}: {done.stderr.strip() or 'failed'}")
        return done

    def socket_path(self) -> str:
        """Where this server's socket is (tmux's own rule: ``-S`` path; else ``$TMUX``'s for
        the default server inside tmux; else ``$TMUX_TMPDIR``/tmux-UID/NAME)."""
        if self.socket and "/" in self.socket:
            return self.socket
        inside = os.environ.get("TMUX", "")
        if not self.socket and inside:
            return inside.split(",", 1)[0]
        folder = os.environ.get("TMUX_TMPDIR") or "/tmp"  # noqa: S108 - tmux's default
        return f"{folder}/tmux-{os.getuid()}/{self.socket or 'default'}"

    def may_run(self) -> bool:
        """False when no server can be running (no socket file): no tmux process needed."""
        return Path(self.socket_path()).exists()

    def available(self) -> bool:
        import shutil

        return shutil.which(self.binary) is not None or "/" in self.binary

    def list_panes(self) -> list[Pane]:
        """Every pane of the server; none when no server runs (no socket: no tmux started)."""
        if not self.available() or not self.may_run():
            return []
        done = self._run("list-panes", "-a", "-F", _SEP.join(_FIELDS), check=False)
        if done.returncode != 0:
            return []  # "no server running on ..." or "error connecting to ..."
        panes: list[Pane] = []
        for line in done.stdout.splitlines():
            parts = line.split(_SEP)
            if len(parts) != len(_FIELDS):
                continue
            pane_id, pid, path, command, session, window, dead, status, signal, server = parts
            try:
                pane = Pane(
                    pane_id,
                    int(pid),
                    path,
                    command,
                    session,
                    int(window),
                    dead == "1",
                    int(status) if status.strip() else None,
                    int(signal) if signal.strip() else None,
                )
                panes.append(pane if pane.end_known or not pane.dead else _unreaped(pane, server))
            except ValueError:
                continue
        return panes

    def pane(self, pane_id: str) -> Pane | None:
        return next((p for p in self.list_panes() if p.pane_id == pane_id), None)

    def send_text(self, pane_id: str, text: str) -> None:
        """Type ``text`` into the pane and press Enter once the pane has read the text."""
        before = self._screen(pane_id)
        self._run("send-keys", "-t", pane_id, "-l", "--", text)
        typed = self._still(pane_id, self._changed_from(pane_id, before, ECHO_WAIT_S))
        time.sleep(SETTLE_S)
        for _ in range(ENTER_TRIES):
            self._run("send-keys", "-t", pane_id, "Enter")
            if self._changed_from(pane_id, typed, ENTER_WAIT_S) != typed:
                return

    def capture(self, pane_id: str) -> str:
        """What the pane shows now (its visible screen, as text)."""
        return self._run("capture-pane", "-p", "-t", pane_id).stdout

    def _screen(self, pane_id: str) -> tuple[str, str]:
        """The pane's cursor and text: an Enter a shell took moves the cursor only.

        Both in one tmux call (two commands in one queue, which the server runs
        without reading the pane in between): read by two calls, an echo landing
        between them gave a look with the new text and the old cursor, and the
        next look's cursor passed for the agent taking the Enter."""
        done = self._run(
            "display-message", "-p", "-t", pane_id, "#{cursor_x},#{cursor_y}",
            ";", "capture-pane", "-p", "-t", pane_id,
        )  # fmt: skip
        cursor, _, text = done.stdout.partition("\n")
        return cursor, text

    def _changed_from(self, pane_id: str, shown: tuple[str, str], wait_s: float) -> tuple[str, str]:
        """The pane's screen once it differs from ``shown``, or as it is after ``wait_s``."""
        deadline = time.monotonic() + wait_s
        while True:
            now = self._screen(pane_id)
            if now != shown or time.monotonic() >= deadline:
                return now
            time.sleep(POLL_S)

    def _still(self, pane_id: str, shown: tuple[str, str]) -> tuple[str, str]:
        """The pane's screen once two looks in a row agree (at most ``ECHO_WAIT_S``).

        An agent may draw its echo in more than one write; the Enter's effect is
        judged against the finished echo, not a half-drawn one."""
        deadline = time.monotonic() + ECHO_WAIT_S
        while time.monotonic() < deadline:
            time.sleep(POLL_S)
            now = self._screen(pane_id)
            if now == shown:
                break
            shown = now
        return shown

    def display_message(self, pane_id: str, text: str, hold: bool = False) -> None:
        """Show ``text`` in the status line of the client that shows the pane.

        ``hold``: until a key is pressed in that client (``-d 0``), else for 8 s.
        """
        delay = "0" if hold else "8000"
        self._run("display-message", "-t", pane_id, "-d", delay, text, check=False)

    def clear_message(self, pane_id: str) -> None:
        """Take a held status message away: an empty one that ends after 1 ms replaces it."""
        self._run("display-message", "-t", pane_id, "-d", "1", "", check=False)

    def bell(self, pane_id: str) -> list[str]:
        """Ring the bell of every client attached to the pane's session; their ttys."""
        done = self._run("list-clients", "-t", pane_id, "-F", "#{client_tty}", check=False)
        if done.returncode != 0:
            return []
        rung = []
        for tty in done.stdout.split():
            if not tty.startswith("/dev/"):
                continue
            try:
                with open(tty, "w", encoding="utf-8") as handle:
                    handle.write("\a")
            except OSError:
                continue
            rung.append(tty)
        return rung
