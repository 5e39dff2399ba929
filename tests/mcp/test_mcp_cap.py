"""Every MCP answer fits the cap (`[mcp] answer_max_chars`) and says so when it was cut."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether.cli.mcp_server.cap import CUT_MARK, cap_data, cap_text
from tether.cli.mcp_server.tools import call

CONFIG = """\
[profiles.scripted]
harness = "scripted"
default = true

[mcp]
answer_max_chars = 5000
"""


def test_text_is_cut_with_a_line_naming_the_cap() -> None:
    assert cap_text("short", 100, "[mcp] answer_max_chars") == "short"
    cut = cap_text("x" * 10_000, 2000, "[mcp] answer_max_chars")
    assert len(cut) <= 2000
    assert cut.splitlines()[-1].startswith("[tether: answer cut at 2000 characters")
    assert "[mcp] answer_max_chars" in cut


def test_json_keeps_its_shape_and_names_the_cap() -> None:
    data: dict[str, Any] = {
        "board": "/b",
        "tickets": [{"id": str(i), "title": "t" * 200} for i in range(500)],
        "note": "n" * 50_000,
        "count": 500,
    }
    capped = cap_data(data, 5000, "[mcp] answer_max_chars")
    assert len(json.dumps(capped, ensure_ascii=False, separators=(",", ":"))) <= 5000
    assert set(capped) == {*data, "truncated"}
    assert capped["truncated"]["cap_chars"] == 5000
    compact = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    assert capped["truncated"]["total_chars"] == len(compact)
    assert capped["count"] == 500 and capped["board"] == "/b"
    assert capped["note"].endswith(CUT_MARK)
    assert 1 <= len(capped["tickets"]) < 500
    assert capped["tickets"][0] == data["tickets"][0]
    assert cap_data({"a": 1}, 5000, "k") == {"a": 1}
    # what cannot be shrunk to fit keeps its short fields (ids, states) and its shape
    wide = {f"key{k}": f"value {k} " + "v" * 80 for k in range(100)}
    wide["id"] = "r-20260101-000000-abcdef"
    tight = cap_data(wide, 1000, "k")
    assert tight["id"] == wide["id"] and set(tight) == {*wide, "truncated"}


def test_a_tool_answer_above_the_cap_is_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tether.toml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "big.md").write_text("# Big\n\n" + "word " * 40_000, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for i in range(100):
        assert not call("board_add", {"title": f"ticket {i} " + "y" * 250}).is_error
    read = call("wiki_read", {"page_id": "big"})
    assert not read.is_error
    assert len(read.text) <= 5000 and "answer cut at 5000 characters" in read.text
    assert read.data["truncated"]["cap_chars"] == 5000
    assert read.data["text"].endswith(CUT_MARK)
    listed = call("board_list", {})
    assert len(json.dumps(listed.data, ensure_ascii=False, separators=(",", ":"))) <= 5000
    assert listed.data["truncated"]["total_chars"] > 5000
    assert 1 <= len(listed.data["tickets"]) < 100
