"""Choosing a profile and a budget: only from flags and configuration.

Nothing here reads prompt, ticket or file text, so no prose can pick a profile
or change a budget.
"""

from __future__ import annotations

from tether.config import Config, Profile
from tether.errors import BudgetError, ConfigError
from tether.runs.budget import Budget, validate_iterations


def choose_profile(config: Config, name: str | None, justification: str | None) -> Profile:
    default = config.default_profile
    profile = config.profile(name) if name else default
    if profile.strength > default.strength and not (justification and justification.strip()):
        raise ConfigError(
            f"profile {profile.name!r} is stronger than the default {default.name!r} "
            f"(strength {profile.strength} > {default.strength}); say why this unit needs it "
            f"with --justification TEXT (it is recorded with the run).",
            key="profile",
        )
    return profile


def choose_budget(
    config: Config,
    profile: Profile,
    *,
    iterations: int | None,
    tool_calls: int | None,
    timeout: float | None,
    budget_request: int | None,
    justification: str | None,
) -> Budget:
    cap = config.max_iterations_cap
    if budget_request is not None:
        if not (justification and justification.strip()):
            raise BudgetError(
                "--budget-request needs --justification TEXT: say why this unit needs "
                "a different iteration budget (it is recorded with the run)."
            )
        if iterations is not None:
            raise BudgetError("give either --iterations or --budget-request, not both.")
        limit = validate_iterations(budget_request, cap, what="budget request")
    elif iterations is not None:
        limit = validate_iterations(iterations, cap, what="--iterations")
    else:
        limit = profile.iteration_limit or config.iteration_limit
        limit = validate_iterations(limit, cap, what=f"profile {profile.name!r} iteration_limit")
    calls = (
        tool_calls
        if tool_calls is not None
        else (
            profile.tool_call_limit
            if profile.tool_call_limit is not None
            else config.tool_call_limit
        )
    )
    seconds = (
        timeout
        if timeout is not None
        else (
            profile.timeout_seconds
            if profile.timeout_seconds is not None
            else config.timeout_seconds
        )
    )
    return Budget(iterations=limit, tool_calls=calls, timeout_seconds=seconds)
