"""What the gate says. The refusal names what happened and what to do, and never
offers a way around the lock."""

from __future__ import annotations


def refusal(session_id: str, calls_used: int, call_budget: int) -> str:
    attempts = calls_used - call_budget
    extra = f" ({attempts} calls refused so far)" if attempts > 1 else ""
    return (
        f"tether: call refused. The call budget of this session is spent: "
        f"{call_budget} of {call_budget} calls used in session {session_id}{extra}. "
        f"Do not call more tools. Finish this unit now: end with a short progress report "
        f"(what is done, what is still open, the next sensible step). "
        f"A human can start a new session with `tether session new`."
    )


def held(db_path: str, waited_s: float) -> str:
    """The refusal when the gate's database stayed busy: the call cannot be counted."""
    return (
        f"tether: call refused. The gate's database {db_path} is held by another process "
        f"(still busy after {waited_s:g} s), so this call cannot be counted, and tether lets "
        f"no uncounted call through. Do not call more tools. Finish this unit now: end with "
        f"a short progress report (what is done, what is still open, the next sensible "
        f"step). A human has to find out which process holds {db_path}."
    )


def unresolved() -> str:
    """The refusal when the gate cannot tell which session a call belongs to."""
    return (
        "tether: call refused. tether-gate cannot tell which session this call belongs "
        "to: no session id in the hook payload or TETHER_SESSION_ID, and every call runs "
        "in a new process with nothing above it known to last. Do not call more tools; "
        "the person who starts the agent sets TETHER_SESSION_ID for it, or names its "
        "executable in TETHER_GATE_AGENTS."
    )


def iteration_stop(session_id: str, batches: int, iteration_budget: int) -> str:
    return (
        f"tether: iteration limit {iteration_budget} reached in session {session_id} "
        f"({batches} iterations with tool calls done). The run stops here; tether writes "
        f"the progress report."
    )


def past_iterations(step: int, iteration_budget: int) -> str:
    """The refusal of a call that belongs to a model step past the iteration limit."""
    return (
        f"tether: call refused. It belongs to model step {step}, past the iteration limit "
        f"of {iteration_budget} of this run. The run stops here; tether writes the "
        f"progress report."
    )


# What a run's stop status says in a refusal (the gate cannot import run_status).
_STOP_WORDS = {
    "iteration_limit": "has reached its iteration limit",
    "tool_call_limit": "has reached its tool-call limit",
    "timeout": "has reached its wall-clock limit",
    "token_limit": "has reached its token limit",
    "cost_limit": "has reached its cost limit",
    "output_limit": "has reached its output limit",
    "cancelled": "was cancelled",
}


def stop_words(cause: str) -> str:
    """Why a run is being stopped, in words (``cause``: its stop status, "" unknown)."""
    return _STOP_WORDS.get(cause, "is being stopped")


def run_stopping(cause: str) -> str:
    """The refusal of a call made while its run was being stopped for ``cause``."""
    return (
        f"tether: call refused. This run {stop_words(cause)} and is being stopped; "
        f"tether writes the progress report. Do not call more tools."
    )


def malformed(harness: str, reason: str) -> str:
    return f"cannot read the {harness} hook payload ({reason}); this call is not counted"


def broken(reason: str) -> str:
    return (
        f"tether-gate could not count this call ({reason}); the call is let through "
        f"uncounted. Check `tether-gate status` and the gate database."
    )


def stopping(reason: str) -> str:
    """The refusal of a call the gate could not count while its run is being stopped."""
    return (
        f"tether: call refused. This run is being stopped, and {reason.split(';')[0]}; "
        f"no uncounted call goes through while a run stops. Do not call more tools."
    )


def calls_used(used: int, budget: int) -> str:
    """How much of a call budget is used. Refused calls are counted too (attempts),
    so past the budget the line says how many ran and how many were refused."""
    refused = max(0, used - budget)
    if refused:
        return f"{budget} of {budget} used, {refused} more refused ({used} attempted)"
    return f"{used} of {budget} used"


def iterations_used(done: int, budget: int | None) -> str:
    """Iterations against their budget; one past it is the step that was already
    under way when the limit was reached (stopped before it acted further)."""
    if budget is None:
        return f"{done} (no iteration budget)"
    if done > budget:
        return f"{done} of {budget} (the last {done - budget} began before the stop landed)"
    return f"{done} of {budget}"


def unread_call_behind(waited_s: float) -> str:
    """The refusal of a call the run's supervisor did not read from the stream in time."""
    return (
        f"tether: call refused. The supervisor of this run had not read this call from the "
        f"agent's stream after {waited_s:g} s, and tether lets no call through that the "
        f"supervisor cannot check against the run's limits. Do not call more tools. Finish "
        f"this unit now: end with a short progress report."
    )
