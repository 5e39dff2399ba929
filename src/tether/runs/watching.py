"""Watching a run's agent until it ends: the stream counted, the limits checked, the stop.

``watch_agent`` reads the agent's stream through ``LiveRun``, stops the agent
at the first limit (locking its gate session right after the SIGTERM), or
waits for a natural end under the wall clock, and says how the run ended.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

from tether.events.accounting import Ledger, count, stream_upper_bound
from tether.gate import stream_mark
from tether.gate.runstop import RUN_STOPPING, SUPERVISOR_BEHIND, mark_stopping, read_refusal
from tether.harnesses.base import Harness
from tether.run_status import RunStatus
from tether.runs.budget import Budget, LimitCheck
from tether.runs.exit_verdict import after_cancel, natural_end
from tether.runs.gate_setup import gate_verdict, lock_session, stream_format
from tether.runs.live import BetweenReads, LiveResult, LiveRun
from tether.runs.process import AgentProcess, wait_until
from tether.runs.record import RunPaths
from tether.runs.stream import SessionTail


@dataclass(frozen=True)
class Watch:
    """What watching one run's agent needs, decided before the agent starts."""

    adapter: Harness
    budget: Budget
    paths: RunPaths
    env: Mapping[str, str]  # the agent's: its TETHER_HOME holds the gate's session
    grace: float  # seconds from SIGTERM to SIGKILL
    # the run's gate session, when a per-run hook makes the harness ask the gate
    hooked_session: str | None
    # the hook ends the harness itself at the iteration limit (Pi's extension)
    self_stopping: bool
    cancelled: Callable[[], bool]
    on_progress: Callable[[Ledger], None]  # the counts so far, for the run's record
    stderr_over: Callable[[], bool] | None = None


@dataclass(frozen=True)
class Watched:
    """How the watch ended."""

    stop: RunStatus
    how: str  # "exited", "sigterm", "sigkill"
    # seconds from the event that reached a limit to the agent's end, when tether stopped it
    stop_latency: float | None = None


def gate_refusal(paths: RunPaths) -> RunStatus | None:
    """The limit the gate refused a call of the run for (``refused.json``), if it did.

    A call of a model step past the iteration limit (Codex: gate/codex_rollout.py)
    ends the run as ``iteration_limit``; a call past the call budget as
    ``tool_call_limit``. A call refused because the run was already stopping, or
    because this supervisor had not read it from the stream in time, reached no
    limit: the run ends for what its own limits say (None).
    """
    if not paths.refused.exists():
        return None
    refusal = read_refusal(str(paths.root))
    if refusal is not None and refusal.past_iterations:
        return RunStatus.ITERATION_LIMIT
    if refusal is not None and refusal.reason in (RUN_STOPPING, SUPERVISOR_BEHIND):
        return None
    return RunStatus.TOOL_CALL_LIMIT


def _gate_refused(paths: RunPaths) -> Callable[[], RunStatus | None]:
    """``gate_refusal``, read once the file is there: the gate writes it once."""
    settled: list[RunStatus | None] = []

    def refused() -> RunStatus | None:
        if not settled:
            if not paths.refused.exists():
                return None
            settled.append(gate_refusal(paths))
        return settled[0]

    return refused


def watch_agent(agent: AgentProcess, ledger: Ledger, watch: Watch, started: float) -> Watched:
    """Count ``agent``'s stream into ``ledger`` until the agent ends or a limit stops it.

    ``started`` is the monotonic time the run's wall clock began.
    """
    return _Watcher(agent, ledger, watch, started + watch.budget.timeout_seconds).run()


class _Watcher:
    def __init__(self, agent: AgentProcess, ledger: Ledger, watch: Watch, deadline: float) -> None:
        self.agent = agent
        self.ledger = ledger
        self.watch = watch
        self.deadline = deadline
        adapter = watch.adapter
        self.tail = (
            SessionTail(adapter, watch.env) if adapter.iteration_source == "session_file" else None
        )
        self.check = LimitCheck(watch.budget, stream_format(adapter))

    def run(self) -> Watched:
        with self.watch.paths.events.open("ab") as out:
            live = LiveRun(
                self.agent, self.watch.adapter, self.ledger, self.check, out, self._between()
            )
            result = live.run()
            if result.limit is not None:
                watched = self._stop_at_limit(live, result)
        if result.limit is None:
            watched = self._wait_for_exit()
        if self.tail is not None:
            self._read_session_to_end(self.tail)
        return watched

    def _between(self) -> BetweenReads:
        watch = self.watch
        return BetweenReads(
            deadline=self.deadline,
            cancelled=watch.cancelled,
            on_progress=watch.on_progress,
            session_tail=self.tail,
            gate_refused=_gate_refused(watch.paths) if watch.hooked_session else None,
            stderr_over=watch.stderr_over,
            calls_read=self._calls_read(),
        )

    def _calls_read(self) -> Callable[[int], None] | None:
        """Where the gate learns how far the stream is read, for a harness whose
        calls it lets through only once read (gate/stream_mark.py)."""
        if self.watch.adapter.name not in stream_mark.HARNESSES:
            return None
        folder = str(self.watch.paths.root)
        # the count exists from the start: every hook delivering a call of this run waits
        with contextlib.suppress(OSError):
            stream_mark.write(folder, 0)

        def tell(count: int) -> None:
            # a count not written only makes the gate wait, then refuse: never an allow
            with contextlib.suppress(OSError):
                stream_mark.write(folder, count)

        return tell

    def _stop_at_limit(self, live: LiveRun, result: LiveResult) -> Watched:
        """Stop the agent at the limit the stream showed; keep what it printed until it died."""
        assert result.limit is not None
        watch, agent = self.watch, self.agent
        # From here on the gate and the Pi extension refuse whatever they cannot count.
        mark_stopping(str(watch.paths.root), result.limit.value)
        if watch.self_stopping and self.check.at_step_boundary:
            # The run's hook ends the agent before model request N+1 by itself (pi's
            # extension, Claude Code's PostToolBatch). A signal now pre-empts that
            # answer: pi's gate call is killed, and Claude Code skips the hook on
            # SIGTERM and, on a loaded machine, sent request N+1 while shutting down
            # (2 runs of 80). The gate already refuses every call past the stop.
            wait_until(lambda: not agent.group_alive(), watch.grace)
        # The session is locked right after the SIGTERM, before any wait: an agent
        # that shrugs off SIGTERM gets every further tool call refused by its own
        # hook until SIGKILL lands, and one that obeys is already going. (Locking
        # first would open the same window for the former and only delay the latter.)
        lock = None
        if watch.hooked_session is not None:
            lock = partial(lock_session, watch.env["TETHER_HOME"], watch.hooked_session)
        how = agent.stop(watch.grace, signalled=lock)
        latency = None
        if result.limit_at is not None:
            latency = time.monotonic() - result.limit_at
        live.drain()  # a request or step already under way shows up as in flight
        return Watched(result.limit, how, latency)

    def _wait_for_exit(self) -> Watched:
        """The stream ended: wait for the process to exit, still under the wall clock."""
        agent = self.agent
        over = self.watch.stderr_over or (lambda: False)
        remaining = max(0.0, self.deadline - time.monotonic())
        # Past its stderr cap the agent's next write waits for the stop (runs/stderr_sink.py):
        # an agent flooding stderr after its stream ended is stopped there, not waited for.
        wait_until(lambda: agent.popen.poll() is not None or over(), remaining)
        if agent.popen.poll() is None:
            status = RunStatus.OUTPUT_LIMIT if over() else RunStatus.TIMEOUT
            mark_stopping(str(self.watch.paths.root), status.value)
            return Watched(status, agent.stop(self.watch.grace))
        if self.tail is not None:
            # The session file may close the run (Vibe's journal says which of
            # its own limits ended the turn): read all of it before judging.
            count(self.tail.drain(self.ledger.session_id), self.ledger)
        stop = self._exit_verdict()
        cancelled = after_cancel(stop, agent.popen.returncode) if self.watch.cancelled() else None
        if cancelled is not None:
            return Watched(*cancelled)  # its kill came before the loop saw the cancel
        return Watched(stop, "exited")

    def _exit_verdict(self) -> RunStatus:
        """What an agent that exited by itself ran into, if anything."""
        watch, ledger = self.watch, self.ledger
        # A harness that stopped on its own spending belt (Vibe's --max-tokens
        # ends the turn the moment its usage passes the budget) is at that limit.
        stop = self.check.spent(ledger) or natural_end(ledger, self.agent.popen.returncode)
        if watch.hooked_session is not None:
            # The per-run hook may have ended the agent itself, exactly at the limit.
            stop = gate_verdict(watch.env["TETHER_HOME"], watch.hooked_session) or stop
        return stop

    def _read_session_to_end(self, tail: SessionTail) -> None:
        count(tail.drain(self.ledger.session_id), self.ledger)
        if self.ledger.iteration_source == "bound":
            self.ledger.iterations = max(self.ledger.iterations, stream_upper_bound(self.ledger))
