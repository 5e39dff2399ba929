"""`tether mcp` driven by the official `mcp` SDK client, as an agent CLI would drive it.

The SDK client checks every answer that is not an error against the tool's
``outputSchema`` (it raises otherwise), so a test through it also checks the
schemas. The server's stderr is kept, to show it printed no traceback.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent

TETHER = str(Path(sys.executable).parent / "tether")


def session(cwd: Path, env: dict[str, str], body: Callable[[Client], Awaitable[None]]) -> str:
    """Run ``body`` with an SDK client of ``tether mcp`` started in ``cwd``; its stderr."""
    params = StdioServerParameters(command=TETHER, args=["mcp"], cwd=str(cwd), env=env)
    with tempfile.TemporaryFile("w+") as errlog:

        async def main() -> None:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                await body(client)

        anyio.run(main)
        errlog.seek(0)
        return errlog.read()


def text_of(result: CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent))


def error_of(result: CallToolResult) -> dict[str, Any]:
    """The error's structured content: only the error's own fields, no data."""
    assert result.is_error is True, text_of(result)[:500]
    data = result.structured_content
    assert data is not None and set(data) == {"error", "exit_code", "exit_meaning"}, data
    assert text_of(result) == f"tether: error: {data['error']}"
    return dict(data)


def answer_of(result: CallToolResult) -> dict[str, Any]:
    """The structured content of an answer that is not an error."""
    assert result.is_error is False, text_of(result)[:2000]
    assert result.structured_content is not None
    return dict(result.structured_content)
