"""tether as an MCP server: its agent-facing operations as tools (``tether mcp``).

:mod:`.tools` holds the tools and their schemas without the SDK; :mod:`.server`
serves them over stdio with the official ``mcp`` SDK, imported only there;
:mod:`.install` registers the server in each harness's MCP configuration.
"""
