"""The effective configuration: what every command reads after layering."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from tether.config.schema import Settings
from tether.config.section import Section
from tether.core.errors import ConfigError, UnknownNameError

_DEFAULTS = Settings()
S = TypeVar("S", bound=Section)


@dataclass(frozen=True, kw_only=True)
class Profile:
    """A named way to run an agent: harness + model + arguments + budgets."""

    name: str
    harness: str
    model: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    iteration_limit: int | None = None
    tool_call_limit: int | None = None
    timeout_seconds: float | None = None
    token_limit: int | None = None
    cost_limit_usd: float | None = None
    default: bool = False
    # 1 = cheap; a profile stronger than the default needs a written justification
    strength: int = 1
    # commands run after a *completed* run only (skipped on any limit stop)
    post_run: tuple[tuple[str, ...], ...] = ()
    # tether's own fallback (BUILTIN_PROFILE), not a profile anyone configured
    builtin: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "harness": self.harness,
            "model": self.model,
            "args": list(self.args),
            "env": dict(self.env),
            "iteration_limit": self.iteration_limit,
            "tool_call_limit": self.tool_call_limit,
            "timeout_seconds": self.timeout_seconds,
            "token_limit": self.token_limit,
            "cost_limit_usd": self.cost_limit_usd,
            "default": self.default,
            "strength": self.strength,
            "post_run": [list(command) for command in self.post_run],
        }


# Used only when no profile is configured anywhere, so a fresh machine works.
BUILTIN_PROFILE = Profile(
    name="scripted",
    harness="scripted",
    args=("--format", "claude-code", "--steps", "5"),
    default=True,
    strength=1,
    builtin=True,
)


def _builtin_profiles() -> dict[str, Profile]:
    return {BUILTIN_PROFILE.name: BUILTIN_PROFILE}


@dataclass(frozen=True, kw_only=True)
class Config:
    """Effective settings, each with the layer it came from in ``sources``.

    ``sources`` maps a key (``iteration_limit``, ``profiles.cheap``, ...) to
    ``flag``, ``env:TETHER_<NAME>``, ``project:<path>``, ``user:<path>`` or ``default``.
    """

    project_root: Path
    home: Path
    iteration_limit: int = _DEFAULTS.iteration_limit
    max_iterations_cap: int = _DEFAULTS.max_iterations_cap
    tool_call_limit: int | None = _DEFAULTS.tool_call_limit
    timeout_seconds: float = _DEFAULTS.timeout_seconds
    kill_grace_seconds: float = _DEFAULTS.kill_grace_seconds
    gate_budget: int = _DEFAULTS.gate_budget
    token_limit: int | None = _DEFAULTS.token_limit
    cost_limit_usd: float | None = _DEFAULTS.cost_limit_usd
    max_tokens_cap: int | None = _DEFAULTS.max_tokens_cap
    max_cost_cap_usd: float | None = _DEFAULTS.max_cost_cap_usd
    events_max_bytes: int = _DEFAULTS.events_max_bytes
    stderr_max_bytes: int = _DEFAULTS.stderr_max_bytes
    profiles: dict[str, Profile] = field(default_factory=_builtin_profiles)
    sources: dict[str, str] = field(default_factory=dict)
    user_file: Path | None = None
    project_file: Path | None = None
    # later sections ([loop], [board], ...) by table name; see config.schema
    sections: Mapping[str, Section] = field(default_factory=dict)

    @property
    def default_profile(self) -> Profile:
        defaults = [p for p in self.profiles.values() if p.default]
        if len(defaults) == 1:
            return defaults[0]
        if not defaults:
            names = ", ".join(sorted(self.profiles)) or "(none)"
            raise ConfigError(
                f"no default profile among {names}: set `default = true` on exactly one "
                f"(the cheap one).",
                key="profiles",
            )
        names = " and ".join(sorted(p.name for p in defaults))
        raise ConfigError(
            f"profiles {names} are all marked `default = true`; keep it on exactly one.",
            key="profiles",
        )

    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            raise UnknownNameError(
                "profile",
                name,
                list(self.profiles),
                "Use one of these, or define it as [profiles."
                f"{name}] in tether.toml (`tether config show` prints what is configured).",
            ) from None

    def needs_justification(self, profile: Profile | str) -> bool:
        """True when ``profile`` is stronger than the default one (then a reason is required)."""
        chosen = self.profile(profile) if isinstance(profile, str) else profile
        return chosen.strength > self.default_profile.strength

    def section(self, name: str, kind: type[S]) -> S:
        """A later section's settings, typed: ``config.section("loop", LoopSettings)``."""
        value = self.sections.get(name)
        if value is None:
            value = kind()
        if not isinstance(value, kind):
            raise TypeError(f"section {name!r} is {type(value).__name__}, not {kind.__name__}")
        return value

    def settings(self) -> dict[str, Any]:
        """Every scalar setting by its dotted key (top level, then sections)."""
        values: dict[str, Any] = {
            "home": str(self.home),
            "iteration_limit": self.iteration_limit,
            "max_iterations_cap": self.max_iterations_cap,
            "tool_call_limit": self.tool_call_limit,
            "timeout_seconds": self.timeout_seconds,
            "kill_grace_seconds": self.kill_grace_seconds,
            "gate_budget": self.gate_budget,
            "token_limit": self.token_limit,
            "cost_limit_usd": self.cost_limit_usd,
            "max_tokens_cap": self.max_tokens_cap,
            "max_cost_cap_usd": self.max_cost_cap_usd,
            "events_max_bytes": self.events_max_bytes,
            "stderr_max_bytes": self.stderr_max_bytes,
        }
        for table, section in sorted(self.sections.items()):
            for name in section.__struct_fields__:
                value = getattr(section, name)
                # nested tables ([loop.sources] ...) as plain data, not their repr
                plain = isinstance(value, msgspec.Struct | list | dict)
                values[f"{table}.{name}"] = msgspec.to_builtins(value) if plain else value
        return values

    def as_dict(self) -> dict[str, Any]:
        """The effective config with the source of every value (``config show --json``)."""
        return {
            "project_root": str(self.project_root),
            "user_file": None if self.user_file is None else str(self.user_file),
            "project_file": None if self.project_file is None else str(self.project_file),
            "settings": {
                key: {"value": value, "source": self.sources.get(key, "default")}
                for key, value in self.settings().items()
            },
            "default_profile": self.default_profile.name,
            "profiles": {
                name: {
                    **profile.as_dict(),
                    "source": self.sources.get(f"profiles.{name}", "default"),
                }
                for name, profile in sorted(self.profiles.items())
            },
        }
