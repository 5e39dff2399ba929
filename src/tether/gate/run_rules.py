"""What ``tether run`` adds to the gate's decision on a call of its agent.

Outside a run the gate counts a call under its session and nothing more. Under
a supervised run three rules come first, each resting on something only the run
has, and a refusal is named for what happened (``over``, ``unread``):

- the harness's own session id counts under the run's session (Codex and Pi
  report theirs in the payload; the first call binds it);
- a Copilot call is decided only once the supervisor has read it from the
  agent's stream (``gate/stream_mark.py``): Copilot's payload names no step, so
  the supervisor's reading is what places the call before or after the stop;
- a Codex call is placed in its model response from Codex's rollout
  (``gate/codex_rollout.py``), so a call of a response past the iteration
  limit can be refused in the same count.

Standard library only: the hook imports it on every call.
"""

from __future__ import annotations

from tether.gate import counter, messages

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from sqlite3 import Connection

    from tether.core.session_identity import Resolved
    from tether.gate.codex_rollout import CallStep
    from tether.gate.contracts import HookCall
    from tether.gate.runstop import RefusedCall


class Refused:
    """A call the gate refuses: the refusal's text, whether its answer is held, and
    the call as the run's refusal record (``refused.json``) names it."""

    __slots__ = ("call", "hold", "text")

    def __init__(self, text: str, hold: bool, call: RefusedCall) -> None:
        self.text = text
        self.hold = hold
        self.call = call


def bind_run_session(conn: Connection, resolved: Resolved, env: Mapping[str, str]) -> None:
    """Under ``tether run``, the harness's own session id counts under the run's id.

    The supervisor sets TETHER_SESSION_ID and TETHER_RUN_ID for the agent. A
    harness that cannot take the id up front (Codex, Pi) reports its own id in
    the payload; the first call binds that id to the run's session.
    """
    if resolved.source != "payload":
        return
    run_session = env.get("TETHER_SESSION_ID")
    if not run_session or not env.get("TETHER_RUN_ID") or run_session == resolved.key:
        return
    conn.execute(
        "INSERT OR IGNORE INTO contexts (context_key, session_id, since) "
        "VALUES (?, ?, strftime('%s','now'))",
        (resolved.key, run_session),
    )


def keeps_count(home: str, env: Mapping[str, str], harness: str) -> str | None:
    """The run folder whose supervisor keeps the count of the calls it read from the
    agent's stream (``gate/stream_mark.py``), when a call of ``harness`` waits for it."""
    from tether.gate import runstop, stream_mark

    folder = runstop.run_dir(home, env)
    return folder if folder is not None and stream_mark.kept(folder, harness) else None


def unread(
    conn: Connection,
    home: str,
    seen: counter.Seen,
    env: Mapping[str, str],
    parent: int | None,
) -> Refused | None:
    """Why a run's call is refused before it is counted: the supervisor never read it
    from the agent's stream before the run began to stop, or not in time; None once
    it has, or when no supervisor reads this agent's stream. ``parent`` is the agent
    the gate waits on (None when the run's own socket server answers).

    The wait is for the calls made before this one plus this one: those the gate
    counted and those it answered uncounted (``counter.calls_before``), each once
    whichever hook files delivered it, as the stream holds each once.
    """
    from tether.gate import runstop, stream_mark

    folder = keeps_count(home, env, seen.harness)
    if folder is None:
        return None
    before, earlier = counter.calls_before(conn, seen)
    if earlier is not None and earlier != counter.UNREAD:
        return None  # another hook file's delivery of a call already decided
    waited = stream_mark.BEHIND if earlier else stream_mark.wait(folder, before + 1, parent=parent)
    if waited == stream_mark.CAUGHT_UP:
        return None
    # not counted: the record says how many calls the run had used, and of what
    state = counter.lock_state(conn, seen.context_key)
    used = state[2] if state is not None else 0
    call = _record(seen, used, state[3] if state is not None else used)
    if waited == stream_mark.STOPPING:
        text = call.while_stopping(runstop.stop_cause(folder) or "")
        return Refused(text, _held(folder, seen.harness), call)
    call.reason = runstop.SUPERVISOR_BEHIND
    if earlier is None:
        _answered_uncounted(conn, seen, counter.UNREAD)
    return Refused(messages.unread_call_behind(stream_mark.WAIT_S), False, call)


def _answered_uncounted(conn: Connection, seen: counter.Seen, decision: str) -> None:
    """Record a call answered without counting it; a database that cannot take the
    record leaves the answer as it is (the later calls' wait is then one call short)."""
    from tether.gate import gate_db

    try:  # noqa: SIM105 - contextlib costs an import
        counter.record_uncounted(conn, seen, decision)
    except gate_db.Error:
        pass


def over(
    home: str,
    seen: counter.Seen,
    outcome: counter.CallOutcome,
    model_step: CallStep | None,
    env: Mapping[str, str],
) -> Refused:
    """The refusal of a call its count did not allow, named for what happened.

    A call of a model step past the iteration limit says so (Codex). Else, while
    the run is being stopped, the refusal names the stop (its status, from the run
    folder): the stop's lock shrinks the call budget to the calls used, so "call
    budget spent" would name a limit the run never reached. Else the call budget
    is spent.
    """
    from tether.gate import runstop

    call = _record(seen, outcome.calls_used, outcome.call_budget)
    folder = runstop.run_dir(home, env)
    cause = None if folder is None else runstop.stop_cause(folder)
    if outcome.past_iterations and model_step and outcome.iteration_budget is not None:
        text = call.past(model_step.earliest, outcome.iteration_budget)
    elif cause is not None:
        text = call.while_stopping(cause)
    else:
        text = messages.refusal(outcome.session_id, outcome.calls_used, outcome.call_budget)
    held = folder is not None and cause is not None and _held(folder, seen.harness)
    return Refused(text, outcome.past_iterations or held, call)


def _held(folder: str, harness: str) -> bool:
    """Whether a refusal of a stopping run's call is held (``runstop.HOLD_WHILE_STOPPING``):
    in a run that keeps the stream's count every delivery is Copilot's, a project's
    Claude Code hook file included, and Copilot hands the first refusal to the model."""
    from tether.gate import runstop, stream_mark

    return harness in runstop.HOLD_WHILE_STOPPING or stream_mark.kept(folder, harness)


def locked(home: str, env: Mapping[str, str], state: tuple[str, bool, int, int]) -> str:
    """The refusal of a call in a locked session (``counter.lock_state``) the gate
    could not count: the run's stop when it is being stopped, else the spent budget."""
    from tether.gate import runstop

    folder = runstop.run_dir(home, env)
    cause = None if folder is None else runstop.stop_cause(folder)
    if cause is not None:
        return messages.run_stopping(cause)
    sid, _, used, budget = state
    return messages.refusal(sid, max(used, budget), budget)


def _record(seen: counter.Seen, calls_used: int, call_budget: int) -> RefusedCall:
    """The refused call as the run's record names it (reason: the call budget, until
    the caller says otherwise)."""
    from tether.gate import runstop

    return runstop.RefusedCall(
        harness=seen.harness,
        tool_name=seen.tool_name,
        tool_use_id=seen.tool_use_id,
        tool_input=seen.detail[2],
        calls_used=calls_used,
        call_budget=call_budget,
        reason=runstop.CALL_BUDGET_SPENT,
    )


def model_step(
    harness: str, call: HookCall, home: str, env: Mapping[str, str], in_run: bool
) -> CallStep | None:
    """Which model step a run's call belongs to, where the harness's record says."""
    if not in_run:
        return None  # no run, no iteration limit
    from tether.gate import codex_rollout

    return codex_rollout.step_of(harness, call.detail[4], call.tool_use_id, home, env)
