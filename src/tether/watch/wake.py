"""Waking an orchestrator: the message, the channels that start a turn, the human.

Channels, one of which starts the orchestrator's turn:

- ``harness``: a wake endpoint inside the orchestrator's harness (the Pi
  extension calls ``pi.sendUserMessage``; the Claude Code rewake hook exits 2,
  which ``asyncRewake`` turns into a new turn). Asked through a request file;
  it has woken the orchestrator only once the endpoint acknowledged it (see
  ``acks``). An endpoint that did not take its last request is not asked again.
- ``tmux``: the message typed into the orchestrator's pane with ``send-keys -l``,
  then ``Enter``.

``wake_prefer`` decides which comes first when both exist. A configured
``wake_command`` (an argv; ``{message}``, ``{reason}``, ``{subagent}``,
``{tool}``, ``{orchestrator}`` are filled in, and the same values are in the
environment as ``TETHER_WAKE_*``) runs in addition. The human is told every
time, detached or not: a log line, the terminal bell when the watchdog has a
terminal, a tmux status-line message on the orchestrator's pane held until a
key is pressed there, the bell on every tmux client attached to that pane's
session, a desktop notification where a notifier exists (``notify-send`` with
a graphical session, ``terminal-notifier``), and ``notify_command`` (an argv
filled in like ``wake_command``, e.g. a chat webhook script) when configured.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.watch.confirm import Wait
from tether.watch.endpoints import Endpoint, write_request
from tether.watch.subagents import Subagent
from tether.watch.tmux import Tmux, TmuxError

STATUS_MAX_CHARS = 200  # the tmux status line shows this much of a wake message

COMMAND_TIMEOUT_S = 10.0
PREFIX = "[tether watch]"


@dataclass(frozen=True)
class SubagentView:
    """A subagent as the wake message and ``subagents wait`` show it."""

    subagent: Subagent
    wait: Wait | None

    @property
    def state(self) -> str:
        if not self.subagent.running:
            if self.subagent.starting:
                return "starting"
            return "killed" if self.subagent.killed else "ended"
        if self.wait is None or self.wait.kind == "tool":
            return "working"
        if self.wait.kind == "long-tool":
            return "runs-a-long-tool"
        return "waits-for-" + self.wait.kind


@dataclass(frozen=True)
class ChannelResult:
    channel: str
    ok: bool  # for "harness": the request was written (not yet that it was taken)
    detail: str = ""
    request_id: str | None = None  # harness: the request, and the endpoint it went to
    endpoint: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"channel": self.channel, "ok": self.ok, "detail": self.detail}
        if self.request_id is not None:
            data.update(request_id=self.request_id, endpoint=self.endpoint, acknowledged_at=None)
        return data


@dataclass
class Delivery:
    channels: list[ChannelResult] = field(default_factory=list)

    @property
    def delivered(self) -> bool:
        """Typed into the pane: that starts a turn (a harness request does once it is taken)."""
        return any(c.ok for c in self.channels if c.channel == "tmux")

    @property
    def requested(self) -> bool:
        return any(c.ok for c in self.channels if c.channel == "harness")


ORCHESTRATOR_TAIL = (
    "Check on them now (tether subagents wait --json) and keep watching until they finish."
)
HUMAN_TAIL = (
    "Register the orchestrator that watches them (tether watch add-orchestrator) "
    "or check on them yourself (tether subagents list)."
)


def running_phrase(count: int) -> str:
    """``1 subagent runs`` / ``3 subagents run``."""
    return f"{count} subagent runs" if count == 1 else f"{count} subagents run"


def compose(
    running: Sequence[SubagentView],
    idle_seconds: float,
    now: float,
    max_chars: int,
    *,
    head: str | None = None,
    tail: str = ORCHESTRATOR_TAIL,
) -> str:
    """One line (Enter would submit a newline early): what runs, who waits, what to do.

    Waiting subagents come first, longest wait first, each with its tool; those
    that do not fit into ``max_chars`` are counted instead of cut mid-sentence.
    ``head`` replaces the opening sentence (after the prefix), ``tail`` the
    closing one: a message for the human instead of the orchestrator.
    """
    waiting = sorted(
        (v for v in running if v.wait is not None and v.wait.kind != "tool"),
        key=lambda v: v.wait.since if v.wait else 0.0,
    )
    if head is None:
        head = (
            f"You have been idle for {round(idle_seconds)} s while {running_phrase(len(running))}."
        )
    head = f"{PREFIX} {head}"
    working = [v for v in running if v not in waiting]
    summary = ""
    if working:
        names = ", ".join(v.subagent.label for v in working[:3])
        more = f" and {len(working) - 3} more" if len(working) > 3 else ""
        summary = f"Still working: {names}{more}."
    parts = [head]
    budget = max_chars - len(head) - len(tail) - len(summary) - 40
    shown = 0
    for view in waiting:
        assert view.wait is not None
        part = f"Subagent {view.subagent.label} {view.wait.describe(now)}."
        if len(part) + 1 > budget and shown > 0:
            break
        parts.append(part)
        budget -= len(part) + 1
        shown += 1
    if shown < len(waiting):
        parts.append(f"{len(waiting) - shown} more subagent(s) wait too.")
    if summary:
        parts.append(summary)
    text = " ".join(parts)
    room = max_chars - len(tail) - 1
    if len(text) > room:  # a single very long entry: cut it
        text = text[: max(room - 1, 0)].rstrip() + "…"
    return f"{text} {tail}"


def _fill(argv: Sequence[str], values: dict[str, str]) -> list[str]:
    out = []
    for arg in argv:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


@dataclass(frozen=True)
class Reach:
    """Where a wake can reach an orchestrator."""

    tmux: Tmux | None = None
    pane: str | None = None  # the pane to type into
    endpoints: Sequence[Endpoint] = ()  # its harness's wake endpoints
    # keys of endpoints that did not take their last request: passed over (and said
    # so) in favour of the pane
    deaf: Collection[str] = ()


class Waker:
    """Delivers one wake through the channels an orchestrator has."""

    def __init__(
        self,
        home: Path,
        *,
        prefer: str = "harness",
        command: Sequence[str] = (),
        notify: bool = True,
        notify_command: Sequence[str] = (),
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.home = home
        self.prefer = prefer
        self.command = list(command)
        self.notify = notify
        self.notify_command = list(notify_command)
        self.log = log or (lambda line: None)

    def deliver(
        self,
        message: str,
        reach: Reach,
        *,
        values: dict[str, str],
        at: float,
        starts_turn: bool = True,
    ) -> Delivery:
        """Deliver through the first channel that applies, then the command and the human."""
        tmux, pane, endpoints, deaf = reach.tmux, reach.pane, reach.endpoints, reach.deaf
        delivery = Delivery()
        if starts_turn:
            order = ["harness", "tmux"] if self.prefer == "harness" else ["tmux", "harness"]
            for channel in order:
                if (
                    channel == "harness"
                    and endpoints
                    and self._request(message, endpoints, deaf, at, delivery)
                ):
                    break
                if channel == "tmux" and tmux is not None and pane is not None:
                    try:
                        tmux.send_text(pane, message)
                        delivery.channels.append(ChannelResult("tmux", True, f"send-keys {pane}"))
                        break
                    except TmuxError as exc:
                        delivery.channels.append(ChannelResult("tmux", False, str(exc)))
        if self.command:
            delivery.channels.append(self._run_command(message, values, self.command, "command"))
        if self.notify:
            delivery.channels.extend(self._tell_human(message, tmux, pane, values))
        return delivery

    def _request(
        self,
        message: str,
        endpoints: Sequence[Endpoint],
        deaf: Collection[str],
        at: float,
        delivery: Delivery,
    ) -> bool:
        """Write a wake request for the newest endpoint that still listens; True when written."""
        listening = [e for e in endpoints if e.key not in deaf]
        if not listening:
            keys = ", ".join(sorted(e.key for e in endpoints))
            detail = f"not asked: {keys} did not take the last request"
            delivery.channels.append(ChannelResult("harness", False, detail))
            return False
        endpoint = max(listening, key=lambda e: e.registered)
        # os.urandom(n).hex() is what secrets.token_hex(n) returns; `subagents list` and
        # `wait` import this module and would load random, base64 and hmac with secrets
        request_id = f"w-{int(at)}-{os.urandom(4).hex()}"
        try:
            write_request(self.home, endpoint.key, request_id, message, at)
        except OSError as exc:
            delivery.channels.append(ChannelResult("harness", False, str(exc)))
            return False
        detail = f"request {request_id} to {endpoint.key}"
        delivery.channels.append(
            ChannelResult("harness", True, detail, request_id=request_id, endpoint=endpoint.key)
        )
        return True

    def _run_command(
        self, message: str, values: dict[str, str], command: Sequence[str], channel: str
    ) -> ChannelResult:
        filled = {"message": message, **values}
        argv = _fill(command, filled)
        env = dict(os.environ)
        env.update({f"TETHER_WAKE_{k.upper()}": v for k, v in filled.items()})
        try:
            done = subprocess.run(
                argv,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=COMMAND_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return ChannelResult(channel, False, f"{argv[0]}: {exc}")
        detail = f"{argv[0]} exited {done.returncode}"
        return ChannelResult(channel, done.returncode == 0, detail)

    def _tell_human(
        self, message: str, tmux: Tmux | None, pane: str | None, values: dict[str, str]
    ) -> list[ChannelResult]:
        """Every channel that reaches the person, detached or not (none needs the log read)."""
        results = [ChannelResult("log", True)]
        self.log(message)
        if sys.stderr.isatty():
            sys.stderr.write("\a")
            sys.stderr.flush()
            results.append(ChannelResult("bell", True, "terminal"))
        if tmux is not None and pane is not None:
            # held (-d 0): shown again each cycle until the orchestrator is active again
            # (tether.watch.sender), since a key press in that client takes it away
            tmux.display_message(pane, status_text(message), hold=True)
            results.append(ChannelResult("tmux-status", True, pane))
            rung = tmux.bell(pane)
            if rung:
                results.append(ChannelResult("bell", True, ", ".join(rung)))
        desktop = _desktop(message)
        if desktop is not None:
            results.append(desktop)
        if self.notify_command:
            results.append(self._run_command(message, values, self.notify_command, "notify"))
        return results


def status_text(message: str) -> str:
    """What of a wake message the tmux status line shows."""
    return message[:STATUS_MAX_CHARS]


def desktop_notifier() -> list[str] | None:
    """The argv prefix of a desktop notifier that can show something here, else None."""
    graphical = (
        os.environ.get("DISPLAY")
        or os.environ.get("WAYLAND_DISPLAY")
        or os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    )
    found = shutil.which("notify-send")
    if found is not None and graphical:
        return [found, "--app-name=tether", "tether watch"]
    found = shutil.which("terminal-notifier")  # macOS
    if found is not None:
        return [found, "-title", "tether watch", "-message"]
    return None


def _desktop(message: str) -> ChannelResult | None:
    argv = desktop_notifier()
    if argv is None:
        return None
    try:
        done = subprocess.run(
            [*argv, message[:300]],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return ChannelResult("desktop", False, str(exc))
    name = Path(argv[0]).name
    return ChannelResult("desktop", done.returncode == 0, f"{name} exited {done.returncode}")
