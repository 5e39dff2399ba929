"""Choosing a profile and a budget: only from flags and configuration.

Nothing here reads prompt, ticket or file text, so no prose can pick a profile
or change a budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from tether.config import Config, Profile
from tether.core.errors import BudgetError, ConfigError
from tether.runs.budget import Budget, validate_iterations

T = TypeVar("T")


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


@dataclass(frozen=True)
class Asked:
    """What a run's flags ask for; ``None``: the profile's value, else the configuration's."""

    iterations: int | None = None
    tool_calls: int | None = None
    timeout: float | None = None
    # a planner's iteration budget for the unit (needs a justification)
    budget_request: int | None = None
    justification: str | None = None
    tokens: int | None = None
    cost_usd: float | None = None


@dataclass(frozen=True)
class _Spending:
    """One spending limit's names: ``key`` is its setting in tether.toml, at the top and
    in a profile, and the attribute of ``Config`` and ``Profile`` alike."""

    what: str
    flag: str
    key: str
    cap_key: str


_TOKENS = _Spending("token limit", "--tokens", "token_limit", "max_tokens_cap")
_COST = _Spending("cost limit", "--cost", "cost_limit_usd", "max_cost_cap_usd")


def choose_budget(
    config: Config,
    profile: Profile,
    asked: Asked,
    *,
    reports_cost: bool = True,
    reports_tokens: bool = True,
) -> Budget:
    # in this order: the first limit that may not be is the one a refusal names
    limit = _iteration_limit(config, profile, asked)
    calls = _first_set(asked.tool_calls, profile.tool_call_limit, config.tool_call_limit)
    seconds = _first_set(asked.timeout, profile.timeout_seconds, config.timeout_seconds)
    token_limit = _spending(_TOKENS, asked.tokens, config, profile)
    cost_limit = _spending(_COST, asked.cost_usd, config, profile)
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


def _iteration_limit(config: Config, profile: Profile, asked: Asked) -> int:
    """The flag or a justified budget request, else the profile's, else the global one."""
    cap = config.max_iterations_cap
    if asked.budget_request is not None:
        if not (asked.justification and asked.justification.strip()):
            raise BudgetError(
                "--budget-request needs --justification TEXT: say why this unit needs "
                "a different iteration budget (it is recorded with the run)."
            )
        if asked.iterations is not None:
            raise BudgetError("give either --iterations or --budget-request, not both.")
        return validate_iterations(asked.budget_request, cap, what="budget request")
    if asked.iterations is not None:
        return validate_iterations(asked.iterations, cap, what="--iterations")
    limit = profile.iteration_limit or config.iteration_limit
    return validate_iterations(limit, cap, what=f"profile {profile.name!r} iteration_limit")


def _first_set(flag: T | None, mine: T | None, everyone: T) -> T:
    """The flag, else the profile's, else the configuration's."""
    if flag is not None:
        return flag
    return mine if mine is not None else everyone


def _spending(
    kind: _Spending, asked: float | None, config: Config, profile: Profile
) -> float | None:
    """A spending limit: the flag, else the profile's, else the global one; never over the cap."""
    value: float | None
    if asked is not None:
        value, origin = asked, kind.flag
    elif getattr(profile, kind.key) is not None:
        value, origin = getattr(profile, kind.key), f"profiles.{profile.name}.{kind.key}"
    else:
        value, origin = getattr(config, kind.key), kind.key
    if value is None:
        return None
    what, cap_key = kind.what, kind.cap_key
    cap: float | None = getattr(config, cap_key)
    if value <= 0:
        raise BudgetError(f"{what} must be positive (got {value:g} from {origin}).")
    if cap is not None and value > cap:
        raise BudgetError(
            f"{what} {value:g} (from {origin}) is above the global cap of {cap:g} "
            f"({cap_key}); ask for at most {cap:g}, or a human raises {cap_key} in tether.toml."
        )
    return value
