"""Generates docs/reference/mcp.md from the tools' own schemas.

``python -m tether.cli.mcp_server.reference > docs/reference/mcp.md``; a test fails
when the committed page differs from what the server lists.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tether.cli.mcp_server.tool import Tool
from tether.cli.mcp_server.tools import TOOLS

HEADER = """\
# MCP tools reference

`tether mcp` serves these tools over stdio (the official `mcp` Python SDK). This
page is generated from the tools' schemas by `python -m tether.cli.mcp_server.reference`;
a test keeps it equal to what the server lists. How to register the server in
each agent CLI: [use tether from inside your agent](../how-to/use-tether-from-your-agent.md).

Every tool calls the same library function as the CLI command named with it, so
its rules hold either way. A call that fails is an MCP tool error (`isError:
true`): its text is the CLI's one line (`tether: error: …`) and its structured
content is `{"error": …, "exit_code": N, "exit_meaning": …}` with the CLI's
[exit code](exit-codes.md). Arguments outside a tool's schema are refused the
same way, with exit code 2 (`usage`). Human-only operations (releasing from
quarantine, approving, requeueing, a new session id, going on in the same
context) are not tools.
"""


def _type(schema: dict[str, Any]) -> str:
    text = str(schema["type"])
    if "enum" in schema:
        text += " (" + " \\| ".join(schema["enum"]) + ")"
    bounds = []
    if "minimum" in schema:
        bounds.append(f">= {schema['minimum']}")
    if "exclusiveMinimum" in schema:
        bounds.append(f"> {schema['exclusiveMinimum']}")
    if "maximum" in schema:
        bounds.append(f"<= {schema['maximum']}")
    if schema.get("minLength"):
        bounds.append("not empty")
    return text + (f", {', '.join(bounds)}" if bounds else "")


def _tool(tool: Tool) -> str:
    out = [f"\n## `{tool.name}`\n\n{tool.title}. {tool.description}\n\nCLI: `{tool.cli}`\n"]
    schema = tool.input_schema
    if schema["properties"]:
        out.append("\n| argument | type | required | default | meaning |\n|---|---|---|---|---|\n")
        for name, prop in schema["properties"].items():
            required = "yes" if name in schema["required"] else "no"
            default = f"`{json.dumps(prop['default'])}`" if "default" in prop else ""
            meaning = prop.get("description", "")
            out.append(f"| `{name}` | {_type(prop)} | {required} | {default} | {meaning} |\n")
    else:
        out.append("\nNo arguments.\n")
    out.append(f"\n```json\n{json.dumps(schema, indent=2, ensure_ascii=False)}\n```\n")
    return "".join(out)


def render() -> str:
    return HEADER + "".join(_tool(t) for t in TOOLS)


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
