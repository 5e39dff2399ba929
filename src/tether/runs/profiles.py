"""Choosing a profile and a budget: only from flags and configuration.

Nothing here reads prompt, ticket or file text, so no prose can pick a profile
or change a budget.
"""

from __future__ import annotations

from tether.config import Config, Profile
from tether.core.errors import BudgetError, ConfigError
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
    tokens: int | None = None,
    cost_usd: float | None = None,
    reports_cost: bool = True,
    reports_tokens: bool = True,
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
    token_limit = _spending(
        tokens,
        profile.token_limit,
        config.token_limit,
        config.max_tokens_cap,
        profile,
        what="token limit",
        flag="--tokens",
        key="token_limit",
        cap_key="max_tokens_cap",
    )
    cost_limit = _spending(
        cost_usd,
        profile.cost_limit_usd,
        config.cost_limit_usd,
        config.max_cost_cap_usd,
        profile,
        what="cost limit",
        flag="--cost",
        key="cost_limit_usd",
        cap_key="max_cost_cap_usd",
    )
    if token_limit is not None and not reports_tokens:
        raise ConfigError(
            f"a token limit needs a harness that reports token usage in its stream; "
            f"{profile.harness} (profile {profile.name!r}) reports none, so the limit could "
            f"never fire. Use --iterations or --tool-calls instead.",
            key="token_limit",
        )
    if cost_limit is not None and not reports_cost:
        raise ConfigError(
            f"a cost limit needs a harness that reports cost; {profile.harness} (profile "
            f"{profile.name!r}) reports none. Use a token limit (--tokens) instead.",
            key="cost_limit_usd",
        )
    return Budget(
        iterations=limit,
        tool_calls=calls,
        timeout_seconds=seconds,
        tokens=int(token_limit) if token_limit is not None else None,
        cost_usd=float(cost_limit) if cost_limit is not None else None,
        events_max_bytes=config.events_max_bytes,
        stderr_max_bytes=config.stderr_max_bytes,
    )


def _spending(
    flag_value: float | None,
    profile_value: float | None,
    global_value: float | None,
    cap: float | None,
    profile: Profile,
    *,
    what: str,
    flag: str,
    key: str,
    cap_key: str,
) -> float | None:
    """A spending limit: the flag, else the profile's, else the global one; never over the cap."""
    value: float | None
    if flag_value is not None:
        value, origin = flag_value, flag
    elif profile_value is not None:
        value, origin = profile_value, f"profiles.{profile.name}.{key}"
    else:
        value, origin = global_value, key
    if value is None:
        return None
    if value <= 0:
        raise BudgetError(f"{what} must be positive (got {value:g} from {origin}).")
    if cap is not None and value > cap:
        raise BudgetError(
            f"{what} {value:g} (from {origin}) is above the global cap of {cap:g} "
            f"({cap_key}); ask for at most {cap:g}, or a human raises {cap_key} in tether.toml."
        )
    return value
