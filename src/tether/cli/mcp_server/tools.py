"""tether's agent-facing operations as MCP tools: the table, and calling a tool by name.

Nothing here imports the ``mcp`` SDK; :mod:`tether.cli.mcp_server.server` wraps
these for the protocol, and the reference page is generated from ``TOOLS``.
Every tool calls the same library function as its CLI command
(:mod:`tether.cli.mcp_server.calls`), so the rules (one room at a time, reads
counted against the room, one ingest entry per session, the loop's lock) hold
whichever way an agent comes.

Human-only operations — releasing from quarantine, approving, requeueing,
giving a session a new id, going on in the same context — are not tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tether.cli.mcp_server.calls import (
    board_add,
    board_list,
    board_show,
    ingest_end,
    ingest_next,
    loop_tick,
    report_show,
    room_brief,
    room_open,
    run_status,
    subagents_list,
    subagents_wait,
    wiki_read,
    wiki_search,
)
from tether.cli.mcp_server.tool import JsonObject, Tool, check_arguments
from tether.errors import TetherError
from tether.exit_codes import ExitCode

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
