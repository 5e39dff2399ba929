"""What a run's stop was when its agent's stream ended without tether stopping it first."""

from __future__ import annotations

import signal

from tether.events.accounting import Ledger
from tether.run_status import RunStatus


def natural_end(ledger: Ledger, returncode: int | None) -> RunStatus:
    """The agent ended by itself: completed, failed, or at the harness's own turn cap."""
    reason = (ledger.stop_reason or "").lower()
    if "max_turns" in reason or "max-turns" in reason:
        return RunStatus.ITERATION_LIMIT  # the harness's own turn cap (second belt) fired
    if ledger.final_status == "failure" or (returncode not in (0, None)):
        return RunStatus.FAILED
    return RunStatus.COMPLETED


def after_cancel(stop: RunStatus, returncode: int | None) -> tuple[RunStatus, str] | None:
    """A failure that a cancel's own kill explains: ``(CANCELLED, how)``, else None.

    A cancel may kill the agent from outside the supervisor's loop (a fleet
    worker that lost its lease kills its agents at once, from another thread),
    so the loop sees the stream end before it looks at the cancel again. Such
    an agent was stopped; it did not fail. An agent that completed stays so.
    """
    if stop is not RunStatus.FAILED:
        return None
    if returncode == -signal.SIGKILL:
        return RunStatus.CANCELLED, "sigkill"
    if returncode == -signal.SIGTERM:
        return RunStatus.CANCELLED, "sigterm"
    return RunStatus.CANCELLED, "exited"
