"""`tether mcp` keeps a client inside the project it serves, tried with the official `mcp`
SDK client as an agent CLI would use it: every tool that takes a path, each path argument,
paths that lead out of the project (absolute, `..`, a symbolic link, a system folder, the
home folder, a NUL byte) are tool errors with no data, nothing is written outside, and the
server goes on answering. Started outside any project it reads, indexes and creates nothing
in the folder it runs in. Failures that are not tether's own are tool errors too."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client
from tests.mcp.sdk import error_of as _error
from tests.mcp.sdk import session as _session
from tests.mcp.sdk import text_of as _text
from tests.outside_agents import without_agent_vars

from tether.cli.mcp_server.tools import TOOLS

SECRET = "the-secret-outside-the-project"
CONFIG = """\
[loop]
board = "tickets"

[profiles.scripted]
harness = "scripted"
args = ["--format", "claude-code", "--steps", "2"]
default = true
"""
TICKET = """\
---
id: T-20260101-123456789
title: {secret}
priority: P2
created: 2026-01-01T00:00:00Z
---
{secret}
"""
PATH_ARGUMENTS = ("root", "board")
# what each tool needs besides the path to get as far as it can
REQUIRED: dict[str, dict[str, Any]] = {
    "board_add": {"title": "planted"},
    "board_show": {"ticket_id": "T-20260101-123456789"},
    "room_brief": {"question": f"What is {SECRET}?"},
    "room_open": {"question": f"What is {SECRET}?"},
    "wiki_search": {"query": SECRET},
    "wiki_read": {"page_id": "README"},
}


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every entry under ``root`` with its size and modification time."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            found[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns)
    return found


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    outside = tmp_path / "outside"
    (outside / "board" / "INBOX").mkdir(parents=True)
    (outside / "board" / "INBOX" / "T-20260101-123456789.md").write_text(
        TICKET.format(secret=SECRET), encoding="utf-8"
    )
    (outside / "README.md").write_text(f"# README\n\n{SECRET}\n", encoding="utf-8")
    (outside / "incoming").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "tether.toml").write_text(CONFIG, encoding="utf-8")
    (project / "README.md").write_text("# README\n\nThe project.\n", encoding="utf-8")
    (project / "link-out").symlink_to(outside)
    home = tmp_path / "home"
    home.mkdir()
    return {"outside": outside, "project": project, "home": home, "tmp": tmp_path}


def _env(home: Path, tether_home: Path | None) -> dict[str, str]:
    env = without_agent_vars(os.environ, "TETHER_DEPTH")
    env["HOME"] = str(home)
    env.pop("TETHER_HOME", None)
    if tether_home is not None:
        env["TETHER_HOME"] = str(tether_home)
    return env


def test_every_path_argument_stays_inside_the_project(places: dict[str, Path]) -> None:
    outside, project = places["outside"], places["project"]
    with_paths = {
        t.name: [a for a in PATH_ARGUMENTS if a in t.properties]
        for t in TOOLS
        if any(a in t.properties for a in PATH_ARGUMENTS)
    }
    assert set(with_paths) == {
        "board_list",
        "board_add",
        "board_show",
        "room_brief",
        "room_open",
        "wiki_search",
        "wiki_read",
        "ingest_next",
        "ingest_end",
    }
    escapes = [
        str(outside),
        str(outside / "board"),
        "../outside",
        "tickets/../../outside/board",
        "link-out",
        "link-out/board",
        "/usr/share",
        "~",
        "/",
    ]
    before = _tree(places["tmp"])
    tried: list[tuple[str, str, str]] = []

    async def body(client: Client) -> None:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert set(with_paths) <= listed
        for tool, arguments in with_paths.items():
            for argument in arguments:
                for path in escapes:
                    args = {**REQUIRED.get(tool, {}), argument: path}
                    result = await client.call_tool(tool, args)
                    data = _error(result)
                    assert data["exit_code"] == 2 and data["exit_meaning"] == "usage", data
                    assert "refused" in data["error"] and "outside" in data["error"], data
                    assert SECRET not in str(result.model_dump()), (tool, path)
                    tried.append((tool, argument, path))
                # a NUL byte never reaches the file system
                nul = await client.call_tool(tool, {**REQUIRED.get(tool, {}), argument: "a\0b"})
                assert "control character" in _error(nul)["error"]
                # the server still answers, with data, after each refusal
                alive = await client.call_tool("board_list", {})
                assert alive.is_error is False, _text(alive)

    stderr = _session(project, _env(places["home"], project / ".tether"), body)
    assert len(tried) == 9 * len(escapes)
    after = _tree(places["tmp"])
    # nothing outside the project changed: no board, no index, no claim, no home
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert all(p.startswith("project/") for p in changed), sorted(changed)
    assert not (outside / "board" / "ACTIONABLE").exists()
    assert "Traceback" not in stderr, stderr[-3000:]


def test_paths_inside_the_project_and_listed_roots_are_served(places: dict[str, Path]) -> None:
    project, outside = places["project"], places["outside"]
    (project / "tether.toml").write_text(
        CONFIG + '\n[mcp]\nroots = ["../outside"]\n', encoding="utf-8"
    )

    async def body(client: Client) -> None:
        own = await client.call_tool("board_add", {"title": "here", "board": "sub/board"})
        assert own.is_error is False, _text(own)
        listed = await client.call_tool("board_list", {"board": str(outside / "board")})
        assert listed.is_error is False, _text(listed)
        assert [t["title"] for t in listed.structured_content["tickets"]] == [SECRET]
        found = await client.call_tool("wiki_search", {"query": SECRET, "root": "link-out"})
        assert found.is_error is False, _text(found)
        not_a_folder = await client.call_tool("board_list", {"board": "tether.toml"})
        assert "is not a folder" in _error(not_a_folder)["error"]

    _session(project, _env(places["home"], project / ".tether"), body)
    assert (project / "sub" / "board" / "INBOX").is_dir()


def test_outside_a_project_nothing_is_read_indexed_or_created_here(
    places: dict[str, Path],
) -> None:
    nowhere = places["tmp"] / "nowhere"
    nowhere.mkdir()
    (nowhere / "notes.md").write_text(f"# Notes\n\n{SECRET}\n", encoding="utf-8")
    before = _tree(places["tmp"])

    async def body(client: Client) -> None:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("wiki_search", {"query": SECRET}),
            ("wiki_read", {"page_id": "notes"}),
            ("board_list", {}),
            ("board_add", {"title": "planted"}),
            ("loop_tick", {"dry_run": True}),
            ("ingest_next", {}),
            ("room_brief", {"question": "What are the notes?"}),
        ]
        for tool, args in calls:
            result = await client.call_tool(tool, args)
            data = _error(result)
            assert data["exit_code"] == 3 and "serves no project" in data["error"], data
            assert SECRET not in str(result.model_dump())
        # the read-only looks answer from no state at all, and create none
        subagents = await client.call_tool("subagents_list", {})
        assert subagents.is_error is False, _text(subagents)
        assert subagents.structured_content["running"] == 0
        missing = await client.call_tool("run_status", {"run_id": "r-nope"})
        assert _error(missing)["exit_code"] == 2

    stderr = _session(nowhere, _env(places["home"], None), body)
    assert _tree(places["tmp"]) == before
    assert not (nowhere / ".tether").exists()
    assert "Traceback" not in stderr, stderr[-3000:]


def test_failures_that_are_not_tethers_own_are_tool_errors(places: dict[str, Path]) -> None:
    project = places["project"]
    # a board folder that is a file: the library meets "Not a directory"
    (project / "tickets").write_text("not a folder\n", encoding="utf-8")

    async def body(client: Client) -> None:
        for tool, args in [
            ("board_add", {"title": "x"}),
            ("board_show", {"ticket_id": "T-20260101-123456789"}),
        ]:
            data = _error(await client.call_tool(tool, args))
            assert data["exit_code"] in (1, 2, 3), data
        huge = await client.call_tool("board_add", {"title": "x" * 1_000_000})
        assert "at most 300" in _error(huge)["error"]
        nul = await client.call_tool("board_add", {"title": "a\0b", "board": "b2"})
        assert "control character" in _error(nul)["error"]
        alive = await client.call_tool("subagents_list", {})
        assert alive.is_error is False

    stderr = _session(project, _env(places["home"], project / ".tether"), body)
    assert "Traceback" not in stderr, stderr[-3000:]
    assert not (project / "b2").exists()
