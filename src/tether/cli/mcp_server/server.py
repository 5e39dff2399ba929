"""``tether mcp``: the tools of :mod:`tether.cli.mcp_server.tools` over stdio, on the ``mcp`` SDK.

The SDK is imported here only, when the server starts: never by ``tether
--help``, any other command, or the gate. Each call runs in a worker thread, so
a ``subagents_wait`` that blocks for its timeout does not hold up other calls.
"""

from __future__ import annotations

from typing import Any

from tether import __version__
from tether.cli.mcp_server.tools import BY_NAME, TOOLS, call

SERVER_NAME = "tether"
INSTRUCTIONS = (
    "tether keeps agents on a leash. loop_tick runs one tick of the work loop and ends with "
    "its TETHER-LOOP signal line; subagents_wait polls subagents; room_brief/room_open ask the "
    "wiki through one bounded room; ingest_next/ingest_end take one source per session."
)


def build() -> Any:
    """The SDK server with tether's tools."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    listed = types.ListToolsResult(
        tools=[
            types.Tool(
                name=t.name,
                title=t.title,
                description=t.description,
                input_schema=t.input_schema,
                output_schema=t.output_schema,
                annotations=types.ToolAnnotations(
                    title=t.title,
                    read_only_hint=t.annotations["readOnlyHint"],
                    destructive_hint=t.annotations["destructiveHint"],
                    idempotent_hint=t.annotations["idempotentHint"],
                    open_world_hint=t.annotations["openWorldHint"],
                ),
            )
            for t in TOOLS
        ]
    )

    async def list_tools(ctx: Any, params: Any) -> Any:
        return listed

    async def call_tool(ctx: Any, params: Any) -> Any:
        name, args = params.name, dict(params.arguments or {})
        outcome = await anyio.to_thread.run_sync(call, name, args)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=outcome.text)],
            structured_content=outcome.data,
            is_error=outcome.is_error,
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve() -> None:
    """Serve over stdin/stdout until the client closes stdin."""
    import anyio
    from mcp.server.stdio import stdio_server

    from tether.cli.mcp_server.warm import start

    start()
    server = build()

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


__all__ = ["BY_NAME", "build", "serve"]
