"""Finding ``tether.toml`` files and reading one into a validated layer.

``difflib`` (the "did you mean" of an unknown key or harness) is imported only
when a file has such a mistake: every command that reads the configuration
imports this module.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from tether.config.schema import (
    ENV_NAME,
    PROFILE_NAME,
    PROFILES_TABLE,
    SECTIONS,
    Problem,
    ProfileSchema,
    describe_value,
    explain,
    setting_key,
)
from tether.core.errors import ConfigError
from tether.core.project import CONFIG_FILE, find_project_root

PROJECT_FILE = CONFIG_FILE
# set by `tether run` for the agent; a profile's env must not shadow them
RESERVED_ENV = frozenset({"TETHER_RUN_ID", "TETHER_SESSION_ID", "TETHER_DEPTH"})


@dataclass(frozen=True)
class Layer:
    """What one file sets: only the keys it names, already validated."""

    kind: str  # "project" | "user"
    path: Path
    settings: dict[str, Any] = field(default_factory=dict)  # dotted key -> value
    profiles: dict[str, ProfileSchema] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        return f"{self.kind}:{self.path}"


def find_project_file(cwd: Path) -> Path | None:
    """``tether.toml`` of the project ``cwd`` lies in (``core.project.find_project_root``)."""
    root = find_project_root(str(cwd))
    return None if root is None else Path(root) / PROJECT_FILE


def user_file_path(env: Mapping[str, str]) -> Path:
    """$TETHER_USER_CONFIG, else $XDG_CONFIG_HOME/tether/tether.toml, else ~/.config/..."""
    explicit = env.get("TETHER_USER_CONFIG", "")
    if explicit:
        return Path(explicit).expanduser()
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "tether" / PROJECT_FILE
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".config" / "tether" / PROJECT_FILE


def display_path(path: Path, cwd: Path) -> str:
    """A file as messages name it: relative to the working folder when inside it."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def read_layer(path: Path, kind: str, display: str | None = None) -> Layer:
    """Read and validate one file; the first problem is raised as a ``ConfigError``."""
    layer, problems = check_layer(path, kind, display)
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more; `tether config check` lists them)"
        raise ConfigError(
            str(first) + (more if len(problems) > 1 else ""), key=first.key, path=str(path)
        )
    return layer


def check_layer(
    path: Path, kind: str, display: str | None = None
) -> tuple[Layer, list[ConfigError]]:
    """Read and validate one file, collecting every problem found (one per table)."""
    name = display or str(path)
    layer = Layer(kind=kind, path=path)
    try:
        raw = tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        return layer, [ConfigError(f"{name}: cannot read: {exc.strerror}", path=str(path))]
    except UnicodeDecodeError as exc:
        return layer, [ConfigError(f"{name}: not UTF-8 text ({exc.reason})", path=str(path))]
    except tomllib.TOMLDecodeError as exc:
        return layer, [ConfigError(f"{name}: invalid TOML: {exc}", path=str(path))]
    problems: list[Problem] = []
    top = {k: v for k, v in raw.items() if k != PROFILES_TABLE and not (k and k in SECTIONS)}
    _read_section(layer, "", top, problems)
    for table, section_raw in raw.items():
        if table in SECTIONS and table:
            if isinstance(section_raw, dict):
                _read_section(layer, table, section_raw, problems)
            else:
                problems.append(Problem(table, f"`{table}` must be a table ([{table}])"))
    if PROFILES_TABLE in raw:
        _read_profiles(layer, raw[PROFILES_TABLE], problems)
    _resolve_home(layer)
    errors = [ConfigError(f"{name}: {p.message}", key=p.key, path=str(path)) for p in problems]
    return layer, errors


def _read_section(layer: Layer, table: str, raw: dict[str, Any], problems: list[Problem]) -> None:
    struct = SECTIONS[table]
    known = struct.__struct_fields__
    for name in [name for name in raw if name not in known]:
        key = setting_key(table, name)
        from difflib import get_close_matches

        close = get_close_matches(name, [*known, *SECTIONS, PROFILES_TABLE], n=1)
        hint = f" (did you mean `{setting_key(table, close[0])}`?)" if close else ""
        problems.append(Problem(key, f"unknown key `{key}`{hint}"))
        del raw[name]
    try:
        value = msgspec.convert(raw, struct)
    except msgspec.ValidationError as exc:
        problems.append(explain(exc, table, raw, struct))
        return
    for name in raw:
        layer.settings[setting_key(table, name)] = getattr(value, name)


def _read_profiles(layer: Layer, raw: Any, problems: list[Problem]) -> None:
    if not isinstance(raw, dict):
        problems.append(Problem(PROFILES_TABLE, "`profiles` must be a table of [profiles.NAME]"))
        return
    for name, body in raw.items():
        prefix = f"{PROFILES_TABLE}.{name}"
        if not PROFILE_NAME.fullmatch(name):
            problems.append(
                Problem(
                    prefix,
                    f"profile name {name!r} is not allowed: use letters, digits, `-`, `_`, `.` "
                    f"(at most 64, starting with a letter or digit)",
                )
            )
            continue
        if not isinstance(body, dict):
            problems.append(
                Problem(prefix, f"`{prefix}` must be a table, got {describe_value(body)}")
            )
            continue
        env = body.get("env")
        if isinstance(env, dict):
            bad = _bad_env_entry(env)
            if bad is not None:
                problems.append(
                    Problem(f"{prefix}.env.{bad[0]}", f"`{prefix}.env.{bad[0]}`: {bad[1]}")
                )
                continue
        try:
            profile = msgspec.convert(body, ProfileSchema)
        except msgspec.ValidationError as exc:
            problems.append(explain(exc, prefix, body, ProfileSchema))
            continue
        problem = _check_harness(prefix, profile.harness)
        if problem is not None:
            problems.append(problem)
            continue
        layer.profiles[name] = profile
    defaults = sorted(n for n, p in layer.profiles.items() if p.default)
    if len(defaults) > 1:
        names = " and ".join(f"`{n}`" for n in defaults)
        problems.append(
            Problem(
                PROFILES_TABLE,
                f"profiles {names} are all marked `default = true`; keep it on exactly one",
            )
        )


def _bad_env_entry(env: dict[str, Any]) -> tuple[str, str] | None:
    for key, value in env.items():
        if not ENV_NAME.fullmatch(key):
            return key, "not a valid environment variable name"
        if key in RESERVED_ENV:
            return key, f"{key} is set by tether for every run; a profile cannot set it"
        if not isinstance(value, str):
            return key, f"expected a string, got {describe_value(value)}"
    return None


def _check_harness(prefix: str, harness: str) -> Problem | None:
    from tether.harness_registry import BUILTIN, known_names

    if harness in BUILTIN:  # no need to scan installed plugins' entry points
        return None
    known = known_names()
    if harness in known:
        return None
    from difflib import get_close_matches

    close = get_close_matches(harness, known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return Problem(
        f"{prefix}.harness",
        f"`{prefix}.harness`: unknown harness {harness!r}.{hint} Known: {', '.join(known)}.",
    )


def _resolve_home(layer: Layer) -> None:
    """``home`` in a file is relative to that file's folder (``~`` expanded)."""
    home = layer.settings.get("home")
    if isinstance(home, str):
        layer.settings["home"] = layer.path.parent / Path(home).expanduser()
