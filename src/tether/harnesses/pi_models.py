"""Which model a Pi run uses, and whether Pi knows its prices (for a cost limit).

Pi reports a cost for every model call (``usage.cost.total``), computed from the
model's prices. A model defined in ``models.json`` (``$PI_CODING_AGENT_DIR``,
else ``~/.pi/agent``) without ``cost`` is priced at zero there, so every call
costs $0.00 and a cost limit could never fire: such a run is refused before
it starts. The model is the run's ``--model`` (or ``provider/model``), else the
``defaultModel`` of Pi's settings (the project's ``.pi/settings.json`` over
the global one); the provider likewise (``--provider``, ``defaultProvider``).
A model Pi has built in, or one tether cannot name, carries Pi's own prices
and is left to Pi.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tether.core.errors import ConfigError
from tether.harnesses.base import home_dir

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
_PRICE_KEYS = ("input", "output")


def agent_dir(env: Mapping[str, str]) -> Path:
    value = env.get(AGENT_DIR_ENV)
    return Path(value).expanduser() if value else home_dir(env) / ".pi" / "agent"


def _flag(args: Sequence[str], name: str) -> str | None:
    for index, arg in enumerate(args):
        if arg == name and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(f"{name}="):
            return arg.partition("=")[2]
    return None


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read Pi's {path}: {exc}", path=str(path)) from None
    return data if isinstance(data, dict) else {}


def chosen_model(
    env: Mapping[str, str], cwd: Path, args: Iterable[str], model: str | None
) -> tuple[str | None, str | None]:
    """(provider, model id) the run asks Pi for; None where Pi would choose."""
    argv = tuple(args)
    provider = _flag(argv, "--provider")
    name = model or _flag(argv, "--model")
    if name and "/" in name and provider is None:
        provider, _, name = name.partition("/")
    settings = {**_read_json(agent_dir(env) / "settings.json")}
    settings.update(_read_json(cwd / ".pi" / "settings.json"))
    provider = provider or _text(settings.get("defaultProvider"))
    name = name or _text(settings.get("defaultModel"))
    return provider, name


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def require_prices(
    env: Mapping[str, str], cwd: Path, args: Iterable[str], model: str | None
) -> None:
    """``ConfigError`` when the run's model is defined in ``models.json`` without prices."""
    provider, name = chosen_model(env, cwd, args, model)
    if name is None:
        return
    path = agent_dir(env) / "models.json"
    providers = _read_json(path).get("providers")
    if not isinstance(providers, dict):
        return
    for pname, entry in providers.items():
        if (provider is not None and pname != provider) or not isinstance(entry, dict):
            continue
        cost = _defined_cost(entry, name)
        if cost is None:
            continue
        if all(_number(cost.get(key)) == 0 for key in _PRICE_KEYS):
            raise ConfigError(
                f"Pi's model {pname}/{name} has no prices in {path} (a model without "
                f'"cost" is priced at 0 there), so every call would cost $0.00 and a cost '
                f'limit could never fire: add "cost": {{"input": …, "output": …}} (USD per '
                f"million tokens) to its entry, or run without --cost.",
                key="cost_limit_usd",
                path=str(path),
            )
        return


def _defined_cost(provider: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The cost models.json gives ``name`` under this provider; None when it does not
    define the model (Pi's built-in entry, with Pi's prices, applies)."""
    models = provider.get("models")
    for model in models if isinstance(models, list) else []:
        if isinstance(model, dict) and model.get("id") == name:
            cost = model.get("cost")
            return cost if isinstance(cost, dict) else {}
    return None


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value)
