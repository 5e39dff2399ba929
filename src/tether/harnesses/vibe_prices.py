"""What a Vibe run costs, derived the way Vibe derives it.

Vibe 2.26.1 writes no cost to its stream, its session journal or ``meta.json``
(only the ``--output-dir`` export has ``cost_usd``, once the run is over). It
computes the session cost itself, for ``--max-price``, from the session's
tokens and the active model's prices (``vibe.utils.pricing.
session_token_cost``)::

    cached = min(cached_tokens, input_tokens)
    cost = ((input_tokens - cached) * input_price
            + cached * (cached_input_price or input_price)
            + output_tokens * output_price) / 1_000_000

with the prices per million tokens of the active model's ``[[models]]`` entry.
tether does the same with the usage of each completion in the journal, so a
Vibe run's cost is *derived*, not reported.

The active model and its prices are resolved from the layers Vibe reads, in
Vibe's order (a later layer wins, model entries deep-merge by alias): Vibe's
built-in default model (``mistral-medium-3.5``, 1.5 / 7.5 / 0.15 USD per
million), ``$VIBE_HOME/config.toml``, the project's ``.vibe/config.toml``
(found from the working folder upwards, read only when trusted: ``--trust``
for the working folder itself, or ``trusted_folders.toml``), then
``VIBE_ACTIVE_MODEL`` from the environment or ``$VIBE_HOME/.env``. An
unpinned ``active_model`` is the default model when configured, else the first
one. Not read: Vibe's remote layers (an organisation's enforced config, an
experiment that routes an unpinned model) and agent-profile overrides; tether
pins the model it priced (``VIBE_ACTIVE_MODEL``) so the experiments cannot
route the run elsewhere.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.core.errors import ConfigError
from tether.harnesses.base import home_dir

MODEL_ENV = "VIBE_ACTIVE_MODEL"
HOME_ENV = "VIBE_HOME"
TRUST_FLAG = "--trust"
# Vibe's built-in model (vibe.core.config.vibe_schema.DEFAULT_ACTIVE_MODEL_CONFIG).
DEFAULT_ALIAS = "mistral-medium-3.5"
_DEFAULT_MODEL: dict[str, Any] = {
    "name": "mistral-vibe-cli-latest",
    "provider": "mistral",
    "alias": DEFAULT_ALIAS,
    "input_price": 1.5,
    "output_price": 7.5,
    "cached_input_price": 0.15,
}
_BUILT_IN = "Vibe's built-in default"


@dataclass(frozen=True)
class VibePrices:
    """The active model's prices, in USD per million tokens, and where they came from."""

    alias: str
    input_price: float
    output_price: float
    cached_input_price: float | None = None
    source: str = _BUILT_IN

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> float:
        """USD for this usage: Vibe's ``session_token_cost``."""
        cached = min(cached_tokens, input_tokens)
        cached_price = (
            self.input_price if self.cached_input_price is None else (self.cached_input_price)
        )
        input_cost = (input_tokens - cached) * self.input_price + cached * cached_price
        return (input_cost + output_tokens * self.output_price) / 1_000_000


def vibe_home(env: Mapping[str, str]) -> Path:
    """``$VIBE_HOME``, else ``~/.vibe`` (Vibe's own rule)."""
    value = env.get(HOME_ENV)
    return Path(value) if value else home_dir(env) / ".vibe"


def resolve_prices(
    env: Mapping[str, str], cwd: Path, args: Iterable[str] = (), model: str | None = None
) -> VibePrices:
    """The prices Vibe will charge its active model at, for a run in ``cwd``.

    ``env`` is the agent's environment (its ``VIBE_HOME``, ``VIBE_ACTIVE_MODEL``),
    ``args`` the flags it gets (``--trust``), ``model`` the alias the run passes
    (``RunSpec.model``, set as ``VIBE_ACTIVE_MODEL`` over all of them). Raises
    ``ConfigError`` when the configuration cannot be read or names a model it
    does not define.
    """
    home = vibe_home(env)
    models: dict[str, dict[str, Any]] = {DEFAULT_ALIAS: dict(_DEFAULT_MODEL)}
    sources: dict[str, str] = {DEFAULT_ALIAS: _BUILT_IN}
    active = ""
    layers = [home / "config.toml"]
    project = _project_config(cwd.resolve(), home, TRUST_FLAG in tuple(args))
    if project is not None:
        layers.append(project)
    for path in layers:
        data = _read_toml(path)
        if data is None:
            continue
        for alias, fields in _model_entries(data.get("models"), path):
            models[alias] = {**models.get(alias, {}), **fields}
            sources[alias] = str(path)
        pinned = data.get("active_model")
        if isinstance(pinned, str):
            active = pinned
    active = model or env.get(MODEL_ENV) or _dotenv(home / ".env").get(MODEL_ENV) or active
    if not active:
        active = DEFAULT_ALIAS if DEFAULT_ALIAS in models else next(iter(models))
    entry = models.get(active)
    if entry is None:
        raise ConfigError(
            f"Vibe's model {active!r} is not among the models its configuration defines "
            f"(aliases: {', '.join(sorted(models))}); Vibe would fall back to another "
            f"provider and fail. Name one of these aliases as the model.",
            path=str(home / "config.toml"),
        )
    return VibePrices(
        alias=active,
        input_price=_price(entry, "input_price", active, sources[active]) or 0.0,
        output_price=_price(entry, "output_price", active, sources[active]) or 0.0,
        cached_input_price=_price(entry, "cached_input_price", active, sources[active]),
        source=sources[active],
    )


def _price(entry: Mapping[str, Any], key: str, alias: str, source: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(
            f"model {alias!r}: {key} must be a number of USD per million tokens (got {value!r}).",
            path=source,
        )
    return float(value)


def _read_toml(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read Vibe's config {path}: {exc}", path=str(path)) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Vibe's config {path} is not TOML: {exc}", path=str(path)) from None


def _model_entries(value: Any, path: Path) -> list[tuple[str, dict[str, Any]]]:
    """``[[models]]`` tables or a ``[models.<alias>]`` map, as (alias, entry) pairs."""
    if value is None:
        return []
    items: list[tuple[Any, Any]]
    if isinstance(value, list):
        items = [(e.get("alias", e.get("name")) if isinstance(e, dict) else None, e) for e in value]
    elif isinstance(value, dict):
        items = [(alias, e) for alias, e in value.items()]
    else:
        raise ConfigError(
            f"Vibe's config {path}: models must be [[models]] tables.", path=str(path)
        )
    out: list[tuple[str, dict[str, Any]]] = []
    for alias, entry in items:
        if not isinstance(entry, dict) or not isinstance(alias, str) or not alias:
            raise ConfigError(
                f"Vibe's config {path}: every model needs an alias or a name.", path=str(path)
            )
        out.append((alias, entry))
    return out


def _project_config(cwd: Path, home: Path, trust_cwd: bool) -> Path | None:
    """The project's ``.vibe/config.toml`` Vibe reads, if there is one it trusts."""
    stop = home.parent
    for folder in (cwd, *cwd.parents):
        if folder == stop:
            return None
        candidate = folder / ".vibe" / "config.toml"
        if candidate.is_file():
            trusted = _trusted(candidate.parent, home / "trusted_folders.toml")
            if trust_cwd and _within(candidate.parent, cwd):
                trusted = True
            return candidate if trusted else None
    return None


def _trusted(path: Path, listing: Path) -> bool:
    """Vibe's closest decision: the nearest trusted or untrusted ancestor wins."""
    data = _read_toml(listing) or {}
    trusted = {_norm(p) for p in data.get("trusted", ()) if isinstance(p, str)}
    untrusted = {_norm(p) for p in data.get("untrusted", ()) if isinstance(p, str)}
    for folder in (path.resolve(), *path.resolve().parents):
        if str(folder) in trusted:
            return True
        if str(folder) in untrusted:
            return False
    return False


def _norm(raw: str) -> str:
    return str(Path(raw).expanduser().resolve())


def _within(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def _dotenv(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines of Vibe's ``.env`` (Vibe loads it when the variable is unset)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if value:
            out[key.strip()] = value
    return out
