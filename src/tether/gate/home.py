"""Where the gate keeps its state and which budget applies, found cheaply.

Both answers come from the environment and at most a handful of ``stat`` calls;
``tether.toml`` is parsed (with ``tomllib``) only when a session is counted for
the first time and no ``TETHER_GATE_BUDGET`` is set.
"""

from __future__ import annotations

import os
import sys

# collections.abc pulls in collections (~2 ms); annotations need it only for mypy.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_CALL_BUDGET = 60
CONFIG_FILE = "tether.toml"
HOME_DIR = ".tether"
# Walking further up than this is never a project layout; it is a loop guard.
_MAX_PARENTS = 64


def find_project_root(start: str) -> str | None:
    """The nearest directory at or above ``start`` holding a ``tether.toml``."""
    current = os.path.abspath(start)
    for _ in range(_MAX_PARENTS):
        if os.path.isfile(os.path.join(current, CONFIG_FILE)):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return None


def resolve_home(environ: Mapping[str, str] | None = None, cwd: str | None = None) -> str:
    """``$TETHER_HOME``, else ``.tether`` in the project root (or the cwd)."""
    env = os.environ if environ is None else environ
    explicit = env.get("TETHER_HOME")
    if explicit:
        return os.path.abspath(explicit)
    start = cwd if cwd is not None else os.getcwd()
    root = find_project_root(start) or os.path.abspath(start)
    return os.path.join(root, HOME_DIR)


def _warn(message: str) -> None:
    sys.stderr.write(f"tether-gate: warning: {message}\n")


def _parse_budget(raw: object, where: str) -> int | None:
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        _warn(f"{where} must be a whole number >= 0, not {raw!r}; using the next source")
        return None
    try:
        value = int(raw)
    except ValueError:
        _warn(f"{where} must be a whole number >= 0, not {raw!r}; using the next source")
        return None
    if value < 0:
        _warn(f"{where} must be >= 0, not {value}; using the next source")
        return None
    return value


def budget_from_config(project_root: str) -> int | None:
    """``[gate] budget`` from ``tether.toml``, or None when absent or unreadable."""
    path = os.path.join(project_root, CONFIG_FILE)
    try:
        import tomllib

        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        _warn(f"cannot read {path} ({exc}); ignoring its [gate] budget")
        return None
    section = data.get("gate")
    if not isinstance(section, dict) or "budget" not in section:
        return None
    return _parse_budget(section["budget"], f"[gate] budget in {path}")


def default_call_budget(
    environ: Mapping[str, str] | None = None, cwd: str | None = None
) -> tuple[int, str]:
    """The budget for a session without an explicit one, and where it came from."""
    env = os.environ if environ is None else environ
    raw = env.get("TETHER_GATE_BUDGET")
    if raw:
        value = _parse_budget(raw.strip(), "TETHER_GATE_BUDGET")
        if value is not None:
            return value, "env:TETHER_GATE_BUDGET"
    root = find_project_root(cwd if cwd is not None else os.getcwd())
    if root is not None:
        value = budget_from_config(root)
        if value is not None:
            return value, f"config:{os.path.join(root, CONFIG_FILE)}"
    return DEFAULT_CALL_BUDGET, "default"
