"""What a run is asked for (``RunRequest``) and the profile and budget it would get.

Apart from the supervisor so that asking "may this run start?" (the loop's dry
run, the Stop hook at every end of a turn) does not import what starts and
finishes runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tether.config import Config, Profile
from tether.harnesses import get_harness
from tether.harnesses.base import ToolAllowance
from tether.runs.budget import Budget
from tether.runs.profiles import Asked, choose_budget, choose_profile


@dataclass(frozen=True)
class RunRequest:
    prompt: str
    profile: str | None = None
    unit: str | None = None
    iterations: int | None = None
    tool_calls: int | None = None
    timeout: float | None = None
    follow_up: str | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    budget_request: int | None = None
    justification: str | None = None
    cwd: Path | None = None
    # laid over the agent's environment (the loop passes its policy file this way)
    env: Mapping[str, str] = field(default_factory=dict)
    # only these tool calls, by the harness's own allow-list (a room's second belt)
    allow: ToolAllowance | None = None
    # no sandbox for this run (the person's ``--no-sandbox``)
    no_sandbox: bool = False
    # folders the agent may write besides its work folder (a room's folder, an outbox)
    writable: tuple[Path, ...] = ()
    # folders the agent may read where the sandbox would show nothing (a wiki under /tmp)
    readable: tuple[Path, ...] = ()


def choose_run_budget(config: Config, request: RunRequest) -> tuple[Profile, Budget]:
    """The profile and the budget ``request`` runs on; a ``BudgetError`` if it may not run."""
    profile = choose_profile(config, request.profile, request.justification)
    harness = get_harness(profile.harness)
    asked = Asked(
        iterations=request.iterations,
        tool_calls=request.tool_calls,
        timeout=request.timeout,
        budget_request=request.budget_request,
        justification=request.justification,
        tokens=request.tokens,
        cost_usd=request.cost_usd,
    )
    budget = choose_budget(
        config,
        profile,
        asked,
        reports_cost=bool(getattr(harness, "reports_cost", False)),
        reports_tokens=bool(getattr(harness, "reports_tokens", True)),
    )
    return profile, budget
