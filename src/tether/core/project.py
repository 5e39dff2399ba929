"""Where the gate keeps its state and which budget applies, found cheaply.

Both answers come from the environment and the project's ``tether.toml`` (the
nearest one at or above the working folder). The file is parsed (``tomllib``)
only when it mentions the key asked for, so most tool calls cost a few
``stat`` calls and at most one small read. The keys are the ones
``tether.config`` validates: top-level ``home`` and ``gate_budget`` (a
``[gate]`` table's ``budget`` is read too).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

DEFAULT_CALL_BUDGET = 60
# The room's folder, set for a room's run: every tool call inside it is checked against
# the room's rule (``tether.gate.roomrule``, imported only then).
ENV_ROOM_DIR = "TETHER_ROOM_DIR"
CONFIG_FILE = "tether.toml"
HOME_DIR = ".tether"
# Walking further up than this is never a project layout; it is a loop guard.
_MAX_PARENTS = 64
# Parsed files by content, so a process that reads it twice parses once.
_parsed: dict[bytes, dict[str, Any] | None] = {}


def find_project_root(start: str) -> str | None:
    """The nearest directory at or above ``start`` holding a ``tether.toml``.

    The one rule for a project's root: the configuration, the gate's home, hook
    installs and the Pi extensions (``tetherHome`` in their TypeScript) all use it.
    """
    current = os.path.abspath(start)
    for _ in range(_MAX_PARENTS):
        if os.path.isfile(os.path.join(current, CONFIG_FILE)):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return None


def project_root(start: str | None = None) -> str:
    """The project's root: :func:`find_project_root`, else ``start`` (default: here)."""
    here = os.path.abspath(start or os.getcwd())
    return find_project_root(here) or here


def _warn(message: str) -> None:
    sys.stderr.write(f"tether-gate: warning: {message}\n")


def _config(root: str, key: bytes) -> dict[str, Any] | None:
    """The project's tether.toml as a dict, when it mentions ``key`` (else None)."""
    path = os.path.join(root, CONFIG_FILE)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        _warn(f"cannot read {path} ({exc}); ignoring it")
        return None
    if key not in raw:
        return None
    if raw not in _parsed:
        try:
            import tomllib

            _parsed[raw] = tomllib.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            _warn(f"cannot read {path} ({exc}); ignoring it")
            _parsed[raw] = None
    return _parsed[raw]


def resolve_home(environ: Mapping[str, str] | None = None, cwd: str | None = None) -> str:
    """``$TETHER_HOME``; else ``home`` in the project's tether.toml; else ``.tether`` there.

    Without a project (no tether.toml above the working folder) it is
    ``.tether`` in the working folder.
    """
    env = os.environ if environ is None else environ
    explicit = env.get("TETHER_HOME")
    start = cwd if cwd is not None else os.getcwd()
    if explicit:
        return os.path.abspath(os.path.join(start, os.path.expanduser(explicit)))
    root = find_project_root(start)
    if root is None:
        return os.path.join(os.path.abspath(start), HOME_DIR)
    config = _config(root, b"home")
    configured = config.get("home") if config else None
    if isinstance(configured, str) and configured:
        return os.path.abspath(os.path.join(root, os.path.expanduser(configured)))
    return os.path.join(root, HOME_DIR)


HOME_GITIGNORE = "# tether's runtime files (databases, runs, locks): never committed\n*\n"


def keep_home_out_of_git(home: str, *, created: bool = False) -> None:
    """Give the tether home a ``.gitignore`` that ignores all of it.

    Only a home tether made (``created``) or one named ``.tether`` gets it: a
    folder a person chose as the home may hold their own files.
    """
    if not created and os.path.basename(os.path.normpath(home)) != HOME_DIR:
        return
    path = os.path.join(home, ".gitignore")
    if os.path.exists(path):
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    except OSError:  # another process made it, or the home is read-only: nothing to do
        return
    try:
        os.write(fd, HOME_GITIGNORE.encode())
    finally:
        os.close(fd)


def _parse_budget(raw: object, where: str) -> int | None:
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        _warn(f"{where} must be a whole number >= 1, not {raw!r}; using the next source")
        return None
    try:
        value = int(raw)
    except ValueError:
        _warn(f"{where} must be a whole number >= 1, not {raw!r}; using the next source")
        return None
    if value < 1:
        _warn(f"{where} must be >= 1, not {value}; using the next source")
        return None
    return value


def budget_from_config(project_root: str) -> int | None:
    """``gate_budget`` (or ``[gate] budget``) from tether.toml, None when absent or bad."""
    config = _config(project_root, b"budget")
    if not config:
        return None
    path = os.path.join(project_root, CONFIG_FILE)
    if "gate_budget" in config:
        return _parse_budget(config["gate_budget"], f"gate_budget in {path}")
    section = config.get("gate")
    if isinstance(section, dict) and "budget" in section:
        return _parse_budget(section["budget"], f"[gate] budget in {path}")
    return None


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
