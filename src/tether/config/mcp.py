"""The ``[mcp]`` table: what the ``tether mcp`` server lets a client reach.

A tool's path argument (``root``, ``board``) must name a folder inside the
project the server serves, or inside one of ``roots`` (relative to the project
root, or absolute): the person lists there what else an agent may open. Every
answer is cut at ``answer_max_chars`` characters, and says so when it is.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from tether.config.section import NonEmptyStr, Section

# Claude Code refuses a tool answer above 25,000 tokens by default (MAX_MCP_OUTPUT_TOKENS);
# 60,000 characters stays below that for text and JSON alike.
DEFAULT_ANSWER_MAX_CHARS = 60_000


class McpSettings(Section, frozen=True):
    """``[mcp]``: the folders an MCP client may name and the size of an answer."""

    roots: list[NonEmptyStr] = msgspec.field(default_factory=list)
    answer_max_chars: Annotated[int, msgspec.Meta(ge=1000)] = DEFAULT_ANSWER_MAX_CHARS
