"""docs/reference/mcp.md is what the server lists, tool by tool and schema by schema."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from tests.support.mcp_client import StdioClient

from tether.cli.mcp_server.reference import render

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "mcp.md"
TETHER = str(Path(sys.executable).parent / "tether")


def test_the_page_is_generated_from_the_tools() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/reference/mcp.md is stale: regenerate it with "
        "`python -m tether.cli.mcp_server.reference > docs/reference/mcp.md`"
    )


@pytest.mark.slow
def test_every_schema_on_the_page_is_the_one_the_live_server_lists(tmp_path: Path) -> None:
    text = PAGE.read_text(encoding="utf-8")
    names = re.findall(r"^## `(\w+)`$", text, re.M)
    schemas = [json.loads(b) for b in re.findall(r"```json\n(.*?)\n```", text, re.S)]
    with StdioClient([TETHER, "mcp"], cwd=tmp_path) as client:
        client.initialize()
        listed = client.list_tools()
    assert names == [t["name"] for t in listed]
    # per tool: its input schema, then its output schema
    assert schemas == [s for t in listed for s in (t["inputSchema"], t["outputSchema"])]
