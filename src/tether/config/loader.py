"""Layering: flag > TETHER_* environment > project file > user file > defaults.

A long-lived process (the MCP server) may keep what it loaded: after
:func:`keep_loaded`, ``load_config`` without flags answers from memory while
the working folder, the environment and both files (by their ``stat``) are
unchanged. ``bench/mcp.py`` shows why: re-reading ``tether.toml`` cost a tool
call more than the call's own work. Nothing else changes: an edited file is
read again at the next call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from tether.config.files import (
    Layer,
    display_path,
    find_project_file,
    read_layer,
    user_file_path,
)
from tether.config.model import BUILTIN_PROFILE, Config, Profile
from tether.config.schema import SECTIONS, ProfileSchema, explain, setting_key
from tether.config.section import Section
from tether.core.errors import BudgetError, ConfigError
from tether.core.project import HOME_DIR

# None: off (every call reads the files); else the configurations kept, by what they depend on
_kept: dict[tuple[Any, ...], Config] | None = None
_KEEP_AT_MOST = 8


def keep_loaded() -> None:
    """From now on this process keeps each configuration it loads (see the module's doc)."""
    global _kept
    if _kept is None:
        _kept = {}


def _signature(path: Path | None) -> tuple[Any, ...] | None:
    if path is None:
        return None
    try:
        info = path.stat()
    except OSError:
        return (str(path),)
    return (str(path), info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def load_config(
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Config:
    """The effective configuration for a command started in ``cwd``.

    ``overrides`` are command-line flags by setting key (``iteration_limit``,
    ``timeout_seconds``, ``loop.x`` ...); a ``None`` value means "flag not given".
    """
    env = os.environ if env is None else env
    cwd = (Path.cwd() if cwd is None else Path(cwd)).absolute()
    project_file = find_project_file(cwd)
    kept = _kept
    if kept is None or any(v is not None for v in (overrides or {}).values()):
        return _load(overrides, env, cwd, project_file)
    key = (
        str(cwd),
        tuple(sorted((k, v) for k, v in env.items() if k.startswith("TETHER_"))),
        env.get("HOME"),
        env.get("XDG_CONFIG_HOME"),
        _signature(project_file),
        _signature(user_file_path(env)),
    )
    found = kept.get(key)
    if found is None:
        found = _load(overrides, env, cwd, project_file)
        while len(kept) >= _KEEP_AT_MOST:
            kept.pop(next(iter(kept)))
        kept[key] = found
    return found


def _load(
    overrides: Mapping[str, Any] | None,
    env: Mapping[str, str],
    cwd: Path,
    project_file: Path | None,
) -> Config:
    project_root = project_file.parent if project_file is not None else cwd
    user_file: Path | None = user_file_path(env)
    if user_file is not None and (
        not user_file.is_file()
        or (project_file is not None and user_file.resolve() == project_file.resolve())
    ):
        user_file = None

    layers: list[Layer] = []
    if user_file is not None:
        layers.append(read_layer(user_file, "user", display_path(user_file, cwd)))
    if project_file is not None:
        layers.append(read_layer(project_file, "project", display_path(project_file, cwd)))

    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for layer in layers:
        for key, value in layer.settings.items():
            values[key] = value
            sources[key] = layer.origin
    for key, (var, value) in _from_env(env, cwd).items():
        values[key] = value
        sources[key] = f"env:{var}"
    for key, value in _from_flags(overrides or {}, cwd).items():
        values[key] = value
        sources[key] = "flag"

    profiles = _merge_profiles(layers, sources)
    top = {k: v for k, v in values.items() if "." not in k and k != "home"}
    home = values.get("home")
    config = Config(
        project_root=project_root,
        home=Path(home) if home is not None else project_root / HOME_DIR,
        profiles=profiles,
        sources=sources,
        user_file=user_file,
        project_file=project_file,
        sections=_sections(values),
        **top,
    )
    _check_caps(config)
    config.default_profile  # noqa: B018 - raises ConfigError when none or several
    return config


def _from_env(env: Mapping[str, str], cwd: Path) -> dict[str, tuple[str, Any]]:
    found: dict[str, tuple[str, Any]] = {}
    for table, struct in SECTIONS.items():
        for name, var in struct.env_vars.items():
            text = env.get(var, "").strip()
            if not text:
                continue
            key = setting_key(table, name)
            if key == "home":
                found[key] = (var, cwd / Path(text).expanduser())
                continue
            try:
                value = getattr(msgspec.convert({name: text}, struct, strict=False), name)
            except msgspec.ValidationError as exc:
                problem = explain(exc, "", {name: text})
                raise ConfigError(
                    f"environment variable {var}={text!r}: expected {problem.expected} "
                    f"(it sets `{key}`); fix or unset it.",
                    key=key,
                ) from None
            found[key] = (var, value)
    return found


def _from_flags(overrides: Mapping[str, Any], cwd: Path) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in overrides.items():
        if value is None:
            continue
        table, _, name = key.rpartition(".")
        struct = SECTIONS.get(table)
        if struct is None or name not in struct.__struct_fields__:
            raise ConfigError(f"unknown setting `{key}` given as a flag", key=key)
        if key == "home":
            found[key] = cwd / Path(str(value)).expanduser()
            continue
        try:
            found[key] = getattr(msgspec.convert({name: value}, struct), name)
        except msgspec.ValidationError as exc:
            problem = explain(exc, table, {name: value})
            raise ConfigError(f"invalid flag value for {problem.message}", key=key) from None
    return found


def _sections(values: Mapping[str, Any]) -> dict[str, Section]:
    sections: dict[str, Section] = {}
    for table, struct in SECTIONS.items():
        if not table:
            continue
        given = {
            key.partition(".")[2]: value
            for key, value in values.items()
            if key.partition(".")[0] == table
        }
        sections[table] = msgspec.convert(given, struct)
    return sections


def _merge_profiles(layers: list[Layer], sources: dict[str, str]) -> dict[str, Profile]:
    """Profiles merge by name, the later layer's whole table winning.

    The default is the one marked in the highest layer that marks one, so a
    project can choose its own default over the user's.
    """
    chosen: dict[str, tuple[Layer, ProfileSchema]] = {}
    for layer in layers:
        for name, schema in layer.profiles.items():
            chosen[name] = (layer, schema)
    if not chosen:
        sources[f"profiles.{BUILTIN_PROFILE.name}"] = "default"
        return {BUILTIN_PROFILE.name: BUILTIN_PROFILE}
    default_name: str | None = None
    for layer in layers:
        for name, (origin, schema) in chosen.items():
            if origin is layer and schema.default:
                default_name = name
    profiles: dict[str, Profile] = {}
    for name, (layer, schema) in chosen.items():
        sources[f"profiles.{name}"] = layer.origin
        profiles[name] = Profile(
            name=name,
            harness=schema.harness,
            model=schema.model,
            args=tuple(schema.args),
            env=dict(schema.env),
            iteration_limit=schema.iteration_limit,
            tool_call_limit=schema.tool_call_limit,
            timeout_seconds=schema.timeout_seconds,
            token_limit=schema.token_limit,
            cost_limit_usd=schema.cost_limit_usd,
            default=name == default_name,
            strength=schema.strength,
            post_run=tuple(tuple(command) for command in schema.post_run),
        )
    return profiles


def _check_caps(config: Config) -> None:
    cap = config.max_iterations_cap
    cap_from = config.sources.get("max_iterations_cap", "default")
    if config.iteration_limit > cap:
        limit_from = config.sources.get("iteration_limit", "default")
        raise BudgetError(
            f"iteration_limit {config.iteration_limit} (from {limit_from}) is above "
            f"max_iterations_cap {cap} (from {cap_from}); lower the limit or raise the cap.",
            key="iteration_limit",
        )
    for profile in config.profiles.values():
        if profile.iteration_limit is not None and profile.iteration_limit > cap:
            origin = config.sources.get(f"profiles.{profile.name}", "default")
            raise BudgetError(
                f"profiles.{profile.name}.iteration_limit {profile.iteration_limit} (from "
                f"{origin}) is above max_iterations_cap {cap} (from {cap_from}); lower it "
                f"or raise the cap.",
                key=f"profiles.{profile.name}.iteration_limit",
            )
