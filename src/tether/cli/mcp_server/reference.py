"""Generates docs/reference/mcp.md from the tools' own schemas.

``python -m tether.cli.mcp_server.reference > docs/reference/mcp.md``; a test fails
when the committed page differs from what the server lists.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tether.cli.mcp_server.tool import MULTI_LINE, ONE_LINE, Tool
from tether.cli.mcp_server.tools import TOOLS

HEADER = """\
# MCP tools reference

`tether mcp` serves these tools over stdio (the official `mcp` Python SDK). This
page is generated from the tools' schemas by `python -m tether.cli.mcp_server.reference`;
a test keeps it equal to what the server lists. How to register the server in
each agent CLI: [use tether from inside your agent](../how-to/use-tether-from-your-agent.md).

Every tool calls the same library function as the CLI command named with it, so
its rules hold either way. A call that fails is an MCP tool error (`isError:
true`), never a protocol error: its text is the CLI's one line (`tether: error:
…`) and its structured content is `{"error": …, "exit_code": N, "exit_meaning":
…}` with the CLI's [exit code](exit-codes.md); a failure that is not one of
tether's own is exit code 1 (`internal-error`) with the exception's one line.
Arguments outside a tool's schema (a wrong type, an unknown name, a string
longer than its cap or holding a control character) are refused the same way,
with exit code 2 (`usage`). Human-only operations (releasing from quarantine,
approving, requeueing, a new session id, going on in the same context) are not
tools.

**Schemas and hints.** Every tool lists an `outputSchema` (the structured
content of an answer that is not an error; objects stay open to later fields)
and the MCP hints: `readOnlyHint` (changes nothing a person would see; a look
may refresh tether's own wiki index), `destructiveHint` (may change or undo
work: a tick can dispatch an agent run), `idempotentHint` (calling again with
the same arguments changes nothing more) and `openWorldHint` (reaches a model
beyond the project: a dispatched run, a room).

**The project it serves.** The server serves the project found from the folder
it starts in (the nearest `tether.toml` at or above it). A path argument
(`root`, `board`) is resolved relative to the project root, symbolic links
followed, and must land inside the project or inside a folder that
`[mcp] roots` in the project's `tether.toml` names; anything else is refused
(exit 2) before a file is opened, and nothing is written. Started outside any
project, the server refuses the tools that work on one (exit 3) instead of
using the folder it runs in.

**The size of an answer.** Every answer is cut to `[mcp] answer_max_chars`
characters (default 60,000; an agent CLI refuses larger answers, Claude Code
above 25,000 tokens): the text ends with a line naming the cap, and the
structured content keeps its shape (long texts end with `[…]`, long lists lose
their tail) with a top-level `truncated` object giving `cap_chars` and
`total_chars`.
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
    if "maxLength" in schema:
        bounds.append(f"at most {schema['maxLength']} characters")
    pattern = schema.get("pattern")
    if pattern == ONE_LINE:
        bounds.append("one line, no control characters")
    elif pattern == MULTI_LINE:
        bounds.append("no control characters but tab and line breaks")
    elif pattern is not None:
        bounds.append(f"matching `{pattern}`")
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
    hints = ", ".join(f"`{k}: {str(v).lower()}`" for k, v in tool.annotations.items())
    out.append(f"\nHints: {hints}.\n")
    fields = ", ".join(f"`{name}`" for name in tool.output_schema["properties"])
    out.append(
        f"\nAnswer (`outputSchema`): an object with {fields}.\n\n<details><summary>"
        f"output schema</summary>\n\n```json\n"
        f"{json.dumps(tool.output_schema, indent=2, ensure_ascii=False)}\n```\n\n</details>\n"
    )
    return "".join(out)


def render() -> str:
    return HEADER + "".join(_tool(t) for t in TOOLS)


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
