"""What `tether mcp` lists is what it does: every tool has the MCP hints and an output schema
its answers hold to (the official SDK client checks each answer against it), every argument
a description; `board_add` offers exactly the states it can make, with the fields each needs;
`room_open` names its statuses; `ingest_end` ends only the caller's own claim."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client
from tests.mcp.sdk import answer_of, error_of, session, text_of
from tests.outside_agents import without_agent_vars

from tether.board.states import all_folders, label
from tether.cli.mcp_server.tools import TOOLS, call
from tether.ingest.queue import Queue
from tether.wiki.layout import Wiki

CONFIG = """\
[loop]
board = "tickets"

[profiles.scripted]
harness = "scripted"
args = ["--format", "claude-code", "--steps", "2"]
default = true
"""
HINTS = {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
# the fields each state needs (or may take), as board_add's arguments
STATE_ARGS: dict[str, dict[str, str]] = {
    "BLOCKED": {"blocked_by": "the vendor", "check": "true"},
    "WAITING": {"until": "2031-01-01"},
    "USER": {"needs": "a decision"},
    "PARKED": {"marker": "release.flag"},
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "tether.toml").write_text(CONFIG, encoding="utf-8")
    (root / "guide.md").write_text("# Guide\n\nHow the parser works.\n", encoding="utf-8")
    return root


def _env(project: Path) -> dict[str, str]:
    env = without_agent_vars(os.environ, "TETHER_DEPTH")
    env["TETHER_HOME"] = str(project / ".tether")
    return env


def test_every_tool_has_hints_an_output_schema_and_described_arguments(project: Path) -> None:
    async def body(client: Client) -> None:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert list(listed) == [t.name for t in TOOLS]
        for tool in TOOLS:
            served = listed[tool.name]
            assert served.annotations is not None, tool.name
            hints = served.annotations.model_dump(by_alias=True, exclude_none=True)
            assert set(hints) >= HINTS, (tool.name, hints)
            assert {k: hints[k] for k in HINTS} == tool.annotations
            assert served.output_schema == tool.output_schema
            assert served.output_schema["type"] == "object"
            for name, prop in served.input_schema["properties"].items():
                assert prop.get("description"), f"{tool.name}.{name} has no description"
                if prop["type"] == "string" and "enum" not in prop:
                    assert "maxLength" in prop and "pattern" in prop, (tool.name, name)
        read_only = {
            name for name, t in listed.items() if t.annotations and t.annotations.read_only_hint
        }
        assert read_only == {
            "subagents_list",
            "board_list",
            "board_show",
            "room_brief",
            "wiki_search",
            "wiki_read",
            "run_status",
            "report_show",
        }
        tick, room = listed["loop_tick"], listed["room_open"]
        assert tick.annotations is not None and tick.annotations.destructive_hint is True
        assert room.output_schema is not None and room.description is not None
        statuses = room.output_schema["properties"]["status"]["enum"]
        assert statuses == ["ok", "b01", "read-directly"]
        for status in statuses:
            assert status in room.description

    session(project, _env(project), body)


def test_board_add_offers_exactly_the_states_it_can_make(project: Path) -> None:
    offered: list[str] = []

    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        offered.extend(tools["board_add"].input_schema["properties"]["state"]["enum"])
        for state in offered:
            extra = STATE_ARGS.get(state.partition("/")[0], {})
            added = answer_of(
                await client.call_tool(
                    "board_add", {"title": f"in {state}", "state": state, **extra}
                )
            )
            assert added["location"] == state
            assert Path(added["path"]).parent == project / "tickets" / state
            shown = answer_of(await client.call_tool("board_show", {"ticket_id": added["id"]}))
            assert shown["location"] == state and shown["title"] == f"in {state}"
            for key, value in extra.items():
                assert value in str(shown[key]), (state, key, shown[key])
        # a state without the fields it needs is a usage error naming them, not a bad ticket
        for state, needs in [("BLOCKED/lock", "blocked_by"), ("USER/data", "needs")]:
            refused = error_of(await client.call_tool("board_add", {"title": "x", "state": state}))
            assert needs in refused["error"], refused
        unknown = error_of(await client.call_tool("board_add", {"title": "x", "state": "LATER"}))
        assert unknown["exit_code"] == 2 and "must be one of" in unknown["error"]
        listed = answer_of(await client.call_tool("board_list", {"state": "BLOCKED"}))
        assert {t["location"] for t in listed["tickets"]} == {
            s for s in offered if s.startswith("BLOCKED/")
        }

    session(project, _env(project), body)
    assert offered == [label(s, r) for s, r in all_folders()]


def test_the_answers_hold_to_the_output_schemas(project: Path) -> None:
    async def body(client: Client) -> None:
        answers: dict[str, dict[str, Any]] = {}
        calls: list[tuple[str, dict[str, Any]]] = [
            ("subagents_list", {}),
            ("subagents_wait", {"timeout": 0}),
            ("board_add", {"title": "Port the parser"}),
            ("board_list", {}),
            ("loop_tick", {"dry_run": True}),
            ("room_brief", {"question": "How does the parser work?"}),
            ("room_open", {"question": "How does the parser work?"}),
            ("wiki_search", {"query": "parser"}),
            ("wiki_read", {"page_id": "guide"}),
            ("ingest_next", {}),
        ]
        for name, args in calls:
            answers[name] = answer_of(await client.call_tool(name, args))
        assert answers["room_open"]["status"] == "read-directly"
        assert answers["ingest_next"] == {"entry": None}
        assert "guide" in [p["id"] for p in answers["wiki_search"]["pages"]]
        shown = await client.call_tool("board_show", {"ticket_id": answers["board_add"]["id"]})
        assert answer_of(shown)["title"] == "Port the parser"
        assert "How the parser works." in text_of(
            await client.call_tool("wiki_read", {"page_id": "guide"})
        )

    stderr = session(project, _env(project), body)
    assert "Traceback" not in stderr


def test_ingest_end_ends_only_the_callers_own_claim(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    queue = Queue(Wiki.open(project))
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    for name in ("theirs.md", "mine.md"):
        (downloads / name).write_text(f"# {name}\n\nText.\n", encoding="utf-8")
        queue.collect(downloads / name)
    queue.release(["theirs.md", "mine.md"])
    theirs = next(e for e in queue.waiting() if e.id == "theirs.md")
    assert queue.claim(theirs, "another-session") is not None
    refused = call("ingest_end", {"entry": "theirs.md"})
    assert refused.is_error and refused.data["exit_code"] == 2
    assert "claimed by another session" in refused.data["error"]
    assert [e.id for e in queue.claims()] == ["theirs.md"]
    assert queue.finished() == []
    # without a name it finds no claim of its own, and says whose there are
    nothing = call("ingest_end", {})
    assert nothing.is_error and "no claimed entry" in nothing.data["error"]
    mine = call("ingest_next", {})
    assert not mine.is_error and mine.data["entry"]["id"] == "mine.md"
    ended = call("ingest_end", {"entry": "mine.md"})
    assert not ended.is_error, ended.text
    assert [e.id for e in queue.finished()] == ["mine.md"]
    assert [e.id for e in queue.claims()] == ["theirs.md"]
