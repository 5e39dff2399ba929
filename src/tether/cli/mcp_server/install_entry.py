"""tether's own MCP entry: its name, the mark it carries, and the refusals around it.

Every entry ``tether mcp install`` writes carries ``TETHER_MCP_ENTRY`` in its
``env`` (every harness passes ``env`` to the server; tether's server ignores
it). An entry named ``tether`` without the mark is someone else's: install
does not replace it and uninstall does not remove it, unless told to with
``--force``. An entry an older tether wrote (before the mark) is recognised by
its shape: exactly the installed ``tether`` (or ``python -m tether.cli.main``)
with ``mcp`` and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any

from tether.core.errors import ConfigError, TetherError
from tether.core.exit_codes import ExitCode

NAME = "tether"
MARK_KEY = "TETHER_MCP_ENTRY"
MARK_VALUE = "written by tether mcp install"
# keys an unmarked entry of an older tether had, per harness
_LEGACY_KEYS = {"type", "command", "args", "tools", "name", "transport"}
_LEGACY_KEYS |= {"startup_timeout_sec", "tool_timeout_sec"}


class RefusedFileError(ConfigError):
    """A configuration file tether will not change: it is left untouched (exit 3)."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            f"refused: {path} {why}; it is left untouched. Fix it by hand, then run again.",
            path=str(path),
        )

    @staticmethod
    def not_ours(path: Path, *, uninstall: bool) -> NotOursError:
        return NotOursError(path, uninstall=uninstall)


class NotOursError(TetherError):
    """An entry named ``tether`` that tether did not write (exit 41: a person decides)."""

    exit_code = ExitCode.HUMAN_STOP

    def __init__(self, path: Path, *, uninstall: bool) -> None:
        verb = "remove" if uninstall else "replace"
        super().__init__(
            f"refused: {path} has an MCP server named {NAME!r} that tether mcp install did not "
            f"write (no {MARK_KEY} in its env); tether does not {verb} it and the file is left "
            f"untouched. Rename that entry, or run again with --force to {verb} it."
        )


def _legacy(entry: Mapping[str, Any]) -> bool:
    if set(entry) - _LEGACY_KEYS:
        return False
    command = entry.get("command")
    args = entry.get("args", [])
    argv = [*command] if isinstance(command, list) else [command, *args]
    if not all(isinstance(a, str) for a in argv) or not argv or argv[-1] != "mcp":
        return False
    if PurePath(argv[0]).name == "tether" and len(argv) == 2:
        return True
    return argv[1:] == ["-m", "tether.cli.main", "mcp"]


def is_ours(entry: Any) -> bool:
    """Whether an entry named ``tether`` is one tether wrote (marked, or an older tether's)."""
    if not isinstance(entry, Mapping):
        return False
    env = entry.get("env")
    if isinstance(env, Mapping) and env.get(MARK_KEY) == MARK_VALUE:
        return True
    return _legacy(entry)


def marked_env() -> dict[str, str]:
    return {MARK_KEY: MARK_VALUE}
