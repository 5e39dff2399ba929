"""How far a run's supervisor has read the agent's stream: its tool calls announced so far.

Copilot's hook payload says nothing about the model step a call belongs to, so
the gate cannot place a call by itself; but Copilot prints every tool call on
its stream (``tool.execution_start``) before its ``preToolUse`` hook runs. The
supervisor counts those calls as it reads the stream and writes the count here
(``stream-calls`` in the run folder) after each one its limit rule has let
pass; when the rule decides to stop the run, it marks the run stopping and
writes no further count. So a call the gate is asked about has been read by
the supervisor once this count is above the calls made before it (those the
gate counted and those it answered uncounted: ``counter.calls_before``), and
a call of model step N+1 (announced after step N's last result, where the rule
stops the run) never gets there: the gate waits for one or the other
(``wait``), and refuses once the run is stopping. Exact however late the
supervisor's reading comes; the wait is normally a few milliseconds.

A supervisor that neither catches up nor stops within ``WAIT_S`` (stuck, gone)
gets the call refused: an unread call is never let through unchecked.

Standard library only: the gate reads this on every Copilot call of a run.
"""

from __future__ import annotations

import os
import time

MARK_FILE = "stream-calls"
# Harnesses whose calls the gate lets through only once the supervisor has read them.
HARNESSES = frozenset({"copilot"})
# Well inside the run's hook timeout (hook_command.HOOK_TIMEOUT_S, 30 s).
WAIT_S = 10.0
_STEP_S = 0.002

CAUGHT_UP = "caught up"
STOPPING = "stopping"
BEHIND = "behind"  # neither within WAIT_S (or the agent that asked is gone)


def write(folder: str, count: int) -> None:
    """The supervisor has read ``count`` tool calls of the run's stream (atomic)."""
    path = os.path.join(folder, MARK_FILE)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="ascii") as handle:
        handle.write(str(count))
    os.replace(tmp, path)


def kept(folder: str, harness: str) -> bool:
    """Whether a call of ``harness`` in the run of ``folder`` waits for the count.

    Every call of a run whose supervisor keeps the count waits, whatever hook
    delivers it: Copilot also runs a project's Claude Code hooks, and the gate
    answers a call it already counted with its first answer, so a delivery that
    did not wait would decide the call for both.
    """
    return harness in HARNESSES or os.path.exists(os.path.join(folder, MARK_FILE))


def read(folder: str) -> int:
    """The calls the supervisor has read so far (0 before its first)."""
    try:
        with open(os.path.join(folder, MARK_FILE), encoding="ascii") as handle:
            return int(handle.read() or 0)
    except (OSError, ValueError):
        return 0


def wait(folder: str, needed: int, *, parent: int | None, timeout: float = WAIT_S) -> str:
    """Wait until the supervisor has read ``needed`` calls or marked the run stopping.

    ``parent``: the agent that asked (a hook process); the wait ends with it.
    """
    from tether.gate.runstop import STOPPING_FILE

    stopping = os.path.join(folder, STOPPING_FILE)
    deadline = time.monotonic() + timeout
    while True:
        # the count first: a call read before the stop is one of the run's own
        if read(folder) >= needed:
            return CAUGHT_UP
        if os.path.exists(stopping):
            return STOPPING
        if time.monotonic() >= deadline or (parent is not None and os.getppid() != parent):
            return BEHIND
        time.sleep(_STEP_S)
