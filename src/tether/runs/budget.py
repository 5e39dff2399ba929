"""Budgets of one run and the rule that decides when a limit stops it.

Budgets come only from flags, configuration and profiles, never from prompt
or ticket text. A limit reached is an outcome (a :class:`RunStatus`), not an
exception.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.config.schema import DEFAULT_EVENTS_MAX_BYTES, DEFAULT_STDERR_MAX_BYTES
from tether.core.errors import BudgetError
from tether.events.model import Event, ToolResult
from tether.run_status import RunStatus

# The ledger's module loads only where a run counts its stream: choosing a profile or
# checking a budget (every tick, every dry run) needs none of it.
if TYPE_CHECKING:
    from tether.events.accounting import Ledger

# Harnesses that announce every tool call of a step before the first of its
# results arrives. For them "the last open call of step N closed" is the exact
# boundary before model call N+1, so the stop can come before that call starts.
ANNOUNCE_CALLS_FIRST = frozenset({"claude-code", "pi", "copilot"})


@dataclass(frozen=True)
class Budget:
    iterations: int
    tool_calls: int | None
    timeout_seconds: float
    # input + output tokens as the harness reports them
    tokens: int | None = None
    cost_usd: float | None = None
    events_max_bytes: int = DEFAULT_EVENTS_MAX_BYTES
    stderr_max_bytes: int = DEFAULT_STDERR_MAX_BYTES

    def __post_init__(self) -> None:
        if self.tokens is not None and self.tokens < 1:
            raise BudgetError(f"token limit must be at least 1 (got {self.tokens}).")
        if self.cost_usd is not None and not (math.isfinite(self.cost_usd) and self.cost_usd > 0):
            raise BudgetError(f"cost limit must be a positive number of USD (got {self.cost_usd}).")
        if self.stderr_max_bytes < 1:
            raise BudgetError(f"stderr_max_bytes must be at least 1 (got {self.stderr_max_bytes}).")
        if self.events_max_bytes < 1:
            raise BudgetError(f"events_max_bytes must be at least 1 (got {self.events_max_bytes}).")
        if self.iterations < 1:
            raise BudgetError(f"iteration limit must be at least 1 (got {self.iterations}).")
        if self.tool_calls is not None and self.tool_calls < 1:
            raise BudgetError(f"tool-call limit must be at least 1 (got {self.tool_calls}).")
        if not math.isfinite(self.timeout_seconds) or self.timeout_seconds <= 0:
            raise BudgetError(
                f"timeout must be a positive number of seconds (got {self.timeout_seconds})."
            )


def validate_iterations(requested: int, cap: int, *, what: str) -> int:
    if requested < 1:
        raise BudgetError(f"{what} must be at least 1 (got {requested}).")
    if requested > cap:
        raise BudgetError(
            f"{what} {requested} is above the global cap of {cap} iterations "
            f"(max_iterations_cap). Ask for at most {cap}, or split the unit into smaller "
            f"units; a human can raise max_iterations_cap in tether.toml."
        )
    return requested


class LimitCheck:
    """Decides, event by event, whether the run must stop now."""

    def __init__(self, budget: Budget, stream_format: str) -> None:
        self.budget = budget
        self._iterations = budget.iterations
        self._calls = budget.tool_calls if budget.tool_calls is not None else sys.maxsize
        self._closes_on_results = stream_format in ANNOUNCE_CALLS_FIRST
        # Set while a harness's exact step count (its session file) cannot be read:
        # then the stream's upper bound decides, so the stop may come early, never late.
        self.use_stream_bound = False
        # True when the last verdict was "step N complete", i.e. before step N+1 began
        self.at_step_boundary = False
        self._tokens = budget.tokens
        self._cost = budget.cost_usd

    def switch_to_stream_bound(self) -> None:
        """Decide by the stream's upper bound from now on (it can grow without steps)."""
        self.use_stream_bound = True

    def spent(self, ledger: Ledger) -> RunStatus | None:
        """The spending limit the ledger's usage is past, if any."""
        usage = ledger.usage
        if self._tokens is not None and usage.input_tokens + usage.output_tokens > self._tokens:
            return RunStatus.TOKEN_LIMIT
        if self._cost is not None and (usage.cost_usd or 0.0) > self._cost:
            return RunStatus.COST_LIMIT
        return None

    def after(self, event: Event, ledger: Ledger) -> RunStatus | None:
        spent = self.spent(ledger)
        if spent is not None:
            return spent
        if ledger.iterations > self._iterations:
            return RunStatus.ITERATION_LIMIT
        if self.use_stream_bound and _stream_upper_bound(ledger) > self._iterations:
            return RunStatus.ITERATION_LIMIT
        if ledger.tool_calls > self._calls:
            return RunStatus.TOOL_CALL_LIMIT
        if (
            self._closes_on_results
            and event.__class__ is ToolResult
            and ledger.iterations >= self._iterations
            and not ledger.open_calls
        ):
            # Step N (the last allowed) has all its results; the harness's next move
            # is model call N+1. Stop before it starts.
            self.at_step_boundary = True
            return RunStatus.ITERATION_LIMIT
        return None


def _stream_upper_bound(ledger: Ledger) -> int:
    from tether.events.accounting import stream_upper_bound

    return stream_upper_bound(ledger)
