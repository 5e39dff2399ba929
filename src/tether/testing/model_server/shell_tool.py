"""Pick the client's own shell tool and shape a call to it.

Each CLI offers its shell under its own name and argument shape (Codex
``exec_command`` with ``cmd``; Pi ``bash`` with ``command``; Copilot ``bash``
with ``command`` and ``description``; Claude Code ``Bash`` with ``command``).
The server reads the tools list of the request and follows its schema, so a
CLI that renames or reshapes its tool keeps working as long as the schema says
where the command goes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tether.testing.model_server.wire import ToolSpec

# In order of preference when a client offers more than one.
SHELL_TOOL_NAMES = ("exec_command", "shell", "Bash", "bash", "local_shell", "run_shell_command")


def choose_shell_tool(tools: Iterable[ToolSpec]) -> ToolSpec | None:
    """The offered tool to run shell commands with, None when there is none."""
    by_name = {t.name: t for t in tools}
    for name in SHELL_TOOL_NAMES:
        if name in by_name:
            return by_name[name]
    return None


def shell_arguments(tool: ToolSpec, command: str, step: int) -> dict[str, Any]:
    """Arguments for ``tool`` that run ``command``, shaped by the tool's schema."""
    props: Mapping[str, Any] = tool.properties
    args: dict[str, Any] = {}
    if "cmd" in props:
        args["cmd"] = _shaped(props["cmd"], command)
    elif "command" in props or not props:
        args["command"] = _shaped(props.get("command"), command)
    else:
        # An unfamiliar schema: put the command in its first string property.
        first = next(iter(props))
        args[first] = _shaped(props[first], command)
    if "description" in props:
        args["description"] = f"mock step {step}"
    return args


def _shaped(schema: Any, command: str) -> Any:
    """The command as a string, or as an argv list where the schema asks for an array."""
    if isinstance(schema, dict) and schema.get("type") == "array":
        return ["bash", "-lc", command]
    return command
