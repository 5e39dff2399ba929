"""The environment a run's agent gets: the caller's, the profile's, and the run's own ids."""

from __future__ import annotations

from collections.abc import Mapping

from tether.config import Config, Profile
from tether.core.errors import UsageError


def agent_env(
    config: Config, profile: Profile, run_id: str, session_id: str, base: Mapping[str, str]
) -> dict[str, str]:
    """``base`` with the profile's ``env`` over it and the run's ids and depth set."""
    env = dict(base)
    env.update(profile.env)
    raw_depth = env.get("TETHER_DEPTH", "0") or "0"
    if not raw_depth.isdigit():
        raise UsageError(
            f"TETHER_DEPTH={raw_depth!r} is not a whole number; it counts how deeply runs "
            f"are nested (unset it outside tether-started agents)."
        )
    depth = int(raw_depth) + 1
    env.update(
        TETHER_HOME=str(config.home),
        TETHER_RUN_ID=run_id,
        TETHER_SESSION_ID=session_id,
        TETHER_DEPTH=str(depth),
    )
    return env
