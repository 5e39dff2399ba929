"""An MCP tool of tether's: its name, JSON schema and call, and checking arguments against it.

The tools themselves are in :mod:`tether.cli.mcp_server.tools`; what each one
does in :mod:`tether.cli.mcp_server.calls`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tether.errors import UsageError

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """A tool's result: the text an agent reads and the same facts as JSON."""

    text: str
    data: JsonObject


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    properties: Mapping[str, JsonObject]
    required: tuple[str, ...]
    run: Callable[[Mapping[str, Any]], Answer]
    cli: str  # the CLI command doing the same

    @property
    def input_schema(self) -> JsonObject:
        return {
            "type": "object",
            "properties": {k: dict(v) for k, v in self.properties.items()},
            "required": list(self.required),
            "additionalProperties": False,
        }


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def check_arguments(tool: Tool, args: Mapping[str, Any]) -> None:
    """Refuse arguments outside ``tool``'s schema with one line (exit 2, like the CLI)."""
    unknown = sorted(set(args) - set(tool.properties))
    if unknown:
        raise UsageError(f"{tool.name}: unknown argument {unknown[0]!r}")
    for name in tool.required:
        if name not in args:
            raise UsageError(f"{tool.name}: missing argument {name!r}")
    for name, value in args.items():
        schema = tool.properties[name]
        kind = schema["type"]
        if (isinstance(value, bool) and kind != "boolean") or not isinstance(value, _TYPES[kind]):
            raise UsageError(f"{tool.name}: {name!r} must be a {kind}")
        if "enum" in schema and value not in schema["enum"]:
            raise UsageError(f"{tool.name}: {name!r} must be one of {', '.join(schema['enum'])}")
        if isinstance(value, str) and len(value) < schema.get("minLength", 0):
            raise UsageError(f"{tool.name}: {name!r} must not be empty")
        if kind in ("integer", "number"):
            if "minimum" in schema and value < schema["minimum"]:
                raise UsageError(f"{tool.name}: {name!r} must be {schema['minimum']} or more")
            if "maximum" in schema and value > schema["maximum"]:
                raise UsageError(f"{tool.name}: {name!r} must be {schema['maximum']} or less")
            if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
                raise UsageError(
                    f"{tool.name}: {name!r} must be above {schema['exclusiveMinimum']}"
                )
