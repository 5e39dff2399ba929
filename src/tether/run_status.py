"""The statuses of a supervised run: the one list the store, the runs and the CLI share.

A run is ``running`` until it ends; then its status says how: completed, one
of the limits, failed, cancelled, or ``abandoned`` (its supervisor died, found
by recovery). Every ended status carries an exit code.
"""

from __future__ import annotations

from enum import StrEnum

from tether.core.exit_codes import ExitCode


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    ITERATION_LIMIT = "iteration_limit"
    TOOL_CALL_LIMIT = "tool_call_limit"
    TIMEOUT = "timeout"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TOKEN_LIMIT = "token_limit"  # noqa: S105 - a run status, not a secret
    COST_LIMIT = "cost_limit"
    OUTPUT_LIMIT = "output_limit"
    ABANDONED = "abandoned"

    @property
    def exit_code(self) -> ExitCode:
        """The exit code of ``tether run`` for a run that ended this way."""
        return _EXIT[self]


LIMITS = frozenset(
    {
        RunStatus.ITERATION_LIMIT,
        RunStatus.TOOL_CALL_LIMIT,
        RunStatus.TIMEOUT,
        RunStatus.TOKEN_LIMIT,
        RunStatus.COST_LIMIT,
        RunStatus.OUTPUT_LIMIT,
    }
)
_EXIT = {
    RunStatus.COMPLETED: ExitCode.OK,
    RunStatus.ITERATION_LIMIT: ExitCode.RUN_ITERATION_LIMIT,
    RunStatus.TOOL_CALL_LIMIT: ExitCode.RUN_TOOL_CALL_LIMIT,
    RunStatus.TIMEOUT: ExitCode.RUN_TIMEOUT,
    RunStatus.FAILED: ExitCode.RUN_HARNESS_FAILED,
    RunStatus.CANCELLED: ExitCode.RUN_CANCELLED,
    RunStatus.TOKEN_LIMIT: ExitCode.RUN_TOKEN_LIMIT,
    RunStatus.COST_LIMIT: ExitCode.RUN_COST_LIMIT,
    RunStatus.OUTPUT_LIMIT: ExitCode.RUN_OUTPUT_LIMIT,
    RunStatus.ABANDONED: ExitCode.RUN_CANCELLED,
}
