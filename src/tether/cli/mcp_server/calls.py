"""What each MCP tool does: the library function its CLI command calls, as text and JSON.

Every call goes through the same library function as the CLI command named in
the tool's table (:mod:`tether.cli.mcp_server.tools`), so the rules (one room at
a time, reads counted against the room, one ingest entry per session, the
loop's lock) hold whichever way an agent comes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tether.cli.mcp_server.outputs import JsonObject
from tether.cli.mcp_server.scope import served
from tether.cli.mcp_server.tool import Answer


def _dump(data: Any) -> str:
    import msgspec

    return msgspec.json.format(msgspec.json.encode(data), indent=1).decode("utf-8")


def _json_answer(data: JsonObject) -> Answer:
    return Answer(_dump(data), data)


# --- watch -------------------------------------------------------------------------


def _watch() -> tuple[Any, Any]:
    from tether.config import load_config
    from tether.config.schema import WatchSettings
    from tether.store import state_db
    from tether.watch.survey import Surveyor

    config = load_config()
    surveyor = Surveyor(config.section("watch", WatchSettings), config.home)
    # A wait must see a run that starts while it waits, so it opens (and may create) the
    # store of a project or of a home the person chose; a server outside any project with
    # no home of its own creates nothing in the folder it runs in.
    chosen = config.project_file is not None or "home" in config.sources
    return surveyor, state_db.connect(config.home) if chosen else state_db.connect_existing(
        config.home
    )


def subagents_wait(args: Mapping[str, Any]) -> Answer:
    from tether.watch.polling import wait_for_change

    timeout = float(args.get("timeout", 30.0))
    surveyor, conn = _watch()
    try:
        outcome = wait_for_change(surveyor, conn, timeout=timeout)
    finally:
        conn.close()
    return _json_answer(outcome.to_dict())


def subagents_list(args: Mapping[str, Any]) -> Answer:
    from tether.cli.mcp_server.warm import look_at_subagents, store
    from tether.config import load_config
    from tether.watch.cycle_report import subagents_dict

    config = load_config()
    with store(config.home) as conn:
        survey = look_at_subagents(config, conn)
    return _json_answer(subagents_dict(survey))


# --- loop and board ------------------------------------------------------------------


def loop_tick(args: Mapping[str, Any]) -> Answer:
    from tether.loop import ProfileChoice, open_loop, tick

    served().require_project("loop_tick")
    chosen = ProfileChoice(args.get("profile"), args.get("justification"))
    current = open_loop(chosen=chosen)
    try:
        result = tick(current, dry_run=bool(args.get("dry_run", False)))
    finally:
        current.close()
    data = result.as_dict()
    return Answer("\n".join(result.lines()), data)


def _board(args: Mapping[str, Any], tool: str) -> Any:
    """The board a board tool works on: the project's, or a folder inside the project."""
    from tether.loop.project_board import project_board

    scope = served()
    scope.require_project(tool)
    given = args.get("board")
    return project_board(None if given is None else scope.inside(given, "board", tool))


def board_list(args: Mapping[str, Any]) -> Answer:
    from tether.loop.project_board import listed, listing

    target = _board(args, "board_list")
    view, tickets = listed(target, args.get("state"))
    return _json_answer(listing(target, view, tickets))


def board_add(args: Mapping[str, Any]) -> Answer:
    from tether.board import parse_state
    from tether.cli.board import state_front

    state, reason = parse_state(args.get("state", "INBOX"))
    front = state_front(
        args.get("blocked_by"),
        args.get("check"),
        args.get("until"),
        args.get("marker"),
        args.get("needs"),
    )
    ticket = _board(args, "board_add").add(
        args["title"],
        priority=args.get("priority", "P2"),
        body=args.get("body", ""),
        state=state,
        reason=reason,
        front=front,
    )
    data = ticket.to_json()
    return Answer(f"added {ticket.id} in {ticket.location}: {ticket.path}", data)


def board_show(args: Mapping[str, Any]) -> Answer:
    ticket = _board(args, "board_show").get(args["ticket_id"])
    return Answer(ticket.path.read_text(encoding="utf-8"), ticket.to_json())


# --- room and wiki --------------------------------------------------------------------


def _brief(ctx: Any, question: str, budget: int | None) -> Any:
    from tether.cli.mcp_server.warm import fresh_index
    from tether.room.brief import make_brief

    with fresh_index(ctx) as index:
        return make_brief(index, question, budget or ctx.settings.room_budget)


def room_brief(args: Mapping[str, Any]) -> Answer:
    from tether.cli.wiki_context import load_context

    root = served().wiki_root(args.get("root"), "room_brief")
    brief = _brief(load_context(root), args["question"], args.get("budget"))
    return _json_answer(brief.to_dict())


def room_open(args: Mapping[str, Any]) -> Answer:
    from tether.cli.wiki_context import load_context
    from tether.room.ask import open_for, refuse_early, result_error

    ctx = load_context(served().wiki_root(args.get("root"), "room_open"))
    refuse_early(ctx.wiki, ctx.home, os.environ)
    result = open_for(
        ctx.wiki,
        ctx.home,
        _brief(ctx, args["question"], args.get("budget")),
        os.environ,
        profile=args.get("profile") or ctx.settings.room_profile,
        timeout=args.get("timeout"),
    )
    error = result_error(result)
    if error is not None:
        raise error
    return _json_answer(result.to_dict())


def wiki_search(args: Mapping[str, Any]) -> Answer:
    from tether.cli.mcp_server.warm import fresh_index
    from tether.cli.wiki_context import load_context
    from tether.wiki.lookup import search_rows

    ctx = load_context(served().wiki_root(args.get("root"), "wiki_search"))
    with fresh_index(ctx) as index:
        rows = search_rows(index, ctx.wiki, args["query"], int(args.get("limit", 10)))
    return _json_answer({"pages": [row.as_dict() for row in rows]})


def _page_finder(root: str) -> Any:
    """How ``wiki_read`` finds a page outside a room: in the server's open index."""
    from tether.cli.mcp_server.warm import fresh_index
    from tether.cli.wiki_context import load_context

    def find(page_id: str) -> tuple[Path | None, str]:
        ctx = load_context(root)
        with fresh_index(ctx) as index:
            page = index.find(page_id)
            file = None if page is None else ctx.wiki.page_file(page.path)
        return file, str(ctx.wiki.root)

    return find


def wiki_read(args: Mapping[str, Any]) -> Answer:
    from tether.room.pageread import read_page

    root = served().wiki_root(args.get("root"), "wiki_read")
    read = read_page(args["page_id"], _page_finder(root))
    note = read.room_note()
    data = {
        "id": read.page_id,
        "room": read.room,
        "used": read.used,
        "budget": read.budget,
        "text": read.text,
    }
    return Answer(read.text if note is None else f"{note}\n{read.text}", data)


# --- ingest ---------------------------------------------------------------------------


def ingest_next(args: Mapping[str, Any]) -> Answer:
    from tether.cli.wiki_context import load_context
    from tether.ingest.steps import claim_next

    claim = claim_next(load_context(served().wiki_root(args.get("root"), "ingest_next")).wiki)
    if claim is None:
        return Answer("nothing waits in incoming/", {"entry": None})
    head = f"(this session's open claim, taken up again: {claim.entry_id})\n" * claim.resumed
    return Answer(head + claim.instructions, {"entry": claim.to_dict()})


def ingest_end(args: Mapping[str, Any]) -> Answer:
    from tether.cli.wiki_context import load_context
    from tether.ingest.steps import end_claim

    ctx = load_context(served().wiki_root(args.get("root"), "ingest_end"))
    lines = end_claim(ctx.wiki, ctx.settings, args.get("entry"), own_only=True)
    return Answer("\n".join(lines), {"lines": lines})


# --- runs -----------------------------------------------------------------------------


def run_status(args: Mapping[str, Any]) -> Answer:
    from tether.runs.inspect import run_status as status

    return _json_answer(status(args["run_id"]))


def report_show(args: Mapping[str, Any]) -> Answer:
    from tether.runs.inspect import report_text

    text = report_text(args["run_id"])
    data = json.loads(report_text(args["run_id"], as_json=True))
    return Answer(text, data if isinstance(data, dict) else {"report": data})
