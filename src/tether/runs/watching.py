"""Watching a run's agent until it ends: the stream counted, the limits checked, the stop.

``watch_agent`` reads the agent's stream through ``LiveRun``, stops the agent
at the first limit (locking its gate session right after the SIGTERM), or
waits for a natural end under the wall clock, and says how the run ended.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from tether.events.accounting import Ledger, count, stream_upper_bound
from tether.gate.runstop import mark_stopping
from tether.harnesses.base import Harness
from tether.run_status import RunStatus
from tether.runs.budget import Budget, LimitCheck
from tether.runs.exit_verdict import after_cancel, natural_end
from tether.runs.gate_setup import gate_verdict, lock_session, stream_format
from tether.runs.live import LiveResult, LiveRun
from tether.runs.process import AgentProcess, wait_until
from tether.runs.record import RunPaths
from tether.runs.stream import SessionTail
from tether.store import state_db
from tether.store.runs import update_run


def watch_agent(
    agent: AgentProcess,
    adapter: Harness,
    ledger: Ledger,
    budget: Budget,
    paths: RunPaths,
    t0: float,
    env: Mapping[str, str],
    cancel: Callable[[], bool],
    conn: Any,
    run_id: str,
    grace: float,
    hooked_session: str | None,
    timing: dict[str, float],
    self_stopping: bool = False,
    stderr_over: Callable[[], bool] | None = None,
) -> tuple[RunStatus, str]:
    tail = SessionTail(adapter, env) if adapter.iteration_source == "session_file" else None

    def progress(led: Ledger) -> None:
        with state_db.transaction(conn):
            update_run(
                conn,
                run_id,
                iterations=led.iterations,
                tool_calls=led.tool_calls,
                tool_results=led.tool_results,
                harness_session_id=led.session_id,
            )

    check = LimitCheck(budget, stream_format(adapter))
    refused = paths.refused
    with paths.events.open("ab") as out:
        live = LiveRun(
            agent,
            adapter,
            ledger,
            check,
            out,
            deadline=t0 + budget.timeout_seconds,
            session_tail=tail,
            cancelled=cancel,
            on_progress=progress,
            gate_refused=refused.exists if hooked_session else None,
            stderr_over=stderr_over,
        )
        result = live.run()
        if result.limit is not None:
            stop, how = _stop_at_limit(
                agent, live, result, check, paths, env, grace, hooked_session, timing, self_stopping
            )
    if result.limit is None:
        # The stream ended: wait for the process to exit, still under the wall clock.
        remaining = max(0.0, t0 + budget.timeout_seconds - time.monotonic())
        if wait_until(lambda: agent.popen.poll() is not None, remaining):
            how = "exited"
            if tail is not None:
                # The session file may close the run (Vibe's journal says which of
                # its own limits ended the turn): read all of it before judging.
                count(tail.drain(ledger.session_id), ledger)
            # A harness that stopped on its own spending belt (Vibe's --max-tokens
            # ends the turn the moment its usage passes the budget) is at that limit.
            stop = check.spent(ledger) or natural_end(ledger, agent.popen.returncode)
            if hooked_session is not None:
                # The per-run hook may have ended the agent itself, exactly at the limit.
                stop = gate_verdict(env["TETHER_HOME"], hooked_session) or stop
            cancelled = after_cancel(stop, agent.popen.returncode) if cancel() else None
            if cancelled is not None:
                stop, how = cancelled  # its kill came before the loop saw the cancel
        else:
            mark_stopping(str(paths.root))
            how = agent.stop(grace)
            stop = RunStatus.TIMEOUT
    if tail is not None:
        count(tail.drain(ledger.session_id), ledger)
        if ledger.iteration_source == "bound":
            ledger.iterations = max(ledger.iterations, stream_upper_bound(ledger))
    return stop, how


def _stop_at_limit(
    agent: AgentProcess,
    live: LiveRun,
    result: LiveResult,
    check: LimitCheck,
    paths: RunPaths,
    env: Mapping[str, str],
    grace: float,
    hooked_session: str | None,
    timing: dict[str, float],
    self_stopping: bool,
) -> tuple[RunStatus, str]:
    """Stop the agent at the limit the stream showed; keep what it printed until it died."""
    assert result.limit is not None
    # From here on the gate and the Pi extension refuse whatever they cannot count.
    mark_stopping(str(paths.root))
    if self_stopping and check.at_step_boundary:
        # pi's run extension aborts before model request N+1 by itself; a signal
        # now would kill the gate call it is waiting on and let that request out.
        wait_until(lambda: not agent.group_alive(), grace)
    # The session is locked right after the SIGTERM, before any wait: an agent
    # that shrugs off SIGTERM gets every further tool call refused by its own
    # hook until SIGKILL lands, and one that obeys is already going. (Locking
    # first would open the same window for the former and only delay the latter.)
    lock = None
    if hooked_session is not None:
        lock = partial(lock_session, env["TETHER_HOME"], hooked_session)
    how = agent.stop(grace, signalled=lock)
    stop = result.limit
    if result.limit_at is not None:
        timing["stop_latency_seconds"] = time.monotonic() - result.limit_at
    live.drain()  # a request or step already under way shows up as in flight
    return stop, how
