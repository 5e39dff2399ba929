"""The live part of a run: read the agent's stream, count, and stop on a limit."""

from __future__ import annotations

import contextlib
import os
import selectors
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from tether.events.accounting import Ledger, apply
from tether.events.model import AnyEvent
from tether.harnesses.base import Harness
from tether.run_status import RunStatus
from tether.runs.budget import LimitCheck
from tether.runs.process import AgentProcess
from tether.runs.stream import LineBuffer, SessionTail

# How long the loop waits for output before it looks again at the deadline, a
# cancel, the gate's refusal file and a Codex-style session file.
POLL_SECONDS = 0.02
PROGRESS_EVERY_SECONDS = 0.5
READ_SIZE = 1 << 16
# How long a harness's session file may take to appear, once the agent has
# printed its first line, before the stream's upper bound is used for the limit
# instead. Counted from that line, not from the start: a harness that starts
# slowly (Vibe: 20-65 s on a loaded machine) has no session to find before it.
SESSION_FILE_GRACE = 2.0
# After a stop, how long the rest of the stream may take to reach its end.
DRAIN_SECONDS = 1.0


@dataclass
class LiveResult:
    limit: RunStatus | None  # a limit (or cancel) that made tether stop the agent
    limit_at: float | None  # monotonic time the deciding event was seen
    stream_ended: bool


@dataclass(frozen=True)
class BetweenReads:
    """What the stream loop looks at between two reads, besides the events it counts."""

    deadline: float  # monotonic: the run's wall clock ends here
    cancelled: Callable[[], bool]
    on_progress: Callable[[Ledger], None]  # the counts so far, every PROGRESS_EVERY_SECONDS
    # a harness's own session file (Codex's rollout), read as it grows
    session_tail: SessionTail | None = None
    # The limit the gate refused a call of this run for, once it did: the run
    # ends at once, even where the harness leaves the refused call out of its
    # stream (Codex).
    gate_refused: Callable[[], RunStatus | None] | None = None
    # True once stderr passed its cap (runs.stderr_sink): the run ends as output_limit
    stderr_over: Callable[[], bool] | None = None
    # told the stream's tool calls read so far, each time the limit rule lets one
    # pass: the gate lets a call through only once it is read (gate/stream_mark.py)
    calls_read: Callable[[int], None] | None = None


class LiveRun:
    def __init__(
        self,
        agent: AgentProcess,
        harness: Harness,
        ledger: Ledger,
        check: LimitCheck,
        events_out: BinaryIO,
        between: BetweenReads,
    ) -> None:
        self.agent = agent
        self.harness = harness
        self.ledger = ledger
        self.check = check
        self.events_out = events_out
        self.deadline = between.deadline
        self.tail = between.session_tail
        self.cancelled = between.cancelled
        self.on_progress = between.on_progress
        self.gate_refused = between.gate_refused
        self.stderr_over = between.stderr_over
        self.calls_read = between.calls_read
        self._calls_told = 0
        self._last_progress = 0.0
        self._lines = LineBuffer()
        self._room = 0  # bytes events.jsonl may still take

    def _take(self, events: list[AnyEvent]) -> RunStatus | None:
        verdict: RunStatus | None = None
        for event in events:
            apply(self.ledger, event)
            if verdict is None:
                verdict = self.check.after(event, self.ledger)
        return verdict

    def run(self) -> LiveResult:
        fd = self.agent.stdout.fileno()
        os.set_blocking(fd, False)
        sel = selectors.DefaultSelector()
        sel.register(fd, selectors.EVENT_READ)
        lines = self._lines
        out_fd = self.events_out.fileno()
        self.events_out.flush()
        # events.jsonl never grows past its cap: a flooding agent ends as output_limit
        room = self.check.budget.events_max_bytes - self.events_out.tell()
        self._room = room
        next_tail_poll = 0.0
        first_output: float | None = None
        try:
            while True:
                now = time.monotonic()
                if self.cancelled():
                    return LiveResult(RunStatus.CANCELLED, now, False)
                if now >= self.deadline:
                    return LiveResult(RunStatus.TIMEOUT, now, False)
                if self.gate_refused is not None and (refused := self.gate_refused()):
                    return LiveResult(refused, now, False)
                if self.stderr_over is not None and self.stderr_over():
                    return LiveResult(RunStatus.OUTPUT_LIMIT, now, False)
                chunk: bytes | None = None
                if sel.select(min(self.deadline - now, POLL_SECONDS)):
                    with contextlib.suppress(BlockingIOError):
                        chunk = os.read(fd, READ_SIZE)
                verdict: RunStatus | None = None
                if chunk and len(chunk) > room:
                    # what fits is kept; the rest is neither written nor read,
                    # and the stop's drain finds no room left
                    os.write(out_fd, chunk[: max(room, 0)])
                    self._room = 0
                    return LiveResult(RunStatus.OUTPUT_LIMIT, time.monotonic(), False)
                if chunk:
                    if first_output is None:
                        first_output = now
                    room -= len(chunk)
                    self._room = room
                    # events.jsonl keeps the stream byte for byte, as it arrived;
                    # one unbuffered write, so a crash loses nothing already read
                    os.write(out_fd, chunk)
                    verdict = self._take_lines(lines.feed(chunk))
                elif chunk == b"":
                    verdict = self._take_lines(lines.flush())
                if self.tail is not None and (chunk == b"" or now >= next_tail_poll):
                    next_tail_poll = now + POLL_SECONDS
                    found = self._take(self.tail.poll(self.ledger.session_id))
                    verdict = verdict or found
                    lost = (
                        self.tail.path is None
                        and first_output is not None
                        and now - first_output > SESSION_FILE_GRACE
                    )
                    if lost and not self.check.use_stream_bound:
                        self.check.switch_to_stream_bound()
                        self.ledger.iteration_source = "bound"
                if verdict is not None:
                    return LiveResult(verdict, time.monotonic(), False)
                if chunk == b"":
                    return LiveResult(None, None, True)
                if now - self._last_progress >= PROGRESS_EVERY_SECONDS:
                    self._last_progress = now
                    self.on_progress(self.ledger)
        finally:
            sel.close()

    def drain(self, timeout: float = DRAIN_SECONDS) -> None:
        """After tether stopped the agent: keep and count what it printed before it died.

        The rest of the stream still goes into events.jsonl (up to its cap), and a
        model step or request it shows is work that was already under way when
        the stop landed: counted in ``ledger.steps_after_stop`` and
        ``requests_after_stop``, not in the run's counts, and never a verdict.
        """
        fd = self.agent.stdout.fileno()
        after = Ledger()
        after._last_step_id = self.ledger._last_step_id  # the open step is no new one
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while (left := deadline - time.monotonic()) > 0:
                if not sel.select(left):
                    continue
                try:
                    chunk = os.read(fd, READ_SIZE)
                except BlockingIOError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                if self._room > 0:
                    os.write(self.events_out.fileno(), chunk[: self._room])
                    self._room -= len(chunk)
                self._fold(self._lines.feed(chunk), after)
        self._fold(self._lines.flush(), after)
        self.ledger.steps_after_stop = after.iterations
        self.ledger.requests_after_stop = after.model_requests

    def _fold(self, batch: list[bytes], ledger: Ledger) -> None:
        for line in batch:
            for event in self.harness.parse_line(line):
                apply(ledger, event)

    def _take_lines(self, batch: list[bytes]) -> RunStatus | None:
        verdict: RunStatus | None = None
        for line in batch:
            for event in self.harness.parse_line(line):
                apply(self.ledger, event)
                if verdict is None:
                    verdict = self.check.after(event, self.ledger)
                    if verdict is None:
                        self._tell_calls_read()
        return verdict

    def _tell_calls_read(self) -> None:
        # only before a verdict: a call read after the stop decision stays unread for the gate
        if self.calls_read is not None and self.ledger.tool_calls > self._calls_told:
            self._calls_told = self.ledger.tool_calls
            self.calls_read(self._calls_told)
