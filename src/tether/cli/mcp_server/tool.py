"""An MCP tool of tether's: its name, JSON schema and call, and checking arguments against it.

The tools themselves are in :mod:`tether.cli.mcp_server.tools`; what each one
does in :mod:`tether.cli.mcp_server.calls`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tether.cli.mcp_server.outputs import OUTPUTS, JsonObject, hints_of
from tether.core.errors import UsageError


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

    @property
    def output_schema(self) -> JsonObject:
        """The structured content of an answer that is not an error."""
        return OUTPUTS[self.name]

    @property
    def annotations(self) -> dict[str, bool]:
        """The MCP hints: readOnlyHint, destructiveHint, idempotentHint, openWorldHint."""
        return hints_of(self.name)


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}

# No control characters in a one-line argument; a multi-line one keeps tab and newlines.
ONE_LINE = "^[^\\x00-\\x1f\\x7f]*$"
MULTI_LINE = "^[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]*$"
_CONTROL = {
    ONE_LINE: re.compile(r"[\x00-\x1f\x7f]"),
    MULTI_LINE: re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"),
}


def text(
    description: str, max_length: int, *, multi_line: bool = False, required: bool = False
) -> JsonObject:
    """A string argument's schema: a length cap and no control characters."""
    schema: JsonObject = {
        "type": "string",
        "description": description,
        "maxLength": max_length,
        "pattern": MULTI_LINE if multi_line else ONE_LINE,
    }
    if required:
        schema["minLength"] = 1
    return schema


def _check_string(tool: str, name: str, value: str, schema: Mapping[str, Any]) -> None:
    if len(value) < schema.get("minLength", 0):
        raise UsageError(f"{tool}: {name!r} must not be empty")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        raise UsageError(
            f"{tool}: {name!r} is {len(value)} characters long; at most {schema['maxLength']}"
        )
    pattern = schema.get("pattern")
    if pattern is None:
        return
    control = _CONTROL.get(pattern)
    if control is not None:
        found = control.search(value)
        if found is not None:
            raise UsageError(
                f"{tool}: {name!r} holds a control character (U+{ord(found.group()):04X} at "
                f"{found.start()}); none is allowed"
            )
    elif re.fullmatch(pattern, value) is None:
        raise UsageError(f"{tool}: {name!r} must match {pattern}")


def _check_number(tool: str, name: str, value: float, schema: Mapping[str, Any]) -> None:
    if not math.isfinite(value):
        raise UsageError(f"{tool}: {name!r} must be a finite number")
    if "minimum" in schema and value < schema["minimum"]:
        raise UsageError(f"{tool}: {name!r} must be {schema['minimum']} or more")
    if "maximum" in schema and value > schema["maximum"]:
        raise UsageError(f"{tool}: {name!r} must be {schema['maximum']} or less")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        raise UsageError(f"{tool}: {name!r} must be above {schema['exclusiveMinimum']}")


def check_arguments(tool: Tool, args: Mapping[str, Any]) -> None:
    """Refuse arguments outside ``tool``'s schema with one line (exit 2, like the CLI)."""
    unknown = sorted(set(args) - set(tool.properties))
    if unknown:
        raise UsageError(f"{tool.name}: unknown argument {unknown[0][:80]!r}")
    for name in tool.required:
        if name not in args:
            raise UsageError(f"{tool.name}: missing argument {name!r}")
    for name, value in args.items():
        schema = tool.properties[name]
        kind = schema["type"]
        if (isinstance(value, bool) and kind != "boolean") or not isinstance(value, _TYPES[kind]):
            raise UsageError(f"{tool.name}: {name!r} must be a {kind}")
        if isinstance(value, str):
            _check_string(tool.name, name, value, schema)
        if "enum" in schema and value not in schema["enum"]:
            raise UsageError(f"{tool.name}: {name!r} must be one of {', '.join(schema['enum'])}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            _check_number(tool.name, name, value, schema)
