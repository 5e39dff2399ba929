"""tether's agent-facing operations as MCP tools: name, JSON schema, and the library call.

Nothing here imports the ``mcp`` SDK; :mod:`tether.cli.mcp_server.server` wraps
these for the protocol, and the reference page is generated from ``TOOLS``.
Every tool calls the same library function as its CLI command, so the rules
(one room at a time, reads counted against the room, one ingest entry per
session, the loop's lock) hold whichever way an agent comes.

Human-only operations — releasing from quarantine, approving, requeueing,
giving a session a new id, going on in the same context — are not tools.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.errors import TetherError, UsageError
from tether.exit_codes import ExitCode

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """A tool's result: the text an agent reads and the same facts as JSON."""

    text: str
    data: JsonObject


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    properties: Mapping[str, JsonObject]
    required: tuple[str, ...]
    run: Callable[[Mapping[str, Any]], Answer]
    cli: str  # the CLI command doing the same

    @property
    def input_schema(self) -> JsonObject:
        return {
            "type": "object",
            "properties": {k: dict(v) for k, v in self.properties.items()},
            "required": list(self.required),
            "additionalProperties": False,
        }


def _dump(data: Any) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False)


def _json_answer(data: JsonObject) -> Answer:
    return Answer(_dump(data), data)


# --- watch -------------------------------------------------------------------------


def _watch() -> tuple[Any, Any]:
    from tether.config import load_config
    from tether.config.schema import WatchSettings
    from tether.store import db
    from tether.watch.survey import Surveyor

    config = load_config()
    surveyor = Surveyor(config.section("watch", WatchSettings), config.home)
    return surveyor, db.connect(config.home)


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
    from tether.watch.daemon import subagents_dict

    surveyor, conn = _watch()
    try:
        survey = surveyor.look(conn, time.time())
    finally:
        conn.close()
    return _json_answer(subagents_dict(survey))


# --- loop and board ------------------------------------------------------------------


def loop_tick(args: Mapping[str, Any]) -> Answer:
    from tether.loop import open_loop, tick

    current = open_loop(profile=args.get("profile"), justification=args.get("justification"))
    try:
        result = tick(current, dry_run=bool(args.get("dry_run", False)))
    finally:
        current.close()
    data = result.as_dict()
    return Answer("\n".join(result.lines()), data)


def _board(args: Mapping[str, Any]) -> Any:
    from tether.loop.project_board import project_board

    given = args.get("board")
    return project_board(None if given is None else Path(given))


def board_list(args: Mapping[str, Any]) -> Answer:
    from tether.loop.project_board import listed, listing

    target = _board(args)
    view, tickets = listed(target, args.get("state"))
    return _json_answer(listing(target, view, tickets))


def board_add(args: Mapping[str, Any]) -> Answer:
    from tether.board import parse_state

    state, reason = parse_state(args.get("state", "INBOX"))
    ticket = _board(args).add(
        args["title"],
        priority=args.get("priority", "P2"),
        body=args.get("body", ""),
        state=state,
        reason=reason,
    )
    data = ticket.to_json()
    return Answer(f"added {ticket.id} in {ticket.location}: {ticket.path}", data)


def board_show(args: Mapping[str, Any]) -> Answer:
    ticket = _board(args).get(args["ticket_id"])
    return Answer(ticket.path.read_text(encoding="utf-8"), ticket.to_json())


# --- room and wiki --------------------------------------------------------------------


def _brief(ctx: Any, question: str, budget: int | None) -> Any:
    from tether.room.brief import make_brief

    index, _ = ctx.fresh_index()
    with index:
        return make_brief(index, question, budget or ctx.settings.room_budget)


def room_brief(args: Mapping[str, Any]) -> Answer:
    from tether.cli.wiki_context import load_context

    brief = _brief(load_context(args.get("root")), args["question"], args.get("budget"))
    return _json_answer(brief.to_dict())


def room_open(args: Mapping[str, Any]) -> Answer:
    from tether.cli.wiki_context import load_context
    from tether.room.ask import open_for, result_error

    ctx = load_context(args.get("root"))
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
    data = result.to_dict()
    return Answer(_dump(data), data)


def wiki_search(args: Mapping[str, Any]) -> Answer:
    from tether.cli.wiki_context import load_context
    from tether.wiki.lookup import search_rows

    ctx = load_context(args.get("root"))
    index, _ = ctx.fresh_index()
    with index:
        rows = search_rows(index, ctx.wiki, args["query"], int(args.get("limit", 10)))
    return _json_answer({"pages": [row.as_dict() for row in rows]})


def wiki_read(args: Mapping[str, Any]) -> Answer:
    from tether.cli.wiki import page_outside_a_room
    from tether.room.pageread import read_page

    read = read_page(args["page_id"], page_outside_a_room(args.get("root")))
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

    claim = claim_next(load_context(args.get("root")).wiki)
    if claim is None:
        return Answer("nothing waits in incoming/", {"entry": None})
    head = f"(this session's open claim, taken up again: {claim.entry_id})\n" * claim.resumed
    return Answer(head + claim.instructions, {"entry": claim.to_dict()})


def ingest_end(args: Mapping[str, Any]) -> Answer:
    from tether.cli.wiki_context import load_context
    from tether.ingest.steps import end_claim

    ctx = load_context(args.get("root"))
    lines = end_claim(ctx.wiki, ctx.settings, args.get("entry"))
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


# --- the table ------------------------------------------------------------------------

_ROOT = {"type": "string", "description": "The wiki folder (default: as the CLI finds it)."}
_BOARD = {"type": "string", "description": "The ticket folder (default: [loop] board)."}
_RUN = {"type": "string", "description": "The run id (r-…).", "minLength": 1}
_QUESTION = {"type": "string", "description": "The question for the wiki.", "minLength": 1}
_BUDGET = {"type": "integer", "minimum": 1, "description": "Page budget B (default 12)."}

TOOLS: tuple[Tool, ...] = (
    Tool(
        "subagents_wait",
        "Wait for a subagent's state change",
        "Block until a subagent starts, waits for confirmation or input, or ends — or until "
        "`timeout` seconds pass — then return every subagent's state. The call counts as the "
        "calling orchestrator's activity while it waits.",
        {
            "timeout": {
                "type": "number",
                "minimum": 0,
                "maximum": 600,
                "default": 30,
                "description": "Return after this many seconds when nothing changed.",
            }
        },
        (),
        subagents_wait,
        "tether subagents wait --json",
    ),
    Tool(
        "subagents_list",
        "List subagents",
        "Every subagent the watchdog sees and its state (working, waits-for-confirmation, "
        "waits-for-input, ended), and the agents seen but not counted, with the reason.",
        {},
        (),
        subagents_list,
        "tether subagents list --json",
    ),
    Tool(
        "loop_tick",
        "One tick of the work loop",
        "Do one tick: level 1 dispatches one unit to a fresh session, else level 2 asks the "
        "four sources behind the guard. The text ends with the TETHER-LOOP signal line; "
        "`exit_code` is its meaning (0 CONTINUE, 10-14 STOP).",
        {
            "dry_run": {
                "type": "boolean",
                "default": False,
                "description": "Decide and say what would be dispatched; run and move nothing.",
            },
            "profile": {"type": "string", "description": "Profile of a dispatched run."},
            "justification": {
                "type": "string",
                "description": "Why a profile stronger than the default is needed.",
            },
        },
        (),
        loop_tick,
        "tether loop tick --json",
    ),
    Tool(
        "board_list",
        "List the board",
        "Tickets (without bodies), untriaged INBOX notes and files tether cannot read.",
        {
            "state": {"type": "string", "description": "Only this STATE or STATE/reason."},
            "board": _BOARD,
        },
        (),
        board_list,
        "tether board list --json",
    ),
    Tool(
        "board_add",
        "Add a ticket",
        "Add a ticket (to INBOX unless `state` says otherwise); the next tick triages it.",
        {
            "title": {"type": "string", "minLength": 1, "description": "The ticket title."},
            "priority": {"type": "string", "enum": ["P1", "P2", "P3"], "default": "P2"},
            "body": {"type": "string", "description": "The ticket's Markdown text."},
            "state": {
                "type": "string",
                "default": "INBOX",
                "description": "STATE or STATE/reason.",
            },
            "board": _BOARD,
        },
        ("title",),
        board_add,
        'tether board add "TITLE" --json',
    ),
    Tool(
        "board_show",
        "Show a ticket",
        "One ticket: its file as text, its fields as JSON.",
        {
            "ticket_id": {"type": "string", "minLength": 1, "description": "The ticket id (T-…)."},
            "board": _BOARD,
        },
        ("ticket_id",),
        board_show,
        "tether board show ID --json",
    ),
    Tool(
        "room_brief",
        "Brief a room (W01)",
        "The pages a room would read for `question` within B, why each, stale flags; nothing "
        "is read. `read_directly` true: two pages or fewer, no room needed.",
        {"question": _QUESTION, "budget": _BUDGET, "root": _ROOT},
        ("question",),
        room_brief,
        'tether room brief "QUESTION" --json',
    ),
    Tool(
        "room_open",
        "Open one room (W03)",
        "Open exactly one room for `question` and return its checked conclusion (status ok or "
        "b01). Refused inside a room and while another room is open.",
        {
            "question": _QUESTION,
            "budget": _BUDGET,
            "profile": {"type": "string", "description": "Profile for the room's run."},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "Wall-clock cap of the room, in seconds.",
            },
            "root": _ROOT,
        },
        ("question",),
        room_open,
        'tether room open "QUESTION" --json',
    ),
    Tool(
        "wiki_search",
        "Search the wiki",
        "Full-text search (bm25), best pages first.",
        {
            "query": {"type": "string", "minLength": 1, "description": "The words to find."},
            "limit": {"type": "integer", "minimum": 1, "default": 10},
            "root": _ROOT,
        },
        ("query",),
        wiki_search,
        'tether wiki search "QUERY" --json',
    ),
    Tool(
        "wiki_read",
        "Read a wiki page",
        "One page's file. Inside a room the read counts against the room's budget B and is "
        "refused beyond it or off the room's list.",
        {
            "page_id": {"type": "string", "minLength": 1, "description": "The page id."},
            "root": _ROOT,
        },
        ("page_id",),
        wiki_read,
        "tether wiki read ID",
    ),
    Tool(
        "ingest_next",
        "Claim the next ingest entry",
        "Claim exactly one entry from incoming/ (oldest first) for this session and return it "
        "with the ingest instructions; this session's open claim is returned again.",
        {"root": _ROOT},
        (),
        ingest_next,
        "tether ingest next --json",
    ),
    Tool(
        "ingest_end",
        "End the claimed ingest entry",
        "Mark this session's claimed entry done; returns the fixed next-step line per kind of "
        "unit that still waits (none when nothing waits).",
        {
            "entry": {
                "type": "string",
                "description": "The claimed entry (default: this session's claim).",
            },
            "root": _ROOT,
        },
        (),
        ingest_end,
        "tether ingest end",
    ),
    Tool(
        "run_status",
        "A run's record",
        "One supervised run's record: status, budgets, counts, report path, follow-ups.",
        {"run_id": _RUN},
        ("run_id",),
        run_status,
        "tether runs show RUN_ID --json",
    ),
    Tool(
        "report_show",
        "A run's progress report",
        "The progress report of a limit-stopped run (Markdown text; report.json as JSON).",
        {"run_id": _RUN},
        ("run_id",),
        report_show,
        "tether report RUN_ID",
    ),
)

BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
HUMAN_ONLY = ("release", "approve", "requeue", "session_new", "continue_here")

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def check_arguments(tool: Tool, args: Mapping[str, Any]) -> None:
    """Refuse arguments outside ``tool``'s schema with one line (exit 2, like the CLI)."""
    unknown = sorted(set(args) - set(tool.properties))
    if unknown:
        raise UsageError(f"{tool.name}: unknown argument {unknown[0]!r}")
    for name in tool.required:
        if name not in args:
            raise UsageError(f"{tool.name}: missing argument {name!r}")
    for name, value in args.items():
        schema = tool.properties[name]
        kind = schema["type"]
        if (isinstance(value, bool) and kind != "boolean") or not isinstance(value, _TYPES[kind]):
            raise UsageError(f"{tool.name}: {name!r} must be a {kind}")
        if "enum" in schema and value not in schema["enum"]:
            raise UsageError(f"{tool.name}: {name!r} must be one of {', '.join(schema['enum'])}")
        if isinstance(value, str) and len(value) < schema.get("minLength", 0):
            raise UsageError(f"{tool.name}: {name!r} must not be empty")
        if kind in ("integer", "number"):
            if "minimum" in schema and value < schema["minimum"]:
                raise UsageError(f"{tool.name}: {name!r} must be {schema['minimum']} or more")
            if "maximum" in schema and value > schema["maximum"]:
                raise UsageError(f"{tool.name}: {name!r} must be {schema['maximum']} or less")
            if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
                raise UsageError(
                    f"{tool.name}: {name!r} must be above {schema['exclusiveMinimum']}"
                )


@dataclass(frozen=True)
class Outcome:
    """A call's result as the server sends it: an error carries the CLI's line and exit."""

    text: str
    data: JsonObject
    is_error: bool


def error_outcome(message: str, code: int) -> Outcome:
    meaning = ExitCode(code).name.lower().replace("_", "-") if code in set(ExitCode) else "error"
    line = f"tether: error: {message}"
    return Outcome(line, {"error": message, "exit_code": code, "exit_meaning": meaning}, True)


def call(name: str, args: Mapping[str, Any] | None) -> Outcome:
    """Run tool ``name`` with ``args``; tether's errors become an error outcome."""
    tool = BY_NAME.get(name)
    if tool is None:
        return error_outcome(f"unknown tool {name!r}; known: {', '.join(BY_NAME)}", 2)
    try:
        check_arguments(tool, args or {})
        answer = tool.run(args or {})
    except TetherError as exc:
        return error_outcome(str(exc), int(exc.exit_code))
    return Outcome(answer.text, answer.data, False)
